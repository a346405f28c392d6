"""The one way gpulabel writes a file: never replace what it did not create.

``write_file`` looks at what is at the path before writing:

- nothing: the data goes to a temporary file in the same directory, which is
  then hard-linked into place; ``link`` fails if something appeared there in the
  meantime, so a file created by someone else is never replaced (the write is
  refused instead);
- a regular file with one link: replaced atomically (temporary file, then
  ``rename``), keeping its permission bits, so a reader never sees half a page;
- a regular file with several hard links: rewritten in place, so every name
  still sees the same file;
- a symbolic link: followed, and the rules above apply to what it points to;
  the link itself stays;
- a character device, a FIFO: opened and written through (``/dev/null``,
  ``/dev/stdout``, a pipe), never replaced;
- a directory, a socket, a block device: refused.

Errors are :class:`~gpulabel.errors.InputError` naming the path.
"""

from __future__ import annotations

import os
import stat

from gpulabel.errors import InputError

__all__ = ["write_file"]

_NEW_FILE_MODE = 0o644


def _fail(path: str, err: OSError | str) -> InputError:
    reason = err if isinstance(err, str) else (err.strerror or str(err))
    return InputError(path, f"cannot write: {reason}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _temporary(directory: str, data: bytes, mode: int) -> str:
    import tempfile  # not at import time: the CLI builds its parser for every command, --help included

    fd, tmp = tempfile.mkstemp(prefix=".gpulabel-", dir=directory)
    try:
        _write_all(fd, data)
        os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    return tmp


def _create(path: str, data: bytes, mode: int = _NEW_FILE_MODE) -> None:
    tmp = _temporary(os.path.dirname(path) or ".", data, mode)
    try:
        os.link(tmp, path)  # fails with EEXIST rather than replace anything
    finally:
        os.unlink(tmp)


def _replace(path: str, data: bytes, mode: int) -> None:
    tmp = _temporary(os.path.dirname(path) or ".", data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _write_through(path: str, data: bytes, truncate: bool) -> None:
    flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | (os.O_TRUNC if truncate else 0)
    fd = os.open(path, flags)  # no O_CREAT: the thing must still be there
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def write_file(path: str, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` by the rules in the module docstring; ``mode``: the permission bits of a
    new or replaced regular file (a secret's 0600) instead of 0644 or the replaced file's."""
    target = os.path.realpath(path) if os.path.islink(path) else os.path.abspath(path)
    try:
        try:
            st = os.stat(target)
        except FileNotFoundError:
            _create(target, data, _NEW_FILE_MODE if mode is None else mode)
            return
        kind = st.st_mode
        if stat.S_ISREG(kind):
            if st.st_nlink > 1:
                _write_through(target, data, truncate=True)
            else:
                _replace(target, data, stat.S_IMODE(kind) if mode is None else mode)
        elif stat.S_ISCHR(kind) or stat.S_ISFIFO(kind):
            _write_through(target, data, truncate=False)
        elif stat.S_ISDIR(kind):
            raise _fail(path, "Is a directory")
        else:
            raise _fail(path, "not a regular file, a character device or a FIFO; not replaced")
    except FileExistsError:
        raise _fail(path, "created by someone else while writing; not replaced") from None
    except OSError as err:
        raise _fail(path, err) from None
