"""pending and hazards: Pending pods explained node by node, and running pods whose node no longer matches.

Built on :mod:`gpulabel.checks.placement.fit` (the grouped matcher, resources and
the scheduler's message) and, for pods with ``resourceClaims``, on
:mod:`gpulabel.checks.dra.rules`.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gpulabel.checks.nfd.rules import label_hints
from gpulabel.checks.pending.autoscale import autoscale_findings
from gpulabel.checks.placement.fit import (
    SCHEDULER_REASONS,
    NodeIndex,
    fitting_nodes,
    place,
    scheduler_message,
    shortfall,
)
from gpulabel.k8s.nfd.master import NfdConfig
from gpulabel.k8s.nodeaffinity import PodRequirements, Result
from gpulabel.model.cluster import ClusterState, Node, Pod
from gpulabel.model.findings import Finding, Section
from gpulabel.model.findings import Result as CheckResult
from gpulabel.model.podspec import PINNED
from gpulabel.model.severity import Reason

if TYPE_CHECKING:
    from datetime import datetime

    from gpulabel.k8s.dra.evaluator import DraEvaluator

__all__ = [
    "PENDING_SAMPLE",
    "REASONS",
    "Elsewhere",
    "GpuPods",
    "PendingPod",
    "hazard_fate",
    "hazard_recounted",
    "hazards",
    "nfd_hints",
    "other_pending",
    "pending",
    "pending_pods",
    "pending_result",
    "pod_row",
    "pod_text",
    "pod_wide",
    "spec_key",
    "with_claims",
]

# What pending says beyond the refusals of placement.REASONS: a node whose filters let the pod through is info
# (the pod waits for a volume, a port, a gate or a topology spread).
REASONS: dict[str, Reason] = {
    "fits": Reason("info", "the filters gpulabel models allow the node: the pod waits for something else"),
}


def _split(reason: str) -> tuple[str, tuple[str, ...]]:
    head, _, rest = reason.partition(" ")
    return head, ((rest,) if rest else ())


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
    # shared by the pods of one distinct spec (replicas): their grouped findings, computed once
    grouped_once: dict[tuple[int, int], list[Finding]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def message(self) -> str:
        """What the scheduler wrote in the pod's ``PodScheduled`` condition."""
        return self.pod.condition_message("PodScheduled")

    def _fits_detail(self) -> str:
        why = "the filters gpulabel models allow this node; the pod waits for something else"
        return why + (
            " (scheduling gates)"
            if self.pod.spec.gated
            else " (ports, volumes, topology; resources if allocatable is unknown)"
        )

    def _finding(self, node: str, result: Result, **group: Any) -> Finding:
        if result.fits:
            return Finding("pending", "fits", pod=self.pod.ref, node=node, detail=self._fits_detail(), **group)
        head, args, detail = _refusal(result)
        return Finding("pending", head, pod=self.pod.ref, node=node, args=args, detail=detail, **group)

    def group_finding(self, result: Result, count: int, sample: tuple[str, ...]) -> Finding:
        """The grouped finding of ``count`` nodes whose verdict is ``result`` (the group's best node's), naming
        ``sample`` (as :meth:`grouped` makes each, for nodes that pass or refuse by node filters and resources)."""
        return replace(self._finding("", result), count=count, sample=sample)

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

        Groups are in the order of their first node; the detail is the group's
        best node's (the least shortfall: most free of what is lacking), named
        first. The work is one dictionary lookup per node (and per claim
        request), the output grows with the reasons, never with the nodes.
        """
        key = (id(nodes), sample)
        done = self.grouped_once.get(key)
        if done is not None and done[0].pod != self.pod.ref:
            return [f.about(self.pod.ref) for f in done]  # a replica: the same verdicts, its own name
        if done is not None:
            return list(done)
        out = self._grouped(nodes, sample)
        if out:
            self.grouped_once[key] = out
        return list(out)

    def _grouped(self, nodes: Sequence[Node], sample: int) -> list[Finding]:
        first: dict[tuple[str, ...], Finding] = {}
        counts: dict[tuple[str, ...], int] = {}
        names: dict[tuple[str, ...], list[str]] = {}
        best: dict[tuple[str, ...], tuple[tuple[int, int], str]] = {}
        # nodes share result objects (one per group of nodes): a result's reason and shortfall once
        by_result: dict[int, list[tuple[tuple[str, ...], Finding | None, tuple[int, int]]]] = {}
        for node, result in zip(nodes, self.results, strict=True):
            claims = self._claim_verdicts(node.name, result) if self.claims else ()
            keyed: list[tuple[tuple[str, ...], Finding | None, tuple[int, int]]]
            if claims:
                keyed = [(("claim", *f.args), f, (0, 0)) for f in claims]
            else:
                known = by_result.get(id(result))
                if known is None:
                    score = shortfall(result) if result.failures else (0, 0)
                    known = by_result[id(result)] = [((result.reason,), None, score)]
                keyed = known
            for key, found, score in keyed:
                n = counts.get(key)
                if n is None:
                    first[key] = found if found is not None else self._finding("", result)
                    counts[key] = 1
                    names[key] = [node.name]
                    best[key] = (score, node.name)
                else:
                    counts[key] = n + 1
                    if score < best[key][0]:  # the group's closest node explains it (most free, not the first)
                        best[key] = (score, node.name)
                        first[key] = self._finding("", result)
                    if n <= sample:
                        names[key].append(node.name)
        out = []
        for k, f in first.items():
            top = best[k][1]
            shown = (top, *[n for n in names[k] if n != top][: sample - 1])
            out.append(replace(f, node="", count=counts[k], sample=shown))
        return out


# Label namespaces the GPU stack manages: GFD's and the operator's (nvidia.com/), NFD's and the feature
# files' (feature.node.kubernetes.io/, profile.node.kubernetes.io/ and their sub-namespaces: nfd-master's
# allowed label namespaces, k8s/nfd/master.py).
_MANAGED_PREFIXES = ("nvidia.com/", "feature.node.kubernetes.io/", "profile.node.kubernetes.io/")
_MANAGED_SUFFIXES = (".feature.node.kubernetes.io", ".profile.node.kubernetes.io")
_NOT_A_DEVICE = ("hugepages-", "kubernetes.io/", "requests.", "attachable-volumes-")


def _managed(key: str) -> bool:
    if key.startswith(_MANAGED_PREFIXES):
        return True
    prefix, slash, _ = key.partition("/")
    return bool(slash) and prefix.endswith(_MANAGED_SUFFIXES)


def _advertises(node: Node) -> bool:
    """Whether the resources ``node`` advertises are GPU resources: it is a GPU node (gpu.present) or advertises
    an ``nvidia.com/`` resource."""
    amounts = node.amounts
    if not amounts:
        return False
    return node.labels.get("nvidia.com/gpu.present") == "true" or any(k.startswith("nvidia.com/") for k in amounts)


def _add(counts: dict[str, int], keys: Iterable[str], n: int) -> bool:
    """Add ``n`` to the count of each of ``keys`` (a count of 0 is dropped): whether a key came or went."""
    moved = False
    for k in keys:
        c = counts.get(k, 0) + n
        if c:
            counts[k] = c
            moved = moved or c == n
        else:
            del counts[k]
            moved = True
    return moved


class GpuPods:
    """Which pods are GPU pods (``model.vocabulary.GPU_POD_RULE``); ``backed``: the extended resources a
    DeviceClass maps, which count like a GPU node's. :meth:`put` tells it a node's change (the incremental
    evaluator keeps one between events): it counts each resource's GPU nodes, and each label key's GPU and
    other nodes once the label keys are first asked for, so a node's change costs that node's keys, never a
    walk of every node. ``nodes``: the nodes now; with :meth:`put`, a live view of them (the label keys are
    counted from it when first asked for)."""

    def __init__(self, nodes: Iterable[Node], backed: Iterable[str] = ()) -> None:
        self._nodes = nodes
        self._backed = frozenset(backed)
        self._advertised: dict[str, int] = {}  # resource -> the GPU nodes advertising it
        for n in nodes:
            if _advertises(n):
                _add(self._advertised, n.amounts or (), 1)
        self._resources: frozenset[str] | None = None
        self._keys: tuple[dict[str, int], dict[str, int]] | None = None  # label key -> its GPU / other nodes
        self._others = 0  # nodes that are not GPU nodes (counted with the keys)
        self._gpu_only: frozenset[str] | None = None

    @property
    def resources(self) -> frozenset[str]:
        """Every resource a GPU node advertises, or a DeviceClass backs, that is a device (``vendor/name``)."""
        if self._resources is None:
            every = self._backed | self._advertised.keys()
            self._resources = frozenset(r for r in every if "/" in r and not r.startswith(_NOT_A_DEVICE))
        return self._resources

    def put(self, old: Node | None, new: Node | None) -> None:
        """A node changed from ``old`` to ``new`` (``None``: absent)."""
        for node, n in ((old, -1), (new, 1)):
            if node is None:
                continue
            if _advertises(node) and _add(self._advertised, node.amounts or (), n):
                self._resources = None
            if self._keys is not None:
                self._count(node, n)

    def _count(self, node: Node, n: int) -> None:
        from gpulabel.checks.operands.standalone import gpu_node

        assert self._keys is not None
        gpu = gpu_node(node)
        if not gpu:
            self._others += n
        if _add(self._keys[0 if gpu else 1], node.labels, n):
            self._gpu_only = None

    @property
    def gpu_only_keys(self) -> frozenset[str]:
        """The label keys GPU nodes carry and no other node does (none when every node is a GPU node)."""
        if self._keys is None:
            self._keys = ({}, {})
            for node in self._nodes:
                self._count(node, 1)
        if self._gpu_only is None:
            gpu, other = self._keys
            self._gpu_only = frozenset(gpu.keys() - other.keys())
        return self._gpu_only if self._others else frozenset()

    def view(self) -> tuple[frozenset[str], frozenset[str] | None]:
        """All :meth:`__contains__` has read besides the pod (the same view: the same GPU pods): the label keys
        only once a pod was asked about them (never asked, no pod's answer read them: not counted for this)."""
        return self.resources, None if self._keys is None else self.gpu_only_keys

    def __contains__(self, pod: Pod) -> bool:
        if pod.gpu_resources or pod.spec.resource_claims:
            return True
        if any(r.startswith("nvidia.com/") or r in self.resources for r in pod.requests):
            return True
        keys = pod.spec.selected_keys
        return any(_managed(k) for k in keys) or any(k in self.gpu_only_keys for k in keys)


def spec_key(pod: Pod) -> tuple[Any, ...]:
    """What makes Pending pods wait for the same reasons: their compiled spec, pin, requests and priority."""
    return (pod.spec, pod.pinned, tuple(sorted(pod.requests.items())), pod.priority)


def _backed(pod: Pod, state: ClusterState) -> list[str]:
    """The extended resources ``pod`` requests that a DeviceClass backs (DRA may allocate them)."""
    return [n for n, v in pod.requests.items() if v > 0 and n in state.dra.extended]


def with_claims(pod: Pod, state: ClusterState) -> bool:
    """Whether DRA judges ``pod`` (claims, or a request a DeviceClass backs, with DRA objects in the input):
    its verdicts then read every node's capacity and devices, not its own node's alone."""
    return "ResourceSlice" in state.kinds and bool(pod.spec.resource_claims or _backed(pod, state))


def pending_pods(state: ClusterState, namespace: str | None = None, gpu_only: bool = False) -> list[PendingPod]:
    """Every Pending pod the scheduler has not bound, with every node's verdict (``gpu_only``: GPU pods only)."""
    capacities = state.capacities()
    index = NodeIndex(state.nodes, capacities)
    dra: DraEvaluator | None = None  # made for the first pod with claims, shared by the rest of this run
    gpu = GpuPods(state.nodes, state.dra.extended) if gpu_only else None
    out = []
    # Replicas wait for the same reasons: one placement and one message per distinct spec (compiled once,
    # when read: model/podspec.py), pin, requests and priority.
    distinct: dict[tuple[Any, ...], PendingPod] = {}
    for pod in state.pods:
        if pod.phase != "Pending" or pod.node_name or not _in_namespace(pod, namespace):
            continue
        if gpu is not None and pod not in gpu:
            continue
        by_dra = with_claims(pod, state)
        key = spec_key(pod)
        same = None if by_dra else distinct.get(key)
        if same is not None:
            out.append(replace(same, pod=pod))  # shares the results, the message and the grouped findings
            continue
        req = pod.requirements
        results = place(req, index, full=True, request=pod.requests)
        delegated: dict[str, frozenset[str]] = {}
        if by_dra and (backed := _backed(pod, state)):  # where no device plugin advertises them, DRA allocates them
            from gpulabel.checks.dra.rules import delegated_resources, without_delegated

            delegated = delegated_resources(state, capacities, backed)
            results = without_delegated(req, index, pod.requests, results, state, delegated)
        message = scheduler_message(
            req,
            state.nodes,
            results,
            priority=pod.priority,
            preemption_policy=pod.spec.preemption_policy,
            capacities=capacities,
        )
        claims = None
        if by_dra:
            if dra is None:
                from gpulabel.k8s.dra.evaluator import DraEvaluator

                dra = DraEvaluator(state.dra)
            claims, message = _claim_findings(state, pod, results, message, dra, delegated)
        out.append(PendingPod(pod, tuple(results), message, claims))
        if not by_dra:
            distinct[key] = out[-1]
    return out


def other_pending(state: ClusterState, namespace: str | None, gpu_pods: int) -> int:
    """How many unbound Pending pods are not GPU pods (``gpu_pods`` of them are)."""
    total = sum(1 for p in state.pods if p.phase == "Pending" and not p.node_name and _in_namespace(p, namespace))
    return total - gpu_pods


def _claim_findings(
    state: ClusterState,
    pod: Pod,
    results: Sequence[Result],
    predicted: str | None,
    dra: DraEvaluator,
    delegated: Mapping[str, frozenset[str]] | None = None,
) -> tuple[dict[str, tuple[Finding, ...]], str | None]:
    from gpulabel.checks.dra.rules import dra_scheduler_message, pod_claim_verdicts, verdict_finding

    passing = [n for n, r in zip(state.nodes, results, strict=True) if r.fits]
    verdicts = pod_claim_verdicts(state, pod, passing, dra, delegated)
    findings = {name: tuple(verdict_finding(pod, v) for v in vs) for name, vs in verdicts.items() if vs}
    # The message is predicted when the other nodes fail filters with a fixed reason (not resources,
    # where preemption decides the message's tail).
    simple = all(r.fits or r.filter in SCHEDULER_REASONS for r in results)
    # a refusal (a field gpulabel does not model) predicts nothing
    refused = any(v.data.get("unmodelled") for vs in verdicts.values() for v in vs)
    if predicted is None and simple and not refused and len(findings) == len(passing):
        others = Counter(SCHEDULER_REASONS[r.filter] for r in results if not r.fits)
        invalid = sum(1 for vs in verdicts.values() if any(v.data.get("invalid") for v in vs))
        if invalid:
            others["invalid resource pools were encountered"] += invalid
        elsewhere = sum(1 for vs in verdicts.values() if any(v.data.get("not_available") for v in vs))
        if elsewhere:
            others["resourceclaim not available on the node"] += elsewhere
            invalid += elsewhere  # not "cannot allocate all claims" either
        errors = [v.detail for vs in verdicts.values() for v in vs if v.data.get("scheduler_error")]
        predicted = dra_scheduler_message(
            len(state.nodes), others, len(passing) - invalid, errors[0] if errors else None
        )
    return findings, predicted


def pending(state: ClusterState, namespace: str | None = None, per_node: bool = False) -> list[Finding]:
    """Per Pending pod, one finding per reason with its node count (``per_node``: one per node)."""
    if per_node:
        return [f for p in pending_pods(state, namespace) for f in p.findings(state.nodes)]
    return [f for p in pending_pods(state, namespace) for f in p.grouped(state.nodes)]


class _Held:
    """What still holds a running pod to its node (the NodeAffinity filter), once per distinct node selection.

    A pod's spec is compiled when read, one :class:`~gpulabel.model.podspec.PodSpec` per distinct spec
    (replicas share one; a DaemonSet's pods too, their pin to their own node held apart as
    ``Pod.pinned``): the pin of a daemon pod bound to that very node always holds, so its verdict is
    the stand-in's on :data:`~gpulabel.model.podspec.PINNED`. The verdict is computed once per spec
    and values of the label keys it reads (and node name, where a ``matchFields`` reads it): the same
    verdict, the same explanation.
    """

    def __init__(self) -> None:
        self._results: dict[tuple[Any, ...], Result] = {}

    def match(self, pod: Pod, node: Node, *, daemon: bool) -> Result | None:
        """The NodeAffinity filter's full verdict on ``node`` for ``pod``, bound to it; ``None`` for a pod with
        neither a nodeSelector nor a node affinity (nothing holds it).

        ``daemon``: a DaemonSet's pod, whose pin to ``node`` is left out.
        """
        spec = pod.spec
        held = spec.held
        if held is None:
            return None
        stand_in = spec.pinned and daemon and pod.pinned == node.name
        if spec.pinned and not stand_in:
            held = spec.held_for(pod.pinned)
            assert held is not None
        name = PINNED if stand_in else node.name
        by_name = held.name_dependent
        labels = node.labels
        key = (spec, stand_in or pod.pinned, name if by_name else "", *map(labels.get, held.label_keys))
        result = self._results.get(key)
        if result is None:
            partial = held.evaluate(labels, node.taints, node.unschedulable, full=True)
            result = self._results[key] = held.finish(partial, name)
        return result


Elsewhere = Callable[[PodRequirements], tuple[int, list[str]]]


def _fitting_over(nodes: Sequence[Node]) -> Elsewhere:
    """:func:`~gpulabel.checks.placement.fit.fitting_nodes` over ``nodes``, indexed for the first pod that asks."""
    index = functools.cache(lambda: NodeIndex(nodes))
    return lambda req: fitting_nodes(req, index())


def hazard_fate(count: int) -> str:
    """Where a running pod whose node no longer matches would go if rescheduled: ``count`` other nodes."""
    return "it would stay Pending if rescheduled" if not count else f"it would fit {count} other node(s) if rescheduled"


def hazard_recounted(found: Finding, count: int, names: Sequence[str]) -> Finding | None:
    """``found`` (a hazard that counts the other nodes, from :func:`hazards`) as it reads when ``count`` other
    nodes, the first ``names``, would take its pod; ``None`` if its detail is not one :func:`hazards` wrote."""
    fate = "; " + hazard_fate(found.fits_elsewhere or 0)
    if found.fits_elsewhere is None or not found.detail.endswith(fate):
        return None
    detail = f"{found.detail[: -len(fate)]}; {hazard_fate(count)}"
    return found.varied(found.pod, found.severity, detail, tuple(names), count)


def hazards(
    state: ClusterState,
    namespace: str | None = None,
    *,
    by_name: Mapping[str, Node] | None = None,
    elsewhere_of: Elsewhere | None = None,
) -> list[Finding]:
    """Pods bound to a node whose required affinity or nodeSelector no longer matches it.

    ``requiredDuringSchedulingIgnoredDuringExecution`` is not enforced on running
    pods, so these keep running until they restart elsewhere; the detail says how
    many nodes would take them then (none: they would stay Pending). ``by_name``
    (the state's nodes by name) and ``elsewhere_of`` (for a pod's requirements, what
    :func:`~gpulabel.checks.placement.fit.fitting_nodes` answers over the state's nodes)
    are given by a caller that keeps them.
    """
    if by_name is None:
        by_name = {n.name: n for n in state.nodes}
    ask = elsewhere_of or _fitting_over(state.nodes)
    elsewhere: dict[PodRequirements, tuple[int, list[str]]] = {}
    held = _Held()
    out = []
    for pod in state.pods:
        if not pod.node_name or pod.phase in ("Succeeded", "Failed") or not _in_namespace(pod, namespace):
            continue
        node = by_name.get(pod.node_name)
        if node is None:
            continue
        daemon = any(kind == "DaemonSet" for kind, _ in pod.owners)
        result = held.match(pod, node, daemon=daemon)
        if result is None or result.fits:
            continue
        count, names = 0, list[str]()
        if daemon:
            fate = "its DaemonSet no longer selects the node, so the DaemonSet controller will delete it"
        else:
            unbound = pod.requirements  # without spec.nodeName: where else it would go
            if unbound not in elsewhere:  # replicas share one answer
                elsewhere[unbound] = ask(unbound)
            count, names = elsewhere[unbound]
            fate = hazard_fate(count)
        head, args = _split(result.reason)
        detail = f"{result.failures[0].why}; {fate}"
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


def pod_row(pod: Pod, message: str, predicted: str | None, ref: str | None = None) -> dict[str, Any]:
    """A Pending pod's row of the ``pods`` section: the scheduler's message and the one predicted (``ref``: known)."""
    return {"pod": pod.ref if ref is None else ref, "scheduler_message": message, "predicted_message": predicted}


def pod_text(pod: Pod, message: str) -> str:
    return f"{pod.ref} scheduler: {message or '(no message yet)'}"


def pod_wide(
    pod: Pod, message: str, predicted: str | None, hints: Iterable[str], text: str | None = None, ref: str | None = None
) -> tuple[str, ...]:
    """A Pending pod's wide lines: the scheduler's message, the predicted one, NFD's hints (``nfd_hints``);
    ``text``: the pod's ``pod_text``, ``ref``: its ``ref``, if made already."""
    first, ref = pod_text(pod, message) if text is None else text, pod.ref if ref is None else ref
    lines = [first] if predicted is None else [first, f"{ref} predicted: {predicted}"]
    if hints:
        lines.extend(f"{ref} nfd: {h}" for h in hints)
    return tuple(lines)


def nfd_hints(state: ClusterState, nfd_config: NfdConfig | None, pod: Pod, memo: dict[Any, list[str]]) -> list[str]:
    """For the NFD labels ``pod`` selects that no node has, the NodeFeatureRule that would write each and why
    it does not match (none without NFD objects); ``memo``: one prediction per set of selected keys."""
    if not (state.nfd.rules or state.nfd.nodefeatures):
        return []
    keys = pod.spec.requirements.label_keys
    if keys not in memo:
        memo[keys] = label_hints(state, nfd_config, keys)
    return memo[keys]


def pending_result(
    state: ClusterState,
    namespace: str | None = None,
    *,
    per_node: bool = False,
    all_pods: bool = False,
    nfd_config: NfdConfig | None = None,
    now: datetime | None = None,
) -> CheckResult:
    """The ``pending`` result: per pod and reason (``per_node``: per pod and node) findings, and one row per pod.

    Only GPU pods unless ``all_pods``: the other Pending pods are counted, as info. Wide lines add, for
    an NFD label a pod selects and no node has, the NodeFeatureRule that would produce it and why it
    does not match (``nfd_config``: nfd-master's configuration). ``now``: when NodeClaims in flight are judged late
    and the autoscalers' Events aged (``autoscaler_events``)."""
    pods = pending_pods(state, namespace, gpu_only=not all_pods)
    others = 0 if all_pods else other_pending(state, namespace, len(pods))
    verdicts = autoscale_findings(state, pods, spec_key, now)  # by pod: after the pod's own, as the keeper's pieces
    own = (p.findings(state.nodes) if per_node else p.grouped(state.nodes) for p in pods)
    findings = tuple(f for p, fs in zip(pods, own, strict=True) for f in (*fs, *verdicts.get(p.pod.ref, ())))
    rows = tuple(pod_row(p.pod, p.message, p.predicted) for p in pods)
    memo: dict[Any, list[str]] = {}  # nfd-master's prediction once per set of selected label keys
    text = tuple(pod_text(p.pod, p.message) for p in pods)
    hints = (nfd_hints(state, nfd_config, p.pod, memo) for p in pods)
    wide = tuple(line for p, h in zip(pods, hints, strict=True) for line in pod_wide(p.pod, p.message, p.predicted, h))
    counts = {"pods": len(pods), **({"other_pending": others} if others else {})}
    notes = {"other Pending pod(s), not GPU pods (--all-pods lists them)": others} if others else {}
    return CheckResult("pending", findings, (Section("pods", rows, text, wide),), counts=counts, notes=notes)
