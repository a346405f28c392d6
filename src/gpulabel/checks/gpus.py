"""``gpulabel gpus``: the fleet inventory, one row per kind of GPU node (or per pool with ``--by``).

A row groups GPU nodes (``gpu.present=true``, a GPU product label, or GPU
devices in ``status.allocatable``) by product, driver major, MIG strategy and
sharing strategy; with ``by`` (any node label, e.g. a pool label) by that
label's value and the product. Per row: nodes; GPUs by label (the sum of
numeric ``gpu.count``); allocatable, requested and free GPU devices
(``nvidia.com/gpu``, ``nvidia.com/gpu.shared``, ``nvidia.com/mig-*``) where
nodes report ``status.allocatable``; requested counts the non-terminal pods
bound to the row's nodes, as the scheduler does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpulabel.model import gpustack as G
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node

__all__ = ["InventoryRow", "inventory"]


@dataclass
class InventoryRow:
    group: dict[str, str]
    nodes: int = 0
    gpus: int = 0
    allocatable: dict[str, int] = field(default_factory=dict)
    requested: dict[str, int] = field(default_factory=dict)
    unknown_allocatable: int = 0  # nodes without status.allocatable

    @property
    def total_allocatable(self) -> int:
        return sum(self.allocatable.values())

    @property
    def total_requested(self) -> int:
        return sum(self.requested.values())

    @property
    def free(self) -> int:
        return self.total_allocatable - self.total_requested

    def line(self) -> str:
        head = " ".join(f"{k}={v}" for k, v in self.group.items())
        return (
            f"{head} nodes={self.nodes} gpus={self.gpus} allocatable={self.total_allocatable} "
            f"requested={self.total_requested} free={self.free}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            **self.group,
            "nodes": self.nodes,
            "gpus": self.gpus,
            "allocatable": self.total_allocatable,
            "requested": self.total_requested,
            "free": self.free,
            "by_resource": {
                r: {"allocatable": self.allocatable.get(r, 0), "requested": self.requested.get(r, 0)}
                for r in sorted(set(self.allocatable) | set(self.requested))
            },
            "nodes_without_allocatable": self.unknown_allocatable,
        }


def _is_gpu_node(node: Node) -> bool:
    labels = node.labels
    return (
        labels.get(V.GPU_PRESENT) == "true"
        or V.GPU_PRODUCT in labels
        or sum(G.gpu_resources(node.amounts).values()) > 0
    )


def _group(node: Node, by: str | None) -> dict[str, str]:
    labels = node.labels
    product = labels.get(V.GPU_PRODUCT, "(no product label)")
    if by is not None:
        return {by: labels.get(by, "(none)"), "product": product}
    return {
        "product": product,
        "driver": G.driver_major(labels) or "-",
        "mig": labels.get(G.MIG_STRATEGY, "-"),
        "sharing": labels.get(G.SHARING_STRATEGY, "-"),
    }


def inventory(state: ClusterState, by: str | None = None) -> list[InventoryRow]:
    """The rows, largest first (nodes, then GPUs), then by their group values."""
    requested: dict[str, dict[str, int]] = {}
    for pod in state.pods:
        if pod.node_name and not pod.terminal:
            mine = requested.setdefault(pod.node_name, {})
            for resource, n in G.gpu_resources(pod.requests).items():
                mine[resource] = mine.get(resource, 0) + n
    rows: dict[tuple[str, ...], InventoryRow] = {}
    for node in state.nodes:
        if not _is_gpu_node(node):
            continue
        group = _group(node, by)
        row = rows.setdefault(tuple(group.values()), InventoryRow(group))
        row.nodes += 1
        row.gpus += G.whole_number(node.labels.get(V.GPU_COUNT)) or 0
        if node.amounts is None:
            row.unknown_allocatable += 1
        for resource, n in G.gpu_resources(node.amounts).items():
            row.allocatable[resource] = row.allocatable.get(resource, 0) + n
        for resource, n in requested.get(node.name, {}).items():
            row.requested[resource] = row.requested.get(resource, 0) + n
    return sorted(rows.values(), key=lambda r: (-r.nodes, -r.gpus, tuple(r.group.values())))
