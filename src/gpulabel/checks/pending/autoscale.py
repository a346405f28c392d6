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

A ``Nominated`` Event naming a NodeClaim in flight decides first; else a fresh ``FailedScheduling`` of Karpenter's
that is the pod's newest Karpenter Event is Karpenter's own word: ``none`` with its message, over what its rules
(modelled here) would say.

Where the cluster has no NodePool but Cluster Autoscaler (its status ConfigMap or its pod Events,
:mod:`.autoscaler_events`), the verdict is CA's own word and nothing else: ``coming`` (a ``TriggeredScaleUp``
within ``--max-node-provision-time``), ``none`` (a ``NotTriggerScaleUp``: its reasons, the status's groups at
their max or in backoff, the fix) or ``unknown`` (CA said nothing about the pod lately: gpulabel does not model CA's
node groups, so it does not guess). ``None`` when the cluster has neither: the pod's findings are then what they
were without autoscalers.
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

from gpulabel.checks.pending import autoscaler_events as words
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
    "autoscale_applies",
    "autoscale_findings",
    "autoscaler_verdict",
    "ca_verdict",
    "coming_deadline",
    "nodepool_used",
    "pod_verdict",
    "provider_of",
    "verdict_words",
]

# What pending adds for a Pending pod that fits no node, where the cluster has Karpenter NodePools.
REASONS: dict[str, Reason] = {
    "node-coming": Reason(
        "info",
        "a NodeClaim is in flight for the pod (Karpenter nominated it, or the NodePool "
        "Karpenter would choose has a NodeClaim not yet Initialized), or Cluster Autoscaler triggered a scale-up "
        "for it within its max-node-provision-time (15 min)",
    ),
    "node-late": Reason(
        "warning",
        "the NodeClaim in flight for the pod is older than Karpenter's registration timeout (15 min) and not yet "
        "Initialized: its age and the condition it has not reached",
    ),
    "nodepool-can": Reason("info", "no node fits the pod now, and a Karpenter NodePool would make one"),
    "no-autoscaler": Reason(
        "error",
        "no Karpenter NodePool will make a node for the pod (Karpenter's reason), or Cluster Autoscaler said it "
        "did not trigger a scale-up (its reasons and status); and the fix",
    ),
    "autoscaler-unknown": Reason(
        "info",
        "Cluster Autoscaler runs and wrote no TriggeredScaleUp or NotTriggerScaleUp Event on the pod lately: "
        "whether it will make a node is not known here",
    ),
}

# How long a NodeClaim in flight is information: Karpenter's own registration timeout (sigs.k8s.io/karpenter
# v1.14.1 pkg/controllers/nodeclaim/lifecycle/liveness.go ``registrationTimeout``, 15 minutes: a NodeClaim not
# Registered by then is deleted and made again; ``LaunchTimeout``, 5 minutes, is the launch's share of it). Past it,
# a NodeClaim still not Initialized is later than any Karpenter waits for: ``node-late``.
COMING_GRACE = REGISTRATION_TIMEOUT

_NO_EVENTS = object()  # the memo's key of Cluster Autoscaler's verdict of a pod without Events of its own
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

    kind: Literal["coming", "can", "none", "unknown"]
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
    # Cluster Autoscaler's verdict (``autoscaler`` ``cluster-autoscaler``): ``coming`` its node groups being scaled
    # up, ``none`` its reasons (per reason, how many node groups gave it); ``said``: an autoscaler's Event decided
    autoscaler: str = "karpenter"
    groups: tuple[str, ...] = ()
    reasons: tuple[tuple[str, int], ...] = ()
    said: bool = False
    status: str = ""

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
    if events and isinstance(events[-1], FailedToSchedule):
        # Karpenter's own word, newer than any nomination: its message, over what its rules modelled here say
        return _karpenter_failed(events[-1], provider, pools, verdict)
    if verdict.nodepool is not None:
        claim = _in_flight(claims, verdict.nodepool)
        if claim is not None:
            return _coming(claim, provider.name, now, model=verdict)
        return AutoscaleVerdict("can", verdict.nodepool, provider=provider.name, model=verdict)
    failed = FailedToSchedule(verdict.message.removeprefix("Failed to schedule pod, "))
    keys = failed.unknown_keys
    return AutoscaleVerdict(
        "none",
        message=verdict.message,
        unknown_keys=keys,
        fix=_failed_fix(failed, provider, pools),
        provider=provider.name,
        model=verdict,
    )


def _failed_fix(failed: FailedToSchedule, provider: Provider, pools: Sequence[NodePool]) -> str:
    keys = failed.unknown_keys
    fix = _fix(keys, provider, pools) if keys else ""
    if not fix and failed.taints:
        fix = "tolerate the NodePool's template taint, or remove it from spec.template.spec.taints"
    elif not fix and failed.limited:
        fix = "raise the NodePool's spec.limits, or free its nodes"
    elif not fix and failed.dra:
        fix = "Karpenter ignores pods with ResourceClaims (IGNORE_DRA_REQUESTS): request the GPU as a resource"
    return fix


def _karpenter_failed(
    failed: FailedToSchedule, provider: Provider, pools: Sequence[NodePool], model: Verdict
) -> AutoscaleVerdict:
    """``none`` from Karpenter's own ``FailedScheduling`` Event (its message, the keys and fix read out of it)."""
    return AutoscaleVerdict(
        "none",
        message=f"Failed to schedule pod, {failed.text}",
        unknown_keys=failed.unknown_keys,
        fix=_failed_fix(failed, provider, pools),
        provider=provider.name,
        model=model,
        said=True,
    )


