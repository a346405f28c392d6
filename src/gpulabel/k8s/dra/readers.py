"""DRA objects (resource.k8s.io/v1) from API JSON: the readers of :mod:`gpulabel.k8s.dra.objects`.

Each reader takes the object as the API returns it (a LIST item or a snapshot
document) and a ``where`` that names it in errors; malformed fields raise
:class:`~gpulabel.errors.SnapshotError`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpulabel.errors import SnapshotError
from gpulabel.k8s.dra.capacity import NANO, CapacityPolicy
from gpulabel.k8s.dra.limits import refuse_over_limits
from gpulabel.k8s.dra.objects import (
    JSON,
    AllocatedDevice,
    Constraint,
    Device,
    DeviceClass,
    DeviceRequest,
    DeviceTaint,
    DeviceTaintRule,
    DeviceToleration,
    Request,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from gpulabel.k8s.dra.validation import resource_slice_errors, slice_invalid_message
from gpulabel.k8s.dra.values import QuantityError, SemverError, parse_semver
from gpulabel.k8s.quantity import json_text, parse_nanos

__all__ = [
    "claim_from_json",
    "class_from_json",
    "slice_from_json",
    "taint_rule_from_json",
    "template_from_json",
]

_ATTR_TYPES = ("int", "bool", "string", "version")


def _meta(obj: JSON, where: str) -> tuple[str, str, str]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise SnapshotError(where, f"{obj.get('kind')} has no metadata.name")
    return str(meta.get("namespace") or ""), meta["name"], str(meta.get("uid") or "")


def _dict(value: Any, where: str, what: str) -> JSON:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SnapshotError(where, f"{what} is not a mapping")
    return value


def _list(value: Any, where: str, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SnapshotError(where, f"{what} is not a list")
    return value


def _selectors(value: Any, where: str, what: str) -> tuple[str, ...]:
    out = []
    for i, sel in enumerate(_list(value, where, what)):
        cel = _dict(_dict(sel, where, f"{what}[{i}]").get("cel"), where, f"{what}[{i}].cel")
        expr = cel.get("expression")
        if not isinstance(expr, str):
            raise SnapshotError(where, f"{what}[{i}].cel.expression is not a string")
        out.append(expr)
    return tuple(out)


_PY_TYPES: dict[str, type] = {"int": int, "bool": bool, "string": str, "version": str}


def _opt_str(value: Any, where: str, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise SnapshotError(where, f"{what} is not a string: {value!r}")


def _int(value: Any, where: str, what: str, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise SnapshotError(where, f"{what} is not an integer: {value!r}")
    return value


def _attribute(value: Any, where: str, what: str) -> tuple[str, Any]:
    entry = _dict(value, where, what)
    for kind in _ATTR_TYPES:
        if kind in entry:
            v = entry[kind]
            if not isinstance(v, _PY_TYPES[kind]) or (kind == "int" and isinstance(v, bool)):
                raise SnapshotError(where, f"{what}.{kind} is not of type {kind}: {v!r}")
            if kind == "version":
                try:
                    parse_semver(str(v))
                except SemverError as err:
                    raise SnapshotError(where, f"{what}.version is not a semantic version: {err}") from None
            return kind, v
    raise SnapshotError(where, f"{what} has none of {', '.join(_ATTR_TYPES)}")


def _quantity(value: Any, where: str, what: str) -> str:
    return _parsed(value, where, what)[0]


def _amount(value: Any, where: str, what: str) -> int:
    return _parsed(value, where, what)[1]


def _parsed(value: Any, where: str, what: str) -> tuple[str, int]:
    """The quantity as the API server's JSON decoding trims it, and its value in nano-units."""
    text = json_text(str(value))
    try:
        return text, parse_nanos(text)
    except QuantityError as err:
        raise SnapshotError(where, f"{what} is not a quantity: {err}") from None


def _counters(value: Any, where: str, what: str) -> tuple[tuple[str, int], ...]:
    """``counters``: name -> ``{value: <quantity>}``, as (name, nano-units)."""
    return tuple(
        (str(k), _amount(_dict(v, where, f"{what}[{k}]").get("value", "0"), where, f"{what}[{k}]"))
        for k, v in _dict(value, where, what).items()
    )


def _policy(value: Any, where: str, what: str) -> CapacityPolicy | None:
    """A ``requestPolicy``; ``None`` when a range's minimum or step is not a whole number (not modelled)."""
    p = _dict(value, where, what)

    def q(v: Any, name: str) -> int | None:
        return None if v is None else _amount(v, where, f"{what}.{name}")

    rng = p.get("validRange")
    r = _dict(rng, where, f"{what}.validRange")
    low, step = q(r.get("min"), "validRange.min"), q(r.get("step"), "validRange.step")
    if any(x is not None and x % NANO for x in (low, step)):
        return None
    values = p.get("validValues")
    return CapacityPolicy(
        default=q(p.get("default"), "default"),
        has_range=rng is not None,
        min=low,
        max=q(r.get("max"), "validRange.max"),
        step=step,
        values=None
        if values is None
        else tuple(sorted(q(x, "validValues") or 0 for x in _list(values, where, f"{what}.validValues"))),
    )


