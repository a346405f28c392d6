"""The ``nfd`` check, defined once: rerun whole when a node or an NFD object changes."""

from __future__ import annotations

from gpulabel.checks.engine.definition import Check, CheckOptions, whole
from gpulabel.checks.nfd import rules as nfdrules
from gpulabel.k8s.nfd.objects import NFD_KINDS
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Result

__all__ = ["CHECK"]


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    return nfdrules.check(state, opts.nfd_config)


CHECK: Check = Check(
    "nfd",
    ("Node", *NFD_KINDS),
    ("Node", "NodeFeature"),
    _run,
    "labels NodeFeatureRules and NodeFeatures should set that nodes lack, unexplained NFD labels, failing rules",
    reasons=lambda: nfdrules.REASONS,
    pieces=whole(("Node", *NFD_KINDS)),
)
