"""The ``mig`` check, defined once: MIG configuration and its state, one node at a time, against the
ClusterPolicy's MIG strategy (its context); a state's age reads the clock
(:func:`gpulabel.checks.mig.rules.reads_clock`)."""

from __future__ import annotations

from typing import Any

from gpulabel.checks.engine.definition import Check, CheckOptions, Facts, NodeRule, node_check
from gpulabel.checks.mig import rules as mig
from gpulabel.checks.upgrade.rules import managed, stuck_detection_caveats
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding

__all__ = ["CHECK"]


def _find(node: Node, strategy: Any, opts: CheckOptions) -> list[Finding]:
    return mig.mig_node(node, opts.now, opts.stuck_after, strategy)


def _strategy(state: ClusterState, opts: CheckOptions, facts: Facts) -> str | None:
    return mig.cluster_mig_strategy(state.cluster_policies)


def _labels_strategy(node: Node) -> bool:
    return "nvidia.com/mig.strategy" in node.labels


def _caveats(state: ClusterState, opts: CheckOptions, facts: Facts) -> tuple[str, ...]:
    """Stuck states without managedFields; the strategy without a ClusterPolicy."""
    caveats = stuck_detection_caveats(state, "managed" in facts)
    if "ClusterPolicy" not in state.kinds and "strategy" in facts:
        caveats += ("strategy check skipped (no ClusterPolicy in the input)",)
    return caveats


CHECK: Check = node_check(
    "mig",
    ("Node", "ClusterPolicy"),
    ("Node",),
    NodeRule(
        _find,
        context=_strategy,
        clock=mig.reads_clock,
        facts={"managed": managed, "strategy": _labels_strategy},
        caveats=_caveats,
    ),
    "MIG configuration and its state",
    reasons=lambda: mig.REASONS,
)
