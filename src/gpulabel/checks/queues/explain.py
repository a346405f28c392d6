"""``explain workload/NS/NAME``: a Kueue Workload's way from its queue to its pods' nodes, link by link.

The links, in Kueue's order: the queue (its LocalQueue ``spec.queueName`` and the ClusterQueue that LocalQueue
names), the Workload's conditions (``QuotaReserved``, ``Admitted``, ``PodsReady``, ``Evicted``, ``Finished``...:
Kueue v0.17.0 ``workload_types.go``), each pod set's assigned flavor and the nodes it selects (or the label that
matches nothing with the nearest real value, or the NodePools that make its nodes), then each of its pods with
the findings ``pending`` and ``queues`` have for it. The Workload's pods are those of its owner (the Job; Kueue
``jobframework/reconciler.go``), their pod set by the label ``kueue.x-k8s.io/podset``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gpulabel.checks.queues.admitted import pod_set_of
from gpulabel.checks.queues.rules import flavor_nodes, flavor_pools, is_gpu_resource, node_groups, why_none
from gpulabel.model import gpustack as G
from gpulabel.model.cluster import ClusterState, Pod
from gpulabel.model.findings import Cell, Finding
from gpulabel.model.kueue import Workload

__all__ = ["WORKLOAD_TYPES", "WorkloadLink", "workload_links", "workload_pods"]

# the names kubectl knows the Workload resource by (Kueue v0.17.0 workload_types.go: kind, plural, shortNames)
WORKLOAD_TYPES = ("workload", "workloads", "kwl", "kueueworkload", "kueueworkloads")
# conditions whose True is trouble (Kueue v0.17.0 workload_types.go: WorkloadEvicted, WorkloadPreempted, ...)
_BAD_WHEN_TRUE = ("Evicted", "Preempted", "Deactivated", "Requeued")
_SAMPLE = 5


@dataclass(frozen=True, slots=True)
class WorkloadLink:
    name: str
    status: str  # ok | broken (an error) | waiting (not yet: no quota, no flavor, a pod not bound)
    evidence: str
    findings: tuple[Finding, ...] = ()

    def lines(self) -> list[str]:
        out = [f"{self.status:<7} {self.name}: {self.evidence}"]
        for f in self.findings:
            what = " ".join(p for p in (f.key, f.reason, *f.args) if p)
            out.append(f"          {f.severity} {f.check} {what}" + (f" ({f.detail})" if f.detail else ""))
        return out

    def row(self) -> dict[str, Cell]:
        return {
            "link": self.name,
            "status": self.status,
            "evidence": self.evidence,
            "findings": tuple(f"{f.check} {f.reason}" for f in self.findings),
        }


def workload_pods(state: ClusterState, wl: Workload) -> list[Pod]:
    """The pods of the Workload's owners (its Job), in the input's order."""
    uids = {uid for _, uid in wl.owners if uid}
    return [p for p in state.pods if any(uid in uids for _, uid in p.owners)] if uids else []


def _queue(state: ClusterState, wl: Workload) -> WorkloadLink:
    lq = state.kueue.local_queues.get(f"{wl.namespace}/{wl.queue}") if wl.queue else None
    if not wl.queue:
        return WorkloadLink("queue", "broken", "spec.queueName is empty: no queue will admit it")
    if lq is None and "LocalQueue" in state.kinds:
        cq = f", admitted by ClusterQueue {wl.cluster_queue}" if wl.cluster_queue else ""
        return WorkloadLink("queue", "broken", f"LocalQueue {wl.namespace}/{wl.queue} is not in the cluster{cq}")
    cq_name = wl.cluster_queue or (lq.cluster_queue if lq else "")
    via = f"LocalQueue {wl.namespace}/{wl.queue}" + (f" -> ClusterQueue {cq_name}" if cq_name else "")
    if cq_name and "ClusterQueue" in state.kinds and cq_name not in state.kueue.cluster_queues:
        return WorkloadLink("queue", "broken", f"{via}, which is not in the cluster")
    return WorkloadLink("queue", "ok", via)


def _conditions(wl: Workload) -> WorkloadLink:
    if not wl.conditions:
        return WorkloadLink("conditions", "waiting", "none yet: Kueue has not reserved quota for it")
    said = [
        f"{kind}={status}" + (f" ({reason}: {message})" if reason or message else "")
        for kind, (status, reason, message) in wl.conditions.items()
    ]
    bad = any(wl.condition(k) for k in _BAD_WHEN_TRUE)
    status = "broken" if bad else "ok" if wl.admitted else "waiting"
    return WorkloadLink("conditions", status, "; ".join(said))


def _names(nodes: Sequence[str]) -> str:
    shown = ", ".join(nodes[:_SAMPLE])
    return shown + (f", ... ({len(nodes)} in all)" if len(nodes) > _SAMPLE else "")


def _pod_sets(state: ClusterState, wl: Workload) -> list[WorkloadLink]:
    out = []
    groups = node_groups(state)
    assigned = {a.name: a for a in wl.assignments}
    for ps in wl.pod_sets:
        asked = ", ".join(f"{r} {n}" for r, n in sorted(ps.requests.items()) if is_gpu_resource(r)) or "no GPU"
        head = f"{ps.count} pod(s), {asked} per pod"
        a = assigned.get(ps.name)
        if a is None:
            out.append(WorkloadLink(f"podset {ps.name}", "waiting", f"{head}; no flavor assigned yet"))
            continue
        for name in sorted(set(a.flavors.values())):
            resources = sorted(r for r, f in a.flavors.items() if f == name)
            link = f"podset {ps.name} flavor {name}"
            flavor = state.kueue.flavors.get(name)
            if flavor is None:
                out.append(WorkloadLink(link, "broken", f"{head}; flavor {name} is not in the cluster"))
                continue
            found = flavor_nodes(flavor, state.nodes, ps.requirements.tolerations, groups)
            for_what = f"{head}; assigned for {', '.join(resources)}; nodeLabels " + (
                ", ".join(f"{k}={v}" for k, v in sorted(flavor.node_labels.items())) or "none"
            )
            if found.nodes:
                gpus = sum(found.gpus.values())
                nodes = _names([n.name for n in found.nodes])
                out.append(
                    WorkloadLink(link, "ok", f"{for_what}; selects {len(found.nodes)} node(s), {gpus} GPU(s): {nodes}")
                )
                continue
            gpu_resources = [r for r in resources if is_gpu_resource(r)] or [G.GPU_RESOURCE]
            pools = next(iter(flavor_pools(state, flavor, gpu_resources[:1]).values()))
            if pools.takers and pools.room() != 0:
                out.append(
                    WorkloadLink(link, "ok", f"{for_what}; selects no node yet: NodePool(s) {pools.names} make them")
                )
                continue
            key, value, why = why_none(found, state.nodes, groups)
            said = f"label {key}={value} matches no node ({why})" if key else f"selects no node: {why}"
            out.append(WorkloadLink(link, "broken", f"{for_what}; {said}"))
    return out


def _pods(state: ClusterState, wl: Workload, findings: Iterable[Finding]) -> list[WorkloadLink]:
    by_pod: dict[str, list[Finding]] = {}
    for f in findings:
        if f.pod:
            by_pod.setdefault(f.pod, []).append(f)
    pods = workload_pods(state, wl)
    if not pods:
        said = "no pod of its owner in the input" + ("" if wl.admitted else " (not admitted: its Job is suspended)")
        return [WorkloadLink("pods", "ok" if not wl.admitted else "waiting", said)]
    out = []
    for pod in pods:
        ref = f"{pod.namespace}/{pod.name}"
        placed = pod_set_of(wl, pod)
        podset = f"podset {placed[0].name}, " if placed else ""
        mine = tuple(by_pod.get(ref, ()))
        where = f"on node {pod.node_name}" if pod.node_name else "not bound to a node"
        waiting = pod.phase == "Pending" and not pod.node_name
        status = "broken" if any(f.severity == "error" for f in mine) else "waiting" if waiting else "ok"
        out.append(WorkloadLink(f"pod {ref}", status, f"{podset}{pod.phase or 'unknown phase'}, {where}", mine))
    return out


def workload_links(state: ClusterState, wl: Workload, findings: Iterable[Finding]) -> list[WorkloadLink]:
    """The Workload's links; ``findings``: those of ``pending`` and ``queues`` (the pods' are put under them)."""
    return [_queue(state, wl), _conditions(wl), *_pod_sets(state, wl), *_pods(state, wl, findings)]
