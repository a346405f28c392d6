"""Admitted but Pending: a Pending pod of a Workload Kueue admitted, joined to the flavor it was admitted to.

A Job's pods and its Workload name the same owner, the Job (Kueue v0.17.0 ``jobframework/reconciler.go``
makes the Workload with the Job as its controller reference); a pod of a Workload with several pod sets
carries its pod set's name in the label ``kueue.x-k8s.io/podset`` (``getPodSetsInfoFromStatus``, the same
file). The pod's nodeSelector holds the labels of the flavors its pod set was assigned and its tolerations
theirs (``podset.go`` ``FromAssignment``); when that flavor, with the workload's own tolerations, selects
no node, the pod sits Pending for the flavor's sake, and the finding says so: "admitted to flavor X, whose
label Y=Z matches no node" rather than the scheduler's bare affinity miss. A flavor that does select nodes
leaves the pod to ``pending``, which tells what else keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpulabel.checks.queues.pools import pools_for
from gpulabel.checks.queues.rules import CHECK, NodeGroups, flavor_nodes, flavor_requirements, node_groups, why_none
from gpulabel.k8s.nodeaffinity import PodRequirements
from gpulabel.model import gpustack as G
from gpulabel.model.cluster import ClusterState, Pod
from gpulabel.model.findings import Finding
from gpulabel.model.kueue import PodSet, Workload

__all__ = ["PODSET_LABEL", "admitted_pending", "pod_set_of"]

PODSET_LABEL = "kueue.x-k8s.io/podset"


def _admitted_by_owner(state: ClusterState) -> Mapping[str, Workload]:
    """The admitted Workloads by the uid of each of their owners (the Job whose pods they are)."""
    return {uid: wl for wl in state.kueue.workloads.values() if wl.admitted for _, uid in wl.owners if uid}


def pod_set_of(wl: Workload, pod: Pod) -> tuple[PodSet, tuple[str, ...]] | None:
    """The pod's pod set and the flavors assigned to it, by the pod set label (or the only pod set)."""
    name = pod.labels.get(PODSET_LABEL)
    if name is None and len(wl.pod_sets) == 1:
        name = wl.pod_sets[0].name
    pod_set = next((ps for ps in wl.pod_sets if ps.name == name), None)
    assignment = next((a for a in wl.assignments if a.name == name), None)
    if pod_set is None or assignment is None:
        return None
    return pod_set, tuple(sorted(set(assignment.flavors.values())))


class _Nowhere:
    """Each (flavor, tolerations)'s answer, found once for every pod that asks (a Job's pods share one), from
    the nodes grouped once by what the flavors read."""

    def __init__(self, state: ClusterState, groups: NodeGroups) -> None:
        self.state, self.groups = state, groups
        self.kept: dict[tuple[str, tuple[object, ...]], tuple[str, str, str] | None] = {}

    def why(self, flavor: str, req: PodRequirements) -> tuple[str, str, str] | None:
        """Why ``flavor`` selects no node for a pod with ``req``'s tolerations; None when it selects some, or when
        a Karpenter NodePool would make one for the pod (with room under its limits)."""
        key = (flavor, req.tolerations)
        if key not in self.kept:
            nodes, rf = self.state.nodes, self.state.kueue.flavors[flavor]
            found = flavor_nodes(rf, nodes, req.tolerations, self.groups)
            pools = (
                None
                if found.nodes
                else pools_for(flavor_requirements(rf, req.tolerations), self.state.karpenter.nodepools, G.GPU_RESOURCE)
            )
            made = pools is not None and bool(pools.takers) and pools.room() != 0
            self.kept[key] = None if found.nodes or made else why_none(found, nodes, self.groups)
        return self.kept[key]


def _finding(
    state: ClusterState, pod: Pod, wl: Workload, flavor: str, req: PodRequirements, nowhere: _Nowhere
) -> Finding | None:
    if flavor not in state.kueue.flavors:
        return None  # a flavor gone since: no-flavor says so of its ClusterQueue
    none = nowhere.why(flavor, req)
    if none is None:
        return None
    key, value, why = none
    said = f"whose label {key}={value} matches no node ({why})" if key else f"which selects no node: {why}"
    detail = (
        f"admitted by ClusterQueue {wl.cluster_queue} (Workload {wl.name}) to flavor {flavor}, {said}: Kueue "
        "injected the flavor's labels into the pod's nodeSelector, so no node will take it"
    )
    args = (f"workload/{wl.name}", f"flavor/{flavor}", value or why, *((why,) if key else ()))
    return Finding(CHECK, "admitted-pending", pod=f"{pod.namespace}/{pod.name}", key=key, value=value or None,
                   args=args, detail=detail)  # fmt: skip


def admitted_pending(
    state: ClusterState, namespace: str | None = None, groups: NodeGroups | None = None
) -> list[Finding]:
    """One finding per unbound Pending pod (of ``namespace``, if given) of an admitted Workload whose assigned
    flavor selects no node for it (with the workload's own tolerations in place of the flavor's nodeTaints)."""
    owners = _admitted_by_owner(state)
    if not owners:
        return []
    nowhere = _Nowhere(state, groups or node_groups(state))
    out: list[Finding] = []
    for pod in state.pods:
        if pod.phase != "Pending" or pod.node_name or (namespace is not None and pod.namespace != namespace):
            continue
        wl = next((owners[uid] for _, uid in pod.owners if uid in owners), None)
        placed = None if wl is None else pod_set_of(wl, pod)
        if wl is None or placed is None:
            continue
        pod_set, flavors = placed
        for flavor in flavors:
            found = _finding(state, pod, wl, flavor, pod_set.requirements, nowhere)
            if found is not None:
                out.append(found)
                break
    return out
