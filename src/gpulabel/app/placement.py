"""``place``: which nodes each workload in the manifests can be scheduled on, and why not the others.

With ``explain`` (every output but text and name), each verdict carries every
failing filter, and a workload that fits nowhere gets the closest label fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpulabel.app.session import Outcome, Session
from gpulabel.model.findings import Cell, Result, Section

if TYPE_CHECKING:
    from gpulabel.checks.placement import Fix
    from gpulabel.cluster.manifests import Workload
    from gpulabel.k8s.nodeaffinity import Result as Verdict

__all__ = ["PlaceOptions", "run_place"]


@dataclass(frozen=True, slots=True)
class PlaceOptions:
    manifests: tuple[str, ...]  # files; - is stdin
    explain: bool = False  # every failing filter per node, and the closest fix


def _wide_lines(node: str, result: Verdict) -> list[str]:
    lines = [result.line(node)]
    lines.extend(f"    {f.filter}: {f.reason}: {f.why}" for f in result.failures)
    return lines


def _fix_lines(prefix: str, fix: Fix | None) -> list[str]:
    from gpulabel.model.vocabulary import UNKNOWN

    if fix is None:
        return [f"{prefix}closest: none (no node can be made to fit by changing labels alone)"]
    term = f" (through term[{fix.term}])" if fix.term is not None else ""
    lines = [f"{prefix}closest {fix.node}: {fix.command()}{term}"]
    lines.extend(
        f"{prefix}    note: {c.key} is owned by {c.owner}: a hand edit lasts only until it next updates the node"
        for c in fix.changes
        if c.owner != UNKNOWN
    )
    return lines


def run_place(session: Session, opts: PlaceOptions) -> Outcome:
    """Every workload against every node; exit 0 when each fits some node, 1 otherwise."""
    from gpulabel.checks.placement import NodeIndex, closest_fix, place
    from gpulabel.cluster.manifests import load_workloads

    dra_objects: list[tuple[str, dict[str, Any]]] = []
    workloads = load_workloads(opts.manifests, dra_objects)
    uses_claims = any(w.resource_claims for w in workloads)
    if uses_claims:
        import dataclasses

        from gpulabel.checks.dra import claim_results
        from gpulabel.k8s.dra.objects import DRA_KINDS

        state = session.state(["Node", "Pod", *DRA_KINDS])
        ns = next((w.namespace for w in workloads if w.resource_claims), "default")
        state = dataclasses.replace(state, dra=state.dra.with_objects(dra_objects, ns))
    else:
        state = session.state(["Node", "Pod"])
    nodes = state.nodes
    index = NodeIndex(nodes, state.capacities())
    full = opts.explain
    several = len(workloads) > 1
    plain: list[str] = []
    wide: list[str] = []
    verdicts: list[dict[str, Cell]] = []
    summaries: list[dict[str, Cell]] = []
    all_fit = True
    for w in workloads:
        results = place(w.requirements, index, full=full, request=w.requests)
        if w.resource_claims:
            results = claim_results(state, w.namespace, w.name, w.resource_claims, results)
        fits = [n.name for n, r in zip(nodes, results, strict=True) if r.fits]
        all_fit = all_fit and bool(fits)
        fix = closest_fix(w.requirements, nodes, results) if full and not fits else None
        prefix = f"{w.ref} " if several else ""
        for n, r in zip(nodes, results, strict=True):
            plain.append(prefix + r.line(n.name))
            wide.extend(prefix + line for line in _wide_lines(n.name, r))
            verdicts.append(
                {
                    "workload": w.ref,
                    "node": n.name,
                    "fits": r.fits,
                    "reason": r.reason,
                    "failures": tuple(f"{f.filter}: {f.reason}: {f.why}" for f in r.failures),
                }
            )
        if full and not fits:
            wide.extend(_fix_lines(prefix, fix))
        summaries.append(_workload_row(w, fits, fix))
    sections = (
        Section("workloads", tuple(summaries)),
        Section("nodes", tuple(verdicts), tuple(plain), tuple(wide)),
    )
    return Outcome(Result("place", sections=sections, ok=""), 0 if all_fit else 1)


def _workload_row(w: Workload, fits: list[str], fix: Fix | None) -> dict[str, Cell]:
    return {
        "workload": w.ref,
        "kind": w.kind,
        "source": w.where,
        "fits": tuple(fits),
        "closest": None if fix is None else fix.node,
        "changes": () if fix is None else tuple(c.arg() for c in fix.changes),
        "command": None if fix is None else fix.command(),
    }
