"""What a new pod can use of a node's GPUs, and the GPUs requested per namespace and Kueue queue.

A node's advertised GPU devices are *usable* unless the node takes no new pod or its GPUs are not
trustworthy:

- *unhealthy*: devices the device plugin took out (capacity minus allocatable), and every device of a
  node whose GPU health condition is in its problem state (``checks.health``'s table) or that carries a
  health agent's quarantine taint (``checks.health.DEFAULT_HEALTH_TAINTS``);
- *unschedulable*: the devices of a node that is cordoned (``spec.unschedulable``), NotReady (its Ready
  condition is not True; a node without conditions in the input is not judged), or tainted NoSchedule or
  NoExecute with a key a GPU pod does not tolerate by default. The one taint GPU pods tolerate without
  asking is the one named after the extended resource they request (``nvidia.com/gpu``): the
  ExtendedResourceToleration admission plugin adds that toleration (kubernetes
  ``plugin/pkg/admission/extendedresourcetoleration``), and clouds taint GPU pools with it.

``free`` counts usable devices no pod requests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpulabel.checks.health.rules import DEFAULT_HEALTH_TAINTS, condition_table
from gpulabel.errors import CelError
from gpulabel.model import gpustack as G
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.dradriver import GPU_DRIVER
from gpulabel.model.findings import Cell

if TYPE_CHECKING:
    from gpulabel.checks.health.devices import DeviceRow

__all__ = ["KUEUE_QUEUE", "ExtendedRow", "NodeUse", "dra_classes", "extended_rows", "namespace_rows", "node_use"]

KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"  # the pod label Kueue reads (Kueue docs, "Run a plain Pod")


@dataclass(frozen=True, slots=True)
class NodeUse:
    usable: int
    unhealthy: int
    unschedulable: int
    free: int


def _blocked(node: Node) -> bool:
    if node.unschedulable or (node.conditions and not node.ready):
        return True
    tolerated = (G.GPU_RESOURCE, G.SHARED_RESOURCE)
    return any(
        t.effect in ("NoSchedule", "NoExecute")
        and t.key not in tolerated
        and not t.key.startswith(G.MIG_RESOURCE_PREFIX)
        for t in node.taints
    )


def _sick(node: Node, conditions: Mapping[str, str]) -> bool:
    if any(t.key in DEFAULT_HEALTH_TAINTS and t.effect in ("NoSchedule", "NoExecute") for t in node.taints):
        return True  # a health agent's quarantine
    return any(conditions.get(c.type) == c.status for c in node.other_conditions)


def node_use(node: Node, requested: int, conditions: Mapping[str, str] | None = None) -> NodeUse:
    """The node's advertised GPU devices split by what a new pod can use; ``requested``: what its pods ask."""
    table = condition_table() if conditions is None else conditions
    devices = sum(G.gpu_resources(node.amounts).values())
    lost = sum(n for n, _ in G.lost_gpus(node).values())
    if _sick(node, table):
        return NodeUse(0, devices + lost, 0, 0)
    if _blocked(node):
        return NodeUse(0, lost, devices, 0)
    return NodeUse(devices, lost, 0, devices - requested)


def namespace_rows(state: ClusterState) -> list[dict[str, Cell]]:
    """GPU devices requested by the non-terminal pods bound to nodes, per namespace (and Kueue queue label
    when a pod carries one), most first; Pending pods' requests are counted apart."""
    rows: dict[tuple[str, str], dict[str, int]] = {}
    for pod in state.pods:
        asked = sum(G.gpu_resources(pod.requests).values())
        if not asked or pod.terminal:
            continue
        row = rows.setdefault(
            (pod.namespace, pod.labels.get(KUEUE_QUEUE, "")), {"pods": 0, "requested": 0, "pending": 0}
        )
        row["pods"] += 1
        row["requested" if pod.node_name else "pending"] += asked
    out: list[dict[str, Cell]] = []
    for (ns, queue), counts in sorted(rows.items(), key=lambda kv: (-kv[1]["requested"], kv[0])):
        out.append({"namespace": ns, "queue": queue or None, **counts})
    return out


@dataclass
class ClassRow:
    """The devices of one DeviceClass (its selectors), over every ResourceSlice."""

    name: str
    devices: int = 0
    allocated: int = 0
    tainted: int = 0  # NoSchedule/NoExecute device taints: no new claim without a toleration
    unschedulable: int = 0  # on a node a new pod cannot land on
    nodes: set[str] = field(default_factory=set)
    # NVIDIA's DRA devices on a node whose device plugin also advertises nvidia.com/gpu (``stack``'s
    # offered-twice): the same GPUs the inventory counts in allocatable, so none of them is free here
    twice: int = 0
    twice_unallocated: int = 0

    @property
    def free(self) -> int:
        return self.devices - self.allocated - self.tainted - self.unschedulable - self.twice_unallocated

    def line(self) -> str:
        trouble = f" unhealthy={self.tainted}" if self.tainted else ""
        trouble += f" unschedulable={self.unschedulable}" if self.unschedulable else ""
        trouble += f" twice={self.twice}" if self.twice else ""
        return (
            f"deviceclass={self.name} nodes={len(self.nodes)} devices={self.devices}{trouble} "
            f"allocated={self.allocated} free={max(self.free, 0)}"
        )

    def cells(self) -> dict[str, Cell]:
        return {
            "deviceclass": self.name,
            "nodes": len(self.nodes),
            "devices": self.devices,
            "unhealthy": self.tainted,
            "unschedulable": self.unschedulable,
            "twice": self.twice,
            "allocated": self.allocated,
            "free": max(self.free, 0),
        }


