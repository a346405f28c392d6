"""Tables for people (``-o table``), in kubectl's style: upper-case headers, columns two spaces apart.

Nothing is cut when the output is not a terminal; on a terminal the last
column is shortened to the terminal's width. Escape codes (a bold header) are
written only to a terminal and never when ``NO_COLOR`` is set.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

__all__ = ["TableStyle", "format_table", "style_for"]


@dataclass(frozen=True, slots=True)
class TableStyle:
    headers: bool = True  # False: --no-headers
    width: int | None = None  # None: no limit (not a terminal)
    bold: bool = False


def style_for(out: IO[str], headers: bool = True) -> TableStyle:
    """The style for ``out``: a terminal gets its width (and bold headers unless ``NO_COLOR``), a pipe no limit."""
    try:
        tty = out.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        return TableStyle(headers)
    return TableStyle(headers, shutil.get_terminal_size().columns, not os.environ.get("NO_COLOR"))


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]], style: TableStyle) -> str:
    """The table as text: one line per row (and a header line), columns padded, the last one cut to the width."""
    if not rows and not style.headers:
        return ""
    from gpulabel.render.escape import printable

    heads = [printable(h.upper()) for h in headers]
    cells = [[printable(c) for c in row] for row in rows]
    widths = [max([len(h) if style.headers else 0, *(len(r[i]) for r in cells)]) for i, h in enumerate(heads)]
    lines = []
    if style.headers:
        lines.append(_line(heads, widths, style.width))
    lines.extend(_line(r, widths, style.width) for r in cells)
    if style.headers and style.bold and lines:
        lines[0] = f"\x1b[1m{lines[0]}\x1b[0m"
    return "".join(line + "\n" for line in lines)


def _line(cells: Sequence[str], widths: Sequence[int], limit: int | None) -> str:
    text = "  ".join(c.ljust(w) for c, w in zip(cells[:-1], widths[:-1], strict=True))
    text = (text + "  " + cells[-1]) if len(cells) > 1 else cells[-1]
    text = text.rstrip()
    if limit is not None and len(text) > limit > 3:
        text = text[: limit - 3] + "..."
    return text
