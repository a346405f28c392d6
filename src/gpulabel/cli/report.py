"""The ``report`` command: load the cluster once, run every read-only check, write one HTML page.

Kept out of ``cli.py`` so the CLI only registers it. The page is informational:
exit 0 once it is written, whatever it reports; 2 (one line on stderr) when the
cluster or snapshot cannot be read or the file cannot be written. stdout gets one
line, ``<file>: <nodes> nodes, audit=N operands=N pending=N hazards=N`` (pods for
pending), or with ``-o json`` the same as data; ``--html -`` writes the page to
stdout instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulabel.cli.context import AddCommand, Context

__all__ = ["add_report_command", "cmd_report"]


def add_report_command(add: AddCommand) -> None:
    """Register ``report`` with the CLI's ``add`` helper."""
    p = add("report", cmd_report, "write every read-only check as one static HTML page, sortable and filterable")
    p.add_argument("--html", required=True, metavar="FILE", help="the page to write (- for stdout)")
    p.add_argument("--strict", action="store_true", help="audit with --strict")
    p.add_argument("--disabled", action="append", default=[], metavar="OPERAND", help="as for operands")
    from gpulabel.cli.gpucmds import add_stuck_after

    add_stuck_after(p)


def cmd_report(ctx: Context) -> int:
    from datetime import UTC, datetime

    from gpulabel.checks.registry import known_operands
    from gpulabel.render.report import collect, render_html

    a = ctx.args
    known_operands(a.disabled)
    state = ctx.state(["Node", "Pod", "DaemonSet", "ClusterPolicy"])
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    from gpulabel.cli.gpucmds import options

    opts = options(ctx)
    doc = collect(
        state,
        disabled=a.disabled,
        strict=a.strict,
        namespace=a.namespace,
        generated=generated,
        stuck_after=opts.stuck_after,
        now=opts.now,
    )
    page = render_html(doc).encode()
    if a.html == "-":
        ctx.out.write(page.decode())
        return 0
    from gpulabel.cluster.files import write_file

    write_file(a.html, page)
    counts = {check: s["pods"] if check == "pending" else s["findings"] for check, s in doc["summary"].items()}
    if ctx.fmt == "json":
        from gpulabel.render.text import emit_json

        emit_json(
            {"file": a.html, "bytes": len(page), "nodes": doc["totals"]["nodes"], "summary": doc["summary"]}, ctx.out
        )
    else:
        tail = " ".join(f"{check}={n}" for check, n in counts.items())
        ctx.out.write(f"{a.html}: {doc['totals']['nodes']} nodes, {tail}\n")
    return 0
