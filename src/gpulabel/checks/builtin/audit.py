"""The ``audit`` check, defined once: the GPU labels of every ``nvidia.com/gpu.present=true`` node, node by node.

Its context is whether the ``operands`` check runs beside it on the same input (among the checks run, and
not skipped): then an empty deploy label is operands' finding, not audit's (``checks/audit.py``).
"""

from __future__ import annotations

from typing import Any

from gpulabel.checks import audit
from gpulabel.checks.definition import Check, CheckOptions, Facts, NodeRule, node_check, skip_reason
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding

__all__ = ["CHECK"]


OPERANDS = "operands"  # the check that owns an empty deploy label where it runs


def _operands_run(state: ClusterState, opts: CheckOptions, facts: Facts) -> bool:
    owner = next((c for c in opts.registry if c.name == OPERANDS), None)
    return owner is not None and not skip_reason(owner, state)


def _find(node: Node, operands_run: Any, opts: CheckOptions) -> list[Finding]:
    if node.labels.get(V.GPU_PRESENT) != "true":
        return []
    return audit.audit_node(node, opts.strict, operands_run=bool(operands_run))


CHECK: Check = node_check(
    "audit",
    ("Node",),
    ("Node",),
    NodeRule(_find, context=_operands_run),
    "GPU labels of every nvidia.com/gpu.present=true node",
    reasons=lambda: {**audit.REASONS, **audit.STRICT_REASONS},
)