def _class_devices(state: ClusterState, classes: Sequence[str] | None = None) -> list[tuple[str, list[DeviceRow]]]:
    """Per DeviceClass (sorted), the published devices its selectors take (newest pool generation); a device a
    selector fails on is not the class's, nor a device of a node ``state`` does not hold."""
    from gpulabel.checks.health.devices import device_rows
    from gpulabel.k8s.dra.allocator import DeviceID
    from gpulabel.k8s.dra.evaluator import DraEvaluator

    dra = state.dra
    if not dra.slices or not dra.classes:
        return []
    ev = DraEvaluator(dra)
    nodes = {n.name for n in state.nodes}
    published = [
        (d, ev.device_input(DeviceID(driver=d.driver, pool=d.pool, device=d.name), d.device)) for d in device_rows(dra)
    ]
    out = []
    for name in sorted(classes if classes is not None else dra.classes):
        cls = dra.classes[name]
        members = []
        for d, dev in published:
            if d.node and d.node not in nodes:
                continue  # a node the input does not hold, or `-l` left out: its devices are not counted
            try:
                if not all(ev.selector(e).evaluate(dev) for e in cls.selectors):
                    continue
            except CelError:
                continue
            members.append(d)
        out.append((name, members))
    return out


def _count(row: ClassRow, d: DeviceRow, node: Node | None) -> None:
    row.devices += 1
    row.nodes.add(d.node)
    twice = d.driver == GPU_DRIVER and node is not None and (node.amounts or {}).get(G.GPU_RESOURCE, 0) > 0
    row.twice += twice
    if d.allocated_to:
        row.allocated += 1
    elif d.tainted:
        row.tainted += 1
    elif node is not None and _blocked(node):
        row.unschedulable += 1
    elif twice:
        row.twice_unallocated += 1


def dra_classes(state: ClusterState, classes: Sequence[str] | None = None) -> list[ClassRow]:
    """Per DeviceClass, the published devices its selectors take (newest pool generation), allocated,
    tainted and on nodes a new pod cannot use. A device a selector fails on is not counted in that class, nor a
    device of a node ``state`` does not hold (``-l`` selects the nodes whose devices count)."""
    nodes = {n.name: n for n in state.nodes}
    rows = []
    for name, members in _class_devices(state, classes):
        row = ClassRow(name)
        for d in members:
            _count(row, d, nodes.get(d.node))
        if row.devices:
            rows.append(row)
    return rows


@dataclass
class ExtendedRow(ClassRow):
    """An extended resource a DeviceClass backs (``DRAExtendedResource``), counted through the class's devices on
    the nodes whose allocatable does not advertise it (where a device plugin does, NodeResourcesFit counts it
    as before). ``requested``: what pods bound to such nodes ask (the scheduler's claim allocated it);
    ``pending``: what Pending pods not yet bound ask."""

    resource: str = ""
    requested: int = 0
    pending: int = 0

    def line(self) -> str:
        head = f"extended={self.resource} " + super().line()
        return f"{head} requested={self.requested} pending={self.pending}"

    def cells(self) -> dict[str, Cell]:
        return {"extended": self.resource, **super().cells(), "requested": self.requested, "pending": self.pending}


def extended_rows(state: ClusterState) -> list[ExtendedRow]:
    """Per extended resource a DeviceClass backs, by its ``extendedResourceName`` or by the implicit
    ``deviceclass.resource.kubernetes.io/<class>`` a pod asks for (``k8s/dra/extended.py``): the class's devices
    on the nodes that do not advertise it, allocated, tainted, unschedulable and free, and the pods' requests."""
    backed = state.dra.extended
    asked = {n for p in state.pods if not p.terminal for n, v in p.requests.items() if v > 0 and n in backed}
    wanted = sorted({r for r, c in backed.items() if c.extended_resource == r} | asked)
    if not wanted:
        return []
    nodes = {n.name: n for n in state.nodes}
    members = dict(_class_devices(state, sorted({backed[r].name for r in wanted})))
    rows = []
    for resource in wanted:
        row = ExtendedRow(backed[resource].name, resource=resource)
        plugin_nodes = {n.name for n in state.nodes if (n.amounts or {}).get(resource, 0) > 0}
        for d in members.get(row.name, ()):
            if d.node not in plugin_nodes:
                _count(row, d, nodes.get(d.node))
        for pod in state.pods:
            amount = pod.requests.get(resource, 0)
            if amount <= 0 or pod.terminal or pod.node_name in plugin_nodes:
                continue
            if pod.node_name:
                row.requested += amount
            else:
                row.pending += amount
        rows.append(row)
    return rows
