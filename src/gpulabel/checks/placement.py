"""place, pending and hazards over a ClusterState: the matcher applied at scale.

Nodes are grouped by what a pod's node selection can see of them: the values
of the label keys the pod names, the taints, and ``spec.unschedulable``. Each
group is evaluated once per pod; only checks that need the node's name
(``spec.nodeName``, ``matchFields``) run per node. Grouping on the pod's own
keys (not on all labels) keeps the groups few even though every node has a
unique ``kubernetes.io/hostname``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gpulabel.k8s.labels import is_valid_value
from gpulabel.k8s.nodeaffinity import (
    AFFINITY,
    NODE_NAME,
    TAINTS,
    UNSCHEDULABLE,
    Failure,
    PodRequirements,
    Result,
    Term,
    compile_pod_spec,
)
from gpulabel.k8s.resources import PODS, RESOURCES, Insufficient, NodeCapacity
from gpulabel.model.changes import LabelChange
from gpulabel.model.cluster import ClusterState, Node, Pod
from gpulabel.model.findings import Finding

__all__ = [
    "Fix",
    "NodeIndex",
    "PendingPod",
    "Prediction",
    "closest_fix",
    "fitting_nodes",
    "hazards",
    "pending",
    "pending_pods",
    "place",
    "place_ungrouped",
    "pod_request",
    "predict",
    "resource_failures",
    "scheduler_message",
]

# The reasons each filter gives the scheduler's "0/N nodes are available" message (v1.37).
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
    resource-checked (their allocatable is unknown).
    """

    def __init__(self, nodes: Sequence[Node], capacities: Mapping[str, NodeCapacity] | None = None) -> None:
        self.nodes = tuple(nodes)
        self._groups: dict[tuple[str, ...], tuple[list[int], list[Node]]] = {}
        self._positions: dict[str, int] | None = None
        self._sizes: dict[tuple[str, ...], list[int]] = {}
        self.capacities = dict(capacities or {})
        self.capacity_group: list[int | None] = []
        self.capacity_reps: list[NodeCapacity] = []
        seen: dict[Any, int] = {}
        for node in self.nodes:
            cap = self.capacities.get(node.name)
            if cap is None:
                self.capacity_group.append(None)
                continue
            g = seen.setdefault(cap.key(), len(self.capacity_reps))
            if g == len(self.capacity_reps):
                self.capacity_reps.append(cap)
            self.capacity_group.append(g)

    def groups(self, keys: tuple[str, ...]) -> tuple[list[int], list[Node]]:
        """``(group of each node, one representative node per group)`` for the label keys ``keys``."""
        cached = self._groups.get(keys)
        if cached is not None:
            return cached
        seen: dict[Any, int] = {}
        member: list[int] = []
        reps: list[Node] = []
        for node in self.nodes:
            sig = (tuple(map(node.labels.get, keys)), node.taints, node.unschedulable)
            g = seen.get(sig)
            if g is None:
                g = seen[sig] = len(reps)
                reps.append(node)
            member.append(g)
        self._groups[keys] = (member, reps)
        return member, reps

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
        other = "\x00"  # not a node name, so never named
        per_group = [req.finish(p, other) for p in partials]
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
    per_group = [req.finish(p, "\x00").fits for p in partials]
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


def place_ungrouped(req: PodRequirements, nodes: Sequence[Node], *, full: bool = False) -> list[Result]:
    """The same verdicts, node by node: the reference (and the benchmark's baseline)."""
    return [req.match(n, full=full) for n in nodes]


# -- the smallest label change -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fix:
    """Label changes that would make ``node`` fit, through ``term`` (``None``: no affinity terms)."""

    node: str
    term: int | None
    changes: tuple[LabelChange, ...]

    def command(self) -> str:
        overwrite = " --overwrite" if any(c.previous is not None and c.value is not None for c in self.changes) else ""
        return f"kubectl label node {self.node}{overwrite} " + " ".join(c.arg() for c in self.changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "term": self.term,
            "changes": [{"key": c.key, "value": c.value, "old": c.previous, "owner": c.owner} for c in self.changes],
            "command": self.command(),
        }


