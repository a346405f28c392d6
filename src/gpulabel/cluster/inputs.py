"""The one way gpulabel reads an input file: bounded in bytes while reading, never waiting forever.

Snapshots, manifests, the config file, NFD feature files and the NFD config are
read whole by :func:`read_input`; a baseline, which may hold a million findings,
piece by piece through :func:`open_input` (``app/baseline.py``). The rules:

- a regular file: read up to the limit plus one byte; more is refused. The
  limit is counted while reading, never taken from ``stat`` (a file in
  ``/proc`` says it has 0 bytes);
- a FIFO or a pipe (``--snapshot <(kubectl get ...)``): read with the same
  limit; a FIFO with no writer is empty at once (it is opened without waiting
  for one), and one that sends nothing for ``IDLE_SECONDS`` is refused;
- ``-``: standard input, with the same limit; a device as standard input
  (``- </dev/zero``) is refused, a terminal is read;
- a character or block device (``/dev/zero``, ``/dev/urandom``), a directory,
  a socket: refused in one line.

The limit is :data:`DEFAULT_MAX_INPUT_BYTES` (1 GiB: a 20,000-node snapshot
with its pods is about 162 MB of JSON), or ``$GPULABEL_MAX_INPUT_BYTES``.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from gpulabel.errors import InputError

__all__ = [
    "DEFAULT_MAX_INPUT_BYTES",
    "ENV_MAX_INPUT_BYTES",
    "IDLE_SECONDS",
    "Opened",
    "max_input_bytes",
    "open_input",
    "read_input",
]

DEFAULT_MAX_INPUT_BYTES = 1 << 30
ENV_MAX_INPUT_BYTES = "GPULABEL_MAX_INPUT_BYTES"
IDLE_SECONDS = 60.0  # how long a FIFO may stay silent
_CHUNK = 1 << 20


def max_input_bytes() -> int:
    """The byte limit of one input: ``$GPULABEL_MAX_INPUT_BYTES`` when set, else 1 GiB."""
    raw = os.environ.get(ENV_MAX_INPUT_BYTES, "")
    if not raw:
        return DEFAULT_MAX_INPUT_BYTES
    if not raw.isdigit() or int(raw) <= 0:
        raise InputError(ENV_MAX_INPUT_BYTES, f"{raw!r} is not a positive whole number of bytes")
    return int(raw)


def _too_big(limit: int) -> str:
    return f"more than {limit} bytes (the input limit; {ENV_MAX_INPUT_BYTES} raises it)"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "Is a directory"
    what = "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket"
    return f"not a regular file ({what}); not read"


def _read_stream(fd: int, limit: int, idle: float) -> bytes:
    """Read a pipe or FIFO (opened non-blocking) to its end, at most ``limit`` bytes, waiting ``idle`` at most."""
    import select

    buf = bytearray()
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while True:
        try:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - len(buf)))
        except BlockingIOError:
            if not poller.poll(idle * 1000):
                raise TimeoutError(f"no data for {idle:g} s; not read") from None
            continue
        if not chunk:
            return bytes(buf)
        buf += chunk
        if len(buf) > limit:
            raise OverflowError(_too_big(limit))


def _read_fd(fd: int, mode: int, limit: int, idle: float) -> bytes:
    if stat.S_ISREG(mode):
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise OverflowError(_too_big(limit))
        return data
    if stat.S_ISFIFO(mode):
        return _read_stream(fd, limit, idle)
    raise IsADirectoryError(_kind(mode))


def _stdin(limit: int, idle: float) -> bytes:
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by a test's StringIO: no descriptor
        data = sys.stdin.buffer.read(limit + 1) if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        if len(data) > limit:
            raise OverflowError(_too_big(limit)) from None
        return data
    mode = os.fstat(fd).st_mode
    if (stat.S_ISCHR(mode) and os.isatty(fd)) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        data = sys.stdin.buffer.read(limit + 1)  # a pipe: its writer decides when it ends
        if len(data) > limit:
            raise OverflowError(_too_big(limit))
        return data
    return _read_fd(fd, mode, limit, idle)


def read_input(
    path: str, error: type[InputError] = InputError, *, limit: int | None = None, idle: float | None = None
) -> bytes:
    """The bytes of ``path`` (``-``: standard input) by the rules in the module docstring.

    Errors are ``error(path, reason)``: one line naming the input.
    """
    limit = max_input_bytes() if limit is None else limit
    idle = IDLE_SECONDS if idle is None else idle
    where = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            return _stdin(limit, idle)
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags)  # non-blocking: a FIFO with no writer opens at once
        try:
            return _read_fd(fd, os.fstat(fd).st_mode, limit, idle)
        finally:
            os.close(fd)
    except (OverflowError, TimeoutError, IsADirectoryError) as err:
        if isinstance(err, IsADirectoryError) and err.errno is not None:
            raise error(where, err.strerror or str(err)) from None
        raise error(where, str(err)) from None
    except OSError as err:
        raise error(where, err.strerror or str(err)) from None


@dataclass(frozen=True, slots=True)
class Opened:
    """An input opened by :func:`open_input`: its descriptor, whether it is a regular file (it can be read
    again from its start), and its name in messages."""

    fd: int
    regular: bool
    where: str

    def chunks(self, limit: int, idle: float, error: type[InputError]) -> Iterator[bytes]:
        """The input's bytes in pieces of at most 1 MiB, at most ``limit`` in all (counted while reading;
        more is refused), a FIFO or pipe silent for ``idle`` seconds refused."""
        import select

        total = 0
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while True:
            try:
                chunk = os.read(self.fd, min(_CHUNK, limit + 1 - total))
            except BlockingIOError:
                if not poller.poll(idle * 1000):
                    raise error(self.where, f"no data for {idle:g} s; not read") from None
                continue
            except OSError as err:
                raise error(self.where, err.strerror or str(err)) from None
            if not chunk:
                return
            total += len(chunk)
            if total > limit:
                raise error(self.where, _too_big(limit))
            yield chunk


def open_input(path: str, error: type[InputError] = InputError) -> Opened:
    """``path`` (``-``: standard input) opened to be read in pieces (:meth:`Opened.chunks`) by the rules
    of :func:`read_input`: a device, directory or socket refused, a FIFO opened without waiting. The
    caller closes ``fd`` (standard input's is a duplicate)."""
    where = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            fd = os.dup(sys.stdin.fileno())
            mode = os.fstat(fd).st_mode
            if stat.S_ISCHR(mode) and os.isatty(fd):
                return Opened(fd, False, where)
        else:
            flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
            fd = os.open(path, flags)  # non-blocking: a FIFO with no writer opens at once
            mode = os.fstat(fd).st_mode
    except OSError as err:
        raise error(where, err.strerror or str(err)) from None
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or (path == "-" and stat.S_ISSOCK(mode)):
        return Opened(fd, stat.S_ISREG(mode), where)
    os.close(fd)
    raise error(where, "Is a directory" if stat.S_ISDIR(mode) else _kind(mode))
