"""The ``capacity`` check, defined once: GPUs advertised against the labels, one node at a time, given the
operands disabled (flags, ClusterPolicy), whether the GPU Operator manages the cluster (a ClusterPolicy, or
any node with a deploy label: the one fact that spans nodes, kept as the rule's ``mark``) and the Karpenter
NodeClaims registered and not Initialized, by their node (a node Karpenter labelled registered and not
initialized reads the clock: its NodeClaim's grace)."""

from __future__ import annotations

from typing import Any

from gpulabel.checks.capacity import rules as capacity
from gpulabel.checks.engine.definition import Check, CheckOptions, Facts, NodeRule, node_check
from gpulabel.checks.operands.daemonsets import disabled_by_cluster_policy
from gpulabel.k8s.karpenter import lifecycle
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding

__all__ = ["CHECK"]


def _find(node: Node, context: Any, opts: CheckOptions) -> list[Finding]:
    off, operator, claims = context
    return capacity.capacity_node(node, off, operator, claims.get(node.name), opts.now)


def _deployed(node: Node) -> bool:
    return any(k.startswith(V.DEPLOY_PREFIX) for k in node.labels)


def _context(state: ClusterState, opts: CheckOptions, facts: Facts) -> tuple[frozenset[str], bool, Any]:
    # only the switches capacity_node reads: another operand switched off reruns no node (the rule's context)
    # without a ClusterPolicy or any deploy label the cluster runs no GPU Operator (a standalone device
    # plugin, a cloud's): nothing writes gpu.present there, so its absence is no finding
    off = (frozenset(opts.disabled) | disabled_by_cluster_policy(state.cluster_policies)) & capacity.READS_DISABLED
    unready = lifecycle.unready_claims(state.karpenter.nodeclaims)
    return off, bool(state.cluster_policies) or "deployed" in facts, unready


def _initializing(node: Node) -> bool:
    return lifecycle.initializing(node.labels)


CHECK: Check = node_check(
    "capacity",
    ("Node", "ClusterPolicy", "NodeClaim"),
    ("Node",),
    NodeRule(_find, context=_context, clock=_initializing, facts={"deployed": _deployed}),
    "GPUs advertised against the labels",
    reasons=lambda: capacity.REASONS,
)
