"""The ``productless`` check, defined once: one node at a time."""

from __future__ import annotations

from typing import Any

from gpulabel.checks.engine.definition import Check, CheckOptions, NodeRule, node_check
from gpulabel.model.cluster import Node
from gpulabel.model.findings import Finding

from . import rules

__all__ = ["CHECK"]


def _find(node: Node, context: Any, opts: CheckOptions) -> list[Finding]:
    return rules.productless_node(node)


CHECK: Check = node_check(
    "productless",
    ("Node",),
    ("Node",),
    NodeRule(_find),
    "GPU nodes without a product label",
    reasons=lambda: rules.REASONS,
)
