"""One renderer for every command: a :class:`Result` as text, wide text, a table, JSON, YAML or names.

- ``text``: the contract scripts parse: one finding per line, or the single
  line ``OK`` (``skipped (<why>)`` when the check's inputs were absent), then
  the lines of the result's detail sections (such as ``<pod> scheduler: ...``).
- ``wide``: each finding's severity (``error``, ``warning``, ``info``), its
  line and its explanation in parentheses (and,
  for a finding that stands for many nodes, a few of their names), then the
  sections' wide lines.
- ``table``: findings as a table (columns: the fields any finding uses),
  each section as a table under its name.
- ``json``/``yaml``: the envelope ``{"apiVersion": "gpulabel/v1", "kind":
  "<Command>Result", "findings": [...], "summary": {...}, <sections>...}``
  (``docs/schema/gpulabel-v1.json``).
- ``name``: the objects the findings are about, ``node/<name>`` or
  ``pod/<namespace>/<name>``, once each.

The plain line carries no severity: scripts split it on spaces by position
(``<node> <key> <reason>``) and a word added at either end would shift or
lengthen every line they parse; wide, table, JSON and YAML show it.

A combined result (``check``) prints one summary line per check in text, then
``total: <n> finding(s) error=<n> warning=<n> info=<n>``, and
in wide and table output each check's findings below.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import IO, Any

from gpulabel.model.findings import Cell, Finding, Result, Section, summarize
from gpulabel.render.escape import printable
from gpulabel.render.formats import FORMATS
from gpulabel.render.table import TableStyle, format_table

__all__ = ["FORMATS", "LINE_FORMATS", "emit", "emit_json", "emit_yaml", "finding_line"]


def emit_json(doc: Any, out: IO[str]) -> None:
    import orjson

    out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode() + "\n")


def emit_yaml(doc: Any, out: IO[str]) -> None:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    out.write(yaml.dump(doc, Dumper=dumper, sort_keys=False, allow_unicode=True, width=1 << 16))


def _value(v: str | None) -> str:
    return "(absent)" if v is None else v


def _label_change(f: Finding) -> str:
    return f"{f.node} {f.key}-" if f.value is None else f"{f.node} {f.key} {f.value}"


def _isolate_line(f: Finding) -> str:
    if f.reason == "gpu-pod":  # a GPU pod on a node being isolated: it keeps its devices, loses their stack
        return " ".join((f.node, "gpu-pod", f.pod, *f.args))
    return _label_change(f)


def _diff_line(f: Finding) -> str:
    if f.reason == "node-added":
        return f"+ node {f.node}"
    if f.reason == "node-removed":
        return f"- node {f.node}"
    if f.reason in ("cordoned", "uncordoned"):
        return f"{f.node} {f.reason}"
    if f.reason in ("taint-added", "taint-removed"):
        return " ".join((f.node, f.reason, *f.args))
    if f.reason == "ready-changed":
        return f"{f.node} Ready {_value(f.old)} -> {_value(f.value)}"
    if f.reason == "allocatable-changed":
        return f"{f.node} allocatable {' '.join(f.args)} {_value(f.old)} -> {_value(f.value)}"
    return f"{f.node} {f.key} {_value(f.old)} -> {_value(f.value)}"


def _validate_line(f: Finding) -> str:
    return f"{f.key if f.value is None else f'{f.key}={f.value}'}: {f.detail}"


LINE_FORMATS: dict[str, Callable[[Finding], str]] = {
    "sync": _label_change,
    "isolate": _isolate_line,
    "diff": _diff_line,
    "validate": _validate_line,
}
"""Checks whose plain line is not :meth:`Finding.line` (a check added later may register its own)."""


def finding_line(f: Finding) -> str:
    fmt = LINE_FORMATS.get(f.check)
    line = printable(fmt(f) if fmt is not None else f.line())  # a name from the input adds no line
    if f.change:
        return f"{'+' if f.change == 'appeared' else '-'} {f.check} {line}"
    return line


def _wide_line(f: Finding) -> str:
    extra = f"{f.detail}; in the baseline" if f.baseline else f.detail
    if f.count is not None and f.sample:
        more = ", ..." if f.count > len(f.sample) else ""
        extra = f"{extra}; nodes: {', '.join(f.sample)}{more}" if extra else f"nodes: {', '.join(f.sample)}{more}"
    line = f"{finding_line(f)} ({extra})" if extra and f.check not in ("validate",) else finding_line(f)
    return f"{f.severity} {line}" if f.severity else line


def _plain(result: Result, wide: bool) -> list[str]:
    if result.skipped:
        return [f"skipped ({result.skipped})"]
    lines = [_wide_line(f) if wide else finding_line(f) for f in result.findings]
    if not lines and result.ok:
        lines.append(result.ok)
    for s in result.sections:
        lines.extend(s.lines(wide))
    lines.extend(result.caveats)
    return lines


def summary_line(result: Result) -> str:
    if result.skipped:
        return f"{result.command}: skipped ({result.skipped})"
    notes = "".join(f" (info: {n} {what})" for what, n in result.notes.items())
    notes += "".join(f" ({c})" for c in result.caveats)
    if result.counts.get("ignored"):
        notes += f" (ignored: {result.counts['ignored']} by the config's rules)"
    if not result.findings:
        return f"{result.command}: OK{notes}"
    tail = " ".join(f"{reason}={n}" for reason, n in summarize(result.findings).items())
    return f"{result.command}: {len(result.findings)} finding(s) {tail}{notes}"


def total_line(result: Result) -> str:
    """``total: <n> finding(s) error=<n> warning=<n> info=<n>``: a combined result's findings by severity."""
    counts = result.severities()
    return f"total: {len(result.findings)} finding(s) " + " ".join(f"{k}={n}" for k, n in counts.items())