def _strings(value: Any, where: str, what: str) -> tuple[str, ...]:
    return tuple(str(x) for x in _list(value, where, what))


# Device fields the 1.37 allocator reads that gpulabel does not model yet: refused, never guessed.
_UNMODELLED_DEVICE = ("nodeAllocatableResources",)
_UNMODELLED_SLICE = ("partitionTypeAttribute", "skipNodeOperations")


def _device(value: Any, where: str, what: str) -> tuple[Device, bool]:
    """The device, and whether it names ``compatibilityGroups``."""
    d = _dict(value, where, what)
    name = d.get("name")
    if not isinstance(name, str) or not name:
        raise SnapshotError(where, f"{what}.name is missing")
    attrs = {
        str(k): _attribute(v, where, f"{what}.attributes[{k}]")
        for k, v in _dict(d.get("attributes"), where, f"{what}.attributes").items()
    }
    unmodelled = [f for f in _UNMODELLED_DEVICE if d.get(f)]
    caps = {}
    amounts = {}
    policies = {}
    for k, v in _dict(d.get("capacity"), where, f"{what}.capacity").items():
        entry = _dict(v, where, f"{what}.capacity[{k}]")
        caps[str(k)], amounts[str(k)] = _parsed(entry.get("value", "0"), where, f"{what}.capacity[{k}]")
        if entry.get("requestPolicy") is not None:
            policy = _policy(entry["requestPolicy"], where, f"{what}.capacity[{k}].requestPolicy")
            if policy is None:
                unmodelled.append(f"capacity[{k}].requestPolicy (a step or minimum that is not a whole number)")
            else:
                policies[str(k)] = policy
    taints = tuple(
        DeviceTaint(str(t.get("key", "")), str(t.get("value", "") or ""), str(t.get("effect", "")))
        for t in _list(d.get("taints"), where, f"{what}.taints")
        if isinstance(t, dict)
    )
    consumes = []
    for i, c in enumerate(_list(d.get("consumesCounters"), where, f"{what}.consumesCounters")):
        here = f"{what}.consumesCounters[{i}]"
        c = _dict(c, where, here)
        consumes.append((str(c.get("counterSet", "")), _counters(c.get("counters"), where, f"{here}.counters")))
    selector = d.get("nodeSelector")
    device = Device(
        name,
        attrs,
        caps,
        taints,
        bool(d.get("allowMultipleAllocations", False)),
        _strings(d.get("bindingConditions"), where, f"{what}.bindingConditions"),
        _strings(d.get("bindingFailureConditions"), where, f"{what}.bindingFailureConditions"),
        tuple(consumes),
        str(d.get("nodeName") or ""),
        selector if isinstance(selector, dict) else None,
        bool(d.get("allNodes", False)),
        ("",) * len(taints),
        tuple(f"{what}.{f}" for f in unmodelled),
        amounts,
        policies,
    )
    return device, bool(d.get("compatibilityGroups"))


def slice_from_json(obj: JSON, where: str = "") -> ResourceSlice:
    _, name, _ = _meta(obj, where)
    here = f"{where} (resourceslice {name})" if where else f"resourceslice {name}"
    spec = _dict(obj.get("spec"), here, "spec")
    pool = _dict(spec.get("pool"), here, "spec.pool")
    if errors := resource_slice_errors(spec):
        raise SnapshotError(here, slice_invalid_message(name, errors))
    parsed = [
        _device(d, here, f"spec.devices[{i}]") for i, d in enumerate(_list(spec.get("devices"), here, "spec.devices"))
    ]
    counter_sets: dict[str, dict[str, int]] = {}
    for i, cs in enumerate(_list(spec.get("sharedCounters"), here, "spec.sharedCounters")):
        cs = _dict(cs, here, f"spec.sharedCounters[{i}]")
        counter_sets[str(cs.get("name", ""))] = dict(
            _counters(cs.get("counters"), here, f"spec.sharedCounters[{i}].counters")
        )
    unmodelled = [f"spec.{f}" for f in _UNMODELLED_SLICE if spec.get(f)]
    unmodelled.extend(u for d, _ in parsed for u in d.unmodelled)
    return ResourceSlice(
        name=name,
        driver=str(spec.get("driver", "")),
        pool=str(pool.get("name", "")),
        generation=_int(pool.get("generation"), here, "spec.pool.generation", 0),
        slice_count=_int(pool.get("resourceSliceCount"), here, "spec.pool.resourceSliceCount", 1),
        node_name=str(spec.get("nodeName") or ""),
        node_selector=spec.get("nodeSelector") if isinstance(spec.get("nodeSelector"), dict) else None,
        all_nodes=bool(spec.get("allNodes", False)),
        per_device_node_selection=bool(spec.get("perDeviceNodeSelection", False)),
        devices=tuple(d for d, _ in parsed),
        counter_sets=counter_sets,
        compatibility_groups=any(g for _, g in parsed),
        unmodelled=tuple(unmodelled),
    )


