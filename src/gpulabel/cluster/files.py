"""The one way gpulabel writes a file: never replace or modify what it did not create.

``write_file(path, data, marker=..., force=...)`` looks at what is at the path first
(a symbolic link is followed, and stays; the rules apply to what it points to):

- nothing: the data goes to a temporary file in the same directory, fsynced,
  then hard-linked into place; ``link`` fails if something appeared there
  meanwhile, so a file created by someone else is never replaced;
- a regular file that gpulabel wrote (its first 4 KiB hold ``marker``, the
  generator mark each output carries: ``<meta name="generator" content="gpulabel">``
  in a report, ``"generator": "gpulabel"`` in a snapshot, ``"apiVersion":
  "gpulabel/v1"`` in a findings file) or any regular file with ``force``:
  replaced atomically (temporary file in the same directory, fsync, ``rename``),
  keeping its permission bits (and, as root, its owner and group); a write that
  fails midway (``ENOSPC``, ``EFBIG`` under ``ulimit -f``) removes the temporary
  file and leaves the old one exactly as it was;
- a regular file gpulabel did not write, without ``force``: refused;
- a regular file with more than one hard link: refused, ``force`` or not (a
  rewrite in place would change every other name's content; a rename would
  silently split the names);
- a file the caller could not have written itself with the shell's ``>``
  (``os.access(W_OK)`` on the file, write and search on its directory): refused,
  ``force`` or not. ``>`` run as root writes a mode 0444 file; gpulabel run as
  root does not without ``force`` (a file with no write bit is a statement by its
  owner). A file owned by another user (not root) is replaced only with ``force``,
  and the replacement is then the caller's;
- ``/dev/null`` (the character device 1:3, under any name): the data is
  discarded, so ``--html /dev/null`` runs everything and keeps nothing;
- anything else (a FIFO, which would wait for a reader forever, a character or
  block device, a directory, a socket): refused.

``-`` (standard output) is handled by the commands, not here. Errors are
:class:`~gpulabel.errors.InputError` naming the path: one line, exit 2.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from typing import BinaryIO

from gpulabel.errors import GpulabelError, InputError

__all__ = ["MARK_HEAD", "write_file", "write_stream"]

_NEW_FILE_MODE = 0o644
MARK_HEAD = 4096  # the marker must be in a file's first bytes: looking never reads a whole file
_DEV_NULL = os.makedev(1, 3)


def _fail(path: str, err: OSError | str) -> InputError:
    reason = err if isinstance(err, str) else (err.strerror or str(err))
    return InputError(path, f"cannot write: {reason}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# What fills a temporary file: given its descriptor, writes the whole content (and may fail midway).
_Fill = Callable[[int], None]


def _temporary(directory: str, fill: _Fill, mode: int, owner: tuple[int, int] | None) -> str:
    import tempfile  # not at import time: the CLI builds its parser for every command, --help included

    fd, tmp = tempfile.mkstemp(prefix=".gpulabel-", dir=directory)
    try:
        fill(fd)
        os.fsync(fd)
        os.fchmod(fd, mode)
        if owner is not None:
            os.fchown(fd, *owner)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    return tmp


def _create(path: str, fill: _Fill, mode: int) -> None:
    tmp = _temporary(os.path.dirname(path) or ".", fill, mode, None)
    try:
        os.link(tmp, path)  # fails with EEXIST rather than replace anything
    finally:
        os.unlink(tmp)


def _written_by_gpulabel(path: str, st: os.stat_result, marker: bytes) -> bool:
    """Whether the file at ``path`` (still the inode ``st``) holds ``marker`` in its first bytes."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) or not stat.S_ISREG(now.st_mode):
            return False
        return marker in os.read(fd, MARK_HEAD)
    finally:
        os.close(fd)


def _may_replace(path: str, st: os.stat_result, marker: bytes, force: bool) -> str | None:
    """Why the regular file ``st`` at ``path`` must not be replaced; ``None`` when it may."""
    if st.st_nlink > 1:
        return f"has {st.st_nlink} hard links; not replaced (a write would reach every name)"
    directory = os.path.dirname(path) or "."
    if not os.access(path, os.W_OK) or not os.access(directory, os.W_OK | os.X_OK):
        return "permission denied (the shell's > would fail too); not replaced"
    if os.geteuid() == 0 and not st.st_mode & 0o222 and not force:
        return f"read-only file (mode {stat.S_IMODE(st.st_mode):04o}); not replaced without --force"
    if force:
        return None
    if os.geteuid() not in (0, st.st_uid):
        return f"owned by uid {st.st_uid}; not replaced without --force"
    if not _written_by_gpulabel(path, st, marker):
        return "exists and was not written by gpulabel; not replaced without --force"
    return None


