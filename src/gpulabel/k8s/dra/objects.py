"""DRA objects (resource.k8s.io/v1) from API JSON: only what allocation reads.

Each reader takes the object as the API returns it (a LIST item or a snapshot
document) and a ``where`` that names it in errors; malformed fields raise
:class:`~gpulabel.errors.SnapshotError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpulabel.errors import SnapshotError
from gpulabel.k8s.dra.limits import refuse_over_limits
from gpulabel.k8s.dra.validation import resource_slice_errors, slice_invalid_message
from gpulabel.k8s.dra.values import QuantityError, SemverError, parse_semver
from gpulabel.k8s.quantity import json_text, parse_nanos
from gpulabel.k8s.taints import Taint, Toleration

__all__ = [
    "DRA_KINDS",
    "AllocatedDevice",
    "Constraint",
    "Device",
    "DeviceClass",
    "DeviceRequest",
    "DeviceTaint",
    "DeviceToleration",
    "Request",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ResourceSlice",
    "claim_from_json",
    "class_from_json",
    "slice_from_json",
    "template_from_json",
]

DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
JSON = dict[str, Any]
_ATTR_TYPES = ("int", "bool", "string", "version")


# A device taint and a claim's toleration match as a node taint and a pod's toleration do
# (resourceclaim.ToleratesTaint and v1.Toleration.ToleratesTaint agree): one pair of types serves both.
DeviceTaint = Taint
DeviceToleration = Toleration


@dataclass(frozen=True, slots=True)
class Device:
    name: str
    attributes: Mapping[str, tuple[str, Any]]  # qualified name -> (type, value)
    capacity: Mapping[str, str]  # qualified name -> quantity string
    taints: tuple[DeviceTaint, ...] = ()
    allow_multiple: bool = False
    binding_conditions: bool = False
    consumes_counters: bool = False


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str
    node_selector: JSON | None
    all_nodes: bool
    per_device_node_selection: bool
    devices: tuple[Device, ...]
    shared_counters: bool = False


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """``exactly`` or one ``firstAvailable`` entry: what one request asks of one class."""

    name: str
    class_name: str
    selectors: tuple[str, ...]
    mode: str  # ExactCount | All
    count: int
    tolerations: tuple[DeviceToleration, ...] = ()
    admin_access: bool = False


@dataclass(frozen=True, slots=True)
class Request:
    name: str
    exactly: DeviceRequest | None
    first_available: tuple[DeviceRequest, ...] = ()

    def alternatives(self) -> tuple[DeviceRequest, ...]:
        return self.first_available if self.first_available else ((self.exactly,) if self.exactly else ())


@dataclass(frozen=True, slots=True)
class Constraint:
    requests: tuple[str, ...]
    match_attribute: str | None
    distinct_attribute: str | None = None


@dataclass(frozen=True, slots=True)
class AllocatedDevice:
    request: str
    driver: str
    pool: str
    device: str


@dataclass(frozen=True, slots=True)
class ResourceClaim:
    namespace: str
    name: str
    requests: tuple[Request, ...]
    constraints: tuple[Constraint, ...] = ()
    allocated: tuple[AllocatedDevice, ...] | None = None  # None: not allocated
    reserved_for: tuple[str, ...] = ()
    uid: str = ""

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    namespace: str
    name: str
    claim: ResourceClaim  # the spec every generated claim gets (named after the template until generated)


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
    text = json_text(str(value))  # as the API server's JSON decoding trims it
    try:
        parse_nanos(text)
    except QuantityError as err:
        raise SnapshotError(where, f"{what} is not a quantity: {err}") from None
    return text


def _device(value: Any, where: str, what: str) -> Device:
    d = _dict(value, where, what)
    name = d.get("name")
    if not isinstance(name, str) or not name:
        raise SnapshotError(where, f"{what}.name is missing")
    attrs = {
        str(k): _attribute(v, where, f"{what}.attributes[{k}]")
        for k, v in _dict(d.get("attributes"), where, f"{what}.attributes").items()
    }
    caps = {}
    for k, v in _dict(d.get("capacity"), where, f"{what}.capacity").items():
        caps[str(k)] = _quantity(
            _dict(v, where, f"{what}.capacity[{k}]").get("value", "0"), where, f"{what}.capacity[{k}]"
        )
    taints = tuple(
        DeviceTaint(str(t.get("key", "")), str(t.get("value", "") or ""), str(t.get("effect", "")))
        for t in _list(d.get("taints"), where, f"{what}.taints")
        if isinstance(t, dict)
    )
    return Device(
        name,
        attrs,
        caps,
        taints,
        bool(d.get("allowMultipleAllocations", False)),
        bool(d.get("bindingConditions")),
        bool(d.get("consumesCounters")),
    )


def slice_from_json(obj: JSON, where: str = "") -> ResourceSlice:
    _, name, _ = _meta(obj, where)
    here = f"{where} (resourceslice {name})" if where else f"resourceslice {name}"
    spec = _dict(obj.get("spec"), here, "spec")
    pool = _dict(spec.get("pool"), here, "spec.pool")
    if errors := resource_slice_errors(spec):
        raise SnapshotError(here, slice_invalid_message(name, errors))
    devices = tuple(
        _device(d, here, f"spec.devices[{i}]") for i, d in enumerate(_list(spec.get("devices"), here, "spec.devices"))
    )
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
        devices=devices,
        shared_counters=bool(spec.get("sharedCounters")),
    )


def class_from_json(obj: JSON, where: str = "") -> DeviceClass:
    _, name, _ = _meta(obj, where)
    here = f"{where} (deviceclass {name})" if where else f"deviceclass {name}"
    spec = _dict(obj.get("spec"), here, "spec")
    refuse_over_limits("DeviceClass", name, spec, here)
    return DeviceClass(name, _selectors(spec.get("selectors"), here, "spec.selectors"))


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
    )


def _claim_spec(
    spec: JSON, namespace: str, name: str, where: str, status: JSON | None = None, uid: str = ""
) -> ResourceClaim:
    devices = _dict(spec.get("devices"), where, "spec.devices")
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
    constraints = tuple(
        Constraint(
            tuple(str(x) for x in _list(c.get("requests"), where, "constraints.requests")),
            _opt_str(c.get("matchAttribute"), where, "spec.devices.constraints.matchAttribute"),
            _opt_str(c.get("distinctAttribute"), where, "spec.devices.constraints.distinctAttribute"),
        )
        for c in _list(devices.get("constraints"), where, "spec.devices.constraints")
        if isinstance(c, dict)
    )
    allocated = None
    reserved: tuple[str, ...] = ()
    if status:
        alloc = status.get("allocation")
        if isinstance(alloc, dict):
            allocated = tuple(
                AllocatedDevice(
                    str(x.get("request", "")),
                    str(x.get("driver", "")),
                    str(x.get("pool", "")),
                    str(x.get("device", "")),
                )
                for x in _list(
                    _dict(alloc.get("devices"), where, "status.allocation.devices").get("results"), where, "results"
                )
                if isinstance(x, dict)
            )
        reserved = tuple(
            str(r.get("name", ""))
            for r in _list(status.get("reservedFor"), where, "status.reservedFor")
            if isinstance(r, dict)
        )
    return ResourceClaim(namespace or "default", name, tuple(requests), constraints, allocated, reserved, uid)


def claim_from_json(obj: JSON, where: str = "") -> ResourceClaim:
    ns, name, uid = _meta(obj, where)
    here = f"{where} (resourceclaim {ns}/{name})" if where else f"resourceclaim {ns}/{name}"
    refuse_over_limits("ResourceClaim", name, _dict(obj.get("spec"), here, "spec"), here)
    return _claim_spec(
        _dict(obj.get("spec"), here, "spec"), ns, name, here, _dict(obj.get("status"), here, "status"), uid
    )


def template_from_json(obj: JSON, where: str = "") -> ResourceClaimTemplate:
    ns, name, _ = _meta(obj, where)
    here = f"{where} (resourceclaimtemplate {ns}/{name})" if where else f"resourceclaimtemplate {ns}/{name}"
    refuse_over_limits("ResourceClaimTemplate", name, _dict(obj.get("spec"), here, "spec"), here)
    spec = _dict(_dict(obj.get("spec"), here, "spec").get("spec"), here, "spec.spec")
    return ResourceClaimTemplate(ns or "default", name, _claim_spec(spec, ns, name, here))