def taint_rule_from_json(obj: JSON, where: str = "") -> DeviceTaintRule:
    _, name, _ = _meta(obj, where)
    here = f"{where} (devicetaintrule {name})" if where else f"devicetaintrule {name}"
    spec = _dict(obj.get("spec"), here, "spec")
    sel = spec.get("deviceSelector")
    selector = _dict(sel, here, "spec.deviceSelector")
    taint = _dict(spec.get("taint"), here, "spec.taint")
    return DeviceTaintRule(
        name,
        _opt_str(selector.get("driver"), here, "spec.deviceSelector.driver"),
        _opt_str(selector.get("pool"), here, "spec.deviceSelector.pool"),
        _opt_str(selector.get("device"), here, "spec.deviceSelector.device"),
        DeviceTaint(str(taint.get("key", "")), str(taint.get("value", "") or ""), str(taint.get("effect", ""))),
        sel is not None,
    )


def class_from_json(obj: JSON, where: str = "") -> DeviceClass:
    _, name, _ = _meta(obj, where)
    here = f"{where} (deviceclass {name})" if where else f"deviceclass {name}"
    spec = _dict(obj.get("spec"), here, "spec")
    refuse_over_limits("DeviceClass", name, spec, here)
    return DeviceClass(
        name,
        _selectors(spec.get("selectors"), here, "spec.selectors"),
        str(spec.get("extendedResourceName") or ""),
        str(_dict(obj.get("metadata"), here, "metadata").get("creationTimestamp") or ""),
    )


def _tolerations(value: Any, where: str, what: str) -> tuple[DeviceToleration, ...]:
    return tuple(
        DeviceToleration(
            str(t.get("key", "")),
            str(t.get("operator", "") or "Equal"),
            str(t.get("value", "") or ""),
            str(t.get("effect", "") or ""),
        )
        for t in _list(value, where, what)
        if isinstance(t, dict)
    )


def _device_request(d: JSON, name: str, where: str, what: str) -> DeviceRequest:
    return DeviceRequest(
        name=name,
        class_name=str(d.get("deviceClassName", "")),
        selectors=_selectors(d.get("selectors"), where, f"{what}.selectors"),
        mode=str(d.get("allocationMode") or "ExactCount"),
        count=_int(d.get("count"), where, f"{what}.count", 1),
        tolerations=_tolerations(d.get("tolerations"), where, f"{what}.tolerations"),
        admin_access=bool(d.get("adminAccess", False)),
        derived_attributes=bool(d.get("derivedAttributes")),
        capacity={
            str(k): _amount(v, where, f"{what}.capacity.requests[{k}]")
            for k, v in _dict(
                _dict(d.get("capacity"), where, f"{what}.capacity").get("requests"), where, f"{what}.capacity.requests"
            ).items()
        },
    )


def _claim_requests(devices: JSON, where: str) -> tuple[Request, ...]:
    requests = []
    for i, r in enumerate(_list(devices.get("requests"), where, "spec.devices.requests")):
        r = _dict(r, where, f"spec.devices.requests[{i}]")
        rname = str(r.get("name", ""))
        exactly = r.get("exactly")
        subs = []
        for j, sub in enumerate(_list(r.get("firstAvailable"), where, f"spec.devices.requests[{i}].firstAvailable")):
            what = f"spec.devices.requests[{i}].firstAvailable[{j}]"
            sub = _dict(sub, where, what)
            subs.append(_device_request(sub, str(sub.get("name", "")), where, what))
        first = tuple(subs)
        ex = (
            _device_request(exactly, rname, where, f"spec.devices.requests[{i}].exactly")
            if isinstance(exactly, dict)
            else None
        )
        requests.append(Request(rname, ex, first))
    return tuple(requests)


def _claim_constraints(devices: JSON, where: str) -> tuple[Constraint, ...]:
    return tuple(
        Constraint(
            tuple(str(x) for x in _list(c.get("requests"), where, "constraints.requests")),
            _opt_str(c.get("matchAttribute"), where, "spec.devices.constraints.matchAttribute"),
            _opt_str(c.get("distinctAttribute"), where, "spec.devices.constraints.distinctAttribute"),
        )
        for c in _list(devices.get("constraints"), where, "spec.devices.constraints")
        if isinstance(c, dict)
    )


