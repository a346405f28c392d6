"""``productless``: a GPU node (``nvidia.com/gpu.present=true``) whose GPU Feature Discovery product label is
missing, the label that workloads select a GPU model by."""

from __future__ import annotations

from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import Node
from gpulabel.model.findings import Finding, label_finding
from gpulabel.model.severity import Reason

__all__ = ["REASONS", "productless_node"]

REASONS: dict[str, Reason] = {
    "no-product": Reason("warning", "a GPU node without nvidia.com/gpu.product: a pod selecting a GPU model skips it"),
}


def productless_node(node: Node) -> list[Finding]:
    if node.labels.get(V.GPU_PRESENT) != "true" or V.GPU_PRODUCT in node.labels:
        return []
    return [label_finding("productless", "no-product", node, V.GPU_PRODUCT, "the label is absent")]
