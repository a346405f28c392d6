"""The runtime check: RuntimeClasses and node runtime handlers of GPU pods and DaemonSets.

Objects in the API's shapes: RuntimeClass (node.k8s.io/v1: metadata.name, handler), a pod's
``spec.runtimeClassName``, a Node's ``status.runtimeHandlers`` (core/v1 NodeRuntimeHandler: name, features;
Kubernetes 1.30+). The healthy twin: the same pods and DaemonSets with the class present and the handler
reported; pods without a GPU, terminal pods and nodes reporting no handlers are not judged.
"""

from __future__ import annotations

from typing import Any

from gpulabel.checks.registry import BUILTIN, run_check
from gpulabel.model.cluster import ClusterState
from tests.objects import daemonset


def runtime_class(name: str = "nvidia", handler: str = "nvidia") -> dict[str, Any]:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": handler}


def node(name: str = "gpu-1", handlers: tuple[str, ...] = ("runc", "nvidia")) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true"}},
        "status": {
            "allocatable": {"nvidia.com/gpu": "8"},
            "runtimeHandlers": [{"name": h, "features": {"recursiveReadOnlyMounts": True}} for h in handlers],
        },
    }


def pod(name: str, runtime: str | None = "nvidia", gpu: bool = True, phase: str = "Running") -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "cuda"}
    if gpu:
        container["resources"] = {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}
    spec: dict[str, Any] = {"nodeName": "gpu-1", "containers": [container]}
    if runtime:
        spec["runtimeClassName"] = runtime
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": spec,
        "status": {"phase": phase},
    }


def toolkit_validator() -> dict[str, Any]:
    spec = {"runtimeClassName": "nvidia", "containers": [{"name": "v", "image": "validator"}]}
    return daemonset("gpu-operator", "nvidia-operator-validator", "uid-v", spec)


def found(*objects: dict[str, Any]) -> list[tuple[str, str, str, str, tuple[str, ...]]]:
    state = ClusterState.from_objects([("test", o) for o in objects])
    result = run_check("runtime", state, BUILTIN.options())
    return [(f.reason, f.node, f.pod, f.daemonset, f.args) for f in result.findings]


def test_a_missing_runtime_class_names_the_pod_and_the_daemonset() -> None:
    got = found(runtime_class("runc-other", "runc"), node(), pod("train-0"), toolkit_validator())
    assert got == [
        ("runtime-class-missing", "", "", "gpu-operator/nvidia-operator-validator", ("nvidia",)),
        ("runtime-class-missing", "gpu-1", "ml/train-0", "", ("nvidia",)),
    ]
    state = ClusterState.from_objects([("t", o) for o in (runtime_class("runc-other", "runc"), node(), pod("train-0"))])
    (f,) = run_check("runtime", state, BUILTIN.options()).findings
    assert f.severity == "error"
    assert 'RuntimeClass "nvidia" not found' in f.detail and "RuntimeClasses: runc-other" in f.detail


def test_a_node_without_the_handler_names_the_pod_and_the_node() -> None:
    assert found(runtime_class(), node(handlers=("runc",)), pod("train-0")) == [
        ("runtime-handler-missing", "gpu-1", "ml/train-0", "", ("nvidia", "nvidia"))
    ]


def test_the_healthy_twin_raises_nothing() -> None:
    objects = [runtime_class(), node(), pod("train-0"), toolkit_validator(), pod("web-0", gpu=False)]
    assert found(*objects) == []
    assert found(runtime_class(), node(handlers=()), pod("train-0")) == []  # no handlers reported: not judged
    assert found(runtime_class("x", "runc"), node(), pod("web-0", "nvidia", gpu=False)) == []  # no GPU
    assert found(runtime_class("x", "runc"), node(), pod("done", phase="Succeeded")) == []  # terminal
    assert found(runtime_class("x", "runc"), node(), pod("plain", runtime=None)) == []  # no runtimeClassName


def test_without_runtime_classes_in_the_input_it_says_so_and_finds_nothing() -> None:
    state = ClusterState.from_objects([("t", o) for o in (node(), pod("train-0"))])
    result = BUILTIN.named("runtime").result(state, BUILTIN.options())
    assert result.findings == () and result.caveats == (
        "RuntimeClasses not in the input: runtimeClassName not checked (capture with gpulabel snapshot)",
    )


def test_the_records_keep_runtime_class_name_and_handlers() -> None:
    state = ClusterState.from_objects([("t", o) for o in (runtime_class(), node(), pod("train-0"))])
    assert state.runtime_classes[0].handler == "nvidia"
    assert state.nodes[0].runtime_handlers == ("runc", "nvidia")
    assert state.pods[0].runtime_class == "nvidia"
