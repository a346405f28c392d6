"""``--baseline FILE``: a previous ``-o json``'s findings, read piece by piece, never held whole.

:func:`load_baseline` reads the file once when the flags are read (before
anything is read from the cluster), checking every finding, and keeps only its
descriptor (standard input or a FIFO is copied to an unnamed temporary file as
it is read, since it cannot be read twice). The :class:`Baseline` it answers
is an iterable: each pass reads the file again from its start and yields each
finding's identifying fields (check, reason, node, pod, operand, key,
daemonset, args, change) as a small dict, dropped once compared
(``checks.verdict.apply_baseline``). Memory does not grow with the baseline:
1,000,000 findings, see ``bench/baseline_bench.py``.

A file that changes between the two passes (its size or modification time) is
refused in one line rather than compared half old, half new.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from collections.abc import Iterator
from typing import IO, Any

from gpulabel.cluster.inputs import IDLE_SECONDS, Opened, max_input_bytes, open_input
from gpulabel.cluster.jsonitems import Malformed, NotTheShape, array_items
from gpulabel.errors import InputError

__all__ = ["BASELINE_FIELDS", "Baseline", "load_baseline"]

BASELINE_FIELDS = ("check", "reason", "node", "pod", "operand", "key", "daemonset", "args", "change")
_SCALARS = "str | int | float | bool | null"
_PIECE = 1 << 20


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "object"
    return "array" if isinstance(value, list) else type(value).__name__


def _entry(item: object, index: int) -> dict[str, Any]:
    """The identifying fields of the finding ``item`` (``$.findings[index]``); a ValueError names what is wrong."""
    at = f"$.findings[{index}]"
    if not isinstance(item, dict):
        raise ValueError(f"Expected `object`, got `{_kind(item)}` - at `{at}`")
    if "check" not in item:
        raise ValueError(f"Object missing required field `check` - at `{at}`")
    out: dict[str, Any] = {}
    for k in BASELINE_FIELDS:
        v = item.get(k)
        if v is None:
            continue
        if type(v) is str:
            out[k] = v
            continue
        if k == "args":
            if not isinstance(v, list):
                raise ValueError(f"Expected `array | null`, got `{_kind(v)}` - at `{at}.args`")
            for j, a in enumerate(v):
                if isinstance(a, dict | list):
                    raise ValueError(f"Expected `{_SCALARS}`, got `{_kind(a)}` - at `{at}.args[{j}]`")
        elif isinstance(v, dict | list):
            raise ValueError(f"Expected `{_SCALARS}`, got `{_kind(v)}` - at `{at}.{k}`")
        out[k] = v
    return out


class Baseline:
    """A checked baseline file; iterating it reads the file again and yields each finding's identifying fields."""

    def __init__(self, path: str, opened: Opened, spool: IO[bytes] | None, entries: int) -> None:
        self.path = path
        self.entries = entries  # how many findings the file holds
        self._opened = opened
        self._spool = spool
        self._seen = os.fstat(opened.fd)
        weakref.finalize(self, _close, opened.fd, spool)

    def _pieces(self) -> Iterator[bytes]:
        if self._spool is not None:
            self._spool.seek(0)
            return iter(lambda: self._spool.read(_PIECE) if self._spool else b"", b"")
        now = os.fstat(self._opened.fd)
        if (now.st_size, now.st_mtime_ns) != (self._seen.st_size, self._seen.st_mtime_ns):
            raise InputError(self._opened.where, "changed while gpulabel was reading it; run again")
        os.lseek(self._opened.fd, 0, os.SEEK_SET)
        return self._opened.chunks(max_input_bytes(), IDLE_SECONDS, InputError)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return _read(self._opened.where, self._pieces())

    def __len__(self) -> int:
        return self.entries


def _close(fd: int, spool: IO[bytes] | None) -> None:
    os.close(fd)
    if spool is not None:
        spool.close()


def _read(where: str, pieces: Iterator[bytes]) -> Iterator[dict[str, Any]]:
    try:
        for i, item in enumerate(array_items(pieces, "findings")):
            yield _entry(item, i)
    except Malformed as err:
        raise InputError(where, f"not JSON (a previous gpulabel -o json): {err}") from None
    except (NotTheShape, ValueError) as err:
        raise InputError(where, f"not a gpulabel -o json envelope: {err}") from None


def _tee(pieces: Iterator[bytes], spool: IO[bytes]) -> Iterator[bytes]:
    for piece in pieces:
        spool.write(piece)
        yield piece


def load_baseline(path: str) -> Baseline:
    """``path`` (``-``: standard input) read once and checked: every finding an object with a ``check``, its
    identifying fields scalars (``args`` a list of them); one line naming the file otherwise."""
    opened = open_input(path)
    spool: IO[bytes] | None = None
    try:
        pieces = opened.chunks(max_input_bytes(), IDLE_SECONDS, InputError)
        if not opened.regular:
            spool = tempfile.TemporaryFile()  # noqa: SIM115 - kept open for the second pass, closed with it
            pieces = _tee(pieces, spool)
        entries = sum(1 for _ in _read(opened.where, pieces))
    except BaseException:
        _close(opened.fd, spool)
        raise
    return Baseline(path, opened, spool, entries)
