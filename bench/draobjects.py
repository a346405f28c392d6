"""Builders for DRA objects (resource.k8s.io/v1) as the API returns them, and NVIDIA-shaped devices.

Shared by the benchmarks (``bench/dra_bench.py``) and the tests, which may import ``bench``; a benchmark
never imports ``tests``.

The attributes follow NVIDIA's DRA driver (``gpu.nvidia.com``): ``type``,
``uuid``, ``productName`` (the raw NVML name), ``brand``, ``architecture``,
``cudaComputeCapability``, ``driverVersion`` and ``cudaDriverVersion``
(versions), ``index``, ``resource.kubernetes.io/pciBusID``, ``pcieRoot``; MIG
devices add ``parentUUID`` and ``profile``; capacity ``memory`` in bytes, MIG
devices their multiprocessors and engines.
"""

from __future__ import annotations

import zlib
from typing import Any

DRIVER = "gpu.nvidia.com"
RESOURCE = "resource.k8s.io/v1"

# productName, architecture, compute capability, memory in bytes
GPUS = [
    ("NVIDIA A100-SXM4-80GB", "Ampere", "8.0.0", 85899345920),
    ("NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", 42949672960),
    ("NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", 85520809984),
    ("NVIDIA L4", "Ada Lovelace", "8.9.0", 24152899584),
    ("NVIDIA A10", "Ampere", "8.6.0", 24146608128),
]
DRIVER_VERSIONS = ["535.104.5", "550.54.15", "560.35.3", "570.86.10"]
CUDA_VERSIONS = {"535.104.5": "12.2.0", "550.54.15": "12.4.0", "560.35.3": "12.6.0", "570.86.10": "12.8.0"}
MIG_PROFILES = [("1g.10gb", 10737418240, 14), ("2g.20gb", 21474836480, 28), ("3g.40gb", 42949672960, 42)]


def attr(kind: str, value: Any) -> dict[str, Any]:
    return {kind: value}


def gpu_device(
    name: str,
    index: int,
    product: tuple[str, str, str, int],
    driver_version: str,
    *,
    node: str = "n",
    taints: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    pname, arch, cc, memory = product
    uuid = f"GPU-{zlib.crc32(f'{node}/{name}'.encode()):08x}-0000-0000-0000-{index:012x}"
    device: dict[str, Any] = {
        "name": name,
        "attributes": {
            "type": attr("string", "gpu"),
            "uuid": attr("string", uuid),
            "productName": attr("string", pname),
            "brand": attr("string", "Nvidia"),
            "architecture": attr("string", arch),
            "cudaComputeCapability": attr("version", cc),
            "driverVersion": attr("version", driver_version),
            "cudaDriverVersion": attr("version", CUDA_VERSIONS.get(driver_version, "12.4.0")),
            "index": attr("int", index),
            "resource.kubernetes.io/pciBusID": attr("string", f"0000:{0x10 + index:02x}:00.0"),
            "resource.kubernetes.io/pcieRoot": attr("string", f"pci0000:{index // 2:02x}"),
        },
        "capacity": {"memory": {"value": str(memory)}},
    }
    if taints:
        device["taints"] = taints
    return device


def mig_device(
    name: str,
    parent_index: int,
    slot: int,
    product: tuple[str, str, str, int],
    driver_version: str,
    profile: tuple[str, int, int],
) -> dict[str, Any]:
    pname, arch, cc, _ = product
    pro, memory, sms = profile
    return {
        "name": name,
        "attributes": {
            "type": attr("string", "mig"),
            "uuid": attr("string", f"MIG-{parent_index:04x}-{slot:04x}"),
            "parentUUID": attr("string", f"GPU-{parent_index:08x}"),
            "profile": attr("string", pro),
            "productName": attr("string", pname),
            "architecture": attr("string", arch),
            "cudaComputeCapability": attr("version", cc),
            "driverVersion": attr("version", driver_version),
            "index": attr("int", slot),
            "resource.kubernetes.io/pcieRoot": attr("string", f"pci0000:{parent_index // 2:02x}"),
        },
        "capacity": {
            "memory": {"value": str(memory)},
            "multiprocessors": {"value": str(sms)},
            "copyEngines": {"value": "2"},
            "decoders": {"value": "1"},
            "encoders": {"value": "0"},
            "jpegEngines": {"value": "0"},
            "ofaEngines": {"value": "0"},
        },
    }


def resource_slice(
    name: str,
    devices: list[dict[str, Any]],
    *,
    node: str | None = None,
    pool: str | None = None,
    driver: str = DRIVER,
    generation: int = 1,
    count: int = 1,
    all_nodes: bool = False,
    node_selector: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool or node or name, "generation": generation, "resourceSliceCount": count},
        "devices": devices,
    }
    if node:
        spec["nodeName"] = node
    elif all_nodes:
        spec["allNodes"] = True
    elif node_selector is not None:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def device_class(name: str, *expressions: str) -> dict[str, Any]:
    return {
        "apiVersion": RESOURCE,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]},
    }


