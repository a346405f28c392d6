"""``check`` and ``report`` over a fleet: each cluster read and checked as alone, side by side (app/fleet.py).

``report``: one page, a summary row per cluster (GPU nodes; GPUs usable, unhealthy, unschedulable and
lost to a root cause; findings by severity; the worst root causes) above each cluster's own report, whose
data is :func:`gpulabel.app.report.report_doc`'s for that cluster alone. ``check``: one envelope per
cluster (``check -o json``'s, naming its cluster) in a ``List``.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gpulabel.app.fleet import Member, in_parallel
from gpulabel.app.session import Outcome, Session
from gpulabel.model.findings import Result, Section

if TYPE_CHECKING:
    from gpulabel.app.checks import Verdict
    from gpulabel.app.evidence import EvidenceOptions
    from gpulabel.app.report import ReportOptions
    from gpulabel.checks.explain.evidence import Diagnosis
    from gpulabel.checks.registry import CheckOptions
    from gpulabel.model.cluster import ClusterState

__all__ = ["WORST_CAUSES", "FleetCheck", "fleet_row", "run_fleet_check", "run_fleet_report"]

WORST_CAUSES = 3  # root causes named per cluster in the fleet summary (the most GPUs lost first)


class _Said:
    """Each member's warnings, prefixed with its cluster, kept in one list from every thread."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()

    def of(self, name: str) -> Callable[[str], None]:
        def warn(text: str) -> None:
            with self._lock:
                self.lines.append(f"cluster {name}: {text}")

        return warn


@dataclass(frozen=True, slots=True)
class FleetCheck:
    """``check`` over every member: each cluster's name and outcome, in the members' order."""

    outcomes: tuple[tuple[str, Outcome], ...]
    warnings: tuple[str, ...] = ()

    @property
    def code(self) -> int:
        return max((o.code for _, o in self.outcomes), default=0)

    def document(self) -> dict[str, object]:
        """``{"apiVersion": "gpulabel/v1", "kind": "List", "items": [envelope, ...]}``, each naming its cluster."""
        from gpulabel.model.findings import API_VERSION

        items = [_named(o.result.envelope(), name) for name, o in self.outcomes]
        return {"apiVersion": API_VERSION, "kind": "List", "items": items}


def _named(envelope: dict[str, object], name: str) -> dict[str, object]:
    """The envelope with ``cluster`` after ``kind`` (where a reader looks first)."""
    out: dict[str, object] = {}
    for k, v in envelope.items():
        out[k] = v
        if k == "kind":
            out["cluster"] = name
    return out


def run_fleet_check(
    members: Sequence[Member], opts: CheckOptions, verdict: Verdict, evidence: EvidenceOptions | None
) -> FleetCheck:
    """``check`` (app.checks.run_all) on each member, a bounded number at once."""
    from gpulabel.app.checks import run_all

    said = _Said()

    def one(m: Member) -> tuple[str, Outcome]:
        return m.name, run_all(Session(m.source, said.of(m.name)), opts, verdict, evidence)

    outcomes = in_parallel(members, one)
    member_warnings = [f"cluster {name}: {w}" for name, o in outcomes for w in o.warnings]
    return FleetCheck(tuple(outcomes), (*said.lines, *member_warnings))


def fleet_row(name: str, state: ClusterState, checked: Result, doc: dict[str, Any]) -> dict[str, Any]:
    """The fleet summary's row of one cluster: GPU nodes, its GPUs by what a new pod can use and those
    lost to a root cause, findings by severity, the worst root causes (as ``check`` words them)."""
    from gpulabel.checks.engine.rootcause import root_causes
    from gpulabel.checks.health.usable import node_use
    from gpulabel.model.severity import SEVERITIES

    usable = unhealthy = unschedulable = 0
    for node in state.nodes:
        use = node_use(node, 0)
        usable, unhealthy, unschedulable = (
            usable + use.usable,
            unhealthy + use.unhealthy,
            unschedulable + use.unschedulable,
        )
    causes = root_causes(state.nodes, checked.findings)
    severities = Counter(f.severity for f in checked.findings)
    return {
        "cluster": name,
        "gpu_nodes": doc["totals"]["gpu_nodes"],
        "nodes": doc["totals"]["nodes"],
        "gpus_usable": usable,
        "gpus_unhealthy": unhealthy,
        "gpus_unschedulable": unschedulable,
        "gpus_lost": sum(c.gpus or 0 for c in causes),
        "findings": {s: severities.get(s, 0) for s in SEVERITIES},
        "causes": [c.line() for c in causes[:WORST_CAUSES]],
        "more_causes": max(len(causes) - WORST_CAUSES, 0),
    }