def _key_change(
    node: str, key: str, cur: str | None, req: PodRequirements, term: Term | None
) -> LabelChange | bool | None:
    """The change ``key`` needs: ``None`` if none, ``False`` if no value can satisfy every requirement on it."""
    wants = [v for k, v in req.node_selector if k == key]
    exprs = [r for r in (term.expressions if term else ()) if r.key == key]

    def ok(value: str | None) -> bool:
        labels = {} if value is None else {key: value}
        return all(value == w for w in wants) and all(r.why_not(labels, "") is None for r in exprs)

    if ok(cur):
        return None
    if ok(None):
        return LabelChange(node, key, None, cur)
    candidates = [*wants]
    for r in exprs:
        if r.operator == "In":
            candidates.extend(r.values)
        elif r.operator in ("Gt", "Lt") and r.bound is not None:
            candidates.append(str(r.bound + 1 if r.operator == "Gt" else r.bound - 1))
    candidates += ["true", "1"]
    for value in candidates:
        if is_valid_value(value) and ok(value):
            return LabelChange(node, key, value, cur)
    return False


def _label_changes(req: PodRequirements, node: Node, term: Term | None) -> tuple[LabelChange, ...] | None:
    if term is not None and (
        term.empty or not term.parses or any(r.why_not({}, node.name) is not None for r in term.fields)
    ):
        return None
    keys = dict.fromkeys([k for k, _ in req.node_selector] + [r.key for r in (term.expressions if term else ())])
    out = []
    for key in keys:
        change = _key_change(node.name, key, node.labels.get(key), req, term)
        if change is False:
            return None
        if isinstance(change, LabelChange):
            out.append(change)
    return tuple(out)


def closest_fix(req: PodRequirements, nodes: Sequence[Node], results: Sequence[Result]) -> Fix | None:
    """The fewest label changes that make one node fit, among nodes only NodeAffinity rejects.

    Nodes that a cordon, a taint or ``spec.nodeName`` rejects cannot be fixed
    with labels and are skipped. ``Exists`` is satisfied with the value
    ``true``. Fewest changes wins, then fewest overwritten values, then the
    first node and the first term.
    """
    best: Fix | None = None
    done: dict[Any, tuple[tuple[LabelChange, ...], int | None] | None] = {}
    for node, result in zip(nodes, results, strict=True):
        if result.fits or result.filter != AFFINITY:
            continue
        sig = (tuple(node.labels.get(k) for k in req.label_keys), node.name if req.name_dependent else "")
        if sig not in done:
            options: list[tuple[tuple[LabelChange, ...], int | None]] = []
            terms: Sequence[Term | None] = req.terms if req.terms is not None else (None,)
            for term in terms:
                changes = _label_changes(req, node, term)
                if changes is not None:
                    options.append((changes, term.index if term is not None else None))
            done[sig] = min(options, key=lambda o: _cost(o[0])) if options else None
        found = done[sig]
        if found is not None and (best is None or _cost(found[0]) < _cost(best.changes)):
            # nodes with the same signature share the changes computed for the first of them
            best = Fix(node.name, found[1], tuple(replace(c, node=node.name) for c in found[0]))
    return best


def _cost(changes: tuple[LabelChange, ...]) -> tuple[int, int]:
    # Fewest changes, then fewest overwrites: adding a missing label is a smaller
    # change than rewriting a value another component reported (a GPU's product).
    return len(changes), sum(c.previous is not None and c.value is not None for c in changes)


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
    not simulate preemption).
    """
    if any(r.fits for r in results):
        return None
    total = len(nodes)
    names = req.prefilter_names()
    if names is not None and not names:
        tail = f" preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling."
        return f"0/{total} nodes are available: pod affinity terms conflict.{tail}"
    counts: Counter[str] = Counter()
    resolvable: list[str] = []
    for node, result in zip(nodes, results, strict=True):
        if names is not None and node.name not in names:
            counts["node(s) didn't satisfy plugin(s) [NodeAffinity]"] += 1
        elif result.filter == RESOURCES:
            lacking = [f for f in result.failures if f.filter == RESOURCES]
            counts.update(str(f.data["scheduler_reason"]) for f in lacking)
            if not any(f.data["resource"] != PODS and f.data["requested"] > f.data["allocatable"] for f in lacking):
                resolvable.append(node.name)
        else:
            counts[SCHEDULER_REASONS[result.filter]] += 1
    reasons = _histogram(counts)
    head = f"0/{total} nodes are available: {reasons}." if reasons else f"0/{total} nodes are available:"
    if preemption_policy == "Never":
        return f"{head} preemption: not eligible due to preemptionPolicy=Never."
    caps = capacities or {}
    if any((cap := caps.get(n)) is not None and cap.lowest_priority < priority for n in resolvable):
        return None
    post: Counter[str] = Counter()
    if resolvable:
        post["No preemption victims found for incoming pod"] = len(resolvable)
    if total - len(resolvable):
        post["Preemption is not helpful for scheduling"] = total - len(resolvable)
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
    capacities = ClusterState(tuple(nodes), tuple(pods)).capacities() if pods is not None else None
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


# -- pending and hazards ------------------------------------------------------------


def _split(reason: str) -> tuple[str, tuple[str, ...]]:
    head, _, rest = reason.partition(" ")
    return head, ((rest,) if rest else ())


def _constrained(spec: Mapping[str, Any]) -> bool:
    affinity = spec.get("affinity")
    return bool(spec.get("nodeSelector")) or (isinstance(affinity, dict) and bool(affinity.get("nodeAffinity")))


def _in_namespace(pod: Pod, namespace: str | None) -> bool:
    return not namespace or pod.namespace == namespace


PENDING_SAMPLE = 3  # node names a grouped pending finding lists; its count is always exact


def _refusal(result: Result) -> tuple[str, tuple[str, ...], str]:
    """A refusal's reason word, its arguments and the explanation of every failure."""
    head, args = _split(result.reason)
    first, *more = result.failures
    detail = f"{first.filter}: {first.why}" + "".join(f"; also {f.reason}: {f.why}" for f in more)
    return head, args, detail


