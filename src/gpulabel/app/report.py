"""``report``: every read-only check of one load of the cluster, as one static HTML page."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpulabel.app.evidence import EvidenceOptions, gather_evidence
from gpulabel.app.session import Outcome, Session
from gpulabel.checks.registry import BUILTIN, CheckOptions
from gpulabel.model.findings import Result, Section

if TYPE_CHECKING:
    from gpulabel.checks.explain.evidence import Diagnosis
    from gpulabel.model.cluster import ClusterState

__all__ = ["ReportOptions", "report_doc", "report_html", "run_report"]


@dataclass(frozen=True, slots=True)
class ReportOptions:
    html: str  # the page to write; - for stdout
    checks: CheckOptions = field(default_factory=BUILTIN.options)
    generated: str = ""  # when, as the page's header says it
    evidence: EvidenceOptions = field(default_factory=EvidenceOptions)
    force: bool = False  # replace an existing file gpulabel did not write (cluster/files.py)


def report_doc(
    state: ClusterState,
    opts: CheckOptions | None = None,
    *,
    generated: str = "",
    source: str | None = None,
    evidence: Callable[[Result], Sequence[Diagnosis]] | None = None,
    checked: Result | None = None,
) -> dict[str, Any]:
    """The page's data: every registered check run once over ``state`` (as ``check`` runs them) and the inventory.

    ``evidence`` (findings in, diagnoses out): an operand cell's cause ends with why its pod fails.
    ``checked``: the checks' result over ``state`` when the caller has it already (the fleet report).
    """
    from gpulabel.checks.health.inventory import inventory
    from gpulabel.checks.operands.daemonsets import disabled_by_cluster_policy
    from gpulabel.checks.registry import run_checks
    from gpulabel.render.report import collect

    opts = BUILTIN.options() if opts is None else opts
    checked = run_checks(state, opts) if checked is None else checked
    off = set(opts.disabled) | disabled_by_cluster_policy(state.cluster_policies)
    doc = collect(state, checked, inventory(state), switched_off=sorted(off), generated=generated, source=source)
    if evidence is not None:
        _with_why(doc, evidence(checked))
    return doc


def _with_why(doc: dict[str, Any], diagnoses: Sequence[Diagnosis]) -> None:
    """Each diagnosed operand cell's cause, followed by ``why: <cause> [<signature>]``."""
    column = {c["operand"]: str(i) for i, c in enumerate(doc["columns"])}
    rows = {r["name"]: r for r in doc["nodes"]}
    for d in diagnoses:
        said, row, at = d.summary(), rows.get(d.blame.node), column.get(d.blame.operand)
        if said and row is not None and at is not None:
            causes = row.setdefault("causes", {})
            causes[at] = f"{causes[at]}; why: {said}" if causes.get(at) else f"why: {said}"


def report_html(
    state: ClusterState, opts: CheckOptions | None = None, *, generated: str = "", title: str = "gpulabel report"
) -> str:
    """Run every registered check over ``state`` and render the page."""
    from gpulabel.render.report import render_html

    return render_html(report_doc(state, opts, generated=generated), title)


def run_report(session: Session, opts: ReportOptions) -> Outcome:
    """Write the page (or, ``html`` is ``-``, answer it as the outcome's page); informational: exit 0 (2 when the
    input selects nothing: app/selected.py)."""
    from gpulabel.render.report import render_html

    # what every check reads (the DRA kinds only where the server serves them)
    state = session.state(opts.checks.registry.kinds)
    snapshots = session.source.snapshots
    source = ", ".join(snapshots) if snapshots else None  # the paths as given, never made absolute
    warnings: list[str] = []

    def evidence(checked: Result) -> Sequence[Diagnosis]:
        diagnoses, unread = gather_evidence(session, state, checked.findings, opts.evidence)
        warnings.extend(unread)
        return diagnoses

    from gpulabel.app.selected import refuse_empty

    doc = report_doc(state, opts.checks, generated=opts.generated, source=source, evidence=evidence)
    page = render_html(doc)
    if opts.html == "-":
        said = Outcome(Result("report", ok=""), page=page, warnings=tuple(warnings))
        return refuse_empty(said, session.source, state, opts.checks.namespace)
    from gpulabel.cluster.files import write_file
    from gpulabel.render.report import GENERATOR_MARK

    data = page.encode()
    write_file(opts.html, data, marker=GENERATOR_MARK, force=opts.force)
    summary = doc["summary"]
    line = f"{opts.html}: {doc['totals']['nodes']} nodes, " + " ".join(
        f"{check}={'skipped' if s.get('skipped') else s['findings']}" for check, s in summary.items()
    )
    checks = tuple(
        {"check": check, "findings": s["findings"], "skipped": s.get("skipped")} for check, s in summary.items()
    )
    fields = {"file": opts.html, "bytes": len(data), "nodes": doc["totals"]["nodes"]}
    result = Result("report", sections=(Section("checks", checks, (line,)),), ok="", fields=fields)
    return refuse_empty(Outcome(result, warnings=tuple(warnings)), session.source, state, opts.checks.namespace)
