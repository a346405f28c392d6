"""Small assessments for the monitor's sink tests (metrics, Events, the node condition)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpulabel.checks.engine.assessment import Assessment
from gpulabel.checks.engine.rootcause import root_causes
from gpulabel.model.cluster import ClusterState, Node, node_from_json
from gpulabel.model.findings import Finding, Result

PCI = {"feature.node.kubernetes.io/pci-10de.present": "true"}


def node(name: str, labels: Mapping[str, str], gpus: int | None = None) -> Node:
    obj: dict[str, Any] = {"kind": "Node", "metadata": {"name": name, "labels": dict(labels)}}
    if gpus is not None:
        obj["status"] = {"capacity": {"nvidia.com/gpu": str(gpus)}, "allocatable": {"nvidia.com/gpu": str(gpus)}}
    return node_from_json(obj)


NODES = (
    node("gpu-a", {**PCI, "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-A10"}, 4),
    node("gpu-b", {**PCI, "nvidia.com/gpu.count": "2"}),
    node("cpu-1", {}),
)
PLUGIN_MISSING = Finding(
    "operands", "missing", node="gpu-a", operand="device-plugin", severity="error", detail="no pod on the node"
)
PAUSED = Finding("operands", "paused", node="gpu-a", operand="dcgm-exporter", severity="info")
CORDONED = Finding("capacity", "cordoned", node="gpu-b", severity="warning", detail="spec.unschedulable")
PENDING = Finding("pending", "untolerated-taint", pod="ml/train-0", node="gpu-b", severity="warning")


def assessment(findings: Iterable[Finding], at: float = 1_700_000_000.0, nodes: tuple[Node, ...] = NODES) -> Assessment:
    found = tuple(findings)
    causes = tuple(root_causes(nodes, found))
    return Assessment(Result("check", found, graded=True), causes, ClusterState(nodes=nodes), at)
