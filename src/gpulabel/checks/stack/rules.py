"""``stack``: parts of the GPU stack that must not run together on one node.

``offered-twice``: a node whose device plugin advertises ``nvidia.com/gpu`` (``status.allocatable`` > 0)
while NVIDIA's DRA driver (``gpu.nvidia.com``) publishes ResourceSlices with devices for the same node. The
scheduler then hands each GPU out twice: once to pods requesting ``nvidia.com/gpu`` (NodeResourcesFit counts
the device plugin's allocatable) and once to ResourceClaims (the DRA allocator counts the slices' devices);
neither knows the other's allocations. A DeviceClass mapping the extended resource (``extendedResourceName:
nvidia.com/gpu``, KEP-5004) does not help while the plugin runs: the scheduler allocates an extended resource
through DRA only on a node whose allocatable lacks it (``pkg/scheduler/framework/plugins/dynamicresources/
extendeddynamicresources.go`` ``filterExtendedResources``: ``isBackedByDRA && allocatable == 0``, Kubernetes
v1.37.2). NVIDIA advises running one of them per node (REFERENCE section 19: NVIDIA/aicr#332,
kubernetes-sigs/dra-driver-nvidia-gpu#738, #939). The intended setup, the plugin off with a DeviceClass
mapping ``nvidia.com/gpu``, has no allocatable and so no finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpulabel.k8s.dra.objects import ResourceSlice
from gpulabel.k8s.dra.plugin import DraState
from gpulabel.model import gpustack as G
from gpulabel.model.cluster import Node
from gpulabel.model.dradriver import GPU_DRIVER
from gpulabel.model.findings import Finding
from gpulabel.model.severity import Reason

__all__ = ["REASONS", "Published", "offered_twice", "published"]

REASONS: dict[str, Reason] = {
    "offered-twice": Reason(
        "error",
        "the device plugin advertises nvidia.com/gpu and NVIDIA's DRA driver publishes GPU devices for the same "
        "node: the scheduler hands each GPU out twice (extended-resource requests and claims)",
    ),
}


@dataclass(frozen=True, slots=True)
class Published:
    """What NVIDIA's DRA driver publishes per node (its newest pool generations) and the DeviceClasses mapping
    ``nvidia.com/gpu``; compared by its rows, looked up by node."""

    rows: tuple[tuple[str, int, tuple[str, ...]], ...]  # (node, devices, slice names), by node
    mapped: tuple[str, ...]  # DeviceClasses whose extendedResourceName is nvidia.com/gpu
    by_node: Mapping[str, tuple[int, tuple[str, ...]]] = field(compare=False, hash=False, repr=False)


def _newest(dra: DraState, s: ResourceSlice) -> bool:
    return s.generation >= max(o.generation for o in dra.by_pool[(s.driver, s.pool)])


def published(dra: DraState) -> Published:
    """The GPU devices NVIDIA's DRA driver publishes for each node, and the classes mapping ``nvidia.com/gpu``."""
    rows = []
    for node in sorted(dra.by_node):
        slices = [s for s in dra.by_node[node] if s.driver == GPU_DRIVER and s.devices and _newest(dra, s)]
        if slices:
            rows.append((node, sum(len(s.devices) for s in slices), tuple(sorted(s.name for s in slices))))
    mapped = tuple(sorted(c.name for c in dra.classes.values() if c.extended_resource == G.GPU_RESOURCE))
    return Published(tuple(rows), mapped, {n: (d, names) for n, d, names in rows})


def offered_twice(node: Node, pub: Published) -> list[Finding]:
    """The node's finding when its device plugin and NVIDIA's DRA driver both offer its GPUs."""
    advertised = (node.amounts or {}).get(G.GPU_RESOURCE, 0)
    devices, slices = pub.by_node.get(node.name, (0, ()))
    if advertised <= 0 or not devices:
        return []
    mapped = (
        f"DeviceClass {', '.join(pub.mapped)} maps {G.GPU_RESOURCE}, which the scheduler allocates through DRA "
        "only where allocatable lacks it"
        if pub.mapped
        else f"no DeviceClass maps {G.GPU_RESOURCE} (extendedResourceName)"
    )
    detail = (
        f"status.allocatable has {G.GPU_RESOURCE}={advertised} from the device plugin and {GPU_DRIVER} publishes "
        f"{devices} device(s) for the node (ResourceSlice {', '.join(slices)}): the scheduler gives each GPU once "
        f"to {G.GPU_RESOURCE} requests and once more to ResourceClaims; {mapped}. Turn one off on this node: the "
        "device plugin (GPU Operator: nvidia.com/gpu.deploy.device-plugin=false; with a DeviceClass mapping "
        f"{G.GPU_RESOURCE}, its requests then go through DRA) or the DRA driver's GPU kubelet plugin"
    )
    return [
        Finding(
            "stack",
            "offered-twice",
            node=node.name,
            operand="device-plugin",
            args=(G.GPU_RESOURCE, GPU_DRIVER),
            detail=detail,
        )
    ]
