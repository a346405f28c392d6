"""One claim request on one node: its devices followed through the structured allocator's steps
(:mod:`gpulabel.k8s.dra.allocator`), and the first step that leaves too few named as the request's reason
(the reasons: :mod:`gpulabel.checks.dra.rules`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpulabel.errors import CelError
from gpulabel.k8s.dra.allocator import (
    DeviceID,
    Pool,
    counter_shortfall,
    counters_left,
    device_id_text,
    taint_prevents,
)
from gpulabel.k8s.dra.capacity import Charge, fits_capacity, quantity_text
from gpulabel.k8s.dra.evaluator import DraEvaluator
from gpulabel.k8s.dra.objects import Device, DeviceClass, DeviceRequest, ResourceClaim
from gpulabel.model.cluster import Node
from gpulabel.model.redaction import redact_text

__all__ = ["ClaimVerdict", "cel_error_verdict", "explain_request", "state_device_taints"]


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


def explain_request(
    ev: DraEvaluator, node: Node, claim: ResourceClaim, req: DeviceRequest, name: str, cls: DeviceClass | None
) -> ClaimVerdict | None:
    """Why request ``name`` of ``claim`` (one ``firstAvailable`` alternative: ``req``) cannot be allocated on
    ``node`` on its own, or ``None`` when it can: its devices followed through the allocator's steps, the first
    step that leaves too few named."""
    pools = ev.pools(node)
    verdict = _Verdict(node.name, claim.ref, name)
    devices = _devices(pools)
    if not devices:
        return _no_devices(pools, verdict)
    admitted = _class_admits(ev, devices, cls, req, verdict)
    if isinstance(admitted, ClaimVerdict):
        return admitted
    matching = _request_selects(ev, admitted, req, verdict)
    if isinstance(matching, ClaimVerdict):
        return matching
    return _free_enough(ev, pools, req, name, matching, verdict)


Devices = list[tuple[DeviceID, Device]]


def _no_devices(pools: Sequence[Pool], verdict: _Verdict) -> ClaimVerdict:
    """No device the search can reach: the node's pools are invalid, not completely published, or none."""
    invalid = [f"{p.id_text} ({p.invalid})" for p in pools if p.invalid]
    if invalid:
        return verdict("invalid-pool", f"pool(s) {', '.join(invalid)} invalid", pools=invalid)
    incomplete = [p.id_text for p in pools if p.incomplete]
    if incomplete:
        return verdict("incomplete-pool", f"pool(s) {', '.join(incomplete)} not completely published", pools=incomplete)
    return verdict("no-devices", "no ResourceSlice publishes a device for this node")


def _class_admits(
    ev: DraEvaluator, devices: Devices, cls: DeviceClass | None, req: DeviceRequest, verdict: _Verdict
) -> Devices | ClaimVerdict:
    """The devices the request's DeviceClass admits, or why none."""
    if cls is None:
        return verdict("class-selector", f"device class {req.class_name} does not exist", device_class=req.class_name)
    for i, expr in enumerate(cls.selectors):
        if ev.selector(expr).error is not None:
            return verdict(
                "cel-error", f"class {cls.name}: selector #{i}: CEL compile error: {ev.selector(expr).error}"
            )
    admitted, errors, _ = _evaluate(ev, devices, cls.selectors)
    if admitted:
        return admitted
    if errors:
        did, i, msg = errors[0]
        return verdict("cel-error", f"class {cls.name}: selector #{i} on device {device_id_text(did)}: {msg}")
    return verdict(
        "class-selector",
        f"no device of {len(devices)} passes class {cls.name} ({' && '.join(cls.selectors) or 'no selectors'})",
        device_class=cls.name,
    )


def _request_selects(
    ev: DraEvaluator, admitted: Devices, req: DeviceRequest, verdict: _Verdict
) -> Devices | ClaimVerdict:
    """The admitted devices the request's own selectors match, or why none: the CEL error, or the selector the
    closest device fails with the attribute values it read there."""
    for i, expr in enumerate(req.selectors):
        if ev.selector(expr).error is not None:
            return verdict("cel-error", f"selector #{i}: CEL compile error: {ev.selector(expr).error}")
    matching, errors, passed = _evaluate(ev, admitted, req.selectors)
    if matching:
        return matching
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


def _free_enough(
    ev: DraEvaluator, pools: Sequence[Pool], req: DeviceRequest, name: str, matching: Devices, verdict: _Verdict
) -> ClaimVerdict | None:
    """Of the matching devices, the untainted ones that no other claim holds (taint, allocated), then enough of
    them (:func:`_enough`)."""
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
    held = _Held(len(untainted), holders, [device_id_text(d) for d in tainted], unusable)
    return _enough(ev, pools, req, free, held, verdict)


@dataclass(frozen=True)
class _Held:
    """What the count's detail says beside the free devices: how many were untainted, who holds the others, the
    tainted ones."""

    untainted: int
    holders: list[str]
    tainted: list[str]
    unusable: str  # "; tainted, not used: ..." or ""


def _enough(
    ev: DraEvaluator, pools: Sequence[Pool], req: DeviceRequest, free: Devices, held: _Held, verdict: _Verdict
) -> ClaimVerdict | None:
    """Whether enough of the free devices have the capacity asked and the shared counters left (capacity,
    counter, count)."""
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
        more = f" ({held.untainted - len(free)} allocated to {', '.join(held.holders)})" if held.holders else ""
        if short:
            more += f" ({len(short)} short of a shared counter)"
        return verdict(
            "count",
            f"needs {req.count} device(s), {len(free)} free matching{more}{held.unusable}",
            free=len(free),
            tainted=held.tainted,
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
        if reason == "cel-error":
            return cel_error_verdict(self.node, self.claim, self.request, detail, data)
        return ClaimVerdict(self.node, self.claim, self.request, reason, detail, data)


def cel_error_verdict(node: str, claim: str, request: str, detail: str, data: Mapping[str, Any]) -> ClaimVerdict:
    """A ``cel-error`` verdict, redacted (``model/redaction.py``): a CEL compile error quotes its expression and a
    runtime error the key it missed, and an expression may compare with a string that holds a secret (a URL's
    password); ``pending`` and ``check -o wide`` print the detail, ``-o json`` the data."""
    shown = {k: redact_text(v) if isinstance(v, str) else v for k, v in data.items()}
    return ClaimVerdict(node, claim, request, "cel-error", redact_text(detail), shown)
