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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpulabel.errors import CelError
from gpulabel.k8s.dra.allocator import (
    DeviceID,
    Pool,
    counter_shortfall,
    counters_left,
    device_id_text,
    taint_prevents,
)
from gpulabel.k8s.dra.binding import binding_state
from gpulabel.k8s.dra.capacity import Charge, fits_capacity, quantity_text
from gpulabel.k8s.dra.evaluator import DraEvaluator
from gpulabel.k8s.dra.extended import extended_claim
from gpulabel.k8s.dra.objects import Device, DeviceClass, DeviceRequest, ResourceClaim
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


@dataclass(frozen=True)
class ClaimVerdict:
    """One claim request on one node: why it cannot be allocated there."""

    node: str
    claim: str  # ns/name
    request: str  # request, or request/subrequest
    reason: str
    detail: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def line(self, pod: str) -> str:
        """``<ns>/<pod> <node> claim <claim>/<request> <reason>``."""
        name = self.claim.split("/", 1)[-1]
        target = f"{name}/{self.request}" if self.request else name
        return f"{pod} {self.node} claim {target} {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "claim": self.claim,
            "request": self.request,
            "reason": self.reason,
            "detail": self.detail,
            **self.data,
        }


def _devices(pools: Sequence[Pool]) -> list[tuple[DeviceID, Device]]:
    """The devices the search can reach on the node: complete, valid pools; a device whose own node
    selection names another node is left out."""
    return [
        (DeviceID(driver=p.driver, pool=p.name, device=d.name), d)
        for p in pools
        if not p.incomplete and not p.invalid
        for s in p.slices
        for d in s.devices
        if d.name not in p.off_node
    ]


def _read_values(ev: DraEvaluator, did: DeviceID, device: Device, expression: str) -> dict[str, Any]:
    """The attributes and capacities of ``device`` that ``expression`` names, as the selector sees them."""
    names = ev.selector(expression).read_names()
    out: dict[str, Any] = {}
    for qualified, (_, value) in device.attributes.items():
        ident = qualified.rsplit("/", 1)[-1]
        if ident in names:
            out[qualified if "/" in qualified else f"{did.driver}/{ident}"] = value
    for qualified, value in device.capacity.items():
        ident = qualified.rsplit("/", 1)[-1]
        if ident in names:
            out[(qualified if "/" in qualified else f"{did.driver}/{ident}") + " (capacity)"] = value
    return out


def _evaluate(
    ev: DraEvaluator, devices: list[tuple[DeviceID, Device]], exprs: Sequence[str]
) -> tuple[list[tuple[DeviceID, Device]], list[tuple[DeviceID, int, str]], dict[DeviceID, int]]:
    """Devices passing every expression, the CEL errors (device, selector, message), selectors passed per device."""
    passing, errors, passed = [], [], {}
    for did, device in devices:
        dev = ev.device_input(did, device)
        ok, n = True, 0
        for i, expr in enumerate(exprs):
            sel = ev.selector(expr)
            try:
                if sel.error is not None or not sel.evaluate(dev):
                    ok = False
                    break
            except CelError as err:
                errors.append((did, i, str(err)))
                ok = False
                break
            n += 1
        passed[did] = n
        if ok:
            passing.append((did, device))
    return passing, errors, passed


