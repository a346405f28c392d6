# ruff: noqa: E501
"""Each resource.k8s.io/v1 size limit of ``k8s/dra/limits.py``: an object at the limit and one past it.

Rows: (name, upstream function, object, message). The messages are derived from
``pkg/apis/resource/validation/validation.go`` (k8s.io/kubernetes v1.37.2) and
``field.TooMany``/``field.Invalid``/``field.TooLong``; an empty message means the
server accepts the object. ``tests/unit/test_limit_rows.py`` checks gpulabel
against them and ``tests/cluster/test_limits_cluster.py`` creates each on
labcluster (dry run) and compares the server's message.
"""

from __future__ import annotations

from typing import Any

from gpulabel.k8s.dra import limits as L

Obj = dict[str, Any]
DRIVER = "gpu.nvidia.com"


def _slice(spec: Obj) -> Obj:
    base = {
        "driver": DRIVER,
        "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
        "nodeName": "node-a",
    }
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": base | spec}


def _devices(n: int, **extra: Any) -> list[Obj]:
    return [{"name": f"gpu-{i}", **extra} for i in range(n)]


def _claim(devices: Obj, kind: str = "ResourceClaim") -> Obj:
    spec: Obj = {"devices": devices}
    if kind == "ResourceClaimTemplate":
        spec = {"spec": spec}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": "c", "namespace": "default"},
        "spec": spec,
    }


def _class(spec: Obj) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "k"}, "spec": spec}


def _requests(n: int) -> list[Obj]:
    return [{"name": f"r{i}", "exactly": {"deviceClassName": DRIVER}} for i in range(n)]


def _selectors(n: int) -> list[Obj]:
    return [{"cel": {"expression": "true"}} for _ in range(n)]


def _configs(n: int) -> list[Obj]:
    return [{"opaque": {"driver": DRIVER, "parameters": {"n": i}}} for i in range(n)]


def _tolerations(n: int) -> list[Obj]:
    return [{"key": f"example.com/k{i}", "operator": "Exists"} for i in range(n)]


def _counters(n: int) -> Obj:
    return {f"c{i}": {"value": "1"} for i in range(n)}


def _invalid(kind: str, name: str, error: str) -> str:
    return f'{kind}.resource.k8s.io "{name}" is invalid: {error}'


def _pair(
    name: str, upstream: str, make: Any, limit: int, kind: str, obj_name: str, error: Any
) -> list[tuple[str, str, Obj, str]]:
    """The object at ``limit`` (accepted) and at ``limit + 1`` (refused with ``error(limit + 1)``)."""
    return [
        (f"{name} at {limit}", upstream, make(limit), ""),
        (f"{name} at {limit + 1}", upstream, make(limit + 1), _invalid(kind, obj_name, error(limit + 1))),
    ]


def _too_many(path: str, limit: int) -> Any:
    return lambda n: L.too_many(path, n, limit)


TAINT = {"key": "example.com/t", "value": "v", "effect": "NoSchedule"}
SET = [{"name": "set-0", "counters": _counters(1)}]

