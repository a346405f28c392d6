"""The ``managed`` check, defined once: a cloud's managed GPU stack beside the GPU Operator's, one node at a time,
given whether the operator's device plugin is switched off (flags, ClusterPolicy: the rule's context)."""

from __future__ import annotations

from typing import Any

from gpulabel.checks.engine.definition import Check, CheckOptions, Facts, NodeRule, node_check
from gpulabel.checks.managed import rules
from gpulabel.checks.operands.daemonsets import disabled_by_cluster_policy
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding

__all__ = ["CHECK"]


def _find(node: Node, context: Any, opts: CheckOptions) -> list[Finding]:
    return rules.managed_node(node, operator_plugin_off=context)


def _plugin_off(state: ClusterState, opts: CheckOptions, facts: Facts) -> bool:
    return rules.DEVICE_PLUGIN in opts.disabled or rules.DEVICE_PLUGIN in disabled_by_cluster_policy(
        state.cluster_policies
    )


CHECK: Check = node_check(
    "managed",
    ("Node", "ClusterPolicy"),
    ("Node",),
    NodeRule(_find, context=_plugin_off),
    "a cloud's managed GPU stack beside the GPU Operator's",
    reasons=lambda: rules.REASONS,
)
