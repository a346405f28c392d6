"""``gpulabel queues``: Kueue's ResourceFlavors against the nodes that exist.

Kueue admits a Workload by quota alone (a ClusterQueue's ``nominalQuota`` per flavor) and then sends its pods
to the flavor's nodes: it copies the flavor's ``nodeLabels`` into each pod's nodeSelector and appends the
flavor's ``tolerations`` to the pod's (Kueue v0.17.0 ``pkg/podset/podset.go`` ``FromAssignment``). Before
that, its flavor assigner takes a flavor for a pod set only when the pod's tolerations with the flavor's
tolerate every ``NoSchedule``/``NoExecute`` taint of the flavor's ``nodeTaints``
(``pkg/scheduler/flavorassigner/flavorassigner.go`` ``checkFlavorForPodSets``). Nothing in Kueue looks at the
nodes: a flavor whose labels match no node admits work that sits Pending (kubernetes-sigs/kueue#4782,
#5243).

So the nodes a flavor *selects* are those the kube-scheduler's filters (NodeUnschedulable, TaintToleration,
NodeAffinity: :mod:`gpulabel.k8s.nodeaffinity`) pass for a pod carrying the flavor's labels as nodeSelector
and, as tolerations, the flavor's own, one for each of its ``nodeTaints`` (every admitted workload tolerates
those) and the GPU resources' (the ExtendedResourceToleration admission plugin's, as ``gpus`` counts usable
GPUs). :func:`flavor_requirements` is that pod; a workload's own tolerations are added to it when one is
judged. The findings: a flavor that selects no node (naming the label that matches nothing and the nearest
value nodes do carry), a flavor with GPU quota whose nodes advertise no GPU, a ClusterQueue's nominal GPU
quota (or the sum of several queues' quotas) above what the flavor's nodes allocate, a Topology level that no
selected node carries, and a flavor or Topology named but absent.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress

from gpulabel.checks.queues.pools import Pools, pools_for
from gpulabel.k8s.nodeaffinity import PodRequirements
from gpulabel.k8s.taints import FILTERING_EFFECTS, Toleration
from gpulabel.model import gpustack as G
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Cell, Finding, Result, Section
from gpulabel.model.kueue import ClusterQueue, ResourceFlavor
from gpulabel.model.severity import Reason

__all__ = [
    "CHECK",
    "REASONS",
    "FlavorNodes",
    "NodeGroups",
    "flavor_nodes",
    "flavor_pools",
    "flavor_requirements",
    "is_gpu_resource",
    "node_groups",
    "queues",
    "why_none",
]

CHECK = "queues"

REASONS: dict[str, Reason] = {
    "no-node": Reason(
        "error", "a ResourceFlavor's node labels (with its taints) select no node: what Kueue admits to it sits Pending"
    ),
    "no-gpu-node": Reason(
        "error", "a ResourceFlavor with GPU quota selects nodes, none of which advertises that GPU resource"
    ),
    "over-quota": Reason(
        "warning",
        "a ClusterQueue's nominal GPU quota for a flavor (or several queues' together) is above the GPUs the "
        "flavor's nodes allocate",
    ),
    "topology-label": Reason(
        "error", "a level of the flavor's Topology is a node label no node the flavor selects carries"
    ),
    "no-topology": Reason("error", "the flavor names a Topology that is not in the cluster"),
    "no-flavor": Reason(
        "error", "a ClusterQueue names a ResourceFlavor that is not in the cluster (Kueue keeps it inactive)"
    ),
    "admitted-pending": Reason(
        "error", "a Pending pod of an admitted Workload: the flavor Kueue assigned it selects no node for it"
    ),
    "on-demand": Reason(
        "info",
        "a Karpenter NodePool makes the flavor's nodes on demand: the flavor selects no node yet, or its quota is "
        "above its nodes' GPUs and the NodePools' limits leave room for the rest",
    ),
}

# the tolerations the ExtendedResourceToleration admission plugin gives a pod requesting these resources
_GPU_TOLERATIONS = (Toleration(G.GPU_RESOURCE, "Exists"), Toleration(G.SHARED_RESOURCE, "Exists"))


def is_gpu_resource(name: str) -> bool:
    return name in (G.GPU_RESOURCE, G.SHARED_RESOURCE) or name.startswith(G.MIG_RESOURCE_PREFIX)


def flavor_requirements(flavor: ResourceFlavor, tolerations: Iterable[Toleration] | None = None) -> PodRequirements:
    """The scheduling fields of a pod admitted to ``flavor``: the flavor's nodeLabels as its nodeSelector, and
    ``tolerations`` (the workload's own; ``None``: one per taint of the flavor's ``nodeTaints``, which Kueue
    makes every admitted workload tolerate) plus the flavor's and the GPU resources' tolerations."""
    if tolerations is None:
        tolerations = [
            Toleration(t.key, "Equal", t.value, t.effect) for t in flavor.node_taints if t.effect in FILTERING_EFFECTS
        ]
    own = (*tolerations, *flavor.tolerations, *_GPU_TOLERATIONS)
    return PodRequirements(tolerations=own, node_selector=tuple(sorted(flavor.node_labels.items())))


@dataclass(frozen=True, slots=True)
class FlavorNodes:
    """The nodes a flavor selects, their GPUs by resource (allocatable), and why the others were left out."""

    flavor: ResourceFlavor
    nodes: tuple[Node, ...]
    gpus: Mapping[str, int]
    unknown: int  # selected nodes without status.allocatable (hand-written): their GPUs are not known
    left_out: Mapping[str, int]  # the first failing filter's reason -> how many nodes it left out

    @property
    def gpu_total(self) -> int:
        return sum(self.gpus.values())


_SELECTIONS = 16  # NodeGroups.selected: the distinct markings kept


class NodeGroups:
    """The nodes grouped by what a flavor's requirements read of them: the values of ``keys``, the taints and
    whether the node is cordoned (``PodRequirements.label_keys``: nodes that agree on these get the same
    verdict). Made once for every flavor, so that a flavor is matched once per group, not once per node; each
    group's GPUs are summed once."""

    def __init__(self, nodes: Sequence[Node], keys: Iterable[str]) -> None:
        self.nodes, self.keys = nodes, frozenset(keys)
        ordered = sorted(self.keys)
        ids: dict[tuple[object, ...], int] = {}
        self.of: list[int] = []  # each node's group, in the nodes' order
        self.members: list[list[Node]] = []  # each group's nodes; the first one's verdict is the group's
        for node in nodes:
            key = (tuple(node.labels.get(k) for k in ordered), node.taints, node.unschedulable)
            gid = ids.get(key)
            if gid is None:
                gid = ids[key] = len(self.members)
                self.members.append([])
            self.of.append(gid)
            self.members[gid].append(node)
        self._gpus: dict[int, tuple[dict[str, int], int]] = {}
        self._selected: dict[tuple[bool, ...], tuple[Node, ...]] = {}

    def selected(self, fits: Sequence[bool]) -> tuple[Node, ...]:
        """The nodes of the groups that ``fits`` marks (by group), in the nodes' order; one walk of the nodes per
        distinct marking (flavors of one product select the same groups), the last few kept (a kept marking
        holds a reference per node it selects: ``_SELECTIONS`` of them at most)."""
        key = tuple(fits)
        kept = self._selected.get(key)
        if kept is None:
            if len(self._selected) >= _SELECTIONS:
                self._selected.clear()
            kept = self._selected[key] = tuple(compress(self.nodes, map(key.__getitem__, self.of)))
        return kept

    def gpus(self, gid: int) -> tuple[dict[str, int], int]:
        """The group's GPUs by resource (allocatable) and how many of its nodes have no allocatable; summed the
        first time a flavor selects the group."""
        kept = self._gpus.get(gid)
        if kept is None:
            total: dict[str, int] = {}
            unknown = 0
            for node in self.members[gid]:
                if node.amounts is None:
                    unknown += 1
                for resource, count in G.gpu_resources(node.amounts).items():
                    total[resource] = total.get(resource, 0) + count
            kept = self._gpus[gid] = (total, unknown)
        return kept

    def values(self, key: str) -> Counter[str]:
        """How many nodes carry each value of ``key`` (one of the groups' keys), in the order nodes first carry it."""
        out: Counter[str] = Counter()
        for members in self.members:
            value = members[0].labels.get(key)
            if value is not None:
                out[value] += len(members)
        return out

    def serves(self, req: PodRequirements) -> bool:
        return not req.name_dependent and set(req.label_keys) <= self.keys


