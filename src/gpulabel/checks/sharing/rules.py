"""``gpulabel sharing``: are the time-slicing and MPS labels consistent with each other?

GFD writes ``gpu.replicas`` (1 without sharing) and ``gpu.sharing-strategy``,
and appends ``-SHARED`` to ``gpu.product`` when replicas > 1 unless the
resource is renamed to ``nvidia.com/gpu.shared``. MPS cannot share MIG devices
with this device plugin's ``mps`` strategy.
"""

from __future__ import annotations

from gpulabel.model import gpustack as G
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding, label_finding
from gpulabel.model.severity import Reason

__all__ = ["REASONS", "sharing", "sharing_node"]

REASONS: dict[str, Reason] = {
    "not-a-number": Reason("error", "gpu.replicas is not a whole number"),
    "bad-value": Reason("error", "gpu.sharing-strategy is not none, time-slicing or mps"),
    "inconsistent": Reason("warning", "replicas > 1 with strategy none, or a sharing strategy with replicas <= 1"),
    "shared-suffix": Reason(
        "warning", "-SHARED on a product that GFD would not suffix (replicas not > 1, or a renamed resource)"
    ),
    "mps-on-mig": Reason("error", "MPS sharing on a node with MIG enabled"),
}


def _finding(node: Node, key: str, reason: str, detail: str) -> Finding:
    return label_finding("sharing", reason, node, key, detail)


def sharing_node(node: Node) -> list[Finding]:
    labels = node.labels
    found: list[Finding] = []
    raw_replicas = labels.get(G.GPU_REPLICAS)
    replicas = G.whole_number(raw_replicas) if raw_replicas is not None else 1
    if raw_replicas is not None and replicas is None:
        found.append(_finding(node, G.GPU_REPLICAS, "not-a-number", f"{raw_replicas!r} is not a whole number"))
    strategy = labels.get(G.SHARING_STRATEGY)
    if strategy is not None and strategy not in G.SHARING_STRATEGIES:
        found.append(
            _finding(node, G.SHARING_STRATEGY, "bad-value", f"{strategy!r}: expected none, time-slicing or mps")
        )
    elif strategy is not None and replicas is not None and raw_replicas is not None:
        if strategy == "none" and replicas > 1:
            found.append(
                _finding(node, G.SHARING_STRATEGY, "inconsistent", f"strategy none with {G.GPU_REPLICAS}={replicas}")
            )
        elif strategy != "none" and replicas <= 1:
            found.append(
                _finding(
                    node, G.SHARING_STRATEGY, "inconsistent", f"strategy {strategy} with {G.GPU_REPLICAS}={replicas}"
                )
            )
    product = labels.get(V.GPU_PRODUCT, "")
    if product.endswith("-SHARED") and replicas is not None:
        renamed = node.amounts is not None and G.SHARED_RESOURCE in node.amounts and G.GPU_RESOURCE not in node.amounts
        if replicas <= 1:
            found.append(
                _finding(
                    node,
                    V.GPU_PRODUCT,
                    "shared-suffix",
                    f"{product} but {G.GPU_REPLICAS} is {raw_replicas or 'absent'}",
                )
            )
        elif renamed:
            found.append(
                _finding(
                    node,
                    V.GPU_PRODUCT,
                    "shared-suffix",
                    f"{product} but the resource is renamed to {G.SHARED_RESOURCE}, for which GFD adds no suffix",
                )
            )
    mps = strategy == "mps" or any(
        v == "mps" for k, v in G.mig_device_labels(labels) if k.endswith(".sharing-strategy")
    )
    if mps and G.mig_enabled(labels):
        found.append(
            _finding(
                node,
                G.SHARING_STRATEGY,
                "mps-on-mig",
                f"MPS sharing with MIG enabled ({V.GPU_PRODUCT}={product or 'absent'}, "
                f"{G.MIG_STRATEGY}={labels.get(G.MIG_STRATEGY, 'absent')})",
            )
        )
    return found


def sharing(state: ClusterState) -> list[Finding]:
    """Every node's sharing findings, by node."""
    return [f for node in state.nodes for f in sharing_node(node)]