def run_fleet_report(members: Sequence[Member], opts: ReportOptions) -> Outcome:
    """One page: the fleet summary and each cluster's report (its data exactly the single-cluster report's)."""
    from gpulabel.app.evidence import gather_evidence
    from gpulabel.app.report import report_doc
    from gpulabel.app.selected import EMPTY_EXIT, nothing_selected
    from gpulabel.checks.registry import run_checks

    said = _Said()
    empty: list[str] = []  # the members whose input selects nothing (app/selected.py): exit 2

    def one(m: Member) -> tuple[dict[str, Any], dict[str, Any]]:
        session = Session(m.source, said.of(m.name))
        state = session.state(opts.checks.registry.kinds)
        if (line := nothing_selected(m.source, state, opts.checks.namespace)) is not None:
            said.of(m.name)(line)
            empty.append(m.name)
        checked = run_checks(state, opts.checks)
        unread: list[str] = []

        def evidence(result: Result) -> Sequence[Diagnosis]:
            diagnoses, missed = gather_evidence(session, state, result.findings, opts.evidence)
            unread.extend(missed)
            return diagnoses

        source = ", ".join(m.source.snapshots) if m.source.snapshots else None
        doc = report_doc(
            state, opts.checks, generated=opts.generated, source=source, evidence=evidence, checked=checked
        )
        for line in unread:
            said.of(m.name)(line)
        return fleet_row(m.name, state, checked, doc), doc

    answers = in_parallel(members, one)
    fleet = {
        "generated": opts.generated,
        "fleet": [row for row, _ in answers],
        "clusters": [{"name": m.name, "doc": doc} for m, (_, doc) in zip(members, answers, strict=True)],
    }
    written = _written(fleet, opts, tuple(said.lines))
    return replace(written, code=EMPTY_EXIT) if empty else written


def _written(fleet: dict[str, Any], opts: ReportOptions, warnings: tuple[str, ...]) -> Outcome:
    from gpulabel.render.report import render_fleet_html

    page = render_fleet_html(fleet)
    if opts.html == "-":
        return Outcome(Result("report", ok=""), page=page, warnings=warnings)
    from gpulabel.cluster.files import write_file
    from gpulabel.render.report import GENERATOR_MARK

    data = page.encode()
    write_file(opts.html, data, marker=GENERATOR_MARK, force=opts.force)
    rows, lines = [], []
    for row, c in zip(fleet["fleet"], fleet["clusters"], strict=True):
        summary = c["doc"]["summary"]
        counts = {check: "skipped" if s.get("skipped") else s["findings"] for check, s in summary.items()}
        lines.append(
            f"{opts.html}: cluster {row['cluster']}: {row['nodes']} nodes, "
            + " ".join(f"{check}={n}" for check, n in counts.items())
        )
        rows.append(
            {
                "cluster": row["cluster"],
                "nodes": row["nodes"],
                "gpu_nodes": row["gpu_nodes"],
                "gpus_usable": row["gpus_usable"],
                "gpus_lost": row["gpus_lost"],
                **{f"{s}_findings": n for s, n in row["findings"].items()},
            }
        )
    fields: dict[str, str | int] = {"file": opts.html, "bytes": len(data)}
    result = Result("report", sections=(Section("clusters", tuple(rows), tuple(lines)),), ok="", fields=fields)
    return Outcome(result, warnings=warnings)
