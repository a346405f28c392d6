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
``count``           fewer free matching devices than the request's count (or
                    the pod's requests compete for the same devices)
``match-attribute`` enough free devices, but no set of them agrees on the
                    constrained attribute
==================  =========================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpulabel.k8s.dra.allocator import DeviceID, Pool, device_id_text, taint_prevents
from gpulabel.k8s.dra.cel import CelError, compile_selector
from gpulabel.k8s.dra.objects import Device, DeviceClass, DeviceRequest, ResourceClaim
from gpulabel.k8s.dra.plugin import DraState, pod_claims
from gpulabel.k8s.nodeaffinity import Failure, Result
from gpulabel.model.cluster import ClusterState, Node, Pod
from gpulabel.model.findings import Finding

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

REASONS = (
    "no-devices",
    "incomplete-pool",
    "class-selector",
    "selector",
    "cel-error",
    "taint",
    "allocated",
    "count",
    "match-attribute",
)


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
        return f"{pod} {self.node} claim {name}/{self.request} {self.reason}"

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
    return [
        (DeviceID(driver=p.driver, pool=p.name, device=d.name), d)
        for p in pools
        if not p.incomplete
        for s in p.slices
        for d in s.devices
    ]


def _read_values(state: DraState, did: DeviceID, device: Device, expression: str) -> dict[str, Any]:
    """The attributes and capacities of ``device`` that ``expression`` names, as the selector sees them."""
    names = compile_selector(expression).read_names()
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
    state: DraState, devices: list[tuple[DeviceID, Device]], exprs: Sequence[str]
) -> tuple[list[tuple[DeviceID, Device]], list[tuple[DeviceID, int, str]], dict[DeviceID, int]]:
    """Devices passing every expression, the CEL errors (device, selector, message), selectors passed per device."""
    passing, errors, passed = [], [], {}
    for did, device in devices:
        dev = state.device_input(did, device)
        ok, n = True, 0
        for i, expr in enumerate(exprs):
            sel = compile_selector(expr)
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
    state: DraState, node: Node, claim: ResourceClaim, req: DeviceRequest, name: str, cls: DeviceClass | None
) -> ClaimVerdict | None:
    pools = state.pools(node)
    verdict = _Verdict(node.name, claim.ref, name)
    incomplete = [p.id_text for p in pools if p.incomplete]
    devices = _devices(pools)
    if not devices:
        if incomplete:
            return verdict(
                "incomplete-pool", f"pool(s) {', '.join(incomplete)} not completely published", pools=incomplete
            )
        return verdict("no-devices", "no ResourceSlice publishes a device for this node")
    if cls is None:
        return verdict("class-selector", f"device class {req.class_name} does not exist", device_class=req.class_name)
    for i, expr in enumerate(cls.selectors):
        if compile_selector(expr).error is not None:
            return verdict(
                "cel-error", f"class {cls.name}: selector #{i}: CEL compile error: {compile_selector(expr).error}"
            )
    admitted, errors, _ = _evaluate(state, devices, cls.selectors)
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
        if compile_selector(expr).error is not None:
            return verdict("cel-error", f"selector #{i}: CEL compile error: {compile_selector(expr).error}")
    matching, errors, passed = _evaluate(state, admitted, req.selectors)
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
        values = _read_values(state, did, device, expr)
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
        taints = sorted({str(t) for _, dev in matching for t in dev.taints})
        return verdict("taint", f"matching devices carry untolerated taint(s) {', '.join(taints)}", taints=taints)
    free = [(d, dev) for d, dev in untainted if d not in state.in_use]
    holders = sorted({state.in_use[d] for d, _ in untainted if d in state.in_use})
    if (req.mode == "All" and holders) or not free:
        return verdict(
            "allocated", f"{len(untainted)} matching device(s) allocated to {', '.join(holders)}", claims=holders
        )
    if req.mode == "ExactCount" and len(free) < req.count:
        held = f" ({len(untainted) - len(free)} allocated to {', '.join(holders)})" if holders else ""
        return verdict("count", f"needs {req.count} device(s), {len(free)} free matching{held}", free=len(free))
    return None


