"""The ``audit`` check, defined once: the GPU labels of every ``nvidia.com/gpu.present=true`` node, node by node.

Its context is whether the ``operands`` and ``upgrade`` checks run beside it on the same input (among the
checks run, and not skipped): then an empty deploy label is operands' finding, and a deploy value the GPU
Operator does not know is upgrade's (``bad-value``), not audit's (``checks/audit/rules.py``).
"""

from __future__ import annotations

from typing import Any

from gpulabel.checks.audit import rules as audit
from gpulabel.checks.engine.definition import Check, CheckOptions, Facts, NodeRule, node_check, skip_reason
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding

__all__ = ["CHECK"]


OPERANDS = "operands"  # the check that owns an empty deploy label where it runs
UPGRADE = "upgrade"  # the check that owns a deploy value the operator does not know where it runs


def _runs(name: str, state: ClusterState, opts: CheckOptions) -> bool:
    owner = next((c for c in opts.registry if c.name == name), None)
    return owner is not None and not skip_reason(owner, state)


def _owners_run(state: ClusterState, opts: CheckOptions, facts: Facts) -> tuple[bool, bool]:
    """Whether ``operands`` and ``upgrade`` run beside audit: their deploy-label findings are not audit's."""
    return _runs(OPERANDS, state, opts), _runs(UPGRADE, state, opts)


def _find(node: Node, owners: Any, opts: CheckOptions) -> list[Finding]:
    if node.labels.get(V.GPU_PRESENT) != "true":
        return []
    operands_run, upgrade_run = owners
    return audit.audit_node(node, opts.strict, operands_run=operands_run, upgrade_run=upgrade_run)


CHECK: Check = node_check(
    "audit",
    ("Node",),
    ("Node",),
    NodeRule(_find, context=_owners_run),
    "GPU labels of every nvidia.com/gpu.present=true node",
    reasons=lambda: {**audit.REASONS, **audit.STRICT_REASONS},
)