@dataclass(frozen=True, slots=True)
class PendingPod:
    pod: Pod
    results: tuple[Result, ...]  # one per node of the state, in its order
    predicted: str | None
    # pods with resourceClaims: per node the node filters pass, why its claims cannot be allocated there
    claims: Mapping[str, tuple[Finding, ...]] | None = None

    @property
    def message(self) -> str:
        """What the scheduler wrote in the pod's ``PodScheduled`` condition."""
        return self.pod.condition_message("PodScheduled")

    def _fits_detail(self) -> str:
        why = "the filters gpulabel models allow this node; the pod waits for something else"
        return why + (
            " (scheduling gates)"
            if self.pod.spec.get("schedulingGates")
            else " (ports, volumes, topology; resources if allocatable is unknown)"
        )

    def _finding(self, node: str, result: Result, **group: Any) -> Finding:
        if result.fits:
            return Finding("pending", "fits", pod=self.pod.ref, node=node, detail=self._fits_detail(), **group)
        head, args, detail = _refusal(result)
        return Finding("pending", head, pod=self.pod.ref, node=node, args=args, detail=detail, **group)

    def _claim_verdicts(self, node: str, result: Result) -> tuple[Finding, ...]:
        """Why the pod's claims cannot be allocated on a node the node filters let through (none: they can)."""
        return self.claims.get(node, ()) if result.fits and self.claims else ()

    def findings(self, nodes: Sequence[Node]) -> list[Finding]:
        """One finding per node (``--per-node``): why it does not take the pod, or ``fits``.

        A node that passes the node filters but cannot allocate the pod's claims
        gives one ``claim`` finding per claim request instead.
        """
        out: list[Finding] = []
        for node, result in zip(nodes, self.results, strict=True):
            out.extend(self._claim_verdicts(node.name, result) or (self._finding(node.name, result),))
        return out

    def grouped(self, nodes: Sequence[Node], sample: int = PENDING_SAMPLE) -> list[Finding]:
        """One finding per distinct reason (its arguments included), with how many nodes give it and a few names.

        Groups are in the order of their first node; the detail is the first
        node's. The work is one dictionary lookup per node (and per claim
        request), the output grows with the reasons, never with the nodes.
        """
        first: dict[tuple[str, ...], Finding] = {}
        counts: dict[tuple[str, ...], int] = {}
        names: dict[tuple[str, ...], list[str]] = {}
        for node, result in zip(nodes, self.results, strict=True):
            claims = self._claim_verdicts(node.name, result)
            keyed: list[tuple[tuple[str, ...], Finding | None]] = (
                [(("claim", *f.args), f) for f in claims] if claims else [((result.reason,), None)]
            )
            for key, found in keyed:
                n = counts.get(key)
                if n is None:
                    first[key] = found if found is not None else self._finding("", result)
                    counts[key] = 1
                    names[key] = [node.name]
                else:
                    counts[key] = n + 1
                    if n < sample:
                        names[key].append(node.name)
        return [replace(f, node="", count=counts[k], sample=tuple(names[k])) for k, f in first.items()]


