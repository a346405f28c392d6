"""``gpulabel mig``: which nodes are in MIG mode, and is their reconfiguration failed or stuck?

mig-manager applies ``nvidia.com/mig.config`` and reports in
``nvidia.com/mig.config.state``; a state of ``pending`` or ``rebooting`` older
than ``stuck_after`` (its last write in managedFields) is stuck. A node without
managedFields (a snapshot taken without ``--show-managed-fields``) has no age
and is never called stuck.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from gpulabel.model import gpustack as G
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding, label_finding
from gpulabel.model.severity import Reason

__all__ = ["REASONS", "cluster_mig_strategy", "mig", "mig_node", "reads_clock"]

REASONS: dict[str, Reason] = {
    "failed": Reason("error", "mig-manager could not apply the requested layout"),
    "stuck": Reason("error", "the layout has been pending or rebooting for longer than --stuck-after"),
    "slow": Reason("warning", "the layout has been pending or rebooting for more than half of --stuck-after"),
    "mig-invalid": Reason("error", "with the single strategy the node's GPUs do not form one uniform MIG profile"),
    "not-capable": Reason("warning", "a MIG layout is requested on a node without nvidia.com/mig.capable=true"),
    "mismatch": Reason(
        "warning", "the node's MIG strategy differs from the ClusterPolicy's spec.mig.strategy (no per-node config)"
    ),
}


def _finding(node: Node, key: str, reason: str, detail: str) -> Finding:
    return label_finding("mig", reason, node, key, detail)


def cluster_mig_strategy(policies: Sequence[Mapping[str, Any]]) -> str | None:
    """``spec.mig.strategy`` of the ClusterPolicy, when one is known and says it."""
    for policy in policies:
        mig = (policy.get("spec") or {}).get("mig")
        if isinstance(mig, dict) and isinstance(mig.get("strategy"), str):
            return str(mig["strategy"])
    return None


def reads_clock(node: Node) -> bool:
    """Whether :func:`mig_node`'s findings for ``node`` depend on the time (the age of a state in progress)."""
    return node.labels.get(G.MIG_CONFIG_STATE) in G.MIG_IN_PROGRESS


def mig_node(node: Node, now: datetime, stuck_after: float, strategy: str | None = None) -> list[Finding]:
    labels = node.labels
    found: list[Finding] = []
    state = labels.get(G.MIG_CONFIG_STATE)
    config = labels.get(G.MIG_CONFIG, "")
    if state == "failed":
        found.append(
            _finding(node, G.MIG_CONFIG_STATE, "failed", f"mig-manager failed to apply {G.MIG_CONFIG}={config}")
        )
    elif state in G.MIG_IN_PROGRESS:
        age = G.label_age(node, G.MIG_CONFIG_STATE, now)
        if age is not None and (late := G.overdue(age, stuck_after)):
            found.append(
                _finding(
                    node,
                    G.MIG_CONFIG_STATE,
                    late,
                    f"{state} for {G.format_age(age)} (--stuck-after {G.format_age(stuck_after)}), "
                    f"applying {G.MIG_CONFIG}={config}",
                )
            )
    product = labels.get(V.GPU_PRODUCT, "")
    if product.endswith("-MIG-INVALID"):
        found.append(
            _finding(
                node,
                V.GPU_PRODUCT,
                "mig-invalid",
                f"{product} with {V.GPU_COUNT}={labels.get(V.GPU_COUNT, 'absent')}: "
                "the single strategy needs every GPU in the same MIG profile",
            )
        )
    if config and config != G.MIG_DISABLED and labels.get(G.MIG_CAPABLE) != "true":
        capable = labels.get(G.MIG_CAPABLE)
        found.append(
            _finding(
                node,
                G.MIG_CONFIG,
                "not-capable",
                f"{G.MIG_CONFIG}={config} but {G.MIG_CAPABLE} is {'absent' if capable is None else repr(capable)}",
            )
        )
    node_strategy = labels.get(G.MIG_STRATEGY)
    # A per-node device-plugin config (nvidia.com/device-plugin.config) may set its own strategy: not drift.
    per_node = G.DEVICE_PLUGIN_CONFIG in labels
    if strategy is not None and node_strategy is not None and node_strategy != strategy and not per_node:
        found.append(
            _finding(
                node,
                G.MIG_STRATEGY,
                "mismatch",
                f"{node_strategy} here, {strategy} in the ClusterPolicy",
            )
        )
    return found


def mig(state: ClusterState, now: datetime, stuck_after: float) -> list[Finding]:
    """Every node's MIG findings, by node."""
    strategy = cluster_mig_strategy(state.cluster_policies)
    return [f for node in state.nodes for f in mig_node(node, now, stuck_after, strategy)]