def node_groups(state: ClusterState) -> NodeGroups:
    """The state's nodes grouped by what every flavor reads: made once for the flavors and the admitted pods."""
    return NodeGroups(state.nodes, {k for f in state.kueue.flavors.values() for k in flavor_requirements(f).label_keys})


def flavor_nodes(
    flavor: ResourceFlavor,
    nodes: Sequence[Node],
    tolerations: Iterable[Toleration] | None = None,
    groups: NodeGroups | None = None,
) -> FlavorNodes:
    """The nodes ``flavor`` selects, matched once per group of nodes alike in what it reads (``groups``: ``nodes``
    grouped once for every flavor; else grouped here by this flavor's keys). A flavor's requirements name no
    node, so the nodes of a group share one verdict."""
    req = flavor_requirements(flavor, tolerations)
    if groups is None or groups.nodes is not nodes or not groups.serves(req):
        groups = NodeGroups(nodes, req.label_keys)
    return _grouped(flavor, req, groups)


def _grouped(flavor: ResourceFlavor, req: PodRequirements, groups: NodeGroups) -> FlavorNodes:
    """The flavor's nodes (in the nodes' order), their GPUs and the left-out reasons, from one match per group:
    what matching node by node answers (tests/unit/test_queues_groups.py)."""
    fits: list[bool] = []
    left_out: Counter[str] = Counter()
    gpus: Counter[str] = Counter()
    unknown = 0
    for gid, members in enumerate(groups.members):
        match = req.match(members[0])
        fits.append(match.fits)
        if not match.fits:
            left_out[match.reason] += len(members)
            continue
        total, missing = groups.gpus(gid)
        gpus.update(total)
        unknown += missing
    selected = groups.selected(fits) if any(fits) else ()
    order: dict[str, int] = {}  # the resources in the order the nodes first name them, as node by node
    for node in selected:
        if len(order) == len(gpus):
            break
        for resource in G.gpu_resources(node.amounts):
            order.setdefault(resource, gpus[resource])
    return FlavorNodes(flavor, selected, order, unknown, dict(left_out))


