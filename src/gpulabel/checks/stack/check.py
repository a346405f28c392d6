"""The ``stack`` check, defined once: a device plugin and NVIDIA's DRA driver offering one node's GPUs twice.

One node at a time (:func:`~gpulabel.checks.engine.definition.node_check`): a node's finding reads its
allocatable and what the DRA driver publishes for it, the context every node shares (remade when a
ResourceSlice or DeviceClass changes it).
"""

from __future__ import annotations

from gpulabel.checks.engine.definition import Check, CheckOptions, NodeRule, node_check
from gpulabel.checks.stack import rules as stack
from gpulabel.k8s.dra.objects import DRA_KINDS
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding

__all__ = ["CHECK"]


def _find(node: Node, context: stack.Published, opts: CheckOptions) -> list[Finding]:
    return stack.offered_twice(node, context)


def _context(state: ClusterState, opts: CheckOptions, facts: frozenset[str]) -> stack.Published:
    return stack.published(state.dra)


CHECK: Check = node_check(
    "stack",
    ("Node", *DRA_KINDS),
    ("Node", "ResourceSlice"),
    NodeRule(_find, _context),
    "a device plugin and NVIDIA's DRA driver offering the same GPUs",
    reasons=lambda: stack.REASONS,
)
