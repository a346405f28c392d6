"""``gpus --by flavor`` and ``gpus --by clusterqueue``: Kueue's GPU quota, what it admitted, and the GPUs behind it.

Per ResourceFlavor (or per ClusterQueue and flavor): the nominal quota of the GPU resources the ClusterQueues
name (``nvidia.com/gpu``, ``nvidia.com/gpu.shared``, ``nvidia.com/mig-*``), what is admitted and reserved, and
the GPUs of the nodes the flavor selects (:func:`~gpulabel.checks.queues.rules.flavor_nodes`) counted as ``gpus``
counts them (:func:`~gpulabel.checks.health.usable.node_use`: allocatable, usable, free), except that a taint the
flavor's pods tolerate (its ``nodeTaints`` and ``tolerations``) does not make a node's GPUs unschedulable.

- *reserved*: the GPUs of the Workloads holding quota (``QuotaReserved`` True), *admitted* those of them also
  ``Admitted``; neither counts a ``Finished`` Workload (Kueue releases its quota). A Workload's GPUs on a flavor
  are its pod set's requests per pod times the assignment's ``count`` (the pod set's when absent), for each
  resource the assignment gives that flavor (Kueue v0.17.0 ``workload_types.go`` ``PodSetAssignment``: its
  ``resourceUsage`` is that product).
- *usage*: the ClusterQueue's own ``status.flavorsUsage`` (Kueue's count); ``None`` where no ClusterQueue of
  the row has a status.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from gpulabel.checks.health.usable import node_use
from gpulabel.checks.queues.rules import (
    flavor_nodes,
    flavor_pools,
    flavor_requirements,
    is_gpu_resource,
    node_groups,
)
from gpulabel.model import gpustack as G
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Cell, Result, Section
from gpulabel.model.kueue import Workload

__all__ = ["BY_CLUSTERQUEUE", "BY_FLAVOR", "QueueRow", "queue_result", "queue_rows", "workload_gpus"]

BY_FLAVOR = "flavor"
BY_CLUSTERQUEUE = "clusterqueue"


def workload_gpus(wl: Workload) -> dict[str, dict[str, int]]:
    """flavor -> GPU resource -> the GPUs the Workload's admission puts on it."""
    out: dict[str, dict[str, int]] = {}
    for a in wl.assignments:
        pod_set = next((ps for ps in wl.pod_sets if ps.name == a.name), None)
        if pod_set is None:
            continue
        count = pod_set.count if a.count is None else a.count
        for resource, flavor in a.flavors.items():
            if is_gpu_resource(resource) and (per := pod_set.requests.get(resource, 0)):
                mine = out.setdefault(flavor, {})
                mine[resource] = mine.get(resource, 0) + per * count
    return out


@dataclass
class QueueRow:
    flavor: str
    cluster_queue: str = ""  # "" in a --by flavor row
    cluster_queues: list[str] = field(default_factory=list)
    quota: int = 0
    admitted: int = 0
    reserved: int = 0
    usage: int | None = None
    nodes: int = 0
    allocatable: int = 0
    usable: int = 0
    free: int = 0
    nodepools: tuple[str, ...] = ()
    missing: bool = False  # a ClusterQueue names the flavor; it is not in the cluster

    def cells(self) -> dict[str, Cell]:
        head: dict[str, Cell] = {"clusterqueue": self.cluster_queue} if self.cluster_queue else {}
        return {
            **head,
            "flavor": self.flavor,
            **({} if self.cluster_queue else {"clusterqueues": tuple(self.cluster_queues)}),
            "quota": self.quota,
            "admitted": self.admitted,
            "reserved": self.reserved,
            "usage": self.usage,
            "nodes": self.nodes,
            "allocatable": self.allocatable,
            "usable": self.usable,
            "free": self.free,
            "nodepools": self.nodepools,
            "flavor_missing": self.missing,
        }

    def line(self) -> str:
        head = f"clusterqueue={self.cluster_queue} " if self.cluster_queue else ""
        usage = "-" if self.usage is None else str(self.usage)
        pools = f" nodepools={','.join(self.nodepools)}" if self.nodepools else ""
        missing = " (flavor not in the cluster)" if self.missing else ""
        return (
            f"{head}flavor={self.flavor} quota={self.quota} admitted={self.admitted} reserved={self.reserved} "
            f"usage={usage} nodes={self.nodes} allocatable={self.allocatable} usable={self.usable} "
            f"free={self.free}{pools}{missing}"
        )


def _live(wl: Workload) -> bool:
    return wl.condition("QuotaReserved") and not wl.condition("Finished")


def _requested(state: ClusterState) -> dict[str, int]:
    """node -> GPU devices its non-terminal bound pods request (the scheduler's count, as ``gpus``)."""
    out: dict[str, int] = {}
    for pod in state.pods:
        if pod.node_name and not pod.terminal and (asked := sum(G.gpu_resources(pod.requests).values())):
            out[pod.node_name] = out.get(pod.node_name, 0) + asked
    return out


