"""The ``audit`` check, defined once: the GPU labels of every ``nvidia.com/gpu.present=true`` node, node by node."""

from __future__ import annotations

from typing import Any

from gpulabel.checks import audit
from gpulabel.checks.definition import Check, CheckOptions, NodeRule, node_check
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import Node
from gpulabel.model.findings import Finding

__all__ = ["CHECK"]


def _find(node: Node, context: Any, opts: CheckOptions) -> list[Finding]:
    return audit.audit_node(node, opts.strict) if node.labels.get(V.GPU_PRESENT) == "true" else []


CHECK: Check = node_check(
    "audit",
    ("Node",),
    ("Node",),
    NodeRule(_find),
    "GPU labels of every nvidia.com/gpu.present=true node",
    reasons=lambda: {**audit.REASONS, **audit.STRICT_REASONS},
)
