"""Will an autoscaler make a node for a Pending pod that fits no node? Karpenter's answer, by its own rules.

One pure function, :func:`autoscaler_verdict`, takes the cluster and a pod (and, where read, the pod's
Karpenter Events) and returns an :class:`AutoscaleVerdict`:

- ``coming``: a node is on its way. Evidence, in this order: Karpenter's ``Nominated`` Event naming a
  NodeClaim that exists and is not yet ``Initialized``; else a NodeClaim not yet ``Initialized`` of the
  NodePool Karpenter would choose for the pod (Karpenter counts in-flight NodeClaims as capacity for pending
  pods: ``pkg/controllers/provisioning/scheduling/scheduler.go`` ``NewScheduler`` takes the state's in-flight
  nodes). A launching node's ``karpenter.sh/unregistered`` taint belongs to that NodeClaim, so it is part of
  ``coming``, never an untolerated taint. Information while the NodeClaim is younger than
  :data:`COMING_GRACE` (Karpenter's own registration timeout); past it, ``node-late``: a warning naming the
  NodeClaim, its age and the condition it has not reached.
- ``can``: a NodePool would take the pod (:func:`gpulabel.k8s.karpenter.scheduling.decide`) and nothing is
  launching for it yet.
- ``none``: no NodePool will: Karpenter's own message (``Failed to schedule pod, ...``), the keys no NodePool
  template knows, and a fix that works (select the provider's template-time GPU label, or declare the key in
  a NodePool's ``spec.template.metadata.labels``).

``None`` when the cluster has no NodePool: the pod's findings are then what they were without autoscalers.
Instance types are not modelled (:mod:`gpulabel.k8s.karpenter.scheduling`): ``can`` means the NodePool's
template and limits admit the pod, not that some instance type has its GPUs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any, Literal, Protocol

from gpulabel.k8s.karpenter import lifecycle
from gpulabel.k8s.karpenter.events import FailedToSchedule, Nominated
from gpulabel.k8s.karpenter.instancetypes import InstanceType
from gpulabel.k8s.karpenter.lifecycle import REGISTRATION_TIMEOUT
from gpulabel.k8s.karpenter.objects import NodeClaim, NodePool
from gpulabel.k8s.karpenter.providers import AWS, AZURE, CORE, GCP, Provider, kwok
from gpulabel.k8s.karpenter.scheduling import PodTerms, Verdict, decide, pod_terms
from gpulabel.model import gpustack as G
from gpulabel.model.cluster import ClusterState, Node, Pod
from gpulabel.model.findings import Finding
from gpulabel.model.severity import Reason


class Judged(Protocol):
    """A Pending pod as ``pending`` judged it (``rules.PendingPod``): the pod, its per-node results (one tuple
    per distinct spec, shared by its replicas) and its grouped findings."""

    @property
    def pod(self) -> Pod: ...

    @property
    def results(self) -> tuple[Any, ...]: ...

    def grouped(self, nodes: Sequence[Node]) -> list[Finding]: ...


__all__ = [
    "COMING_GRACE",
    "REASONS",
    "AutoscaleVerdict",
    "Judged",
    "autoscale_findings",
    "autoscaler_verdict",
    "coming_deadline",
    "nodepool_used",
    "provider_of",
    "verdict_words",
]

# What pending adds for a Pending pod that fits no node, where the cluster has Karpenter NodePools.
REASONS: dict[str, Reason] = {
    "node-coming": Reason(
        "info",
        "a NodeClaim is in flight for the pod (Karpenter nominated it, or the NodePool "
        "Karpenter would choose has a NodeClaim not yet Initialized)",
    ),
    "node-late": Reason(
        "warning",
        "the NodeClaim in flight for the pod is older than Karpenter's registration timeout (15 min) and not yet "
        "Initialized: its age and the condition it has not reached",
    ),
    "nodepool-can": Reason("info", "no node fits the pod now, and a Karpenter NodePool would make one"),
    "no-autoscaler": Reason(
        "error", "no Karpenter NodePool will make a node for the pod: Karpenter's reason and the fix"
    ),
}

# How long a NodeClaim in flight is information: Karpenter's own registration timeout (sigs.k8s.io/karpenter
# v1.14.1 pkg/controllers/nodeclaim/lifecycle/liveness.go ``registrationTimeout``, 15 minutes: a NodeClaim not
# Registered by then is deleted and made again; ``LaunchTimeout``, 5 minutes, is the launch's share of it). Past it,
# a NodeClaim still not Initialized is later than any Karpenter waits for: ``node-late``.
COMING_GRACE = REGISTRATION_TIMEOUT

_PROVIDERS = {"karpenter.k8s.aws": AWS, "karpenter.azure.com": AZURE, "karpenter.k8s.gcp": GCP}
_KWOK_GROUP = "karpenter.kwok.sh"


@dataclass(frozen=True, slots=True)
class AutoscaleVerdict:
    """What Karpenter will do for one Pending pod.

    - ``kind``: ``coming`` (a NodeClaim is in flight for it), ``can`` (a NodePool would make one), ``none``
    - ``nodepool``: the NodePool (``coming``, ``can``); ``nodeclaim``: the NodeClaim in flight (``coming``)
    - ``since``: the NodeClaim's creationTimestamp as written (``coming``), for the caller's grace
    - ``message``: Karpenter's words (``none``: its FailedScheduling message, or why it writes none)
    - ``unknown_keys``: the label keys no NodePool template knows (``none``); ``fix``: what to change
    - ``provider``: the provider whose well-known keys were used, and ``nominated``: the evidence was an Event
    - ``model``: the decision of Karpenter's rules it rests on (``None`` where an Event or the pod alone decided):
      what the differential against the real Karpenter compares (tests/cluster/test_karpenter_differential_cluster.py)
    - ``age``: the NodeClaim's age in seconds when the caller gave a time (``coming``; ``None`` otherwise), and
      ``waiting``: the first of its Launched, Registered, Initialized conditions not yet True (``coming``)
    """

    kind: Literal["coming", "can", "none"]
    nodepool: str = ""
    nodeclaim: str = ""
    since: str = ""
    message: str = ""
    unknown_keys: tuple[str, ...] = ()
    fix: str = ""
    provider: str = ""
    nominated: bool = False
    model: Verdict | None = None
    age: float | None = None
    waiting: str = ""

    @property
    def late(self) -> bool:
        """A ``coming`` NodeClaim older than :data:`COMING_GRACE` (by the caller's time)."""
        return self.kind == "coming" and self.age is not None and self.age > COMING_GRACE


def provider_of(pools: Iterable[NodePool]) -> Provider:
    """The provider of the NodePools' NodeClass group (the first pool's, by name, that names a known one).
    kwok's instance-types file is not read here: its offering keys are not counted as well-known."""
    for pool in sorted(pools, key=lambda p: p.name):
        group = pool.node_class[0]
        if group in _PROVIDERS:
            return _PROVIDERS[group]
        if group == _KWOK_GROUP:
            return kwok()
    return CORE


def nodepool_used(pools: Sequence[NodePool], nodes: Sequence[Node]) -> dict[str, dict[str, str]]:
    """What each NodePool's nodes use of its limits: ``nodes`` counted one per node labelled with the pool
    (``scheduler.go`` ``updateRemainingResources`` counts the capacity of the pool's nodes)."""
    limited = {p.name for p in pools if p.limits}
    counts: dict[str, int] = {}
    for node in nodes:
        name = node.labels.get("karpenter.sh/nodepool", "")
        if name in limited:
            counts[name] = counts.get(name, 0) + 1
    return {name: {"nodes": str(n)} for name, n in counts.items()}


def _in_flight(claims: Iterable[NodeClaim], pool: str) -> NodeClaim | None:
    """The oldest NodeClaim of ``pool`` not yet Initialized (its node launching, registering or initializing)."""
    waiting = [c for c in claims if c.nodepool == pool and not lifecycle.initialized(c)]
    return min(waiting, key=lambda c: (c.created, c.name)) if waiting else None


def _coming(
    claim: NodeClaim, provider: str, now: datetime | None, nominated: bool = False, model: Verdict | None = None
) -> AutoscaleVerdict:
    """``coming`` for ``claim``, with its age at ``now`` (none without a time or a creationTimestamp)."""
    return AutoscaleVerdict(
        "coming",
        claim.nodepool,
        claim.name,
        claim.created,
        provider=provider,
        nominated=nominated,
        model=model,
        age=None if now is None else lifecycle.age(claim.created, now),
        waiting=lifecycle.waiting(claim),
    )


def _raw_spec(pod: Pod) -> Mapping[str, Any] | None:
    """The scheduling fields the pod was compiled from (``PodSpec.key``: a pin mark byte, then their JSON
    text), or ``None`` (a repr, for a value JSON cannot hold)."""
    try:
        raw = json.loads(pod.spec.key[1:])
    except (TypeError, ValueError):
        return None
    return raw if isinstance(raw, dict) else None


def _fix(keys: Sequence[str], provider: Provider, pools: Sequence[NodePool]) -> str:
    names = ", ".join(p.name for p in pools)
    gpu = ", ".join(provider.gpu_labels)
    select = f"select a label Karpenter knows before launch ({provider.name}'s GPU labels: {gpu})" if gpu else ""
    declare = (
        f"declare {', '.join(keys)} in a NodePool's spec.template.metadata.labels (NodePools: {names}) so its "
        "nodes carry it from birth"
    )
    return f"{select}, or {declare}" if select else declare


def autoscaler_verdict(
    state: ClusterState,
    pod: Pod,
    events: Sequence[Nominated | FailedToSchedule] = (),
    used: Mapping[str, Mapping[str, str]] | None = None,
    *,
    instance_types: Sequence[InstanceType] | None = None,
    provider: Provider | None = None,
    now: datetime | None = None,
) -> AutoscaleVerdict | None:
    """Karpenter's verdict for ``pod`` (which fits no node): ``coming``, ``can`` or ``none``; ``None`` without
    NodePools. ``events``: the pod's Karpenter Events, parsed (newest last); ``used``: :func:`nodepool_used`
    of the state, passed when judging many pods. ``instance_types`` (and their ``provider``, whose well-known
    keys include the offerings' keys): where they are known, as for kwok from its file; a cluster read does not
    hold them, so ``check`` and the monitor judge without (``decide`` says what that leaves unknown). ``now``: the
    time a ``coming`` NodeClaim's age is measured at (none: its age is not judged)."""
    pools = state.karpenter.nodepools
    if not pools:
        return None
    claims = state.karpenter.nodeclaims
    provider = provider or provider_of(pools)
    for event in reversed(events):
        if isinstance(event, Nominated) and event.nodeclaim:
            claim = next((c for c in claims if c.name == event.nodeclaim), None)
            if claim is not None and not lifecycle.initialized(claim):
                return _coming(claim, provider.name, now, nominated=True)
            break
    if pod.pinned or any(kind == "DaemonSet" for kind, _ in pod.owners):
        # pkg/utils/pod/scheduling.go IsProvisionable: Karpenter makes no node for a DaemonSet's pod
        return AutoscaleVerdict(
            "none", message="a DaemonSet's pod: Karpenter makes no node for it", provider=provider.name
        )
    raw = _raw_spec(pod)
    if raw is None:
        return AutoscaleVerdict("none", message="the pod's spec is not JSON gpulabel can read", provider=provider.name)
    terms = pod_terms(raw) if instance_types is None else _with_requests(pod_terms(raw), pod)
    used = used if used is not None else nodepool_used(pools, state.nodes)
    verdict = decide(terms, pools, provider, used, instance_types=instance_types)
    if verdict.nodepool is not None:
        claim = _in_flight(claims, verdict.nodepool)
        if claim is not None:
            return _coming(claim, provider.name, now, model=verdict)
        return AutoscaleVerdict("can", verdict.nodepool, provider=provider.name, model=verdict)
    failed = FailedToSchedule(verdict.message.removeprefix("Failed to schedule pod, "))
    keys = failed.unknown_keys
    fix = _fix(keys, provider, pools) if keys else ""
    if not fix and failed.taints:
        fix = "tolerate the NodePool's template taint, or remove it from spec.template.spec.taints"
    elif not fix and failed.limited:
        fix = "raise the NodePool's spec.limits, or free its nodes"
    elif not fix and failed.dra:
        fix = "Karpenter ignores pods with ResourceClaims (IGNORE_DRA_REQUESTS): request the GPU as a resource"
    return AutoscaleVerdict(
        "none", message=verdict.message, unknown_keys=keys, fix=fix, provider=provider.name, model=verdict
    )


def _with_requests(terms: PodTerms, pod: Pod) -> PodTerms:
    """``terms`` with the pod's requests as Karpenter counts them against instance types
    (``resources.RequestsForPods``: cpu in cores, the rest in units, and ``pods: 1``); gpulabel's pod record keeps
    cpu in millicores."""
    requests = {k: Fraction(v, 1000) if k == "cpu" else Fraction(v) for k, v in pod.requests.items()}
    return replace(terms, requests=tuple(sorted({**requests, "pods": Fraction(1)}.items())))


def verdict_words(v: AutoscaleVerdict) -> tuple[str, tuple[str, ...], str]:
    """The reason, args and detail that say ``v``: the ``pending`` finding's, ``explain pod/NS/NAME``'s
    autoscaler step, ``place -o wide``'s line and ``check``'s cause line all use these words."""
    if v.kind == "coming":
        why = (
            "Karpenter nominated the pod to it"
            if v.nominated
            else "the NodePool Karpenter would choose is launching it"
        )
        if v.late and v.age is not None:
            detail = (
                f"NodeClaim {v.nodeclaim} of NodePool {v.nodepool} (created {v.since}) is {G.format_age(v.age)} old "
                f"and not {v.waiting} yet, past Karpenter's {G.format_age(COMING_GRACE)} registration timeout: {why}; "
                f"kubectl describe nodeclaim {v.nodeclaim}"
            )
            return "node-late", (f"nodeclaim/{v.nodeclaim}", f"nodepool/{v.nodepool}", f"not-{v.waiting}"), detail
        detail = f"NodeClaim {v.nodeclaim} of NodePool {v.nodepool} (created {v.since}) is on its way: {why}"
        return "node-coming", (f"nodeclaim/{v.nodeclaim}", f"nodepool/{v.nodepool}"), detail
    if v.kind == "can":
        detail = (
            f"Karpenter would make a node from NodePool {v.nodepool} (its template, taints and limits admit the "
            "pod; instance types are not modelled)"
        )
        return "nodepool-can", (f"nodepool/{v.nodepool}",), detail
    args = tuple(f"unknown-key {k}" for k in v.unknown_keys)
    return "no-autoscaler", args, v.message + (f"; fix: {v.fix}" if v.fix else "")


def _finding(pod: Pod, v: AutoscaleVerdict) -> Finding:
    reason, args, detail = verdict_words(v)
    return Finding("pending", reason, pod=pod.ref, args=args, detail=detail)


def coming_deadline(state: ClusterState, now: datetime) -> datetime | None:
    """The earliest time after ``now`` at which a NodeClaim not yet Initialized passes :data:`COMING_GRACE` (a
    ``coming`` verdict on it turns ``node-late`` then), or ``None``: what a keeper of verdicts waits for."""
    grace = timedelta(seconds=COMING_GRACE)
    ends = [
        end
        for c in state.karpenter.nodeclaims
        if not lifecycle.initialized(c)
        and (created := G.parse_time(c.created)) is not None
        and (end := created + grace) > now
    ]
    return min(ends) if ends else None


def autoscale_findings(
    state: ClusterState, pods: Sequence[Judged], spec_key: Callable[[Pod], Any], now: datetime | None = None
) -> dict[str, tuple[Finding, ...]]:
    """One finding per Pending pod of ``pods`` that fits no node (by the pod's ref), where the cluster has
    NodePools; pods of one ``spec_key`` share one verdict, computed once (their ask is the same), so the cost
    grows with distinct asks, not pods x NodePools. ``now``: when a NodeClaim in flight is judged late
    (:data:`COMING_GRACE`); none: never."""
    if not state.karpenter.nodepools:
        return {}
    used = nodepool_used(state.karpenter.nodepools, state.nodes)
    memo: dict[Any, AutoscaleVerdict | None] = {}
    fits: dict[int, bool] = {}
    out: dict[str, tuple[Finding, ...]] = {}
    for pending in pods:
        # some node passes its filters and can allocate its claims: a ``fits`` among its grouped findings
        # (computed once per distinct spec, shared by its replicas; a claim refusal replaces ``fits``)
        shared = id(pending.results)  # one tuple per distinct spec, shared by its replicas
        if shared not in fits:
            fits[shared] = any(f.reason == "fits" for f in pending.grouped(state.nodes))
        if fits[shared]:
            continue
        pod, key = pending.pod, spec_key(pending.pod)
        if key not in memo:
            memo[key] = autoscaler_verdict(state, pod, used=used, now=now)
        v = memo[key]
        if v is not None:
            out[pod.ref] = (_finding(pod, v),)
    return out
