"""Go's ``%q`` string quoting, so messages read exactly as the API server's."""

from __future__ import annotations

import unicodedata

_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def _printable(ch: str) -> bool:
    # Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and ASCII space.
    return ch == " " or unicodedata.category(ch)[0] in "LMNPS"


def go_quote(text: str) -> str:
    """Quote ``text`` as Go's ``strconv.Quote`` does.

    Undecodable bytes carried as surrogate escapes print as ``\\xNN``, as Go
    prints bytes that are not UTF-8.
    """
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif _printable(ch):
            out.append(ch)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)