def _allocated_devices(alloc: JSON, where: str) -> tuple[AllocatedDevice, ...]:
    return tuple(
        AllocatedDevice(
            str(x.get("request", "")),
            str(x.get("driver", "")),
            str(x.get("pool", "")),
            str(x.get("device", "")),
            x.get("adminAccess") is True,
            str(x.get("shareID") or ""),
            {
                str(k): _amount(v, where, f"consumedCapacity[{k}]")
                for k, v in _dict(x.get("consumedCapacity"), where, "consumedCapacity").items()
            },
            _strings(x.get("bindingConditions"), where, "bindingConditions"),
            _strings(x.get("bindingFailureConditions"), where, "bindingFailureConditions"),
        )
        for x in _list(_dict(alloc.get("devices"), where, "status.allocation.devices").get("results"), where, "results")
        if isinstance(x, dict)
    )


def _device_conditions(status: JSON, where: str) -> dict[tuple[str, str, str], dict[str, tuple[str, str, str]]]:
    """``status.devices[].conditions`` by (driver, pool, device), then by condition type: (status, reason, message)."""
    conditions: dict[tuple[str, str, str], dict[str, tuple[str, str, str]]] = {}
    for entry in _list(status.get("devices"), where, "status.devices"):
        if isinstance(entry, dict):
            conditions[(str(entry.get("driver", "")), str(entry.get("pool", "")), str(entry.get("device", "")))] = {
                str(c.get("type", "")): (
                    str(c.get("status", "")),
                    str(c.get("reason", "")),
                    str(c.get("message", "")),
                )
                for c in _list(entry.get("conditions"), where, "status.devices.conditions")
                if isinstance(c, dict)
            }
    return conditions


def _claim_spec(
    spec: JSON, namespace: str, name: str, where: str, status: JSON | None = None, uid: str = ""
) -> ResourceClaim:
    devices = _dict(spec.get("devices"), where, "spec.devices")
    allocated = None
    reserved: tuple[str, ...] = ()
    selector: JSON | None = None
    allocated_at = ""
    conditions: dict[tuple[str, str, str], dict[str, tuple[str, str, str]]] = {}
    if status:
        alloc = status.get("allocation")
        if isinstance(alloc, dict):
            found = alloc.get("nodeSelector")
            selector = found if isinstance(found, dict) else None
            allocated_at = str(alloc.get("allocationTimestamp") or "")
            allocated = _allocated_devices(alloc, where)
        conditions = _device_conditions(status, where)
        reserved = tuple(
            str(r.get("name", ""))
            for r in _list(status.get("reservedFor"), where, "status.reservedFor")
            if isinstance(r, dict)
        )
    return ResourceClaim(
        namespace or "default",
        name,
        _claim_requests(devices, where),
        _claim_constraints(devices, where),
        allocated,
        reserved,
        uid,
        selector,
        allocated_at,
        conditions,
    )


EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def claim_from_json(obj: JSON, where: str = "") -> ResourceClaim:
    ns, name, uid = _meta(obj, where)
    here = f"{where} (resourceclaim {ns}/{name})" if where else f"resourceclaim {ns}/{name}"
    refuse_over_limits("ResourceClaim", name, _dict(obj.get("spec"), here, "spec"), here)
    claim = _claim_spec(
        _dict(obj.get("spec"), here, "spec"), ns, name, here, _dict(obj.get("status"), here, "status"), uid
    )
    meta = _dict(obj.get("metadata"), here, "metadata")
    if _dict(meta.get("annotations"), here, "metadata.annotations").get(EXTENDED_CLAIM_ANNOTATION) == "true":
        owner = next(
            (
                str(o.get("name", ""))
                for o in _list(meta.get("ownerReferences"), here, "metadata.ownerReferences")
                if isinstance(o, dict) and o.get("kind") == "Pod" and o.get("controller") is True
            ),
            "",
        )
        claim = replace(claim, extended_for=owner)
    return claim


def template_from_json(obj: JSON, where: str = "") -> ResourceClaimTemplate:
    ns, name, _ = _meta(obj, where)
    here = f"{where} (resourceclaimtemplate {ns}/{name})" if where else f"resourceclaimtemplate {ns}/{name}"
    refuse_over_limits("ResourceClaimTemplate", name, _dict(obj.get("spec"), here, "spec"), here)
    spec = _dict(_dict(obj.get("spec"), here, "spec").get("spec"), here, "spec.spec")
    return ResourceClaimTemplate(ns or "default", name, _claim_spec(spec, ns, name, here))
