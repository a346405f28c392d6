"""Why a pod's ResourceClaims cannot be allocated on a node, request by request.

The verdict (fits or not) is the scheduler's own algorithm
(:mod:`gpulabel.k8s.dra.allocator`); the reason explains it by following one
request's devices through the same steps, and names the first step that
leaves too few:

==================  =========================================================
``no-devices``      no ResourceSlice publishes a device for this node
``incomplete-pool`` the node's only pools have slices not yet published
``class-selector``  every device fails the DeviceClass's selectors
``selector``        every device the class admits fails the request's
                    selectors (the expression, and the attribute values it
                    read on the closest device)
``cel-error``       an expression fails on the devices (the message; the
                    scheduler stops on the first such device it reaches)
``taint``           the matching devices carry taints the request does not
                    tolerate
``allocated``       the matching devices are allocated to other claims (named)
``capacity``        the free matching devices lack the capacity the request
                    asks (consumable capacity): names it, the charge after
                    the requestPolicy's rounding, and what is left
``counter``         the free matching devices consume more of a shared counter
                    (partitionable devices) than is left: names the counter
                    and how much is left
``count``           fewer free matching devices than the request's count (or
                    the pod's requests compete for the same devices)
``match-attribute`` enough free devices, but no set of them agrees on the
                    constrained attribute (or, ``distinctAttribute``, differs)
``binding-wait``    the claim is allocated; its device waits for its binding
                    conditions (which, since when, the timeout)
``binding-failed``  the claim is allocated; a binding failure condition of
                    its device is True
``elsewhere``       the claim is already allocated, to devices its
                    allocation's node selector puts on other nodes
``invalid-pool``    the node's only pools are invalid (duplicate device names,
                    counter sets or counters that do not exist)
``unmodelled``      a field gpulabel does not model: no answer, the field named
==================  =========================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpulabel.checks.dra.request import ClaimVerdict, cel_error_verdict, explain_request
from gpulabel.k8s.dra.binding import binding_state
from gpulabel.k8s.dra.evaluator import DraEvaluator
from gpulabel.k8s.dra.extended import extended_claim
from gpulabel.k8s.dra.objects import ResourceClaim
from gpulabel.k8s.dra.plugin import pod_claims
from gpulabel.k8s.nodeaffinity import Failure, Result
from gpulabel.model.cluster import ClusterState, Node, Pod
from gpulabel.model.findings import Finding
from gpulabel.model.podspec import compiled

if TYPE_CHECKING:
    from gpulabel.checks.placement.fit import NodeIndex
    from gpulabel.k8s.nodeaffinity import PodRequirements
    from gpulabel.k8s.resources import NodeCapacity

__all__ = [
    "REASONS",
    "ClaimVerdict",
    "NodeGroup",
    "dra_scheduler_message",
    "explain_node",
    "explain_pod",
    "pod_claim_verdicts",
    "verdict_finding",
]

# Why a claim request cannot be allocated on a node, in the order the allocator's steps run.
REASONS = {
    "no-devices": "no ResourceSlice publishes a device for this node",
    "incomplete-pool": "the node's only pools have slices not yet published",
    "class-selector": "every device fails the DeviceClass's selectors",
    "selector": "every device the class admits fails the request's selectors (names the closest device)",
    "cel-error": "an expression fails on the devices: the scheduler's message",
    "taint": "the matching devices carry taints the request does not tolerate",
    "allocated": "the matching devices are allocated to other claims",
    "capacity": "the free matching devices lack the capacity asked (names it, the policy's charge and what is left)",
    "counter": "the free matching devices consume more of a shared counter than is left (names it and what is left)",
    "count": "fewer free matching devices than the count, or the pod's requests compete for them",
    "match-attribute": "enough free devices, but no set of them agrees on (or differs in) the constrained attribute",
    "binding-wait": "the claim is allocated; its device waits for binding conditions (which, since when, the timeout)",
    "binding-failed": "the claim is allocated; a binding failure condition of its device is True (names it)",
    "elsewhere": "the claim is already allocated, to devices its allocation's node selector puts on other nodes",
    "invalid-pool": "the node's only pools are invalid: duplicate device names, unknown counter sets or counters",
    "unmodelled": "a field gpulabel does not model (named): it gives no answer rather than a guess",
}


def explain_node(ev: DraEvaluator, node: Node, claims: Sequence[ResourceClaim]) -> list[ClaimVerdict]:
    """Why ``claims`` cannot all be allocated on ``node``; empty when they can.

    One verdict per request that cannot be satisfied on its own (each
    ``firstAvailable`` alternative counted; the last one's reason is given);
    when every request could be but not together, one verdict for the claim:
    ``match-attribute`` if it has constraints, else ``count``. A CEL error the
    scheduler's own search stops on is reported as ``cel-error`` first.
    """
    outcome = ev.allocate(node, claims)
    if outcome.ok:
        return []
    stopped = _search_stopped(node, claims, outcome.unmodelled, outcome.error)
    if stopped is not None:
        return stopped
    out: list[ClaimVerdict] = []
    for claim in claims:
        alone = _requests_alone(ev, node, claim)
        if not alone and not out:
            out.append(_together(node, claim))  # each request alone fits: they fail together
        out.extend(alone)
    if outcome.invalid:
        out = [ClaimVerdict(v.node, v.claim, v.request, v.reason, v.detail, {**v.data, "invalid": True}) for v in out]
    if not out and claims:
        out.append(
            ClaimVerdict(
                node.name,
                claims[0].ref,
                claims[0].requests[0].name if claims[0].requests else "",
                "count",
                "the pod's claims compete for the same devices",
            )
        )
    return out


def _search_stopped(
    node: Node, claims: Sequence[ResourceClaim], unmodelled: str | None, error: str | None
) -> list[ClaimVerdict] | None:
    """The one verdict when the allocator's search stopped: on a field gpulabel does not model, or on an error
    (a CEL error the scheduler's own search stops on); ``None`` when it did not."""
    if unmodelled is not None:
        claim = next((c for c in claims if f"claim {c.ref}," in unmodelled), claims[0] if claims else None)
        if claim is not None:
            at = _request_in(unmodelled, claim)
            return [ClaimVerdict(node.name, claim.ref, at, "unmodelled", unmodelled, {"unmodelled": True})]
    if error is not None:
        claim = next((c for c in claims if f"claim {c.ref}" in error), claims[0] if claims else None)
        if claim is not None:
            at = _request_in(error, claim)
            if "CEL" in error:  # redacted: it may quote an expression
                return [cel_error_verdict(node.name, claim.ref, at, error, {"scheduler_error": True})]
            return [ClaimVerdict(node.name, claim.ref, at, "error", error, {"scheduler_error": True})]
    return None


def _requests_alone(ev: DraEvaluator, node: Node, claim: ResourceClaim) -> list[ClaimVerdict]:
    """The verdict of each request of ``claim`` that cannot be allocated on its own (of a ``firstAvailable``
    request, its last alternative's)."""
    out = []
    for request in claim.requests:
        last: ClaimVerdict | None = None
        for alt in request.alternatives():
            name = request.name if not request.first_available else f"{request.name}/{alt.name}"
            last = explain_request(ev, node, claim, alt, name, ev.classes.get(alt.class_name))
            if last is None:
                break
        if last is not None:
            out.append(last)
    return out


def _together(node: Node, claim: ResourceClaim) -> ClaimVerdict:
    """A claim whose requests each fit alone but not together: its constraints, or the requests compete."""
    reason = "match-attribute" if claim.constraints else "count"
    attrs = [f"agrees on {c.match_attribute}" for c in claim.constraints if c.match_attribute]
    attrs += [f"differs in {c.distinct_attribute}" for c in claim.constraints if c.distinct_attribute]
    detail = (
        f"no set of free devices {' and '.join(attrs)}"
        if attrs
        else "the requests of the pod's claims compete for the same devices"
    )
    return ClaimVerdict(node.name, claim.ref, ",".join(r.name for r in claim.requests), reason, detail)


def _request_in(error: str, claim: ResourceClaim) -> str:
    for r in claim.requests:
        if f"request {r.name}" in error:
            return r.name
    return claim.requests[0].name if claim.requests else ""


@dataclass(frozen=True)
class NodeGroup:
    """Nodes that allocation cannot tell apart, with the verdicts of the first of them."""

    nodes: tuple[str, ...]
    fits: bool
    verdicts: tuple[ClaimVerdict, ...]


def explain_pod(ev: DraEvaluator, nodes: Sequence[Node], claims: Sequence[ResourceClaim]) -> list[NodeGroup]:
    """Every node's verdict for a pod's claims, grouped by node signature: one explanation per group."""
    groups: dict[int, list[Node]] = {}
    names = ev.read_names(claims)
    for node in nodes:
        groups.setdefault(ev.node_signature(node, names), []).append(node)
    out = []
    for members in groups.values():
        verdicts = explain_node(ev, members[0], claims)
        out.append(NodeGroup(tuple(n.name for n in members), not verdicts, tuple(verdicts)))
    return out


# -- pods waiting for claims ----------------------------------------------------------


def pod_claim_verdicts(
    state: ClusterState,
    pod: Pod,
    nodes: Sequence[Node],
    dra: DraEvaluator | None = None,
    delegated: Mapping[str, frozenset[str]] | None = None,
) -> dict[str, tuple[ClaimVerdict, ...]]:
    """For a pod with ``resourceClaims``: each node's claim verdicts (empty: its claims fit there).

    ``nodes`` are the nodes the other filters let through; a claim that does
    not exist yet (and has no template) gives every node one ``no-claim``
    verdict. Nodes allocation cannot tell apart are explained once. ``dra``:
    the run's evaluator of ``state.dra`` (default: one for this call).
    """
    claims = pod_claims(
        pod.namespace,
        pod.name,
        {"resourceClaims": pod.spec.resource_claims},
        {"resourceClaimStatuses": list(pod.claim_statuses)},
        state.dra,
    )
    if claims.missing is not None:
        ref = claims.missing_ref or pod.ref
        return {n.name: (ClaimVerdict(n.name, ref, "", "no-claim", claims.missing),) for n in nodes}
    out: dict[str, tuple[ClaimVerdict, ...]] = {}
    ev = dra or DraEvaluator(state.dra)
    made = next((c for c in state.dra.claims if c.extended_for == pod.name and c.namespace == pod.namespace), None)
    allocated = [*claims.allocated, *((made,) if made is not None and made.allocated is not None else ())]
    # an allocated claim whose allocation's node selector does not select the node (Filter, before allocating)
    for claim in allocated:
        if claim.node_selector is None:
            continue
        for n in nodes:
            if n.name not in out and not ev.selects(claim.node_selector, n):
                detail = "allocated to devices its allocation's node selector puts on other nodes"
                out[n.name] = (ClaimVerdict(n.name, claim.ref, "", "elsewhere", detail, {"not_available": True}),)
    nodes = [n for n in nodes if n.name not in out]
    # an allocated claim waiting for its devices' binding conditions (PreBind), or whose binding failed
    for claim in allocated:
        waiting = binding_state(claim)
        if waiting is not None:
            for n in nodes:
                out.setdefault(n.name, (ClaimVerdict(n.name, claim.ref, "", *waiting, {"binding": True}),))
    nodes = [n for n in nodes if n.name not in out]
    # extended resources a DeviceClass backs, on nodes that do not advertise them: the scheduler's claim
    by_lacking: dict[frozenset[str], list[Node]] = {}
    for n in nodes:
        by_lacking.setdefault((delegated or {}).get(n.name, frozenset()), []).append(n)
    for lacking, members in by_lacking.items():
        to_allocate = list(claims.to_allocate)
        if lacking and (made is None or made.allocated is None):
            extra = extended_claim(pod.namespace, pod.name, pod.requests, lacking, state.dra.extended)
            if extra is not None:
                to_allocate.append(extra)
        _explain_into(out, ev, members, to_allocate)
    return out


def _explain_into(
    out: dict[str, tuple[ClaimVerdict, ...]], ev: DraEvaluator, nodes: Sequence[Node], claims: Sequence[ResourceClaim]
) -> None:
    for group in explain_pod(ev, nodes, claims):
        for name in group.nodes:
            out[name] = tuple(
                v if v.node == name else ClaimVerdict(name, v.claim, v.request, v.reason, v.detail, v.data)
                for v in group.verdicts
            )


def verdict_finding(pod: Pod, verdict: ClaimVerdict) -> Finding:
    """The plain line is ``<ns>/<pod> <node> claim <claim>/<request> <reason>`` (grouped: without the node)."""
    claim = verdict.claim.split("/", 1)[-1]
    target = f"{claim}/{verdict.request}" if verdict.request else claim
    return Finding(
        "pending", "claim", pod=pod.ref, node=verdict.node, args=(target, verdict.reason), detail=verdict.detail
    )


def dra_scheduler_message(total: int, other_reasons: Mapping[str, int], dra_failed: int, error: str | None) -> str:
    """The ``PodScheduled`` message kube-scheduler writes when claims hold a pod (checked on labcluster)."""
    if error is not None:
        return f'running "DynamicResources" filter plugin: {error}'
    counts = dict(other_reasons)
    if dra_failed:
        counts["cannot allocate all claims"] = dra_failed
    reasons = ", ".join(sorted(f"{n} {text}" for text, n in counts.items()))
    tail = f" preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling."
    return f"0/{total} nodes are available: {reasons}.{tail}"


def delegated_resources(
    state: ClusterState, capacities: Mapping[str, NodeCapacity], backed: Sequence[str]
) -> dict[str, frozenset[str]]:
    """Per node, the DRA-backed resources the pod asks for that its allocatable lacks
    (``shouldDelegateResourceToDRA``: none advertised, and a DeviceClass maps the name)."""
    out = {}
    for node in state.nodes:
        cap = capacities.get(node.name)
        lacking = frozenset(n for n in backed if cap is None or cap.allocatable.get(n, 0) <= 0)
        if lacking:
            out[node.name] = lacking
    return out


def without_delegated(
    req: PodRequirements,
    index: NodeIndex,
    request: Mapping[str, int],
    results: list[Result],
    state: ClusterState,
    delegated: Mapping[str, frozenset[str]],
    full: bool = True,
) -> list[Result]:
    """``results`` where each node that delegates resources to DRA is placed without them."""
    from gpulabel.checks.placement.fit import place

    again: dict[frozenset[str], list[Result]] = {}
    out: list[Result] = []
    for node, result in zip(state.nodes, results, strict=True):
        lacking = delegated.get(node.name)
        if lacking:
            found = again.get(lacking)
            if found is None:
                reduced = {k: v for k, v in request.items() if k not in lacking}
                found = again[lacking] = place(req, index, full=full, request=reduced)
            result = found[len(out)]
        out.append(result)
    return out


def claim_results(
    state: ClusterState,
    namespace: str,
    name: str,
    resource_claims: Sequence[Mapping[str, Any]],
    results: Sequence[Result],
    dra: DraEvaluator | None = None,
    requests: Mapping[str, int] | None = None,
    delegated: Mapping[str, frozenset[str]] | None = None,
) -> list[Result]:
    """``results`` (the node filters' verdicts, one per node) with the claims' verdicts added.

    A node the other filters pass but whose claims cannot be allocated fails
    with filter ``DynamicResources`` and the reason ``claim <claim>/<request> <reason>``.
    """
    pod = Pod(
        namespace=namespace,
        name=name,
        node_name="",
        phase="Pending",
        labels={},
        conditions={},
        owners=(),
        spec=compiled({"resourceClaims": list(resource_claims)})[0],
        requests=dict(requests or {}),
    )
    passing = [n for n, r in zip(state.nodes, results, strict=True) if r.fits]
    verdicts = pod_claim_verdicts(state, pod, passing, dra, delegated)
    out = []
    for node, result in zip(state.nodes, results, strict=True):
        found = verdicts.get(node.name) if result.fits else None
        if found:
            failures = tuple(
                Failure("DynamicResources", f"claim {v.claim.split('/', 1)[-1]}/{v.request} {v.reason}", v.detail)
                for v in found
            )
            result = Result(failures)
        out.append(result)
    return out