def _replace(path: str, st: os.stat_result, fill: _Fill, mode: int | None) -> None:
    owner = (st.st_uid, st.st_gid) if os.geteuid() == 0 else None
    tmp = _temporary(os.path.dirname(path) or ".", fill, stat.S_IMODE(st.st_mode) if mode is None else mode, owner)
    try:
        now = os.lstat(path)
        if (now.st_dev, now.st_ino, now.st_nlink) != (st.st_dev, st.st_ino, st.st_nlink):
            raise _fail(path, "changed by someone else while writing; not replaced")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _target(path: str) -> str:
    """The path the rules apply to: a symbolic link's final target (made absolute)."""
    return os.path.realpath(path) if os.path.islink(path) else os.path.abspath(path)


def write_file(path: str, data: bytes, *, marker: bytes, force: bool = False, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` by the rules in the module docstring; ``mode``: the permission bits of a
    new or replaced file (a credential's 0600) instead of 0644 or the replaced file's.

    ``marker`` is the generator mark ``data`` carries in its first bytes (checked
    here, so that every output can be recognised when it is replaced later).
    """
    if marker not in data[:MARK_HEAD]:
        raise ValueError("the data does not carry its generator marker in its first bytes")
    _write(path, lambda fd: _write_all(fd, data), marker, force, mode)


class Output:
    """Where :func:`write_stream`'s producer writes: ``write``, and ``mark``/``back_to`` to drop what was written
    after a mark (a LIST restarted from its first page)."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._at = 0  # bytes written and kept (counted: /dev/null has no position)
        self.failed = False  # a write failed (ENOSPC, EFBIG): the file's error, not the producer's

    def write(self, data: bytes) -> None:
        try:
            self._out.write(data)
        except OSError:
            self.failed = True
            raise
        self._at += len(data)

    def mark(self) -> int:
        """The bytes written so far (kept: a ``back_to`` drops the rest)."""
        return self._at

    def back_to(self, mark: int) -> None:
        self._at = mark
        try:
            self._out.seek(mark)
            self._out.truncate()
        except OSError:
            self.failed = True
            raise


class _Produced(GpulabelError):
    """The producer's own error (not the file's), carried past the rules' OSError handling and raised as it was
    (never seen outside this module: ``write_stream`` unwraps it)."""

    def __init__(self, err: BaseException) -> None:
        self.err = err


def write_stream(
    path: str, produce: Callable[[Output], None], *, marker: bytes, force: bool = False, mode: int | None = None
) -> None:
    """As :func:`write_file`, the content written by ``produce(out)`` as it is made, never held whole: the rules
    are applied before ``produce`` runs, and it writes into the temporary file that then takes the path's place
    (into nothing for ``/dev/null``, where it still runs). If ``produce`` fails, the temporary file is removed,
    the path is as it was, and its error is raised as it is (a failed write is the file's: ``cannot write``).
    """

    def run(out: BinaryIO) -> None:
        sink = Output(out)
        try:
            produce(sink)
        except OSError as err:
            if sink.failed:
                raise
            raise _Produced(err) from err
        except Exception as err:
            raise _Produced(err) from err

    def fill(fd: int) -> None:
        with os.fdopen(fd, "w+b", closefd=False) as out:
            run(out)
            out.flush()
        if marker not in os.pread(fd, MARK_HEAD, 0):
            raise ValueError("the data does not carry its generator marker in its first bytes")

    try:
        _write(path, fill, marker, force, mode, discard=run)
    except _Produced as produced:
        raise produced.err from None


def _write(
    path: str,
    fill: _Fill,
    marker: bytes,
    force: bool,
    mode: int | None,
    discard: Callable[[BinaryIO], None] | None = None,
) -> None:
    """Where ``fill`` writes ``path``'s new content, by the rules; ``discard``: what still runs for /dev/null."""
    target = _target(path)
    try:
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            _create(target, fill, _NEW_FILE_MODE if mode is None else mode)
            return
        kind = st.st_mode
        if stat.S_ISREG(kind):
            why = _may_replace(target, st, marker, force)
            if why is not None:
                raise _fail(path, why)
            _replace(target, st, fill, mode)
        elif stat.S_ISCHR(kind) and st.st_rdev == _DEV_NULL:
            if discard is not None:  # the content is made (a capture's LISTs run) and kept nowhere
                with open(os.devnull, "w+b") as sink:
                    discard(sink)
            return  # /dev/null: nothing kept, nothing to write
        elif stat.S_ISDIR(kind):
            raise _fail(path, "Is a directory")
        elif stat.S_ISLNK(kind):
            raise _fail(path, "too many levels of symbolic links")
        else:
            what = "a FIFO" if stat.S_ISFIFO(kind) else "a device" if stat.S_ISCHR(kind) or stat.S_ISBLK(kind) else ""
            raise _fail(path, f"not a regular file{' (' + what + ')' if what else ''}; not written (- is stdout)")
    except FileExistsError:
        raise _fail(path, "created by someone else while writing; not replaced") from None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise _fail(path, "too many levels of symbolic links") from None
        raise _fail(path, err) from None
