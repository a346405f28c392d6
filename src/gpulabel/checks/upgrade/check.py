"""The ``upgrade`` check, defined once: driver upgrades stuck or failed, one node at a time (a state's age
reads the clock: :func:`gpulabel.checks.upgrade.rules.reads_clock`)."""

from __future__ import annotations

from typing import Any

from gpulabel.checks.engine.definition import Check, CheckOptions, Facts, NodeRule, node_check
from gpulabel.checks.upgrade import rules as upgrade
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding

__all__ = ["CHECK"]


def _find(node: Node, context: Any, opts: CheckOptions) -> list[Finding]:
    return upgrade.upgrade_node(node, opts.now, opts.stuck_after)


def _caveats(state: ClusterState, opts: CheckOptions, facts: Facts) -> tuple[str, ...]:
    return upgrade.stuck_detection_caveats(state, "managed" in facts)


CHECK: Check = node_check(
    "upgrade",
    ("Node",),
    ("Node",),
    NodeRule(_find, clock=upgrade.reads_clock, facts={"managed": upgrade.managed}, caveats=_caveats),
    "driver upgrades stuck or failed",
    reasons=lambda: upgrade.REASONS,
)