def ca_verdict(word: words.CaWord) -> AutoscaleVerdict:
    """Cluster Autoscaler's word for a pod as a verdict."""
    groups = tuple(g.group for g in word.groups)
    return AutoscaleVerdict(
        word.kind,
        since=word.time,
        message=word.message,
        fix=word.fix,
        autoscaler="cluster-autoscaler",
        groups=groups,
        reasons=word.reasons,
        said=word.kind != "unknown",
        status=word.status,
    )


def _with_requests(terms: PodTerms, pod: Pod) -> PodTerms:
    """``terms`` with the pod's requests as Karpenter counts them against instance types
    (``resources.RequestsForPods``: cpu in cores, the rest in units, and ``pods: 1``); gpulabel's pod record keeps
    cpu in millicores."""
    requests = {k: Fraction(v, 1000) if k == "cpu" else Fraction(v) for k, v in pod.requests.items()}
    return replace(terms, requests=tuple(sorted({**requests, "pods": Fraction(1)}.items())))


def _ca_words(v: AutoscaleVerdict) -> tuple[str, tuple[str, ...], str]:
    """Cluster Autoscaler's verdict in words (:func:`verdict_words`)."""
    status = f"; {v.status}" if v.status else ""
    if v.kind == "coming":
        # a group's id as CA names it (on GCE an instance group's URL): its last part names it short
        args = tuple(f"nodegroup/{g.rsplit('/', 1)[-1]}" for g in v.groups)
        detail = (
            f"Cluster Autoscaler triggered a scale-up for the pod ({v.since}: {v.message}); a node should register "
            f"within its max-node-provision-time (15 min by default){status}"
        )
        return "node-coming", args, detail
    if v.kind == "none":
        args = ("cluster-autoscaler", *(f"{n} {r}" for r, n in v.reasons))
        detail = f"Cluster Autoscaler's NotTriggerScaleUp Event ({v.since}) says: {v.message}{status}"
        if v.message.startswith("pod triggered scale-up"):
            detail = (
                f"Cluster Autoscaler triggered a scale-up ({v.since}: {v.message}), and backs off the groups now"
                f"{status}"
            )
        detail += f"; fix: {v.fix}" if v.fix else ""
        return "no-autoscaler", args, detail
    detail = (
        "Cluster Autoscaler runs here (its status ConfigMap or its Events) and wrote no TriggeredScaleUp in the last "
        "15 min nor NotTriggerScaleUp in the last 10 min on the pod: whether it will make a node is not known "
        f"here (gpulabel does not model its node groups){status}"
    )
    return "autoscaler-unknown", ("cluster-autoscaler",), detail


def verdict_words(v: AutoscaleVerdict) -> tuple[str, tuple[str, ...], str]:
    """The reason, args and detail that say ``v``: the ``pending`` finding's, ``explain pod/NS/NAME``'s
    autoscaler step, ``place -o wide``'s line and ``check``'s cause line all use these words."""
    if v.autoscaler == "cluster-autoscaler" or v.kind == "unknown":
        return _ca_words(v)
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
    said = "Karpenter's FailedScheduling Event says: " if v.said else ""
    return "no-autoscaler", args, said + v.message + (f"; fix: {v.fix}" if v.fix else "")


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


def autoscale_applies(state: ClusterState) -> bool:
    """Whether a Pending pod that fits no node gets an autoscaler's verdict: Karpenter's NodePools, or Cluster
    Autoscaler's status or Events."""
    return bool(state.karpenter.nodepools) or words.ca_applies(state)


def pod_verdict(state: ClusterState, pod: Pod, now: datetime | None = None) -> AutoscaleVerdict | None:
    """The verdict :func:`autoscale_findings` gives ``pod`` (which fits no node), read the same way: the pod's own
    Events (Karpenter's, or Cluster Autoscaler's with its status where there are no NodePools), aged at ``now``;
    ``None`` where no autoscaler applies."""
    if not autoscale_applies(state):
        return None
    notes = words.of_pod(words.pod_events(state), pod)
    if not state.karpenter.nodepools:
        return ca_verdict(words.ca_word(words.ca_status(state), notes, now))
    return autoscaler_verdict(state, pod, words.karpenter_events(notes, now), now=now)


def autoscale_findings(
    state: ClusterState, pods: Sequence[Judged], spec_key: Callable[[Pod], Any], now: datetime | None = None
) -> dict[str, tuple[Finding, ...]]:
    """One finding per Pending pod of ``pods`` that fits no node (by the pod's ref), where the cluster has
    NodePools (or Cluster Autoscaler: its word alone); pods of one ``spec_key`` without Events of their own share
    one verdict, computed once (their ask is the same), so the cost grows with distinct asks, not pods x NodePools.
    ``now``: what the autoscalers' Events are aged at (:mod:`.autoscaler_events`) and when a NodeClaim in flight is
    judged late (:data:`COMING_GRACE`); none: only ``Nominated`` is read, and no NodeClaim is late."""
    if not autoscale_applies(state):
        return {}
    pools = state.karpenter.nodepools
    index = words.pod_events(state)
    status = words.ca_status(state) if not pools else None
    used = nodepool_used(pools, state.nodes) if pools else {}
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
        notes = words.of_pod(index, pod)
        v: AutoscaleVerdict | None
        if not pools:
            word = words.ca_word(status, notes, now)
            v = ca_verdict(word) if notes else memo.setdefault(_NO_EVENTS, ca_verdict(word))
        elif karpenter := words.karpenter_events(notes, now):
            v = autoscaler_verdict(state, pod, karpenter, used, now=now)  # the pod's own Events: its own verdict
        else:
            if key not in memo:
                memo[key] = autoscaler_verdict(state, pod, used=used, now=now)
            v = memo[key]
        if v is not None:
            out[pod.ref] = (_finding(pod, v),)
    return out
