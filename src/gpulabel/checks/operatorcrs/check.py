"""The ``operatorcrs`` check, defined once: the GPU Operator's NVIDIADriver and GPUCluster custom resources.

Rerun whole when a Node, ClusterPolicy, NVIDIADriver or GPUCluster changes
(:func:`~gpulabel.checks.engine.definition.whole`): the overlaps read every node against every driver.
"""

from __future__ import annotations

from gpulabel.checks.engine.definition import Check, CheckOptions, whole
from gpulabel.checks.operatorcrs import rules
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Result

__all__ = ["CHECK"]

_KINDS = ("Node", "ClusterPolicy", "NVIDIADriver", "GPUCluster")


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    return Result("operatorcrs", tuple(rules.operator_crs(state)))


CHECK: Check = Check(
    "operatorcrs",
    _KINDS,
    # every operator that serves GPUCluster (v26.7.0) serves NVIDIADriver too (v23.9+): a capture of it has the kind
    ("Node", "NVIDIADriver"),
    _run,
    "the GPU Operator's NVIDIADriver and GPUCluster custom resources: overlaps, refusals, routing, status",
    reasons=lambda: rules.REASONS,
    pieces=whole(_KINDS),
)