def _flavor_side(
    state: ClusterState, name: str, resources: Iterable[str], conditions: Mapping[str, str] | None, near: _Near
) -> QueueRow:
    """A row with the flavor's nodes counted (quota and workloads left to the caller)."""
    row = QueueRow(name)
    flavor = state.kueue.flavors.get(name)
    if flavor is None:
        row.missing = True
        return row
    found = flavor_nodes(flavor, state.nodes, groups=near.groups)
    requested = near.requested
    wanted = set(resources)
    row.nodes = len(found.nodes)
    tolerations = flavor_requirements(flavor).tolerations
    for node in found.nodes:
        advertised = G.gpu_resources(node.amounts)
        row.allocatable += sum(n for r, n in advertised.items() if r in wanted)
        # counted as gpus counts them, less the taints every workload admitted to the flavor tolerates
        kept = tuple(t for t in node.taints if not any(tol.tolerates(t) for tol in tolerations))
        use = node_use(replace(node, taints=kept), requested.get(node.name, 0), conditions)
        row.usable += use.usable
        row.free += use.free
    if not found.nodes or row.allocatable == 0:
        pools = flavor_pools(state, flavor, wanted or {G.GPU_RESOURCE})
        row.nodepools = tuple(sorted({p.name for ps in pools.values() for p, _ in ps.takers}))
    return row


class _Near:
    """What every flavor's row reads of the nodes, made once: the nodes grouped, the GPUs requested per node."""

    def __init__(self, state: ClusterState) -> None:
        self.groups = node_groups(state)
        self.requested = _requested(state)


def queue_rows(state: ClusterState, by: str, conditions: Mapping[str, str] | None = None) -> list[QueueRow]:
    """One row per flavor (``by`` :data:`BY_FLAVOR`; every flavor in the cluster or named by a ClusterQueue) or
    per ClusterQueue and flavor (:data:`BY_CLUSTERQUEUE`), in name order."""
    kueue = state.kueue
    quota: dict[tuple[str, str], int] = {}  # (clusterqueue, flavor) -> nominal GPU units
    resources: dict[str, set[str]] = {}  # flavor -> the GPU resources its quotas name
    for cq in kueue.cluster_queues.values():
        for flavor, q in cq.quotas():
            if is_gpu_resource(q.resource):
                quota[(cq.name, flavor)] = quota.get((cq.name, flavor), 0) + q.units
                resources.setdefault(flavor, set()).add(q.resource)
        for flavor in cq.flavor_names():
            quota.setdefault((cq.name, flavor), 0)
    held: dict[tuple[str, str], tuple[int, int]] = {}  # (clusterqueue, flavor) -> (admitted, reserved)
    for wl in kueue.workloads.values():
        if not _live(wl):
            continue
        for flavor, by_resource in workload_gpus(wl).items():
            admitted, reserved = held.get((wl.cluster_queue, flavor), (0, 0))
            n = sum(by_resource.values())
            held[(wl.cluster_queue, flavor)] = (admitted + (n if wl.admitted else 0), reserved + n)
            resources.setdefault(flavor, set()).update(by_resource)
    keys = sorted(set(quota) | set(held))
    flavors = sorted({f for _, f in keys} | (set(kueue.flavors) if by == BY_FLAVOR else set()))
    near = _Near(state)
    sides = {f: _flavor_side(state, f, resources.get(f, {G.GPU_RESOURCE}), conditions, near) for f in flavors}
    rows: list[QueueRow] = []
    if by == BY_FLAVOR:
        for f in flavors:
            row = sides[f]
            mine = [k for k in keys if k[1] == f]
            row.cluster_queues = sorted({cq for cq, _ in mine if cq in kueue.cluster_queues})
            _add(state, row, mine, quota, held)
            rows.append(row)
        return rows
    for cq_name, f in keys:
        side = sides[f]
        row = QueueRow(f, cq_name or "(none)", nodes=side.nodes, allocatable=side.allocatable, usable=side.usable)
        row.free, row.nodepools, row.missing = side.free, side.nodepools, side.missing
        _add(state, row, [(cq_name, f)], quota, held)
        rows.append(row)
    return rows


def _add(
    state: ClusterState,
    row: QueueRow,
    keys: Iterable[tuple[str, str]],
    quota: Mapping[tuple[str, str], int],
    held: Mapping[tuple[str, str], tuple[int, int]],
) -> None:
    for key in keys:
        row.quota += quota.get(key, 0)
        admitted, reserved = held.get(key, (0, 0))
        row.admitted += admitted
        row.reserved += reserved
        cq = state.kueue.cluster_queues.get(key[0])
        if cq is not None and cq.usage:
            used = sum(n for (f, r), n in cq.usage.items() if f == key[1] and is_gpu_resource(r))
            row.usage = (row.usage or 0) + used


def queue_result(state: ClusterState, by: str, conditions: Mapping[str, str] | None = None) -> Result:
    """The ``gpus --by flavor|clusterqueue`` result: section ``flavors`` or ``clusterqueues``, a row each."""
    rows = queue_rows(state, by, conditions)
    name = "flavors" if by == BY_FLAVOR else "clusterqueues"
    none = "no Kueue ResourceFlavor or ClusterQueue in the input"
    text = tuple(r.line() for r in rows) or (none,)
    return Result("gpus", sections=(Section(name, tuple(r.cells() for r in rows), text),), ok="", fields={"by": by})
