"""The items of one top-level array of a JSON object, read piece by piece: a million items in bounded memory.

:func:`array_items` walks a document ``{"k": v, ..., "<key>": [item, ...], ...}``
given as pieces of bytes (:meth:`gpulabel.cluster.inputs.Opened.chunks`) and
yields each item of ``<key>``'s array as the standard library's C decoder
makes it (``json.JSONDecoder.raw_decode``), one at a time; the other keys'
values are decoded and dropped. Only the text not yet decoded is held: an item
is decoded once the buffer holds it whole (the buffer grows to twice its size
before a value is tried again, so a large value is decoded a bounded number of
times, not once per piece).

Errors are :class:`Malformed` with the message of the decoder (``Expecting
',' delimiter: line 1 column 9 (char 8)``) or the shape expected (``Expected
`object`, got `array```); a value nested too deep for the decoder is
``nested too deep``, never a RecursionError.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterable, Iterator

from gpulabel.errors import GpulabelError

__all__ = ["Malformed", "NotTheShape", "array_items"]

_WS = re.compile(r"[ \t\n\r]*")


class Malformed(GpulabelError, ValueError):
    """The pieces are not one JSON document."""


class NotTheShape(GpulabelError, ValueError):
    """The pieces are JSON, but not an object whose ``<key>`` is an array (or null)."""


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "str"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    return "int" if isinstance(value, int) else "float"


def _no_constant(name: str) -> object:
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


class _Reader:
    """The text of the pieces not yet decoded, refilled on demand."""

    def __init__(self, pieces: Iterable[bytes]) -> None:
        self.pieces = iter(pieces)
        self.text = ""
        self.pos = 0
        self.eof = False
        self.utf8 = codecs.getincrementaldecoder("utf-8")()
        scan: Callable[[str, int], tuple[object, int]] = json.JSONDecoder(parse_constant=_no_constant).scan_once  # type: ignore[attr-defined]
        self.scan = scan
        self.read = 0  # characters dropped before ``text``: positions in messages count from the start

    def more(self, want: int = 1) -> None:
        """Drop what was decoded and read pieces until ``want`` more characters are held (or the end)."""
        self.read += self.pos
        rest = [self.text[self.pos :]]
        held = len(rest[0])
        while not self.eof and held < want:
            try:
                piece = next(self.pieces)
                new = self.utf8.decode(piece)
            except StopIteration:
                new = self._final()
                self.eof = True
            rest.append(new)
            held += len(new)
        self.text = "".join(rest)
        self.pos = 0

    def _final(self) -> str:
        try:
            return self.utf8.decode(b"", final=True)
        except UnicodeDecodeError as err:
            raise Malformed(f"not UTF-8: {err.reason}") from None

    def peek(self) -> str:
        """The next character that is not white space, not taken ("" at the end)."""
        if self.pos < len(self.text) and (c := self.text[self.pos]) not in " \t\n\r":
            return c  # the usual case: no white space between items
        while True:
            m = _WS.match(self.text, self.pos)
            self.pos = m.end() if m else self.pos
            if self.pos < len(self.text) or self.eof:
                return self.text[self.pos] if self.pos < len(self.text) else ""
            self.more()

    def take(self, char: str) -> None:
        got = self.peek()
        if got != char:
            where = f"char {self.read + self.pos}"
            raise Malformed(f"Expecting '{char}': {where}" if got else f"Expecting '{char}': end of input")
        self.pos += 1

    def value(self) -> object:
        """The next JSON value, decoded whole."""
        self.peek()
        while True:
            try:
                value, end = self.scan(self.text, self.pos)  # raw_decode without its wrapper
            except (json.JSONDecodeError, StopIteration) as err:
                if self.eof:
                    msg, at = (
                        (err.msg, err.pos) if isinstance(err, json.JSONDecodeError) else ("Expecting value", self.pos)
                    )
                    raise Malformed(f"{msg}: char {self.read + at}") from None
                self.more(2 * (len(self.text) - self.pos) + 1)  # maybe cut off: try again with twice the text
                continue
            except RecursionError:
                raise Malformed(f"nested too deep: char {self.read + self.pos}") from None
            if end == len(self.text) and not self.eof and not isinstance(value, dict | list | str):
                self.more(len(self.text) - self.pos + 1)  # a number (or literal) may go on in the next piece
                continue
            self.pos = end
            return value


def array_items(pieces: Iterable[bytes], key: str) -> Iterator[object]:
    """Each item of the array at ``key`` of the JSON object the ``pieces`` hold, in order.

    Raises :class:`Malformed` (not JSON), :class:`NotTheShape` (not an object, ``key`` missing, or its
    value not an array or null: ``no <key> list``) once the whole document has been walked.
    """
    r = _Reader(pieces)
    first = r.peek()
    if first != "{":
        if not first:
            raise Malformed("Input data was truncated")
        raise NotTheShape(f"Expected `object`, got `{_kind(r.value())}`")
    r.pos += 1
    seen = False
    while r.peek() != "}":
        name = r.value()
        if not isinstance(name, str):
            raise Malformed(f"Expecting property name enclosed in double quotes: char {r.read + r.pos}")
        r.take(":")
        if name == key and r.peek() == "[":
            if seen:
                raise NotTheShape(f"two `{key}` keys")
            seen = True
            yield from _items(r, key)
        else:
            value = r.value()
            if name == key and value is not None:
                raise NotTheShape(f"Expected `array | null`, got `{_kind(value)}` - at `$.{key}`")
        if r.peek() != ",":
            break
        r.pos += 1
    r.take("}")
    if r.peek():
        raise Malformed(f"Extra data: char {r.read + r.pos}")
    if not seen:
        raise NotTheShape(f"no {key} list")


def _items(r: _Reader, key: str) -> Iterator[object]:
    r.take("[")
    if r.peek() == "]":
        r.pos += 1
        return
    while True:
        yield r.value()
        got = r.peek()
        r.pos += 1
        if got == "]":
            return
        if got != ",":
            r.pos -= 1
            raise Malformed(f"Expecting ',' delimiter: char {r.read + r.pos}")
