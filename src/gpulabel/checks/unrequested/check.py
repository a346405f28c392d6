"""The ``unrequested`` check, defined once: running pods that see GPUs without requesting them.

Rerun whole when a Node, Pod or DaemonSet changes (:func:`~gpulabel.checks.engine.definition.whole`):
correct, not incremental.
"""

from __future__ import annotations

from gpulabel.checks.engine.definition import Check, CheckOptions, whole
from gpulabel.checks.unrequested import rules
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Result

__all__ = ["CHECK"]

_KINDS = ("Node", "Pod", "DaemonSet")


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    return Result("unrequested", tuple(rules.unrequested(state, opts.namespace)))


def _caveats(state: ClusterState, opts: CheckOptions) -> tuple[str, ...]:
    return () if "DaemonSet" in state.kinds else (rules.NO_DAEMONSETS,)


CHECK: Check = Check(
    "unrequested",
    _KINDS,
    ("Node", "Pod"),
    _run,
    "running pods on GPU nodes that see GPUs without requesting them (NVIDIA_VISIBLE_DEVICES, privileged, CDI)",
    reasons=lambda: rules.REASONS,
    caveats=_caveats,
    pieces=whole(_KINDS),
)
