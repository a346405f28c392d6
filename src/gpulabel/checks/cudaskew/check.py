"""The ``cudaskew`` check, defined once: GPU pods failing on a driver older than their image's CUDA.

Rerun whole when a Node or Pod changes (:func:`~gpulabel.checks.engine.definition.whole`): correct, not
incremental (the selector it proposes is matched against every node).
"""

from __future__ import annotations

from gpulabel.checks.cudaskew import rules
from gpulabel.checks.engine.definition import Check, CheckOptions, whole
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Result

__all__ = ["CHECK"]

_KINDS = ("Node", "Pod")


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    return Result("cudaskew", tuple(rules.cudaskew(state, opts.namespace)))


CHECK: Check = Check(
    "cudaskew",
    _KINDS,
    _KINDS,
    _run,
    "pods failing because the node's driver supports an older CUDA than their image needs",
    reasons=lambda: rules.REASONS,
    pieces=whole(_KINDS),
)