def exactly(
    class_name: str,
    *selectors: str,
    count: int | None = None,
    mode: str | None = None,
    tolerations: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"deviceClassName": class_name}
    if selectors:
        out["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if mode:
        out["allocationMode"] = mode
    if count is not None:
        out["count"] = count
    if tolerations:
        out["tolerations"] = tolerations
    return out


def request(
    name: str, spec: dict[str, Any] | None = None, *, first_available: list[tuple[str, dict[str, Any]]] | None = None
) -> dict[str, Any]:
    if first_available:
        return {"name": name, "firstAvailable": [{"name": n, **s} for n, s in first_available]}
    return {"name": name, "exactly": spec}


def claim_spec(
    requests: list[dict[str, Any]], match_attribute: str | None = None, constraint_requests: list[str] | None = None
) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": requests}
    if match_attribute:
        c: dict[str, Any] = {"matchAttribute": match_attribute}
        if constraint_requests:
            c["requests"] = constraint_requests
        devices["constraints"] = [c]
    return {"devices": devices}


def claim(
    name: str,
    spec: dict[str, Any],
    namespace: str = "default",
    allocation: list[tuple[str, str, str, str]] | None = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": RESOURCE,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    if allocation is not None:
        obj["status"] = {
            "allocation": {
                "devices": {
                    "results": [{"request": r, "driver": d, "pool": p, "device": dev} for r, d, p, dev in allocation]
                }
            }
        }
    return obj


def claim_template(name: str, spec: dict[str, Any], namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": RESOURCE,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": spec},
    }


def dra_pod(
    name: str,
    claims: list[tuple[str, str, str]],
    namespace: str = "default",
    node_selector: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A pod using ``claims``: (reference name, "claim" | "template", object name)."""
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "c",
                "image": "example.com/app:1",
                "resources": {"claims": [{"name": ref} for ref, _, _ in claims]},
            }
        ],
        "resourceClaims": [
            {"name": ref, ("resourceClaimName" if kind == "claim" else "resourceClaimTemplateName"): obj}
            for ref, kind, obj in claims
        ],
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


GPU_CLASS = device_class(
    "gpu.nvidia.com", f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].type == "gpu"'
)
MIG_CLASS = device_class(
    "mig.nvidia.com", f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].type == "mig"'
)


def counter_slice(
    name: str,
    counter_sets: dict[str, dict[str, str]],
    *,
    node: str | None = None,
    pool: str | None = None,
    driver: str = DRIVER,
    generation: int = 1,
    count: int = 2,
    node_selector: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A slice of counter sets only (resource/v1 allows counters or devices in a slice, not both)."""
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool or node or name, "generation": generation, "resourceSliceCount": count},
        "sharedCounters": [
            {"name": n, "counters": {c: {"value": v} for c, v in counters.items()}}
            for n, counters in counter_sets.items()
        ],
    }
    if node:
        spec["nodeName"] = node
    elif node_selector is not None:
        spec["nodeSelector"] = node_selector
    else:
        spec["allNodes"] = True
    return {"apiVersion": RESOURCE, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def partition(
    name: str,
    counter_set: str,
    counters: dict[str, str],
    *,
    kind: str = "gpu",
    node_name: str | None = None,
    all_nodes: bool = False,
    node_selector: dict[str, Any] | None = None,
    taints: list[dict[str, str]] | None = None,
    profile: str | None = None,
) -> dict[str, Any]:
    """A partitionable device: a whole GPU or a partition consuming ``counters`` of ``counter_set``."""
    device: dict[str, Any] = {
        "name": name,
        "attributes": {"type": attr("string", kind), "parent": attr("string", counter_set)},
        "capacity": {c: {"value": v} for c, v in counters.items()},
        "consumesCounters": [{"counterSet": counter_set, "counters": {c: {"value": v} for c, v in counters.items()}}],
    }
    if profile is not None:
        device["attributes"]["profile"] = attr("string", profile)
    if node_name:
        device["nodeName"] = node_name
    elif all_nodes:
        device["allNodes"] = True
    elif node_selector is not None:
        device["nodeSelector"] = node_selector
    if taints:
        device["taints"] = taints
    return device


def per_device_slice(name: str, devices: list[dict[str, Any]], *, pool: str, count: int = 2) -> dict[str, Any]:
    """A slice whose devices name their own node (``perDeviceNodeSelection``)."""
    return {
        "apiVersion": RESOURCE,
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
            "perDeviceNodeSelection": True,
            "devices": devices,
        },
    }


def taint_rule(
    name: str,
    taint: dict[str, str],
    *,
    driver: str | None = DRIVER,
    pool: str | None = None,
    device: str | None = None,
) -> dict[str, Any]:
    selector = {k: v for k, v in (("driver", driver), ("pool", pool), ("device", device)) if v is not None}
    return {
        "apiVersion": RESOURCE,
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {"deviceSelector": selector, "taint": taint},
    }