ROWS: list[tuple[str, str, Obj, str]] = [
    *_pair(
        "devices",
        "validateResourceSliceSpec",
        lambda n: _slice({"devices": _devices(n)}),
        L.RESOURCE_SLICE_MAX_DEVICES,
        "ResourceSlice",
        "s",
        _too_many("spec.devices", L.RESOURCE_SLICE_MAX_DEVICES),
    ),
    *_pair(
        "devices with a taint",
        "validateResourceSliceSpec",
        lambda n: _slice({"devices": [{"name": "gpu-0", "taints": [TAINT]}, *_devices(n)[1:]]}),
        L.RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES,
        "ResourceSlice",
        "s",
        _too_many("spec.devices", L.RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES),
    ),
    *_pair(
        "attributes and capacities of a device",
        "validateDevice",
        lambda n: _slice(
            {
                "devices": [
                    {
                        "name": "gpu-0",
                        "attributes": {f"a{i}": {"int": i} for i in range(n // 2)},
                        "capacity": {f"c{i}": {"value": "1"} for i in range(n - n // 2)},
                    }
                ]
            }
        ),
        L.ATTRIBUTES_AND_CAPACITIES_PER_DEVICE,
        "ResourceSlice",
        "s",
        lambda n: (
            f"spec.devices[0]: Invalid value: {n}: the total number of attributes and capacities must not exceed "
            f"{L.ATTRIBUTES_AND_CAPACITIES_PER_DEVICE}"
        ),
    ),
    *_pair(
        "a string attribute's bytes",
        "validateDeviceAttributeStringValue",
        lambda n: _slice({"devices": [{"name": "gpu-0", "attributes": {"model": {"string": "x" * n}}}]}),
        L.ATTRIBUTE_MAX_VALUE_LENGTH,
        "ResourceSlice",
        "s",
        lambda n: (
            f"spec.devices[0].attributes[model].string: Too long: may not be more than {L.ATTRIBUTE_MAX_VALUE_LENGTH} bytes"
        ),
    ),
    *_pair(
        "taints of a device",
        "validateDevice",
        lambda n: _slice({"devices": [{"name": "gpu-0", "taints": [TAINT | {"value": f"v{i}"} for i in range(n)]}]}),
        L.DEVICE_TAINTS,
        "ResourceSlice",
        "s",
        _too_many("spec.devices[0].taints", L.DEVICE_TAINTS),
    ),
    *_pair(
        "counter consumptions of a device",
        "validateDevice",
        lambda n: _slice(
            {
                "devices": [
                    {
                        "name": "gpu-0",
                        "consumesCounters": [{"counterSet": f"set-{i}", "counters": _counters(1)} for i in range(n)],
                    }
                ]
            }
        ),
        L.COUNTER_CONSUMPTIONS_PER_DEVICE,
        "ResourceSlice",
        "s",
        _too_many("spec.devices[0].consumesCounters", L.COUNTER_CONSUMPTIONS_PER_DEVICE),
    ),
    *_pair(
        "counters of a consumption",
        "validateDeviceCounterConsumption",
        lambda n: _slice(
            {"devices": [{"name": "gpu-0", "consumesCounters": [{"counterSet": "set-0", "counters": _counters(n)}]}]}
        ),
        L.COUNTERS_PER_CONSUMPTION,
        "ResourceSlice",
        "s",
        _too_many("spec.devices[0].consumesCounters[0].counters", L.COUNTERS_PER_CONSUMPTION),
    ),
    *_pair(
        "counter sets",
        "validateResourceSliceSpec",
        lambda n: _slice({"sharedCounters": [{"name": f"set-{i}", "counters": _counters(1)} for i in range(n)]}),
        L.COUNTER_SETS,
        "ResourceSlice",
        "s",
        _too_many("spec.sharedCounters", L.COUNTER_SETS),
    ),
    *_pair(
        "counters of a counter set",
        "validateCounterSet",
        lambda n: _slice({"sharedCounters": [{"name": "set-0", "counters": _counters(n)}]}),
        L.COUNTERS_PER_COUNTER_SET,
        "ResourceSlice",
        "s",
        _too_many("spec.sharedCounters[0].counters", L.COUNTERS_PER_COUNTER_SET),
    ),
    *_pair(
        "requests of a claim",
        "validateDeviceClaim",
        lambda n: _claim({"requests": _requests(n)}),
        L.REQUESTS,
        "ResourceClaim",
        "c",
        _too_many("spec.devices.requests", L.REQUESTS),
    ),
    *_pair(
        "requests of a claim template",
        "validateDeviceClaim",
        lambda n: _claim({"requests": _requests(n)}, "ResourceClaimTemplate"),
        L.REQUESTS,
        "ResourceClaimTemplate",
        "c",
        _too_many("spec.spec.devices.requests", L.REQUESTS),
    ),
    *_pair(
        "selectors of a request",
        "validateSelectorSlice",
        lambda n: _claim(
            {"requests": [{"name": "r", "exactly": {"deviceClassName": DRIVER, "selectors": _selectors(n)}}]}
        ),
        L.SELECTORS,
        "ResourceClaim",
        "c",
        _too_many("spec.devices.requests[0].exactly.selectors", L.SELECTORS),
    ),
    *_pair(
        "subrequests of firstAvailable",
        "validateDeviceRequest",
        lambda n: _claim(
            {
                "requests": [
                    {"name": "r", "firstAvailable": [{"name": f"s{j}", "deviceClassName": DRIVER} for j in range(n)]}
                ]
            }
        ),
        L.FIRST_AVAILABLE,
        "ResourceClaim",
        "c",
        _too_many("spec.devices.requests[0].firstAvailable", L.FIRST_AVAILABLE),
    ),
    *_pair(
        "selectors of a subrequest",
        "validateDeviceSubRequest",
        lambda n: _claim(
            {
                "requests": [
                    {
                        "name": "r",
                        "firstAvailable": [{"name": "s", "deviceClassName": DRIVER, "selectors": _selectors(n)}],
                    }
                ]
            }
        ),
        L.SELECTORS,
        "ResourceClaim",
        "c",
        _too_many("spec.devices.requests[0].firstAvailable[0].selectors", L.SELECTORS),
    ),
    *_pair(
        "constraints of a claim",
        "validateDeviceClaim",
        lambda n: _claim(
            {"requests": _requests(1), "constraints": [{"matchAttribute": f"{DRIVER}/model"} for _ in range(n)]}
        ),
        L.CONSTRAINTS,
        "ResourceClaim",
        "c",
        _too_many("spec.devices.constraints", L.CONSTRAINTS),
    ),
    *_pair(
        "config of a claim",
        "validateDeviceClaim",
        lambda n: _claim({"requests": _requests(1), "config": _configs(n)}),
        L.CONFIG,
        "ResourceClaim",
        "c",
        _too_many("spec.devices.config", L.CONFIG),
    ),
    *_pair(
        "selectors of a class",
        "validateDeviceClassSpec",
        lambda n: _class({"selectors": _selectors(n)}),
        L.SELECTORS,
        "DeviceClass",
        "k",
        _too_many("spec.selectors", L.SELECTORS),
    ),
    *_pair(
        "config of a class",
        "validateDeviceClassSpec",
        lambda n: _class({"config": _configs(n)}),
        L.CONFIG,
        "DeviceClass",
        "k",
        _too_many("spec.config", L.CONFIG),
    ),
    # ResourceSliceMaxAttributeValuesPerDevice: with DRAListTypeAttributes off (1.37) the lists are dropped on
    # create and the emptied attribute is refused, at 48 values as at 49: the limit cannot be reached
    *(
        (
            f"attribute values of a device at {n} (list attributes off)",
            "validateDeviceAttribute",
            _slice({"devices": [{"name": "gpu-0", "attributes": {"a": {"ints": list(range(n))}}}]}),
            _invalid(
                "ResourceSlice",
                "s",
                'spec.devices[0].attributes[a]: Invalid value: "": must specify one of: '
                "`int`, `bool`, `string`, `version`, `ints`, `bools`, `strings`, `versions`",
            ),
        )
        for n in (L.ATTRIBUTE_VALUES_PER_DEVICE, L.ATTRIBUTE_VALUES_PER_DEVICE + 1)
    ),
]

# DeviceTolerationsMaxLength (16) is documented on the field, enforced nowhere: the server accepts more
UNENFORCED: list[tuple[str, str, Obj, str]] = [
    (
        f"tolerations of a {where} at {n} (no limit enforced)",
        "validateDeviceToleration",
        _claim({"requests": [request]}),
        "",
    )
    for n in (17, 100)
    for where, request in (
        ("request", {"name": "r", "exactly": {"deviceClassName": DRIVER, "tolerations": _tolerations(n)}}),
        (
            "subrequest",
            {"name": "r", "firstAvailable": [{"name": "s", "deviceClassName": DRIVER, "tolerations": _tolerations(n)}]},
        ),
    )
]