# -- tables -----------------------------------------------------------------------

_COLUMNS: tuple[tuple[str, Callable[[Finding], str]], ...] = (
    ("check", lambda f: f.check),
    ("severity", lambda f: f.severity),
    ("change", lambda f: f.change),
    ("pod", lambda f: f.pod),
    ("node", lambda f: f.node),
    ("operand", lambda f: f.operand),
    ("key", lambda f: f.key),
    ("old", lambda f: "" if f.old is None else f.old),
    ("value", lambda f: "" if f.value is None else f.value),
    ("reason", lambda f: f.reason),
    ("nodes", lambda f: "" if f.count is None else str(f.count)),
    ("args", lambda f: " ".join(f.args)),
    ("detail", lambda f: f.detail),
)


def findings_table(findings: Sequence[Finding], style: TableStyle) -> str:
    several = len({f.check for f in findings}) > 1
    cols = [(h, get) for h, get in _COLUMNS if (h != "check" or several) and any(get(f) for f in findings)]
    if not any(h == "reason" for h, _ in cols):
        cols.insert(0, ("reason", lambda f: f.reason))
    return format_table([h for h, _ in cols], [[get(f) for _, get in cols] for f in findings], style)


def _cell(v: Cell) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, tuple):
        return ", ".join(v)
    return str(v)


def section_table(section: Section, style: TableStyle) -> str:
    if not section.rows:
        return ""
    headers = list(dict.fromkeys(k for row in section.rows for k in row))
    rows = [[_cell(row.get(h)) for h in headers] for row in section.rows]
    return format_table([h.replace("_", " ") for h in headers], rows, style)


def _table(result: Result, style: TableStyle) -> str:
    if result.skipped:
        return f"skipped ({result.skipped})\n"
    parts = []
    if result.findings:
        parts.append(findings_table(result.findings, style))
    elif result.ok:
        parts.append(result.ok + "\n")
    for s in result.sections:
        text = section_table(s, style)
        if text:
            parts.append((f"{s.name}:\n" if style.headers else "") + text)
    return "\n".join(parts)


# -- names --------------------------------------------------------------------------


def _names(result: Result) -> list[str]:
    names = (f"pod/{f.pod}" if f.pod else f"node/{f.node}" for f in result.findings if f.pod or f.node)
    return list(dict.fromkeys(names))


def emit(result: Result, fmt: str, out: IO[str], style: TableStyle | None = None) -> None:
    """Write ``result`` to ``out`` in ``fmt`` (one of :data:`FORMATS`)."""
    style = style or TableStyle()
    if fmt == "json":
        emit_json(result.envelope(), out)
    elif fmt == "yaml":
        emit_yaml(result.envelope(), out)
    elif fmt == "name":
        out.write("".join(printable(n) + "\n" for n in _names(result)))
    elif result.parts:
        out.write("".join(printable(line) + "\n" for s in result.sections for line in s.lines(fmt == "wide")))
        out.write("".join(printable(summary_line(p)) + "\n" for p in result.parts))
        if result.graded:
            out.write(total_line(result) + "\n")
        if fmt in ("wide", "table"):
            for p in result.parts:
                if p.findings:
                    out.write("\n")
                    if fmt == "table":
                        out.write(f"{p.command}:\n" if style.headers else "")
                        out.write(_table(p, style))
                    else:
                        out.write("".join(printable(line) + "\n" for line in _plain(p, True)))
    elif fmt == "table":
        out.write(_table(result, style))
    else:
        out.write("".join(printable(line) + "\n" for line in _plain(result, fmt == "wide")))
