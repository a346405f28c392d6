"""place over a ClusterState: the matcher applied at scale, the closest fix and the scheduler's message.

Nodes are grouped by what a pod's node selection can see of them: the values
of the label keys the pod names, the taints, and ``spec.unschedulable``. Each
group is evaluated once per pod; only checks that need the node's name
(``spec.nodeName``, ``matchFields``) run per node. Grouping on the pod's own
keys (not on all labels) keeps the groups few even though every node has a
unique ``kubernetes.io/hostname``. Pending pods and hazards are :mod:`gpulabel.checks.pending.rules`.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpulabel.checks.placement.advice import Fix, closest_fix
from gpulabel.k8s.nodeaffinity import (
    AFFINITY,
    NODE_NAME,
    TAINTS,
    UNSCHEDULABLE,
    Failure,
    PodRequirements,
    Result,
    compile_pod_spec,
)
from gpulabel.k8s.resources import PODS, RESOURCES, Insufficient, NodeCapacity
from gpulabel.model.cluster import ClusterState, Node, Pod
from gpulabel.model.severity import Reason

__all__ = [
    "REASONS",
    "Fix",
    "MessagePart",
    "NodeIndex",
    "Prediction",
    "VerdictGroup",
    "closest_fix",
    "fits_node",
    "fitting_names",
    "fitting_nodes",
    "group_verdicts",
    "keep_index",
    "message_of",
    "message_part",
    "place",
    "place_ungrouped",
    "placement_view",
    "pod_request",
    "predict",
    "resource_failures",
    "result_runs",
    "scheduler_message",
    "shortfall",
]

# The first word of a node's refusal (``place``, ``pending``, ``hazards``), in the scheduler's filter order. A
# Pending GPU pod, or a running one its node no longer matches, is a warning: a workload waits or would; the GPU
# stack's own failures are the other checks' errors.
REASONS: dict[str, Reason] = {
    "unschedulable": Reason("warning", "the node is cordoned (spec.unschedulable) and the pod does not tolerate it"),
    "node-name": Reason("warning", "the pod's spec.nodeName names another node"),
    "untolerated-taint": Reason(
        "warning", "a NoSchedule or NoExecute taint of the node that the pod does not tolerate"
    ),
    "node-selector": Reason("warning", "the node lacks a label of the pod's nodeSelector, or has another value"),
    "affinity": Reason(
        "warning", "no term of the pod's required node affinity matches (names the first failing expression)"
    ),
    "insufficient": Reason(
        "warning", "insufficient <resource>: the pod requests more than the node's allocatable less its pods' use"
    ),
    "claim": Reason("warning", "a ResourceClaim request cannot be allocated on the node (a DRA reason follows)"),
}

# The reasons each filter gives the scheduler's "0/N nodes are available" message (v1.37).
_UNNAMED = "\x00"  # the name given a node the requirement does not name: no node is called this

SCHEDULER_REASONS = {
    UNSCHEDULABLE: "node(s) were unschedulable",
    NODE_NAME: "node(s) didn't match the requested node name",
    TAINTS: "node(s) had untolerated taint(s)",
    AFFINITY: "node(s) didn't match Pod's node affinity/selector",
}


class NodeIndex:
    """Nodes, and their grouping by the label keys a pod looks at (cached per key set).

    With ``capacities`` (``ClusterState.capacities()``), nodes are also grouped
    by allocatable and requested resources, so the resource filter runs once
    per distinct node size and load; nodes without a capacity are not
    resource-checked (their allocatable is unknown). ``keys``: each such node's
    ``NodeCapacity.key()``, when the caller keeps them.
    """

    def __init__(
        self,
        nodes: Sequence[Node],
        capacities: Mapping[str, NodeCapacity] | None = None,
        keys: Mapping[str, Any] | None = None,
    ) -> None:
        self.nodes = list(nodes)
        self._groups: dict[tuple[str, ...], tuple[list[int], list[Node]]] = {}
        self._seen: dict[tuple[str, ...], dict[Any, int]] = {}  # per key set, each signature's group
        self._positions: dict[str, int] | None = None
        self._kinds: list[int] | None = None  # per node, its (taints, unschedulable) as a number
        self._kind_of: dict[Any, int] = {}
        self._sizes: dict[tuple[str, ...], list[int]] = {}
        self.capacities = dict(capacities or {})
        self.capacity_group: list[int | None] = []
        self.capacity_reps: list[NodeCapacity] = []
        self._cap_of: dict[Any, int] = {}  # each capacity key's group
        seen = self._cap_of
        for node in self.nodes:
            cap = self.capacities.get(node.name)
            if cap is None:
                self.capacity_group.append(None)
                continue
            g = seen.setdefault(cap.key() if keys is None else keys[node.name], len(self.capacity_reps))
            if g == len(self.capacity_reps):
                self.capacity_reps.append(cap)
            self.capacity_group.append(g)
        self._limit = 2 * len(self.capacity_reps) + 256  # groups no node may be in any more, at most: see patch

    def groups(self, keys: tuple[str, ...]) -> tuple[list[int], list[Node]]:
        """``(group of each node, one representative node per group)`` for the label keys ``keys``."""
        cached = self._groups.get(keys)
        if cached is not None:
            return cached
        if self._kinds is None:  # nodes with the same taints and schedulability: one number (hashed once)
            kinds = self._kind_of
            self._kinds = [kinds.setdefault((n.taints, n.unschedulable), len(kinds)) for n in self.nodes]
        seen: dict[Any, int] = {}
        member: list[int] = []
        reps: list[Node] = []
        for node, kind in zip(self.nodes, self._kinds, strict=True):
            sig = (tuple(map(node.labels.get, keys)), kind)
            g = seen.get(sig)
            if g is None:
                g = seen[sig] = len(reps)
                reps.append(node)
            member.append(g)
        self._groups[keys], self._seen[keys] = (member, reps), seen
        self._limit = max(self._limit, 2 * len(reps) + 256)
        return member, reps

    def patch(self, node: Node, cap: NodeCapacity | None, key: Any = None, at: int | None = None) -> bool:
        """The index with ``node`` (one of its nodes, by name, changed in place; ``at``: its position, when the
        caller knows it) and its capacity ``cap`` (``key``: ``cap.key()``, when the caller keeps it), as one
        made again would group them, without walking the other nodes; ``False`` (the index unchanged: make it
        again) if no node of the index has that name, or if the groups no node is in any more have grown past
        a bound.

        A node's group is its signature's (a label group: the values of the keys and its taints and
        cordon; a capacity group: its ``NodeCapacity.key()``), a new group if no node had it; the group
        it leaves keeps its representative (any node of a signature gives that signature's verdict, which is
        what grouping rests on), so ``place`` gives every node what a new index gives it. Groups left empty
        are still evaluated by ``place``: after ``_limit`` of them the caller makes the index again."""
        i = self.position(node.name) if at is None else at
        if i is None or self._full():
            return False
        self.nodes[i] = node
        self.capacity_group[i] = self._capacity_of(node.name, cap, key)
        if self._kinds is not None:
            self._kinds[i], groups = self._groups_of(node)
            for (member, _), g in zip(self._groups.values(), groups, strict=True):
                member[i] = g
        self._sizes.clear()
        return True

    def insert(self, at: int, node: Node, cap: NodeCapacity | None, key: Any = None) -> bool:
        """:meth:`patch` for a node that joined, at position ``at`` (the caller keeps the order); ``False``
        (the index unchanged: make it again) past the bound of empty groups."""
        if self._full():
            return False
        self.nodes.insert(at, node)
        self._positions = None
        self.capacity_group.insert(at, self._capacity_of(node.name, cap, key))
        if self._kinds is not None:
            kind, groups = self._groups_of(node)
            self._kinds.insert(at, kind)
            for (member, _), g in zip(self._groups.values(), groups, strict=True):
                member.insert(at, g)
        self._sizes.clear()
        return True

    def remove(self, at: int) -> None:
        """The node at position ``at`` left: out of the index (its groups keep their representatives)."""
        node = self.nodes.pop(at)
        self._positions = None
        self.capacities.pop(node.name, None)
        self.capacity_group.pop(at)
        if self._kinds is not None:
            self._kinds.pop(at)
            for member, _ in self._groups.values():
                member.pop(at)
        self._sizes.clear()

    def _full(self) -> bool:
        groups = max((len(reps) for _, reps in self._groups.values()), default=0)
        return max(groups, len(self.capacity_reps), len(self._kind_of)) >= self._limit

    def _capacity_of(self, name: str, cap: NodeCapacity | None, key: Any) -> int | None:
        """The capacity group of node ``name`` with ``cap`` (a new one if no node had its key), kept."""
        if cap is None:
            self.capacities.pop(name, None)
            return None
        self.capacities[name] = cap
        g = self._cap_of.setdefault(cap.key() if key is None else key, len(self.capacity_reps))
        if g == len(self.capacity_reps):
            self.capacity_reps.append(cap)
        return g

    def _groups_of(self, node: Node) -> tuple[int, list[int]]:
        """``node``'s kind (taints, cordon) and its group for each cached key set (new ones where no node had
        its signature, ``node`` their representative)."""
        kind = self._kind_of.setdefault((node.taints, node.unschedulable), len(self._kind_of))
        out = []
        for keys, (_, reps) in self._groups.items():
            seen = self._seen[keys]
            sig = (tuple(map(node.labels.get, keys)), kind)
            found = seen.get(sig)
            if found is None:
                found = seen[sig] = len(reps)
                reps.append(node)
            out.append(found)
        return kind, out

    def sizes(self, keys: tuple[str, ...]) -> list[int]:
        """How many nodes each group of :meth:`groups` has."""
        cached = self._sizes.get(keys)
        if cached is None:
            member, reps = self.groups(keys)
            cached = self._sizes[keys] = [0] * len(reps)
            for g in member:
                cached[g] += 1
        return cached

    def position(self, name: str) -> int | None:
        if self._positions is None:
            self._positions = {n.name: i for i, n in enumerate(self.nodes)}
        return self._positions.get(name)


def keep_index(
    index: NodeIndex, name: str, node: Node | None, cap: NodeCapacity | None = None, key: Any = None
) -> bool:
    """``index`` (its nodes in name order, as an evaluator's state lists them) with node ``name`` now ``node``
    (``None``: gone) and its capacity ``cap`` (``key``: ``cap.key()``): changed, inserted or removed in place;
    whether the index holds (``False``: too many groups left empty, make it again)."""
    nodes = index.nodes
    at = bisect.bisect_left(nodes, name, key=_node_name)
    here = at < len(nodes) and nodes[at].name == name
    if node is None:
        if here:
            index.remove(at)
        return True
    return index.patch(node, cap, key, at) if here else index.insert(at, node, cap, key)


def _node_name(node: Node) -> str:
    return node.name


_NAME = operator.attrgetter("name")


def place(
    req: PodRequirements, index: NodeIndex, *, full: bool = False, request: Mapping[str, int] | None = None
) -> list[Result]:
    """The verdict for every node of ``index``, in its order: one evaluation per group.

    ``request`` (the pod's requests in the scheduler's units) adds the
    NodeResourcesFit filter after node selection, on nodes whose capacity the
    index knows: all its reasons on a node that passes the earlier filters
    (as the scheduler reports them), and on every node with ``full``.
    """
    member, reps = index.groups(req.label_keys)
    partials = [req.evaluate(n.labels, n.taints, n.unschedulable, full=full) for n in reps]
    if not req.name_dependent:
        per_group = [req.finish(p, "") for p in partials]
        results = list(map(per_group.__getitem__, member))
    else:
        # Only nodes the pod names can differ from their group; the rest share one verdict.
        named = req.named_nodes()
        per_group = [req.finish(p, _UNNAMED) for p in partials]
        results = [
            req.finish(partials[g], node.name) if node.name in named else per_group[g]
            for g, node in zip(member, index.nodes, strict=True)
        ]
    if request is None or not index.capacities:
        return results
    return _with_resources(results, index, request, full)


def resource_failures(lacking: Sequence[Insufficient]) -> tuple[Failure, ...]:
    """NodeResourcesFit's reasons as matcher failures (``insufficient <resource>``)."""
    return tuple(
        Failure(RESOURCES, i.reason, i.why(), data={**i.to_json(), "scheduler_reason": i.scheduler_reason})
        for i in lacking
    )


def _with_resources(results: list[Result], index: NodeIndex, request: Mapping[str, int], full: bool) -> list[Result]:
    per_cap = [resource_failures(cap.insufficient(request)) for cap in index.capacity_reps]
    # Results are shared between nodes (the report groups nodes by result identity): keep sharing.
    combined: dict[tuple[int, int], Result] = {}
    out = []
    for result, g in zip(results, index.capacity_group, strict=True):
        if g is None or not per_cap[g] or (not full and not result.fits):
            out.append(result)
            continue
        key = (id(result), g)
        merged = combined.get(key)
        if merged is None:
            merged = combined[key] = Result(result.failures + per_cap[g])
        out.append(merged)
    return out


def fitting_nodes(req: PodRequirements, index: NodeIndex, limit: int = 20) -> tuple[int, list[str]]:
    """How many nodes fit, and the first ``limit`` of them, without a verdict per node."""
    member, reps = index.groups(req.label_keys)
    partials = [req.evaluate(n.labels, n.taints, n.unschedulable) for n in reps]
    per_group = [req.finish(p, _UNNAMED).fits for p in partials]
    count = sum(size for size, ok in zip(index.sizes(req.label_keys), per_group, strict=True) if ok)
    named: dict[int, bool] = {}
    for name in req.named_nodes():
        i = index.position(name)
        if i is not None:
            named[i] = req.finish(partials[member[i]], name).fits
            count += named[i] - per_group[member[i]]
    names: list[str] = []
    for i, g in enumerate(member):
        if len(names) >= min(limit, count):
            break
        if named.get(i, per_group[g]):
            names.append(index.nodes[i].name)
    return count, names


def fitting_names(req: PodRequirements, index: NodeIndex) -> list[str]:
    """Every node :func:`fitting_nodes` counts, in the index's order (:func:`place`: one evaluation per group).
    Nodes of a group share its result object, and a pool's nodes are next to each other by name: the nodes are
    taken by runs of one result (:func:`result_runs`, as ``SpecRow.fill`` takes them), whether it fits asked once
    per run and a fitting run's names copied in C (no Python step per node: 65,000 nodes for a requirement new to
    hazards).
    """
    results, nodes = place(req, index), index.nodes
    names: list[str] = []
    for at, end in result_runs(results):
        if results[at].fits:
            names.extend(map(_NAME, nodes[at:end]))
    return names


def result_runs(results: Sequence[Result]) -> list[tuple[int, int]]:
    """The runs of one result object in :func:`place`'s results (a group's nodes share it), as ``(start, end)`` in
    order; the starts found in C, by identity: a few thousand runs at 65,000 nodes."""
    n = len(results)
    if not n:
        return []
    starts = [0, *itertools.compress(range(1, n), map(operator.is_not, results, itertools.islice(results, 1, None)))]
    return list(zip(starts, [*starts[1:], n], strict=True))


def fits_node(req: PodRequirements, node: Node) -> bool:
    """Whether ``node`` is one :func:`fitting_nodes` counts for ``req`` (node selection only, no resources)."""
    name = node.name if node.name in req.named_nodes() else _UNNAMED
    return req.finish(req.evaluate(node.labels, node.taints, node.unschedulable), name).fits


def shortfall(result: Result) -> tuple[int, int]:
    """How far a node is from taking the pod: failing filters, then the resources it lacks in total.

    The lower, the closer: a group's best node (the one its explanation shows)
    is the one with the least shortfall, e.g. 4 GPUs free of 5 requested
    rather than the first node's 0.
    """
    lacking = sum(
        int(f.data["requested"]) - (int(f.data["allocatable"]) - int(f.data["used"]))
        for f in result.failures
        if f.filter == RESOURCES and "requested" in f.data and "used" in f.data
    )
    return len(result.failures), lacking


@dataclass(frozen=True, slots=True)
class VerdictGroup:
    """Nodes that give a workload one verdict (``reason``): how many, a few names (the best first).

    ``result`` is the best node's (the least :func:`shortfall`), which explains the group.
    """

    reason: str  # "" when they fit
    count: int
    sample: tuple[str, ...]
    best: str
    result: Result

    def line(self) -> str:
        head = "yes" if self.result.fits else f"no {self.result.reason}"
        names = ", ".join(self.sample) + (", ..." if self.count > len(self.sample) else "")
        return f"{head} {self.count} node(s): {names}"


def group_verdicts(nodes: Sequence[Node], results: Sequence[Result], sample: int = 3) -> list[VerdictGroup]:
    """Per distinct verdict, in the order of its first node: the count, the best node and a few more names."""
    order: dict[str, int] = {}
    count: list[int] = []
    best: list[tuple[tuple[int, int], int]] = []
    names: list[list[str]] = []
    for i, result in enumerate(results):
        g = order.setdefault(result.reason, len(count))
        score = shortfall(result) if result.failures else (0, 0)
        if g == len(count):
            count.append(1)
            best.append((score, i))
            names.append([nodes[i].name])
            continue
        count[g] += 1
        if score < best[g][0]:
            best[g] = (score, i)
        if len(names[g]) < sample + 1:
            names[g].append(nodes[i].name)
    out = []
    for g in range(len(count)):
        b = best[g][1]
        first = nodes[b].name
        rest = [n for n in names[g] if n != first][: sample - 1]
        out.append(VerdictGroup(results[b].reason, count[g], (first, *rest), first, results[b]))
    return out


def place_ungrouped(req: PodRequirements, nodes: Sequence[Node], *, full: bool = False) -> list[Result]:
    """The same verdicts, node by node: the reference (and the benchmark's baseline)."""
    return [req.match(n, full=full) for n in nodes]


# -- the scheduler's message --------------------------------------------------------


def _histogram(counts: Counter[str]) -> str:
    # FitError.Error: "<n> <reason>" strings sorted as strings (so "10 x" sorts before "2 y").
    return ", ".join(sorted(f"{n} {text}" for text, n in counts.items()))


def scheduler_message(
    req: PodRequirements,
    nodes: Sequence[Node],
    results: Sequence[Result],
    *,
    priority: int = 0,
    preemption_policy: str = "",
    capacities: Mapping[str, NodeCapacity] | None = None,
) -> str | None:
    """The ``PodScheduled`` message kube-scheduler would write, or ``None`` if some node passes these filters.

    Covers the filters gpulabel models (NodeUnschedulable, NodeName,
    TaintToleration, NodeAffinity with its PreFilter, NodeResourcesFit with
    every reason of a node) and the default preemption's suffix: nodes that
    only lack resources they have in total are where preemption might help,
    and with no pod of lower ``priority`` on them it finds no victims.
    ``None`` too when a lower-priority pod could be preempted (gpulabel does
    not simulate preemption). It is :func:`message_part` per node summed by
    :func:`message_of` (pending's kept rows sum the same parts, node by node).
    """
    if any(r.fits for r in results):
        return None
    names = req.prefilter_names()
    caps = capacities or {}
    parts: dict[int, tuple[MessagePart, list[int]]] = {}  # nodes sharing a result share a part that reads no node
    counted: list[tuple[MessagePart, list[int]]] = []
    for node, result in zip(nodes, results, strict=True):
        known = parts.get(id(result))
        if known is not None:
            known[1][0] += 1
            continue
        part = message_part(names, node.name, result, caps.get(node.name), priority)
        counted.append((part, [1]))
        if names is None and not part.resolvable:
            parts[id(result)] = counted[-1]
    counts: Counter[str] = Counter()
    resolvable = victims = 0
    for part, (n,) in counted:
        for reason in part.reasons:
            counts[reason] += n
        resolvable += n * part.resolvable
        victims += n * part.victim
    return message_of(len(nodes), names, counts, resolvable, victims, preemption_policy)


@dataclass(frozen=True, slots=True)
class MessagePart:
    """One refusing node's part of the scheduler's message: its reasons, whether preemption could help there
    (it lacks only resources it has in total) and, if so, whether a pod of lower priority is there to preempt."""

    reasons: tuple[str, ...]
    resolvable: bool
    victim: bool


def message_part(
    names: frozenset[str] | None, name: str, result: Result, cap: NodeCapacity | None, priority: int
) -> MessagePart:
    """Node ``name``'s part of :func:`scheduler_message` for a pod it refuses with ``result`` (``names``: the
    pod's PreFilter names, ``req.prefilter_names()``; ``cap``: the node's capacity)."""
    if names is not None and name not in names:
        return MessagePart(("node(s) didn't satisfy plugin(s) [NodeAffinity]",), False, False)
    if result.filter != RESOURCES:
        return MessagePart((SCHEDULER_REASONS[result.filter],), False, False)
    lacking = [f for f in result.failures if f.filter == RESOURCES]
    reasons = tuple(str(f.data["scheduler_reason"]) for f in lacking)
    if any(f.data["resource"] != PODS and f.data["requested"] > f.data["allocatable"] for f in lacking):
        return MessagePart(reasons, False, False)
    return MessagePart(reasons, True, cap is not None and cap.lowest_priority < priority)


def message_of(
    total: int,
    names: frozenset[str] | None,
    counts: Mapping[str, int],
    resolvable: int,
    victims: int,
    preemption_policy: str,
) -> str | None:
    """The message of ``total`` refusing nodes from the sum of their parts (:func:`message_part`): ``counts``
    per reason, how many nodes are ``resolvable`` by preemption and how many of those hold a victim; ``None``
    when one does (gpulabel does not simulate preemption)."""
    if names is not None and not names:
        tail = f" preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling."
        return f"0/{total} nodes are available: pod affinity terms conflict.{tail}"
    reasons = _histogram(Counter({k: n for k, n in counts.items() if n}))
    head = f"0/{total} nodes are available: {reasons}." if reasons else f"0/{total} nodes are available:"
    if preemption_policy == "Never":
        return f"{head} preemption: not eligible due to preemptionPolicy=Never."
    if victims:
        return None
    post: Counter[str] = Counter()
    if resolvable:
        post["No preemption victims found for incoming pod"] = resolvable
    if total - resolvable:
        post["Preemption is not helpful for scheduling"] = total - resolvable
    return f"{head} preemption: 0/{total} nodes are available: {_histogram(post)}."


@dataclass(frozen=True, slots=True)
class Prediction:
    """What kube-scheduler's node filters should decide for one pod: for differential tests."""

    feasible: tuple[str, ...]  # node names, in the nodes' order
    message: str | None  # the PodScheduled message when no node is feasible
    results: Mapping[str, Result]  # every node's verdict, all failures included


def pod_request(spec: Mapping[str, Any], *, defaults: bool = True) -> dict[str, int]:
    """A pod spec's requests in the scheduler's units; ``defaults``: apply the API's limit-to-request default first."""
    from gpulabel.k8s.resources import apply_request_defaults, pod_requests, scheduler_amounts

    return scheduler_amounts(pod_requests(apply_request_defaults(spec) if defaults else spec))


def predict(pod_spec: Mapping[str, Any], nodes: Sequence[Node], pods: Sequence[Pod] | None = None) -> Prediction:
    """One call for a differential test: a pod's spec (API JSON), the nodes and their pods in, the verdict out.

    Compare ``feasible`` with where a real scheduler may bind the pod, and
    ``message`` with its ``PodScheduled`` condition when it stays Pending.
    With ``pods`` (the cluster's pods), NodeResourcesFit is modelled on nodes
    with ``status.allocatable``. Ports, volumes and pod (anti-)affinity are
    not: use pods and nodes that those filters pass.
    """
    req = compile_pod_spec(pod_spec)
    capacities = ClusterState(nodes=tuple(nodes), pods=tuple(pods)).capacities() if pods is not None else None
    request = pod_request(pod_spec) if pods is not None else None
    results = place(req, NodeIndex(nodes, capacities), full=True, request=request)
    feasible = tuple(n.name for n, r in zip(nodes, results, strict=True) if r.fits)
    by_name = {n.name: r for n, r in zip(nodes, results, strict=True)}
    priority = pod_spec.get("priority")
    message = scheduler_message(
        req,
        nodes,
        results,
        priority=priority if isinstance(priority, int) else 0,
        preemption_policy=str(pod_spec.get("preemptionPolicy") or ""),
        capacities=capacities,
    )
    return Prediction(feasible, message, by_name)


def placement_view(node: Node) -> tuple[Any, ...]:
    """What placement reads of a node (pending's and hazards' verdicts on every node): a change of it may
    change any pod's verdict on that node, and what fits elsewhere."""
    return (node.labels, node.taints, node.unschedulable, node.amounts, node.allocatable)
