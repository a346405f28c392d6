"""Rendering findings at the edge: plain lines, wide lines, JSON, or a table.

Plain text is a contract that scripts parse: one finding per line, or the
single line ``OK``. ``-o wide`` appends the explanation in parentheses, ``-o
json`` gives the same findings as data, and ``-o table`` is for people.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any

from gpulabel.model.findings import Finding, summarize

__all__ = ["FORMATS", "emit_findings", "emit_json", "emit_table"]

FORMATS = ("text", "wide", "json", "table")


def emit_json(doc: Any, out: IO[str]) -> None:
    import orjson

    out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode() + "\n")


def emit_table(headers: Sequence[str], rows: Sequence[Sequence[str]], out: IO[str], title: str = "") -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(*headers, title=title or None, show_lines=False, header_style="bold")
    for row in rows:
        table.add_row(*row)
    Console(file=out, soft_wrap=False).print(table)


def emit_findings(findings: Sequence[Finding], fmt: str, out: IO[str], *, check: str = "") -> None:
    if fmt == "json":
        emit_json({"check": check, "findings": [f.to_json() for f in findings], "summary": summarize(findings)}, out)
    elif fmt == "table":
        if not findings:
            out.write("OK\n")
            return
        rows = [(f.subject, f.key, f.reason, " ".join(f.args), f.detail) for f in findings]
        emit_table(("subject", "key", "reason", "", "detail"), rows, out, title=check)
    elif not findings:
        out.write("OK\n")
    else:
        wide = fmt == "wide"
        out.write("".join(f"{f.line()} ({f.detail})\n" if wide and f.detail else f"{f.line()}\n" for f in findings))
