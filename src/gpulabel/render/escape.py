"""Names from the input made safe to print in a line: control characters shown, never obeyed.

A file named ``n1\\nlab-node-0 gpu.present true.env`` or a label value holding
``\\x1b[2J`` is a name like any other; printed raw it would add a line that looks
like gpulabel's own, or drive the terminal. Text output, tables, warnings,
errors and the monitor's log lines print names through :func:`printable`;
JSON and YAML keep the exact string.
"""

from __future__ import annotations

__all__ = ["printable"]

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(c: str) -> str:
    if c in _SHORT:
        return _SHORT[c]
    n = ord(c)
    if n < 0x100:
        return f"\\x{n:02x}"
    return f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def printable(text: str) -> str:
    """``text`` with every character :meth:`str.isprintable` refuses (controls, line and format
    characters, unusual spaces) written as a backslash escape; a space stays a space."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escaped(c) for c in text)