def _values(nodes: Sequence[Node], key: str, groups: NodeGroups | None) -> Counter[str]:
    """How many nodes carry each value of ``key``, in the order nodes first carry it (from the groups where they
    were made by ``key``)."""
    if groups is not None and groups.nodes is nodes and key in groups.keys:
        return groups.values(key)
    return Counter(n.labels[key] for n in nodes if key in n.labels)


def _nearest(nodes: Sequence[Node], key: str, value: str, groups: NodeGroups | None = None) -> str:
    """The value of ``key`` nodes do carry that is nearest to ``value``, with how many carry it; or, where no
    node has the key, the nearest key any node has."""
    values = _values(nodes, key, groups)
    if values:
        near = difflib.get_close_matches(value, list(values), n=1, cutoff=0)[0]
        return f"nearest: {near} ({values[near]} node(s))"
    keys = sorted({k for n in nodes for k in n.labels})
    near_keys = difflib.get_close_matches(key, keys, n=1, cutoff=0.6)
    return "no node has the key" + (f"; nearest key: {near_keys[0]}" if near_keys else "")


def why_none(found: FlavorNodes, nodes: Sequence[Node], groups: NodeGroups | None = None) -> tuple[str, str, str]:
    """Why the flavor selects no node, as ``(key, value, why)``: the first of its labels no node carries (with
    the nearest value nodes do carry), else the filters that left every node out (``key`` and ``value`` "")."""
    for key, value in sorted(found.flavor.node_labels.items()):
        if value not in _values(nodes, key, groups):
            return key, value, _nearest(nodes, key, value, groups)
    why = ", ".join(f"{r} on {n} node(s)" for r, n in sorted(found.left_out.items(), key=lambda kv: (-kv[1], kv[0])))
    return "", "", why or "the input has no node"


def _pool_words(pools: Pools, key: str, value: str) -> str:
    """What the NodePools say of a flavor no node matches: none read, or each one's refusal and the fix."""
    if pools.takers:
        return f"NodePool(s) {pools.names} carry its labels, but their limits leave no room for another node or GPU"
    if not pools.refusals:
        return "no Karpenter NodePool (dynamic, Ready) is in the input to make such nodes"
    said = "; ".join(f"NodePool {p.name}: {err}" for p, err in pools.refusals)
    if key and any("does not have known values" in err for _, err in pools.refusals):
        said += (
            f". {key} is written on a node only after it boots (GFD or NFD), so Karpenter cannot make a node for "
            f"it: add {key}: {value} to the NodePool's spec.template.metadata.labels, or select the flavor by a "
            "label the NodePool's template carries"
        )
    return "no NodePool makes such nodes (" + said + ")"


