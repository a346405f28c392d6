"""``place``'s result: each workload's verdicts grouped (or node by node), the advice, one row per workload.

Pure: workloads (anything shaped like :class:`PlacedWorkload`, such as
``cluster.manifests.Workload``) and a :class:`ClusterState` in, one
:class:`Result` out; the command only loads and emits. Output contract:

- grouped (the default): ``yes <n> node(s): <names>`` or ``no <reason> <n>
  node(s): <names>``, a few names with the group's best node first (the one
  ``-o wide`` explains);
- ``per_node``: ``<node> yes`` or ``<node> no <reason>`` for every node;
- lines are prefixed with ``<namespace>/<name> `` when several workloads are
  placed; with ``full`` (wide and structured output) every failure of every
  filter, and for a workload that fits nowhere the closest label change
  (:mod:`gpulabel.checks.advice`) or why there is none, and typo hints.

Sections: ``workloads`` (fits, closest, changes, command, hints), ``groups``
and ``nodes`` (one row per node, always in structured output).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from gpulabel.checks.advice import Advice, advise
from gpulabel.checks.nfdrules import label_hints
from gpulabel.checks.placement import NodeIndex, group_verdicts, place
from gpulabel.k8s.nodeaffinity import PodRequirements
from gpulabel.k8s.nodeaffinity import Result as Verdict
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Cell, Result, Section
from gpulabel.model.vocabulary import UNKNOWN

if TYPE_CHECKING:
    from gpulabel.k8s.dra.evaluator import DraEvaluator

__all__ = ["PlacedWorkload", "place_result"]


class PlacedWorkload(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def where(self) -> str: ...
    @property
    def requirements(self) -> PodRequirements: ...
    @property
    def requests(self) -> Mapping[str, int]: ...
    @property
    def resource_claims(self) -> tuple[dict[str, Any], ...]: ...
    @property
    def ref(self) -> str: ...


def _failures(result: Verdict) -> tuple[str, ...]:
    return tuple(f"{f.filter}: {f.reason}: {f.why}" for f in result.failures)


def _fix_lines(prefix: str, advice: Advice) -> list[str]:
    fix = advice.fix
    hints = [f"{prefix}    hint: {h}" for h in advice.hints]
    if fix is None:
        return [f"{prefix}closest: {advice.none_line()}", *hints]
    term = f" (through term[{fix.term}])" if fix.term is not None else ""
    lines = [f"{prefix}closest {fix.node}: {fix.command()}{term}"]
    lines.extend(
        f"{prefix}    note: {c.key} is owned by {c.owner}: a hand edit lasts only until it next updates the node"
        for c in fix.changes
        if c.owner != UNKNOWN
    )
    return lines + hints


def _workload_row(w: PlacedWorkload, fits: list[str], advice: Advice | None) -> dict[str, Cell]:
    fix = None if advice is None else advice.fix
    return {
        "workload": w.ref,
        "kind": w.kind,
        "source": w.where,
        "fits": tuple(fits),
        "closest": None if fix is None else fix.node,
        "changes": () if fix is None else tuple(c.arg() for c in fix.changes),
        "command": None if fix is None else fix.command(),
        "hints": () if advice is None else advice.hints,
    }


def place_result(
    state: ClusterState, workloads: Sequence[PlacedWorkload], *, full: bool, per_node: bool = False
) -> tuple[Result, bool]:
    """The ``place`` result, and whether every workload fits some node."""
    nodes = state.nodes
    capacities = state.capacities()
    index = NodeIndex(nodes, capacities)
    several = len(workloads) > 1
    dra: DraEvaluator | None = None  # made for the first workload with claims, shared by the rest of this run
    plain: list[str] = []
    wide: list[str] = []
    grouped: list[str] = []
    grouped_wide: list[str] = []
    verdicts: list[dict[str, Cell]] = []
    groups: list[dict[str, Cell]] = []
    summaries: list[dict[str, Cell]] = []
    all_fit = True
    for w in workloads:
        results = place(w.requirements, index, full=full, request=w.requests)
        # extended resources a DeviceClass maps: DRA's where no device plugin advertises them
        backed = [
            n for n, v in w.requests.items() if v > 0 and n in state.dra.extended and "ResourceSlice" in state.kinds
        ]
        if w.resource_claims or backed:
            from gpulabel.checks.dra import claim_results, delegated_resources, without_delegated
            from gpulabel.k8s.dra.evaluator import DraEvaluator

            delegated = delegated_resources(state, capacities, backed) if backed else {}
            if delegated:
                results = without_delegated(w.requirements, index, w.requests, results, state, delegated, full)
            dra = dra or DraEvaluator(state.dra)
            results = claim_results(state, w.namespace, w.name, w.resource_claims, results, dra, w.requests, delegated)
        fits = [n.name for n, r in zip(nodes, results, strict=True) if r.fits]
        all_fit = all_fit and bool(fits)
        advice = (
            advise(w.requirements, nodes, results, capacities=capacities, request=w.requests)
            if full and not fits
            else None
        )
        prefix = f"{w.ref} " if several else ""
        for n, r in zip(nodes, results, strict=True):
            plain.append(prefix + r.line(n.name))
            wide.append(prefix + r.line(n.name))
            wide.extend(f"{prefix}    {f.filter}: {f.reason}: {f.why}" for f in r.failures)
            verdicts.append(
                {"workload": w.ref, "node": n.name, "fits": r.fits, "reason": r.reason, "failures": _failures(r)}
            )
        for g in group_verdicts(nodes, results):
            grouped.append(prefix + g.line())
            grouped_wide.append(prefix + g.line())
            grouped_wide.extend(f"{prefix}    {g.best}: {f.filter}: {f.reason}: {f.why}" for f in g.result.failures)
            groups.append(
                {
                    "workload": w.ref,
                    "fits": g.result.fits,
                    "reason": g.reason,
                    "count": g.count,
                    "sample": g.sample,
                    "best": g.best,
                    "failures": _failures(g.result),
                }
            )
        if advice is not None:
            fix_lines = _fix_lines(prefix, advice)
            fix_lines.extend(f"{prefix}    nfd: {h}" for h in label_hints(state, None, w.requirements.label_keys))
            wide.extend(fix_lines)
            grouped_wide.extend(fix_lines)
        summaries.append(_workload_row(w, fits, advice))
    if per_node:
        group_section = Section("groups", tuple(groups))
        node_section = Section("nodes", tuple(verdicts), tuple(plain), tuple(wide))
    else:
        group_section = Section("groups", tuple(groups), tuple(grouped), tuple(grouped_wide))
        node_section = Section("nodes", tuple(verdicts))
    return Result(
        "place", sections=(Section("workloads", tuple(summaries)), group_section, node_section), ok=""
    ), all_fit
