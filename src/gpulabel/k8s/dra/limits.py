"""The size limits the API server enforces on resource.k8s.io/v1 objects, message for message.

Constants from ``k8s.io/api/resource/v1/types.go`` (v0.37.2); the checks follow
``pkg/apis/resource/validation/validation.go`` (k8s.io/kubernetes v1.37.2):
``validateSlice``/``validateSet``/``validateMap`` report ``field.TooMany``
(``<path>: Too many: <n>: must have at most <max> items``) and skip the items
of a list that is too long (its "DOS protection"); ``validateDevice`` reports
the attribute and capacity totals as ``field.Invalid`` on the device; string
and version attribute values longer than 64 bytes are ``field.TooLong``.

``ResourceSliceMaxAttributeValuesPerDevice`` (48 values, with list attributes)
cannot be reached on a 1.37 server: ``DRAListTypeAttributes`` is alpha and off,
the list fields (``ints``, ``bools``, ``strings``, ``versions``) are dropped on
create, and an attribute left with no value is refused (``must specify one of:
...``, the declarative union check of ``validateDeviceAttribute``), whatever
its list held; labcluster answers so for 1 and 49 values. gpulabel refuses such
an attribute with the same message. Device tolerations have no limit the server
enforces: ``DeviceTolerationsMaxLength`` (16) is documented on the field but no
validation reads it; labcluster accepts 17 and 100 (rows in
``tests/limit_rows.py``).

Only the limits are checked here (what an object at the limit and one past it
differ by); the rest of each object's validation is elsewhere
(:mod:`gpulabel.k8s.dra.validation`) or not modelled. Pure: no I/O.

:data:`LIMITS` lists every limit checked, each with the upstream function and
constant; ``tests/limit_rows.py`` has an object at and one past each, and
``tests/cluster/test_limits_cluster.py`` creates them on labcluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpulabel.errors import SnapshotError
from gpulabel.k8s import field
from gpulabel.k8s.gostr import go_quote

__all__ = [
    "LIMITS",
    "claim_spec_limit_errors",
    "class_limit_errors",
    "invalid_message",
    "refuse_over_limits",
    "slice_limit_errors",
]

# resource/v1 types.go
RESOURCE_SLICE_MAX_DEVICES = 128  # ResourceSliceMaxDevices
RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES = 64  # ...WithAdvancedFeatures: taints, consumed counters, lists
ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
ATTRIBUTE_VALUES_PER_DEVICE = 48  # ResourceSliceMaxAttributeValuesPerDevice: unreachable with list attributes off
ATTRIBUTE_MAX_VALUE_LENGTH = 64  # DeviceAttributeMaxValueLength
DEVICE_TAINTS = 16  # DeviceTaintsMaxLength
COUNTER_SETS = 8  # ResourceSliceMaxCounterSets
COUNTERS_PER_COUNTER_SET = 32  # ResourceSliceMaxCountersPerCounterSet
COUNTER_CONSUMPTIONS_PER_DEVICE = 2  # ResourceSliceMaxDeviceCounterConsumptionsPerDevice
COUNTERS_PER_CONSUMPTION = 32  # ResourceSliceMaxCountersPerDeviceCounterConsumption
REQUESTS = 32  # DeviceRequestsMaxSize (= AllocationResultsMaxSize)
CONSTRAINTS = 32  # DeviceConstraintsMaxSize
CONFIG = 32  # DeviceConfigMaxSize
SELECTORS = 32  # DeviceSelectorsMaxSize
FIRST_AVAILABLE = 8  # FirstAvailableDeviceRequestMaxSize

# (object, field path, limit, upstream function): every limit this module checks
LIMITS: tuple[tuple[str, str, int, str], ...] = (
    ("ResourceSlice", "spec.devices", RESOURCE_SLICE_MAX_DEVICES, "validateResourceSliceSpec"),
    (
        "ResourceSlice",
        "spec.devices (a device with taints or consumed counters)",
        RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES,
        "validateResourceSliceSpec",
    ),
    ("ResourceSlice", "spec.devices[i] attributes + capacity", ATTRIBUTES_AND_CAPACITIES_PER_DEVICE, "validateDevice"),
    (
        "ResourceSlice",
        "spec.devices[i] attribute values (list attributes: off in 1.37, every list refused)",
        ATTRIBUTE_VALUES_PER_DEVICE,
        "validateDeviceAttribute",
    ),
    (
        "ResourceSlice",
        "spec.devices[i].attributes[k].string|version (bytes)",
        ATTRIBUTE_MAX_VALUE_LENGTH,
        "validateDeviceAttributeStringValue",
    ),
    ("ResourceSlice", "spec.devices[i].taints", DEVICE_TAINTS, "validateDevice"),
    ("ResourceSlice", "spec.devices[i].consumesCounters", COUNTER_CONSUMPTIONS_PER_DEVICE, "validateDevice"),
    (
        "ResourceSlice",
        "spec.devices[i].consumesCounters[j].counters",
        COUNTERS_PER_CONSUMPTION,
        "validateDeviceCounterConsumption",
    ),
    ("ResourceSlice", "spec.sharedCounters", COUNTER_SETS, "validateResourceSliceSpec"),
    ("ResourceSlice", "spec.sharedCounters[i].counters", COUNTERS_PER_COUNTER_SET, "validateCounterSet"),
    ("ResourceClaim", "spec.devices.requests", REQUESTS, "validateDeviceClaim"),
    ("ResourceClaim", "spec.devices.constraints", CONSTRAINTS, "validateDeviceClaim"),
    ("ResourceClaim", "spec.devices.config", CONFIG, "validateDeviceClaim"),
    ("ResourceClaim", "spec.devices.requests[i].exactly.selectors", SELECTORS, "validateSelectorSlice"),
    ("ResourceClaim", "spec.devices.requests[i].firstAvailable", FIRST_AVAILABLE, "validateDeviceRequest"),
    (
        "ResourceClaim",
        "spec.devices.requests[i].firstAvailable[j].selectors",
        SELECTORS,
        "validateDeviceSubRequest",
    ),
    ("DeviceClass", "spec.selectors", SELECTORS, "validateDeviceClassSpec"),
    ("DeviceClass", "spec.config", CONFIG, "validateDeviceClassSpec"),
)


_SCALAR_KINDS = ("int", "bool", "string", "version")
# the declarative union of DeviceAttribute (the list members are named though DRAListTypeAttributes drops them)
_ONE_OF = "must specify one of: `int`, `bool`, `string`, `version`, `ints`, `bools`, `strings`, `versions`"


def too_many(path: str, count: int, maximum: int) -> str:
    """``field.TooMany``."""
    return f"{path}: Too many: {count}: must have at most {maximum} {'item' if maximum == 1 else 'items'}"


def _too_long(path: str, maximum: int) -> str:
    return f"{path}: Too long: may not be more than {maximum} bytes"


def _list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else ()


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _device_errors(device: Mapping[str, Any], path: str) -> list[str]:
    out: list[str] = []
    attributes, capacity = _map(device.get("attributes")), _map(device.get("capacity"))
    both = len(attributes) + len(capacity)
    if both > ATTRIBUTES_AND_CAPACITIES_PER_DEVICE:
        detail = f"the total number of attributes and capacities must not exceed {ATTRIBUTES_AND_CAPACITIES_PER_DEVICE}"
        out.append(field.invalid(path, both, detail))
    for key, attr in attributes.items():  # Go walks the map in random order: at most one bad value per test row
        if not any(k in _map(attr) for k in _SCALAR_KINDS):  # only a list (dropped with the gate off), or nothing
            out.append(field.invalid(f"{path}.attributes[{key}]", "", _ONE_OF))
            continue
        for kind in ("string", "version"):
            text = _map(attr).get(kind)
            if isinstance(text, str) and len(text.encode()) > ATTRIBUTE_MAX_VALUE_LENGTH:
                out.append(_too_long(f"{path}.attributes[{key}].{kind}", ATTRIBUTE_MAX_VALUE_LENGTH))
    taints = _list(device.get("taints"))
    if len(taints) > DEVICE_TAINTS:
        out.append(too_many(f"{path}.taints", len(taints), DEVICE_TAINTS))
    consumes = _list(device.get("consumesCounters"))
    if len(consumes) > COUNTER_CONSUMPTIONS_PER_DEVICE:
        out.append(too_many(f"{path}.consumesCounters", len(consumes), COUNTER_CONSUMPTIONS_PER_DEVICE))
    else:
        for j, consumption in enumerate(consumes):
            counters = _map(_map(consumption).get("counters"))
            if len(counters) > COUNTERS_PER_CONSUMPTION:
                where = f"{path}.consumesCounters[{j}].counters"
                out.append(too_many(where, len(counters), COUNTERS_PER_CONSUMPTION))
    return out


def slice_limit_errors(spec: Mapping[str, Any], path: str = "spec") -> list[str]:
    """The size errors of a ResourceSlice ``spec``, in the order ``validateResourceSliceSpec`` reports them."""
    out: list[str] = []
    devices = [_map(d) for d in _list(spec.get("devices"))]
    # haveDeviceTaints, haveConsumesCounters (haveListAttributes: the alpha gate is off, the lists are dropped)
    advanced = any(_list(d.get("taints")) or _list(d.get("consumesCounters")) for d in devices)
    most = RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES if advanced else RESOURCE_SLICE_MAX_DEVICES
    if len(devices) > most:
        out.append(too_many(f"{path}.devices", len(devices), most))
    else:
        for i, device in enumerate(devices):
            out.extend(_device_errors(device, f"{path}.devices[{i}]"))
    sets = _list(spec.get("sharedCounters"))
    if len(sets) > COUNTER_SETS:
        out.append(too_many(f"{path}.sharedCounters", len(sets), COUNTER_SETS))
    else:
        for i, counter_set in enumerate(sets):
            counters = _map(_map(counter_set).get("counters"))
            if len(counters) > COUNTERS_PER_COUNTER_SET:
                out.append(too_many(f"{path}.sharedCounters[{i}].counters", len(counters), COUNTERS_PER_COUNTER_SET))
    return out


def _selectors(value: Any, path: str) -> list[str]:
    selectors = _list(value)
    return [too_many(path, len(selectors), SELECTORS)] if len(selectors) > SELECTORS else []


def claim_spec_limit_errors(spec: Mapping[str, Any], path: str = "spec") -> list[str]:
    """The size errors of a ResourceClaim ``spec`` (a template's ``spec.spec``), as ``validateDeviceClaim`` has them."""
    devices = _map(spec.get("devices"))
    here = f"{path}.devices"
    out: list[str] = []
    requests = _list(devices.get("requests"))
    if len(requests) > REQUESTS:
        out.append(too_many(f"{here}.requests", len(requests), REQUESTS))
    else:
        for i, request in enumerate(_map(r) for r in requests):
            rpath = f"{here}.requests[{i}]"
            first = _list(request.get("firstAvailable"))
            if len(first) > FIRST_AVAILABLE:
                out.append(too_many(f"{rpath}.firstAvailable", len(first), FIRST_AVAILABLE))
            else:
                for j, sub in enumerate(_map(s) for s in first):
                    out.extend(_selectors(sub.get("selectors"), f"{rpath}.firstAvailable[{j}].selectors"))
            exactly = request.get("exactly")
            if isinstance(exactly, dict):
                out.extend(_selectors(exactly.get("selectors"), f"{rpath}.exactly.selectors"))
    for name, most in (("constraints", CONSTRAINTS), ("config", CONFIG)):
        items = _list(devices.get(name))
        if len(items) > most:
            out.append(too_many(f"{here}.{name}", len(items), most))
    return out


def class_limit_errors(spec: Mapping[str, Any], path: str = "spec") -> list[str]:
    """The size errors of a DeviceClass ``spec`` (``validateDeviceClassSpec``)."""
    out = _selectors(spec.get("selectors"), f"{path}.selectors")
    config = _list(spec.get("config"))
    if len(config) > CONFIG:
        out.append(too_many(f"{path}.config", len(config), CONFIG))
    return out


def invalid_message(kind: str, name: str, errors: list[str]) -> str:
    """``errors.NewInvalid`` for a resource.k8s.io object of ``kind``."""
    return f"{kind}.resource.k8s.io {go_quote(name)} is invalid: {field.aggregate(errors)}"


def refuse_over_limits(kind: str, name: str, spec: Mapping[str, Any], where: str) -> None:
    """Raise the API server's refusal when a DeviceClass, ResourceClaim or ResourceClaimTemplate's spec is over a limit.

    A template's ``spec`` is its ``spec`` (its claim spec is checked under ``spec.spec``).
    """
    if kind == "DeviceClass":
        errors = class_limit_errors(spec)
    elif kind == "ResourceClaimTemplate":
        inner = spec.get("spec")
        errors = claim_spec_limit_errors(inner if isinstance(inner, dict) else {}, "spec.spec")
    else:
        errors = claim_spec_limit_errors(spec)
    if errors:
        raise SnapshotError(where, invalid_message(kind, name, errors))
