"""The stack check: a device plugin and NVIDIA's DRA driver offering one node's GPUs twice.

Objects in the API's shapes: a Node's ``status.allocatable`` as the device plugin leaves it, ResourceSlices of
``gpu.nvidia.com`` (bench/draobjects.py, the shapes NVIDIA's driver publishes), a DeviceClass with
``extendedResourceName`` (resource.k8s.io/v1, KEP-5004). The healthy twins: the plugin alone, the DRA driver
alone, the plugin off with a class mapping ``nvidia.com/gpu`` (the intended KEP-5004 setup), another driver's
slice beside the plugin (a NIC), and a DRA slice on another node.
"""

from __future__ import annotations

from typing import Any

from bench import draobjects as dra

from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.checks.engine.incremental.evaluator import IncrementalEvaluator
from gpulabel.checks.registry import BUILTIN, run_check
from gpulabel.model.cluster import KIND, ClusterState

H100 = dra.GPUS[2]


def node(name: str = "gpu-1", gpus: int | None = 2) -> dict[str, Any]:
    amounts = {"cpu": "32", "pods": "110", **({"nvidia.com/gpu": str(gpus)} if gpus is not None else {})}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true"}},
        "status": {"capacity": dict(amounts), "allocatable": dict(amounts)},
    }


def gpu_slice(node_name: str = "gpu-1", count: int = 2, generation: int = 1) -> dict[str, Any]:
    devices = [dra.gpu_device(f"gpu-{i}", i, H100, "570.86.10", node=node_name) for i in range(count)]
    name = f"{node_name}-gpu.nvidia.com-g{generation}"
    return dra.resource_slice(name, devices, node=node_name, pool=node_name, generation=generation)


def mapped_class() -> dict[str, Any]:
    klass = dra.device_class("gpu.nvidia.com", 'device.driver == "gpu.nvidia.com"')
    klass["spec"]["extendedResourceName"] = "nvidia.com/gpu"
    return klass


def state(*objects: dict[str, Any]) -> ClusterState:
    return ClusterState.from_objects([("test", o) for o in objects])


def found(*objects: dict[str, Any]) -> list[tuple[str, str, str, tuple[str, ...]]]:
    result = run_check("stack", state(*objects), BUILTIN.options())
    assert not result.skipped, result.skipped
    return [(f.severity, f.node, f.reason, f.args) for f in result.findings]


def test_the_plugin_and_the_dra_driver_on_one_node_is_an_error_naming_both_and_what_to_turn_off() -> None:
    assert found(node(), gpu_slice(), node("gpu-2"), dra.GPU_CLASS) == [
        ("error", "gpu-1", "offered-twice", ("nvidia.com/gpu", "gpu.nvidia.com"))
    ]
    (f,) = run_check("stack", state(node(), gpu_slice(), dra.GPU_CLASS), BUILTIN.options()).findings
    assert f.operand == "device-plugin"
    assert f.detail.startswith(
        "status.allocatable has nvidia.com/gpu=2 from the device plugin and gpu.nvidia.com publishes 2 device(s) "
        "for the node (ResourceSlice gpu-1-gpu.nvidia.com-g1): the scheduler gives each GPU once to nvidia.com/gpu "
        "requests and once more to ResourceClaims; no DeviceClass maps nvidia.com/gpu (extendedResourceName)."
    )
    assert "nvidia.com/gpu.deploy.device-plugin=false" in f.detail and "GPU kubelet plugin" in f.detail


def test_a_class_mapping_the_resource_does_not_help_while_the_plugin_runs() -> None:
    """filterExtendedResources (v1.37.2) allocates through DRA only where allocatable lacks the resource."""
    (f,) = run_check("stack", state(node(), gpu_slice(), mapped_class()), BUILTIN.options()).findings
    assert "DeviceClass gpu.nvidia.com maps nvidia.com/gpu, which the scheduler allocates through DRA only where" in (
        f.detail
    )


