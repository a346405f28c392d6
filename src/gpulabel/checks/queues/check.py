"""The ``queues`` check, defined once: Kueue's flavors against the nodes, rerun whole when one of them changes."""

from __future__ import annotations

from gpulabel.checks.engine.definition import Check, CheckOptions, whole
from gpulabel.checks.queues import rules
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Result

__all__ = ["CHECK"]

_READS = ("Node", "ResourceFlavor", "ClusterQueue", "Topology")


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    return rules.queues(state)


CHECK: Check = Check(
    "queues",
    _READS,
    ("Node", "ResourceFlavor"),
    _run,
    "Kueue's ResourceFlavors against the nodes: flavors that select no node or no GPU, quotas above the GPUs",
    reasons=lambda: rules.REASONS,
    pieces=whole(_READS),
)