def _no_node(
    found: FlavorNodes, nodes: Sequence[Node], quota: str, pools: Pools, groups: NodeGroups | None = None
) -> Finding:
    """The flavor selects no node: the first label no node carries, else the filter that left every node out."""
    name = found.flavor.name
    key, value, why = why_none(found, nodes, groups)
    later = (
        f"; Kueue admits workloads to it ({quota}) and injects its labels as their nodeSelector, so their pods sit "
        f"Pending: {_pool_words(pools, key, value)}"
    )
    if key:
        detail = f"flavor {name}: nodeLabels {key}={value} matches no node ({why}){later}"
        return Finding(CHECK, "no-node", key=key, value=value, args=(f"flavor/{name}", value, why), detail=detail)
    detail = f"flavor {name}: every label matches some node, but no node passes the scheduler's filters: {why}{later}"
    return Finding(CHECK, "no-node", args=(f"flavor/{name}", why), detail=detail)


def _room_text(room: int | None) -> str:
    return "no limit on GPUs" if room is None else f"room for {room} more GPU(s) under their limits"


def _made_on_demand(found: FlavorNodes, quota: str, pools: Pools) -> Finding:
    """The flavor selects no node yet, and a NodePool would make one for its pods."""
    name = found.flavor.name
    detail = (
        f"flavor {name} selects no node yet; NodePool(s) {pools.names} carry its labels in their template "
        f"({_room_text(pools.room())}): Karpenter makes its nodes when workloads admitted to it ({quota}) have "
        "Pending pods"
    )
    return Finding(CHECK, "on-demand", args=(f"flavor/{name}", f"nodepool/{pools.takers[0][0].name}"), detail=detail)


def _quotas(queues: Iterable[ClusterQueue]) -> dict[str, list[tuple[ClusterQueue, str, int]]]:
    """flavor -> every (ClusterQueue, GPU resource, nominal units) that puts GPU quota on it."""
    out: dict[str, list[tuple[ClusterQueue, str, int]]] = {}
    for cq in queues:
        for flavor, q in cq.quotas():
            if is_gpu_resource(q.resource):
                out.setdefault(flavor, []).append((cq, q.resource, q.units))
    return out


def _gpu_findings(
    found: FlavorNodes, quotas: list[tuple[ClusterQueue, str, int]], pools: Mapping[str, Pools]
) -> list[Finding]:
    """``pools``: by GPU resource, the NodePools that make nodes for the flavor's pods."""
    ref = f"flavor/{found.flavor.name}"
    out: list[Finding] = []
    if found.unknown == len(found.nodes):
        return out  # no selected node's allocatable is known: nothing to count
    resources = sorted({r for _, r, units in quotas if units > 0})
    if resources and not any(found.gpus.get(r) for r in resources):
        detail = (
            f"flavor {found.flavor.name} selects {len(found.nodes)} node(s), none of which advertises "
            f"{' or '.join(resources)}, while ClusterQueue(s) {', '.join(sorted({cq.name for cq, _, _ in quotas}))} "
            "give it quota: what Kueue admits to it sits Pending"
        )
        return [Finding(CHECK, "no-gpu-node", args=(ref, f"{len(found.nodes)} node(s), 0 GPUs"), detail=detail)]
    for cq, resource, units in quotas:
        have = found.gpus.get(resource, 0)
        if units > have:
            args = (ref, f"clusterqueue/{cq.name}", resource, f"quota={units}", f"allocatable={have}")
            promise = f"ClusterQueue {cq.name} promises {units} {resource} on flavor {found.flavor.name}, whose "
            cohort = f"; in cohort {cq.cohort}, borrowing admits more beyond it" if cq.cohort else ""
            out.append(_beyond(found, args, promise, units, pools.get(resource, Pools()), cohort))
    for resource in resources:  # each queue's quota fits, but Kueue admits up to their sum (as measured)
        each = sorted((cq.name, units) for cq, r, units in quotas if r == resource and units > 0)
        total, have = sum(units for _, units in each), found.gpus.get(resource, 0)
        if len(each) > 1 and total > have and all(units <= have for _, units in each):
            queues = ",".join(f"clusterqueue/{name}" for name, _ in each)
            args = (ref, queues, resource, f"quota={total}", f"allocatable={have}")
            promise = (
                f"ClusterQueues {', '.join(name for name, _ in each)} promise {total} {resource} together on flavor "
                f"{found.flavor.name} (each quota fits, but Kueue admits up to their sum), whose "
            )
            out.append(_beyond(found, args, promise, total, pools.get(resource, Pools()), ""))
    return out


