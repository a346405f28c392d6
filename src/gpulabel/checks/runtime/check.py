"""The ``runtime`` check, defined once: RuntimeClasses and runtime handlers GPU pods and DaemonSets need.

Rerun whole when a Node, Pod, DaemonSet, RuntimeClass, ClusterPolicy (its CDI/NRI settings) or Warning Event changes
(:func:`~gpulabel.checks.engine.definition.whole`): correct, not incremental.
"""

from __future__ import annotations

from gpulabel.checks.engine.definition import Check, CheckOptions, whole
from gpulabel.checks.runtime import rules as runtime
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Result

__all__ = ["CHECK"]

_KINDS = ("Node", "Pod", "DaemonSet", "RuntimeClass", "ClusterPolicy", "Event")


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    return Result("runtime", tuple(runtime.runtime(state, opts.namespace)))


def _caveats(state: ClusterState, opts: CheckOptions) -> tuple[str, ...]:
    return () if "RuntimeClass" in state.kinds else (runtime.NO_CLASSES,)


CHECK: Check = Check(
    "runtime",
    _KINDS,
    ("Pod",),
    _run,
    "GPU pods and DaemonSets whose RuntimeClass, or its handler on their node, is missing",
    reasons=lambda: runtime.REASONS,
    caveats=_caveats,
    pieces=whole(_KINDS),
)