def test_only_the_newest_pool_generation_counts() -> None:
    (f,) = run_check(
        "stack", state(node(), gpu_slice(count=1), gpu_slice(count=4, generation=2)), BUILTIN.options()
    ).findings
    assert "publishes 4 device(s) for the node (ResourceSlice gpu-1-gpu.nvidia.com-g2)" in f.detail


def test_the_healthy_twins_raise_nothing() -> None:
    nic = dra.resource_slice(
        "gpu-1-nic", [{"name": "eth1"}], node="gpu-1", driver="sriovnetwork.k8snetworkplumbingwg.io"
    )
    assert found(node(), nic, gpu_slice("gpu-2")) == []  # the plugin here; DRA GPUs on another node
    assert found(node(gpus=None), gpu_slice(), mapped_class()) == []  # the intended KEP-5004 setup: plugin off
    assert found(node(gpus=0), gpu_slice()) == []  # the plugin registered with nothing to offer
    assert found(node(gpus=None), gpu_slice()) == []  # DRA alone
    assert run_check("stack", state(node()), BUILTIN.options()).skipped == "no resourceslices in the input"


def test_the_monitor_agrees_as_slices_and_the_plugin_come_and_go() -> None:
    def record(obj: dict[str, Any]) -> tuple[str, tuple[str, str], Any]:
        kind = KIND[obj["kind"]]
        return kind.kind, ("", obj["metadata"]["name"]), kind.reader()(obj, "test")

    steps: list[tuple[str, dict[str, Any] | None, str]] = [
        ("Node", node(), "gpu-1"),
        ("ResourceSlice", gpu_slice("gpu-2"), "gpu-2-gpu.nvidia.com-g1"),
        ("ResourceSlice", gpu_slice(), "gpu-1-gpu.nvidia.com-g1"),  # the DRA driver arrives on gpu-1
        ("DeviceClass", mapped_class(), "gpu.nvidia.com"),
        ("Node", node(gpus=None), "gpu-1"),  # the device plugin is turned off
        ("Node", node(), "gpu-1"),  # and on again
        ("ResourceSlice", None, "gpu-1-gpu.nvidia.com-g1"),  # the driver leaves
    ]
    seen = []
    for ev in (FullEvaluator(BUILTIN.options()), IncrementalEvaluator(BUILTIN.options())):
        for kind in ("Node", "Pod", "ResourceSlice", "DeviceClass"):
            ev.reset(kind, [])
        lines = []
        for kind, obj, name in steps:
            ev.apply(kind, ("", name), None if obj is None else record(obj)[2])
            lines.append([(f.line(), f.detail) for f in ev.assess(0.0).findings if f.check == "stack"])
        seen.append(lines)
    assert seen[0] == seen[1]
    assert [len(s) for s in seen[0]] == [0, 0, 1, 1, 0, 1, 0]
    assert seen[0][2][0][0] == "gpu-1 device-plugin offered-twice nvidia.com/gpu gpu.nvidia.com"
    assert seen[0][2] != seen[0][3]  # the mapping class changes what it says


def test_gpus_counts_the_gpus_offered_twice_once() -> None:
    """The inventory counts the node's nvidia.com/gpu; the class row says the same GPUs are there as DRA devices
    (twice) and counts none of them free, so the free GPUs add up to the node's two, not four."""
    from gpulabel.checks.health.inventory import inventory_result

    result = inventory_result(state(node(), gpu_slice(), node("gpu-2", gpus=None), gpu_slice("gpu-2"), dra.GPU_CLASS))
    sections = {s.name: s for s in result.sections}
    assert sections["totals"].rows[0]["free"] == 2  # gpu-1's plugin GPUs; gpu-2 (DRA alone) advertises none
    (row,) = sections["deviceclasses"].rows
    assert (row["devices"], row["twice"], row["free"]) == (4, 2, 2)  # gpu-2's two DRA devices are free
    assert sections["deviceclasses"].text == (
        "deviceclass=gpu.nvidia.com nodes=2 devices=4 twice=2 allocated=0 free=2",
    )