def _beyond(found: FlavorNodes, args: tuple[str, ...], promise: str, units: int, mine: Pools, cohort: str) -> Finding:
    """A quota of ``units`` above the flavor's GPUs (``args``' allocatable): on-demand when ``mine``, the NodePools
    that make its nodes, have room for the rest; else over-quota, saying how far they reach."""
    have = int(args[-1].removeprefix("allocatable="))
    room = mine.room() if mine.takers else 0
    if room is None or room >= units - have:
        detail = (
            f"{promise}{len(found.nodes)} node(s) allocate {have}; NodePool(s) {mine.names} make more such "
            f"nodes on demand ({_room_text(room)}), enough for the other {units - have}"
        )
        return Finding(CHECK, "on-demand", args=(*args, f"nodepool/{mine.takers[0][0].name}"), detail=detail)
    autoscaled = (
        f"NodePool(s) {mine.names} add at most {room} more under their limits"
        if mine.takers
        else "no NodePool makes such nodes"
    )
    detail = (
        f"{promise}{len(found.nodes)} node(s) allocate {have}{cohort}: workloads admitted past {have + room} "
        f"sit Pending ({autoscaled})"
    )
    return Finding(CHECK, "over-quota", args=args, detail=detail)


def _topology_findings(state: ClusterState, found: FlavorNodes) -> list[Finding]:
    flavor = found.flavor
    ref = f"flavor/{flavor.name}"
    if not flavor.topology or "Topology" not in state.kinds:
        return []
    topology = state.kueue.topologies.get(flavor.topology)
    if topology is None:
        detail = f"flavor {flavor.name} names Topology {flavor.topology}, which is not in the cluster"
        return [Finding(CHECK, "no-topology", args=(ref, f"topology/{flavor.topology}"), detail=detail)]
    out = []
    for level in topology.levels:
        if found.nodes and not any(level in n.labels for n in found.nodes):
            detail = (
                f"Topology {topology.name}'s level {level} is a label none of the {len(found.nodes)} node(s) "
                f"flavor {flavor.name} selects carries: topology-aware scheduling finds no domain there"
            )
            out.append(
                Finding(CHECK, "topology-label", key=level, args=(ref, f"topology/{topology.name}"), detail=detail)
            )
    return out


def _row(found: FlavorNodes, quotas: list[tuple[ClusterQueue, str, int]]) -> dict[str, Cell]:
    return {
        "flavor": found.flavor.name,
        "nodes": len(found.nodes),
        "gpus": found.gpu_total,
        "quota": sum(units for _, _, units in quotas),
        "clusterqueues": tuple(sorted({cq.name for cq, _, _ in quotas})),
    }


def flavor_pools(state: ClusterState, flavor: ResourceFlavor, resources: Iterable[str]) -> dict[str, Pools]:
    """By GPU resource (sorted), the NodePools that would make a node for a pod admitted to ``flavor``."""
    pools = state.karpenter.nodepools
    req = flavor_requirements(flavor)
    return {r: pools_for(req, pools, r) for r in sorted(resources)}


def queues(state: ClusterState, groups: NodeGroups | None = None) -> Result:
    """Every flavor against the nodes; every ClusterQueue's flavors against the flavors that exist."""
    kueue = state.kueue
    quotas = _quotas(kueue.cluster_queues.values())
    findings: list[Finding] = []
    rows = []
    groups = groups or node_groups(state)  # once: each flavor is matched per group of alike nodes
    for flavor in kueue.flavors.values():
        found = flavor_nodes(flavor, state.nodes, groups=groups)
        mine = quotas.get(flavor.name, [])
        rows.append(_row(found, mine))
        pools = flavor_pools(state, flavor, {r for _, r, _ in mine} or {G.GPU_RESOURCE})
        if not found.nodes:
            promised = ", ".join(f"{cq.name}: {units} {r}" for cq, r, units in mine) or "no GPU quota"
            some = next(iter(pools.values()))
            if some.takers and some.room() != 0:
                findings.append(_made_on_demand(found, promised, some))
            else:
                findings.append(_no_node(found, state.nodes, promised, some, groups))
            continue
        findings.extend(_gpu_findings(found, mine, pools))
        findings.extend(_topology_findings(state, found))
    if "ClusterQueue" in state.kinds:
        for cq in kueue.cluster_queues.values():
            for name in sorted(set(cq.flavor_names()) - set(kueue.flavors)):
                detail = (
                    f"ClusterQueue {cq.name} names ResourceFlavor {name}, which is not in the cluster: "
                    "Kueue keeps the queue inactive (FlavorNotFound)"
                )
                findings.append(
                    Finding(CHECK, "no-flavor", args=(f"clusterqueue/{cq.name}", f"flavor/{name}"), detail=detail)
                )
    return Result(CHECK, tuple(findings), sections=(Section("flavors", tuple(rows)),))