def _explain_request(
    ev: DraEvaluator, node: Node, claim: ResourceClaim, req: DeviceRequest, name: str, cls: DeviceClass | None
) -> ClaimVerdict | None:
    pools = ev.pools(node)
    verdict = _Verdict(node.name, claim.ref, name)
    incomplete = [p.id_text for p in pools if p.incomplete]
    devices = _devices(pools)
    if not devices:
        invalid = [f"{p.id_text} ({p.invalid})" for p in pools if p.invalid]
        if invalid:
            return verdict("invalid-pool", f"pool(s) {', '.join(invalid)} invalid", pools=invalid)
        if incomplete:
            return verdict(
                "incomplete-pool", f"pool(s) {', '.join(incomplete)} not completely published", pools=incomplete
            )
        return verdict("no-devices", "no ResourceSlice publishes a device for this node")
    if cls is None:
        return verdict("class-selector", f"device class {req.class_name} does not exist", device_class=req.class_name)
    for i, expr in enumerate(cls.selectors):
        if ev.selector(expr).error is not None:
            return verdict(
                "cel-error", f"class {cls.name}: selector #{i}: CEL compile error: {ev.selector(expr).error}"
            )
    admitted, errors, _ = _evaluate(ev, devices, cls.selectors)
    if not admitted:
        if errors:
            did, i, msg = errors[0]
            return verdict("cel-error", f"class {cls.name}: selector #{i} on device {device_id_text(did)}: {msg}")
        return verdict(
            "class-selector",
            f"no device of {len(devices)} passes class {cls.name} ({' && '.join(cls.selectors) or 'no selectors'})",
            device_class=cls.name,
        )
    for i, expr in enumerate(req.selectors):
        if ev.selector(expr).error is not None:
            return verdict("cel-error", f"selector #{i}: CEL compile error: {ev.selector(expr).error}")
    matching, errors, passed = _evaluate(ev, admitted, req.selectors)
    if not matching:
        if errors:
            did, i, msg = errors[0]
            return verdict(
                "cel-error",
                f"selector #{i} on device {device_id_text(did)}: CEL runtime error: {msg}",
                expression=req.selectors[i],
                device=device_id_text(did),
                message=msg,
            )
        did, device = max(admitted, key=lambda d: passed[d[0]])
        i = passed[did]
        expr = req.selectors[i]
        values = _read_values(ev, did, device, expr)
        shown = ", ".join(f"{k}={v}" for k, v in values.items()) or "no attribute it names"
        return verdict(
            "selector",
            f"no device of {len(admitted)} passes selector #{i} {expr}; closest {device_id_text(did)} has {shown}",
            expression=expr,
            closest=device_id_text(did),
            values=values,
        )
    untainted = [(d, dev) for d, dev in matching if not taint_prevents(dev, req)]
    if (req.mode == "All" and len(untainted) < len(matching)) or not untainted:
        taints = sorted({_taint_text(dev, t) for _, dev in matching for t in _blocking(dev, req)})
        return verdict("taint", f"matching devices carry untolerated taint(s) {', '.join(taints)}", taints=taints)
    admin = req.admin_access and "/" not in name  # admin access: devices other claims hold are usable
    free = [(d, dev) for d, dev in untainted if admin or d not in ev.in_use]
    holders = sorted({ev.in_use[d] for d, _ in untainted if d in ev.in_use}) if not admin else []
    tainted = [d for d, dev in matching if taint_prevents(dev, req)]
    unusable = (
        "; tainted, not used: "
        + ", ".join(f"{device_id_text(d)} ({', '.join(state_device_taints(matching, d))})" for d in tainted)
        if tainted
        else ""
    )
    if (req.mode == "All" and holders) or not free:
        return verdict(
            "allocated",
            f"{len(untainted)} matching device(s) allocated to {', '.join(holders)}{unusable}",
            claims=holders,
            tainted=[device_id_text(d) for d in tainted],
        )
    refused = {d: c for d, dev in free if (c := _capacity_refusal(ev, req, d, dev)) is not None}
    if refused and len(refused) == len(free):
        did, charge = next(iter(refused.items()))
        return verdict(
            "capacity",
            f"{len(free)} free matching device(s) lack the capacity asked; "
            f"{device_id_text(did)}: {_charge_text(charge)}",
            capacity=charge.capacity,
            device=device_id_text(did),
        )
    free = [f for f in free if f[0] not in refused]
    short = _counter_shortfalls(ev, pools, free)
    if short and len(short) == len(free):
        (did, (set_name, counter, need, left)), *_ = short.items()
        return verdict(
            "counter",
            f"{len(free)} free matching device(s) consume more shared counters than are left; "
            f"{device_id_text(did)} needs {_q(need)} of counter {counter} in set {set_name}, {_q(left)} left",
            counter_set=set_name,
            counter=counter,
            needs=_q(need),
            left=_q(left),
        )
    if req.mode == "ExactCount" and len(free) - len(short) < req.count:
        free = [f for f in free if f[0] not in short]
        held = f" ({len(untainted) - len(free)} allocated to {', '.join(holders)})" if holders else ""
        if short:
            held += f" ({len(short)} short of a shared counter)"
        return verdict(
            "count",
            f"needs {req.count} device(s), {len(free)} free matching{held}{unusable}",
            free=len(free),
            tainted=[device_id_text(d) for d in tainted],
        )
    return None


def _blocking(device: Device, req: DeviceRequest) -> list[int]:
    """The indexes of the device's taints that refuse the request (NoSchedule/NoExecute, not tolerated)."""
    return [
        i
        for i, t in enumerate(device.taints)
        if t.effect in ("NoSchedule", "NoExecute") and not any(x.tolerates(t) for x in req.tolerations)
    ]


