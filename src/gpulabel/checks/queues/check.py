"""The ``queues`` check, defined once: Kueue's flavors against the nodes, and the Pending pods of admitted
Workloads joined to their flavor.

Its keeper keeps the flavors' part until a node, flavor, ClusterQueue or Topology changes, and the pods' part
until one of those, a pod or a Workload does: a pod's event does not walk every flavor's nodes again.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpulabel.checks.engine.definition import Check, CheckOptions, Fleet, ObjectKey
from gpulabel.checks.engine.verdict import grade
from gpulabel.checks.queues import admitted, rules
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Finding, Result

__all__ = ["CHECK"]

_FLAVOR_KINDS = frozenset({"Node", "ResourceFlavor", "ClusterQueue", "Topology", "NodePool"})
_POD_KINDS = frozenset({"Pod", "Workload"})


def _joined(flavors: Result, pods: list[Finding]) -> Result:
    return replace(flavors, findings=(*flavors.findings, *pods)) if pods else flavors


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    groups = rules.node_groups(state)  # once for both parts
    return _joined(rules.queues(state, groups), admitted.admitted_pending(state, opts.namespace, groups))


class _Keeper:
    """The flavors' part and the pods' part, each kept until a kind it reads changes, and the nodes grouped by what
    the flavors read, kept with the flavors' part (a pod's event does not group every node again)."""

    def __init__(self, check: Check) -> None:
        self.check = check
        self.flavors: Result | None = None
        self.pods: list[Finding] | None = None
        self.groups: rules.NodeGroups | None = None

    def touched(self, kind: str, key: ObjectKey, old: Any | None, new: Any | None) -> None:
        if kind in _FLAVOR_KINDS:
            self.flavors = self.pods = self.groups = None
        elif kind in _POD_KINDS:
            self.pods = None

    def result(self, fleet: Fleet, opts: CheckOptions) -> Result:
        if self.groups is None:
            self.groups = rules.node_groups(fleet.state)
        if self.flavors is None:
            self.flavors = rules.queues(fleet.state, self.groups)
        if self.pods is None:
            self.pods = admitted.admitted_pending(fleet.state, opts.namespace, self.groups)
        return grade(_joined(self.flavors, self.pods), self.check.reasons())


CHECK: Check = Check(
    "queues",
    tuple(sorted(_FLAVOR_KINDS | _POD_KINDS)),
    ("Node", "ResourceFlavor"),
    _run,
    "Kueue's ResourceFlavors against the nodes: flavors that select no node or no GPU, quotas above the GPUs, "
    "admitted workloads' Pending pods",
    reasons=lambda: rules.REASONS,
    pieces=_Keeper,
)
