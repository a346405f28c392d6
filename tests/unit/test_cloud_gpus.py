"""capacity's cloud-gpus-not-allocatable: a node its cloud or autoscaler labels as a GPU instance that advertises
no GPU (issue 45 item 3), and the twins where the GPUs are meant to be absent from allocatable."""

from __future__ import annotations

from typing import Any

import pytest

from gpulabel.checks.capacity.rules import CLOUD_GPU_LABELS, capacity, capacity_node
from gpulabel.checks.engine.definition import run_check
from gpulabel.checks.registry import BUILTIN
from gpulabel.model.cluster import ClusterState

REASON = "cloud-gpus-not-allocatable"


def _node(labels: dict[str, str], allocatable: dict[str, str] | None, name: str = "n1") -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": [{"type": "Ready", "status": "True"}]}
    if allocatable is not None:
        status["allocatable"] = allocatable
        status["capacity"] = allocatable
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "status": status}


def _reasons(*objects: dict[str, Any], disabled: frozenset[str] = frozenset()) -> list[str]:
    state = ClusterState.from_objects(("t", o) for o in objects)
    return [f.reason for f in capacity(state, sorted(disabled))]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("k8s.amazonaws.com/accelerator", "nvidia-tesla-t4"),
        ("cloud.google.com/gke-accelerator", "nvidia-l4"),
        ("kubernetes.azure.com/accelerator", "nvidia"),
        ("karpenter.k8s.aws/instance-gpu-count", "8"),
        ("karpenter.azure.com/sku-gpu-count", "1"),
    ],
)
def test_a_cloud_gpu_node_without_allocatable_gpus_is_an_error(key: str, value: str) -> None:
    assert _reasons(_node({key: value}, {"cpu": "8", "nvidia.com/gpu": "0"})) == [REASON]
    assert _reasons(_node({key: value}, {"cpu": "8"})) == [REASON]


def test_every_label_of_the_table_is_tested() -> None:
    assert {k for k, _ in CLOUD_GPU_LABELS} == {
        "k8s.amazonaws.com/accelerator",
        "cloud.google.com/gke-accelerator",
        "kubernetes.azure.com/accelerator",
        "karpenter.k8s.aws/instance-gpu-count",
        "karpenter.azure.com/sku-gpu-count",
    }


def test_the_finding_names_the_label_and_the_next_step() -> None:
    state = ClusterState.from_objects([("t", _node({"cloud.google.com/gke-accelerator": "nvidia-l4"}, {"cpu": "8"}))])
    (finding,) = capacity_node(state.nodes[0], (), False)
    assert "cloud.google.com/gke-accelerator=nvidia-l4" in finding.detail
    assert "gpulabel explain node/n1" in finding.detail and "resourceUnready" in finding.detail
    result = run_check("capacity", state, BUILTIN.options())
    assert [(f.reason, f.severity) for f in result.findings] == [(REASON, "error")]


@pytest.mark.parametrize(
    "labels",
    [
        {"cloud.google.com/gke-accelerator": "nvidia-l4", "cloud.google.com/gke-gpu-dra-driver": "true"},  # DRA
        {"k8s.amazonaws.com/accelerator": "t4", "nvidia.com/gpu.deploy.device-plugin": "false"},  # switched off
        {"k8s.amazonaws.com/accelerator": "t4", "nvidia.com/gpu.deploy.operands": "false"},  # isolated
        {"karpenter.k8s.aws/instance-gpu-count": "0"},  # a CPU instance of a GPU-aware provider
        {"karpenter.azure.com/sku-gpu-count": "none"},
        {"node.kubernetes.io/instance-type": "p4d.24xlarge"},  # not a label this table reads
    ],
)
def test_twins_where_no_gpu_is_owed_raise_nothing(labels: dict[str, str]) -> None:
    assert _reasons(_node(labels, {"cpu": "8"})) == []


def test_twins_healthy_or_unknown_raise_nothing() -> None:
    gpus = {"cpu": "8", "nvidia.com/gpu": "4"}
    assert _reasons(_node({"cloud.google.com/gke-accelerator": "nvidia-l4"}, gpus)) == []  # advertised
    assert _reasons(_node({"cloud.google.com/gke-accelerator": "nvidia-l4"}, None)) == []  # allocatable unknown
    shared = {"cpu": "8", "nvidia.com/gpu.shared": "8"}
    assert _reasons(_node({"k8s.amazonaws.com/accelerator": "t4"}, shared)) == []  # renamed, still GPUs


def test_the_device_plugin_disabled_by_flag_raises_nothing() -> None:
    node = _node({"k8s.amazonaws.com/accelerator": "t4"}, {"cpu": "8"})
    assert _reasons(node, disabled=frozenset({"device-plugin"})) == []


def test_a_node_the_operator_owes_a_plugin_keeps_its_own_reason() -> None:
    labels = {
        "cloud.google.com/gke-accelerator": "nvidia-l4",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.deploy.device-plugin": "true",
    }
    assert _reasons(_node(labels, {"cpu": "8"})) == ["no-allocatable"]