class _Verdict:
    def __init__(self, node: str, claim: str, request: str) -> None:
        self.node, self.claim, self.request = node, claim, request

    def __call__(self, reason: str, detail: str, **data: Any) -> ClaimVerdict:
        return ClaimVerdict(self.node, self.claim, self.request, reason, detail, data)


def explain_node(state: DraState, node: Node, claims: Sequence[ResourceClaim]) -> list[ClaimVerdict]:
    """Why ``claims`` cannot all be allocated on ``node``; empty when they can.

    One verdict per request that cannot be satisfied on its own (each
    ``firstAvailable`` alternative counted; the last one's reason is given);
    when every request could be but not together, one verdict for the claim:
    ``match-attribute`` if it has constraints, else ``count``. A CEL error the
    scheduler's own search stops on is reported as ``cel-error`` first.
    """
    outcome = state.allocate(node, claims)
    if outcome.ok:
        return []
    out: list[ClaimVerdict] = []
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
                last = _explain_request(state, node, claim, alt, name, state.classes.get(alt.class_name))
                if last is None:
                    break
            if last is not None:
                out.append(last)
                failed = True
        if not failed and not out:
            # each request alone fits: they fail together
            reason = "match-attribute" if claim.constraints else "count"
            attrs = [c.match_attribute for c in claim.constraints if c.match_attribute]
            detail = (
                f"no set of free devices agrees on {', '.join(attrs)}"
                if attrs
                else "the requests of the pod's claims compete for the same devices"
            )
            out.append(ClaimVerdict(node.name, claim.ref, ",".join(r.name for r in claim.requests), reason, detail))
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


def explain_pod(state: DraState, nodes: Sequence[Node], claims: Sequence[ResourceClaim]) -> list[NodeGroup]:
    """Every node's verdict for a pod's claims, grouped by node signature: one explanation per group."""
    groups: dict[int, list[Node]] = {}
    names = state.read_names(claims)
    for node in nodes:
        groups.setdefault(state.node_signature(node, names), []).append(node)
    out = []
    for members in groups.values():
        verdicts = explain_node(state, members[0], claims)
        out.append(NodeGroup(tuple(n.name for n in members), not verdicts, tuple(verdicts)))
    return out


# -- pods waiting for claims ----------------------------------------------------------


def pod_claim_verdicts(state: ClusterState, pod: Pod, nodes: Sequence[Node]) -> dict[str, tuple[ClaimVerdict, ...]]:
    """For a pod with ``resourceClaims``: each node's claim verdicts (empty: its claims fit there).

    ``nodes`` are the nodes the other filters let through; a claim that does
    not exist yet (and has no template) gives every node one ``no-claim``
    verdict. Nodes allocation cannot tell apart are explained once.
    """
    claims = pod_claims(
        pod.namespace, pod.name, pod.spec, {"resourceClaimStatuses": list(pod.claim_statuses)}, state.dra
    )
    if claims.missing is not None:
        return {n.name: (ClaimVerdict(n.name, pod.ref, "", "no-claim", claims.missing),) for n in nodes}
    out: dict[str, tuple[ClaimVerdict, ...]] = {}
    for group in explain_pod(state.dra, nodes, claims.to_allocate):
        for name in group.nodes:
            out[name] = tuple(
                v if v.node == name else ClaimVerdict(name, v.claim, v.request, v.reason, v.detail, v.data)
                for v in group.verdicts
            )
    return out


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


def claim_results(
    state: ClusterState,
    namespace: str,
    name: str,
    resource_claims: Sequence[Mapping[str, Any]],
    results: Sequence[Result],
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
        spec={"resourceClaims": list(resource_claims)},
    )
    passing = [n for n, r in zip(state.nodes, results, strict=True) if r.fits]
    verdicts = pod_claim_verdicts(state, pod, passing)
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
