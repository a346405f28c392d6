"""The ``sharing`` check, defined once: time-slicing and MPS labels, one node at a time."""

from __future__ import annotations

from typing import Any

from gpulabel.checks.engine.definition import Check, CheckOptions, NodeRule, node_check
from gpulabel.checks.sharing import rules as sharing
from gpulabel.model.cluster import Node
from gpulabel.model.findings import Finding

__all__ = ["CHECK"]


def _find(node: Node, context: Any, opts: CheckOptions) -> list[Finding]:
    return sharing.sharing_node(node)


CHECK: Check = node_check(
    "sharing", ("Node",), ("Node",), NodeRule(_find), "time-slicing and MPS labels", reasons=lambda: sharing.REASONS
)
