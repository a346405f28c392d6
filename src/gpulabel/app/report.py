"""``report``: every read-only check of one load of the cluster, as one static HTML page."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpulabel.app.session import Outcome, Session
from gpulabel.checks.registry import CheckOptions
from gpulabel.model.findings import Result, Section

__all__ = ["ReportOptions", "run_report"]


@dataclass(frozen=True, slots=True)
class ReportOptions:
    html: str  # the page to write; - for stdout
    checks: CheckOptions = field(default_factory=CheckOptions)
    generated: str = ""  # when, as the page's header says it


def run_report(session: Session, opts: ReportOptions) -> Outcome:
    """Write the page (or, ``html`` is ``-``, answer it as the outcome's page); informational: exit 0."""
    from gpulabel.render.report import collect, render_html

    c = opts.checks
    state = session.state(["Node", "Pod", "DaemonSet", "ClusterPolicy"])
    snapshots = session.source.snapshots
    source = ", ".join(snapshots) if snapshots else None  # the paths as given, never made absolute
    doc = collect(
        state,
        disabled=c.disabled,
        strict=c.strict,
        namespace=c.namespace,
        generated=opts.generated,
        source=source,
        stuck_after=c.stuck_after,
        now=c.now,
    )
    page = render_html(doc)
    if opts.html == "-":
        return Outcome(Result("report", ok=""), page=page)
    from gpulabel.cluster.files import write_file

    data = page.encode()
    write_file(opts.html, data)
    summary = doc["summary"]
    line = f"{opts.html}: {doc['totals']['nodes']} nodes, " + " ".join(
        f"{check}={'skipped' if s.get('skipped') else s['findings']}" for check, s in summary.items()
    )
    checks = tuple(
        {"check": check, "findings": s["findings"], "skipped": s.get("skipped")} for check, s in summary.items()
    )
    fields = {"file": opts.html, "bytes": len(data), "nodes": doc["totals"]["nodes"]}
    return Outcome(Result("report", sections=(Section("checks", checks, (line,)),), ok="", fields=fields))
