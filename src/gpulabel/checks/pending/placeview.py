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
  (:mod:`gpulabel.checks.placement.advice`) or why there is none, and typo hints.

Sections: ``workloads`` (fits, closest, changes, command, hints), ``groups``
and ``nodes`` (one row per node, always in structured output).

Where the input has Karpenter NodePools, ``full`` also says, for a workload that fits no node, what the
autoscaler would do for its pod (:func:`gpulabel.checks.pending.autoscale.autoscaler_verdict`, in ``pending``'s
words: :func:`~gpulabel.checks.pending.autoscale.verdict_words`): one wide line ``autoscaler: <reason> <args>
(<why>)`` after the workload's others, and a row of the ``autoscaler`` section (structured output). Without
NodePools nothing changes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from gpulabel.checks.nfd.rules import label_hints
from gpulabel.checks.pending.autoscale import autoscaler_verdict, nodepool_used, verdict_words
from gpulabel.checks.placement.advice import Advice, advise
from gpulabel.checks.placement.fit import NodeIndex, group_verdicts, place
from gpulabel.k8s.nodeaffinity import PodRequirements
from gpulabel.k8s.nodeaffinity import Result as Verdict
from gpulabel.model.cluster import ClusterState, Node, Pod
from gpulabel.model.findings import Cell, Result, Section
from gpulabel.model.readers import pod_from_json
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
    def spec(self) -> Mapping[str, Any]: ...
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


def _dra_backed(state: ClusterState, w: PlacedWorkload) -> list[str]:
    """The extended resources ``w`` asks for that a DeviceClass maps: DRA's where no device plugin advertises them."""
    if "ResourceSlice" not in state.kinds or not state.dra.extended:
        return []
    return [n for n, v in w.requests.items() if v > 0 and n in state.dra.extended]


@dataclass(frozen=True, slots=True)
class _Shape:
    """What every workload of one pod shape shares: the verdicts and their lines, before the workload's prefix."""

    fits: list[str]
    advice: Advice | None
    nodes: list[dict[str, Cell]]  # per node, without "workload"
    plain: list[str]
    wide: list[str]
    groups: list[dict[str, Cell]]
    grouped: list[str]
    grouped_wide: list[str]
    fix: list[str]
    autoscaler: dict[str, Cell] | None = None  # the autoscaler's verdict (a row without "workload")


def _groups(nodes: Sequence[Node], results: Sequence[Verdict]) -> tuple[list[dict[str, Cell]], list[str], list[str]]:
    """The nodes' verdicts grouped: the rows, the lines, and the wide lines (each group's best node's failures)."""
    groups: list[dict[str, Cell]] = []
    grouped: list[str] = []
    grouped_wide: list[str] = []
    for g in group_verdicts(nodes, results):
        grouped.append(g.line())
        grouped_wide.append(g.line())
        grouped_wide.extend(f"    {g.best}: {f.filter}: {f.reason}: {f.why}" for f in g.result.failures)
        groups.append(
            {
                "fits": g.result.fits,
                "reason": g.reason,
                "count": g.count,
                "sample": g.sample,
                "best": g.best,
                "failures": _failures(g.result),
            }
        )
    return groups, grouped, grouped_wide


def _shape(
    state: ClusterState,
    index: NodeIndex,
    w: PlacedWorkload,
    *,
    full: bool,
    per_node: bool,
    dra: DraEvaluator | None,
    used: Mapping[str, Mapping[str, str]] | None = None,
    now: datetime | None = None,
) -> _Shape:
    nodes, capacities = state.nodes, index.capacities
    results = place(w.requirements, index, full=full, request=w.requests)
    backed = _dra_backed(state, w)
    if w.resource_claims or backed:
        from gpulabel.checks.dra.rules import claim_results, delegated_resources, without_delegated

        assert dra is not None
        delegated = delegated_resources(state, capacities, backed) if backed else {}
        if delegated:
            results = without_delegated(w.requirements, index, w.requests, results, state, delegated, full)
        results = claim_results(state, w.namespace, w.name, w.resource_claims, results, dra, w.requests, delegated)
    fits = [n.name for n, r in zip(nodes, results, strict=True) if r.fits]
    advice = (
        advise(w.requirements, nodes, results, capacities=capacities, request=w.requests) if full and not fits else None
    )
    plain: list[str] = []
    wide: list[str] = []
    rows: list[dict[str, Cell]] = []
    for n, r in zip(nodes, results, strict=True):
        if per_node:  # the node-by-node lines are shown only then; the rows always (structured output)
            plain.append(r.line(n.name))
            wide.append(r.line(n.name))
            wide.extend(f"    {f.filter}: {f.reason}: {f.why}" for f in r.failures)
        rows.append({"node": n.name, "fits": r.fits, "reason": r.reason, "failures": _failures(r)})
    groups, grouped, grouped_wide = _groups(nodes, results)
    fix: list[str] = []
    if advice is not None:
        fix = _fix_lines("", advice)
        fix.extend(f"    nfd: {h}" for h in label_hints(state, None, w.requirements.label_keys))
    autoscaler = _autoscaler(state, w, used, now) if full and not fits and used is not None else None
    if autoscaler is not None:
        fix.append(f"autoscaler: {autoscaler.pop('line')}")
    return _Shape(fits, advice, rows, plain, wide, groups, grouped, grouped_wide, fix, autoscaler)