def pending_pods(state: ClusterState, namespace: str | None = None) -> list[PendingPod]:
    """Every Pending pod the scheduler has not bound, with every node's verdict."""
    capacities = state.capacities()
    index = NodeIndex(state.nodes, capacities)
    out = []
    for pod in state.pods:
        if pod.phase != "Pending" or pod.node_name or not _in_namespace(pod, namespace):
            continue
        req = compile_pod_spec(pod.spec)
        results = place(req, index, full=True, request=pod.requests)
        message = scheduler_message(
            req,
            state.nodes,
            results,
            priority=pod.priority,
            preemption_policy=str(pod.spec.get("preemptionPolicy") or ""),
            capacities=capacities,
        )
        claims = None
        if pod.spec.get("resourceClaims") and "ResourceSlice" in state.kinds:
            claims, message = _claim_findings(state, pod, results, message)
        out.append(PendingPod(pod, tuple(results), message, claims))
    return out


def _claim_findings(
    state: ClusterState, pod: Pod, results: Sequence[Result], predicted: str | None
) -> tuple[dict[str, tuple[Finding, ...]], str | None]:
    from gpulabel.checks.dra import dra_scheduler_message, pod_claim_verdicts, verdict_finding

    passing = [n for n, r in zip(state.nodes, results, strict=True) if r.fits]
    verdicts = pod_claim_verdicts(state, pod, passing)
    findings = {name: tuple(verdict_finding(pod, v) for v in vs) for name, vs in verdicts.items() if vs}
    # The message is predicted when the other nodes fail filters with a fixed reason (not resources,
    # where preemption decides the message's tail).
    simple = all(r.fits or r.filter in SCHEDULER_REASONS for r in results)
    if predicted is None and simple and len(findings) == len(passing):
        others = Counter(SCHEDULER_REASONS[r.filter] for r in results if not r.fits)
        errors = [v.detail for vs in verdicts.values() for v in vs if v.data.get("scheduler_error")]
        predicted = dra_scheduler_message(len(state.nodes), others, len(passing), errors[0] if errors else None)
    return findings, predicted


def pending(state: ClusterState, namespace: str | None = None, per_node: bool = False) -> list[Finding]:
    """Per Pending pod, one finding per reason with its node count (``per_node``: one per node)."""
    if per_node:
        return [f for p in pending_pods(state, namespace) for f in p.findings(state.nodes)]
    return [f for p in pending_pods(state, namespace) for f in p.grouped(state.nodes)]


def hazards(state: ClusterState, namespace: str | None = None) -> list[Finding]:
    """Pods bound to a node whose required affinity or nodeSelector no longer matches it.

    ``requiredDuringSchedulingIgnoredDuringExecution`` is not enforced on running
    pods, so these keep running until they restart elsewhere; the detail says how
    many nodes would take them then (none: they would stay Pending).
    """
    by_name = {n.name: n for n in state.nodes}
    index: NodeIndex | None = None
    elsewhere: dict[PodRequirements, tuple[int, list[str]]] = {}
    out = []
    for pod in state.pods:
        if not pod.node_name or pod.phase in ("Succeeded", "Failed") or not _in_namespace(pod, namespace):
            continue
        node = by_name.get(pod.node_name)
        if node is None or not _constrained(pod.spec):
            continue
        req = compile_pod_spec(pod.spec)
        result = req.affinity_only().match(node, full=True)
        if result.fits:
            continue
        count, names = 0, list[str]()
        if any(kind == "DaemonSet" for kind, _ in pod.owners):
            fate = "its DaemonSet no longer selects the node, so the DaemonSet controller will delete it"
        else:
            index = index or NodeIndex(state.nodes)
            unbound = req.unbound()
            if unbound not in elsewhere:  # replicas share one answer
                elsewhere[unbound] = fitting_nodes(unbound, index)
            count, names = elsewhere[unbound]
            fate = (
                "it would stay Pending if rescheduled"
                if not count
                else f"it would fit {count} other node(s) if rescheduled"
            )
        head, args = _split(result.reason)
        detail = f"{result.failures[0].why}; {fate}"
        daemon = any(kind == "DaemonSet" for kind, _ in pod.owners)
        out.append(
            Finding(
                "hazards",
                head,
                pod=pod.ref,
                node=node.name,
                args=args,
                detail=detail,
                fits_elsewhere=None if daemon else count,
                sample=tuple(names),
            )
        )
    return out