def _taint_text(device: Device, i: int) -> str:
    """``key=value:effect``, and the DeviceTaintRule that put it there."""
    rule = device.taint_rules[i] if i < len(device.taint_rules) else ""
    return f"{device.taints[i]} (devicetaintrule {rule})" if rule else str(device.taints[i])


def _capacity_refusal(ev: DraEvaluator, req: DeviceRequest, did: DeviceID, device: Device) -> Charge | None:
    """Why the device's capacity refuses the request, given what other claims' shares consume."""
    return fits_capacity(req.capacity, device.amounts, device.policies, ev.state.shares.get(did, {}))


def _charge_text(c: Charge) -> str:
    if c.missing:
        return f"the request asks for capacity {c.capacity}, which the device does not have"
    asked = "no request (its default)" if c.requested is None else f"a request of {_q(c.requested)}"
    charged = f"{asked} is charged {_q(c.charged)}"
    if c.violates:
        return f"capacity {c.capacity}: {charged}, which its requestPolicy does not allow"
    used = f", {_q(c.consumed)} consumed by other shares" if c.consumed else ""
    return f"capacity {c.capacity} {_q(c.value)}{used}: {charged}, {_q(c.value - c.consumed)} left"


_q = quantity_text  # a counter or capacity amount as a quantity


def _counter_shortfalls(
    ev: DraEvaluator, pools: Sequence[Pool], free: Sequence[tuple[DeviceID, Device]]
) -> dict[DeviceID, tuple[str, str, int, int]]:
    """The free devices that alone consume more of a counter than their pool has left."""
    by_pool = {(p.driver, p.name): p for p in pools}
    out = {}
    for did, device in free:
        if not device.consumes:
            continue
        pool = by_pool[(did.driver, did.pool)]
        consumed: dict[tuple[str, str], int] = {}
        for set_name, counters in device.consumes:
            for counter, amount in counters:
                consumed[(set_name, counter)] = consumed.get((set_name, counter), 0) + amount
        short = counter_shortfall(counters_left(pool, ev.in_use), consumed)
        if short is not None:
            out[did] = short
    return out


def state_device_taints(matching: Sequence[tuple[DeviceID, Device]], did: DeviceID) -> list[str]:
    """The taints of device ``did`` among ``matching``, as ``key=value:effect``."""
    return [_taint_text(dev, i) for d, dev in matching if d == did for i in range(len(dev.taints))]


class _Verdict:
    def __init__(self, node: str, claim: str, request: str) -> None:
        self.node, self.claim, self.request = node, claim, request

    def __call__(self, reason: str, detail: str, **data: Any) -> ClaimVerdict:
        return ClaimVerdict(self.node, self.claim, self.request, reason, detail, data)


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
    out: list[ClaimVerdict] = []
    if outcome.unmodelled is not None:
        claim = next((c for c in claims if f"claim {c.ref}," in outcome.unmodelled), claims[0] if claims else None)
        if claim is not None:
            at = _request_in(outcome.unmodelled, claim)
            return [ClaimVerdict(node.name, claim.ref, at, "unmodelled", outcome.unmodelled, {"unmodelled": True})]
    if outcome.error is not None:
        claim = next((c for c in claims if f"claim {c.ref}" in outcome.error), claims[0] if claims else None)
        if claim is not None:
            out.append(
                ClaimVerdict(
                    node.name,
                    claim.ref,
                    _request_in(outcome.error, claim),
                    "cel-error" if "CEL" in outcome.error else "error",
                    outcome.error,
                    {"scheduler_error": True},
                )
            )
            return out
    for claim in claims:
        failed = False
        for request in claim.requests:
            alternatives = request.alternatives()
            last: ClaimVerdict | None = None
            for alt in alternatives:
                name = request.name if not request.first_available else f"{request.name}/{alt.name}"
                last = _explain_request(ev, node, claim, alt, name, ev.classes.get(alt.class_name))
                if last is None:
                    break
            if last is not None:
                out.append(last)
                failed = True
        if not failed and not out:
            # each request alone fits: they fail together
            reason = "match-attribute" if claim.constraints else "count"
            attrs = [f"agrees on {c.match_attribute}" for c in claim.constraints if c.match_attribute]
            attrs += [f"differs in {c.distinct_attribute}" for c in claim.constraints if c.distinct_attribute]
            detail = (
                f"no set of free devices {' and '.join(attrs)}"
                if attrs
                else "the requests of the pod's claims compete for the same devices"
            )
            out.append(ClaimVerdict(node.name, claim.ref, ",".join(r.name for r in claim.requests), reason, detail))
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