def _manifest_pod(w: PlacedWorkload) -> Pod:
    """The workload's pod as the cluster would record it, Pending (a DaemonSet's: owned by one)."""
    owners = (
        [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": w.name, "uid": ""}] if w.kind == "DaemonSet" else []
    )
    meta = {"name": w.name or "manifest", "namespace": w.namespace, "ownerReferences": owners}
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": dict(w.spec), "status": {"phase": "Pending"}}
    return pod_from_json(obj, w.where)


def _autoscaler(
    state: ClusterState, w: PlacedWorkload, used: Mapping[str, Mapping[str, str]], now: datetime | None
) -> dict[str, Cell] | None:
    """The autoscaler's verdict for the workload's pod, as a row (and its wide words under ``line``)."""
    v = autoscaler_verdict(state, _manifest_pod(w), used=used, now=now)
    if v is None:
        return None
    reason, args, detail = verdict_words(v)
    return {
        "verdict": v.kind,
        "reason": reason,
        "nodepool": v.nodepool or None,
        "nodeclaim": v.nodeclaim or None,
        "args": args,
        "detail": detail,
        "line": " ".join((reason, *args)) + f" ({detail})",
    }


def _shaped(
    state: ClusterState,
    workloads: Sequence[PlacedWorkload],
    *,
    full: bool,
    per_node: bool,
    used: Mapping[str, Mapping[str, str]] | None,
    now: datetime | None = None,
) -> Iterator[tuple[PlacedWorkload, _Shape]]:
    """Each workload with its shape, placed once per pod shape (a workload with claims, or with extended
    resources a DeviceClass backs, alone: its placement depends on it)."""
    index = NodeIndex(state.nodes, state.capacities())
    dra: DraEvaluator | None = None  # made for the first workload with claims, shared by the rest of this run
    shapes: dict[tuple[int, int], _Shape] = {}
    for w in workloads:
        key = (id(w.requirements), id(w.requests))
        through_dra = bool(w.resource_claims) or bool(_dra_backed(state, w))  # depends on the workload: not shared
        shape = None if through_dra else shapes.get(key)
        if shape is None:
            if through_dra:
                from gpulabel.k8s.dra.evaluator import DraEvaluator

                dra = dra or DraEvaluator(state.dra)
            shape = _shape(state, index, w, full=full, per_node=per_node, dra=dra, used=used, now=now)
            if not through_dra:
                shapes[key] = shape
        yield w, shape


def place_result(
    state: ClusterState,
    workloads: Sequence[PlacedWorkload],
    *,
    full: bool,
    per_node: bool = False,
    now: datetime | None = None,
) -> tuple[Result, bool]:
    """The ``place`` result, and whether every workload fits some node.

    ``now``: when a NodeClaim's age is judged (a launching one past its grace is late, not on its way).
    Workloads of one pod shape (the same ``requirements`` and ``requests`` objects, as
    ``cluster.manifests`` hands out for identical pods, and no ResourceClaims) are placed
    once: 50,000 copies of a Job's pod cost one placement and their output lines.
    """
    # the autoscaler's verdict (wide and structured output, where NodePools are): what each pool's nodes use
    pools = state.karpenter.nodepools
    used = nodepool_used(pools, state.nodes) if full and pools else None
    autoscaled: list[dict[str, Cell]] = []
    several = len(workloads) > 1
    plain: list[str] = []
    wide: list[str] = []
    grouped: list[str] = []
    grouped_wide: list[str] = []
    verdicts: list[dict[str, Cell]] = []
    groups: list[dict[str, Cell]] = []
    summaries: list[dict[str, Cell]] = []
    all_fit = True
    for w, shape in _shaped(state, workloads, full=full, per_node=per_node, used=used, now=now):
        all_fit = all_fit and bool(shape.fits)
        prefix = f"{w.ref} " if several else ""
        ref = w.ref
        if per_node:
            plain.extend(prefix + line for line in shape.plain)
            wide.extend(prefix + line for line in shape.wide)
            wide.extend(prefix + line for line in shape.fix)
        else:
            grouped.extend(prefix + line for line in shape.grouped)
            grouped_wide.extend(prefix + line for line in shape.grouped_wide)
            grouped_wide.extend(prefix + line for line in shape.fix)
        verdicts.extend({"workload": ref, **row} for row in shape.nodes)
        groups.extend({"workload": ref, **row} for row in shape.groups)
        summaries.append(_workload_row(w, shape.fits, shape.advice))
        if shape.autoscaler is not None:
            autoscaled.append({"workload": ref, **shape.autoscaler})
    if per_node:
        group_section = Section("groups", tuple(groups))
        node_section = Section("nodes", tuple(verdicts), tuple(plain), tuple(wide))
    else:
        group_section = Section("groups", tuple(groups), tuple(grouped), tuple(grouped_wide))
        node_section = Section("nodes", tuple(verdicts))
    sections: tuple[Section, ...] = (Section("workloads", tuple(summaries)), group_section, node_section)
    if used is not None:  # NodePools in the input: the autoscaler's verdict of each workload that fits no node
        sections += (Section("autoscaler", tuple(autoscaled)),)
    return Result("place", sections=sections, ok=""), all_fit
