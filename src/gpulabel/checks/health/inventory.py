"""``gpulabel gpus``: the fleet inventory, one row per kind of GPU node (or per pool with ``--by``), and a total.

A row groups GPU nodes (``gpu.present=true``, a GPU product label, or GPU
devices in ``status.allocatable``) by product, driver major, MIG strategy and
sharing strategy; with ``by`` (any node label, e.g. a pool label) by that
label's value and the product. Nodes where NFD found an NVIDIA PCI device
(``feature.node.kubernetes.io/pci-10de.present`` and its class variants) but
the GPU stack never labelled them are a row of their own, product
``(unlabelled)``. The MIG strategy is shown only where MIG is possible
(``mig.capable=true``).

One unit per column: ``gpus`` counts physical GPUs (``gpu.count``, except
under the MIG ``single`` strategy, where GFD's ``gpu.count`` counts MIG
devices: there the GPUs are those devices divided by the profile's instances
per GPU, unknown ``?`` when that does not divide); ``mig_devices`` counts MIG
devices (MIG rows only); allocatable, requested and free count the devices
the device plugin advertises (``nvidia.com/gpu``, ``nvidia.com/gpu.shared``,
``nvidia.com/mig-*``) where nodes report ``status.allocatable``; requested
counts the non-terminal pods bound to the row's nodes, as the scheduler does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpulabel.checks.health.usable import dra_classes, extended_rows, namespace_rows, node_use
from gpulabel.checks.pending.poolroom import rooms_section
from gpulabel.checks.unrequested.rules import uses
from gpulabel.errors import InputError
from gpulabel.k8s.labels import key_errors
from gpulabel.model import gpustack as G
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Cell, Result, Section

__all__ = ["UNLABELLED", "InventoryRow", "check_by", "inventory", "inventory_result", "totals"]

UNLABELLED = "(unlabelled)"
BY_NAMESPACE = "namespace"  # --by namespace: GPUs requested per namespace (and Kueue queue), not a node label
NFD_NVIDIA_PCI = (
    "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/pci-0302_10de.present",
    "feature.node.kubernetes.io/pci-0300_10de.present",
)
# MIG instances of one profile that fit on one GPU, by the profile's compute slices (7-slice GPUs; A30: 4)
_PER_GPU = {"1": 7, "2": 3, "3": 2, "4": 1, "7": 1}
_PER_GPU_A30 = {"1": 4, "2": 2, "4": 1}


@dataclass
class InventoryRow:
    group: dict[str, str]
    nodes: int = 0
    gpus: int = 0
    allocatable: dict[str, int] = field(default_factory=dict)
    requested: dict[str, int] = field(default_factory=dict)
    unknown_allocatable: int = 0  # nodes without status.allocatable
    unknown_gpus: int = 0  # MIG single nodes whose physical GPUs cannot be told from the labels
    mig_devices: int | None = None  # None: no MIG node in the row
    names: list[str] = field(default_factory=list)
    # the devices split by what a new pod can use (checks/health/usable.py); free counts usable, unrequested ones
    usable: int = 0
    unhealthy: int = 0
    unschedulable: int = 0
    usable_free: int = 0

    @property
    def gpus_text(self) -> str:
        return f"{self.gpus}+?" if self.unknown_gpus and self.gpus else ("?" if self.unknown_gpus else str(self.gpus))

    @property
    def total_allocatable(self) -> int:
        return sum(self.allocatable.values())

    @property
    def total_requested(self) -> int:
        return sum(self.requested.values())

    @property
    def free(self) -> int:
        return self.usable_free

    def line(self) -> str:
        head = " ".join(f"{k}={v}" for k, v in self.group.items()) or "total"
        # every row has the same keys, zeros included (awk and grep see one shape); mig_devices "-" without MIG
        mig = f" mig_devices={'-' if self.mig_devices is None else self.mig_devices}"
        split = f" usable={self.usable} unhealthy={self.unhealthy} unschedulable={self.unschedulable}"
        return (
            f"{head} nodes={self.nodes} gpus={self.gpus_text}{mig} allocatable={self.total_allocatable}{split} "
            f"requested={self.total_requested} free={self.free}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            **self.group,
            "nodes": self.nodes,
            "gpus": self.gpus,
            "gpus_unknown_nodes": self.unknown_gpus,
            "mig_devices": self.mig_devices,
            "allocatable": self.total_allocatable,
            "requested": self.total_requested,
            "free": self.free,
            "usable": self.usable,
            "unhealthy": self.unhealthy,
            "unschedulable": self.unschedulable,
            "by_resource": {
                r: {"allocatable": self.allocatable.get(r, 0), "requested": self.requested.get(r, 0)}
                for r in sorted(set(self.allocatable) | set(self.requested))
            },
            "nodes_without_allocatable": self.unknown_allocatable,
        }


def _labelled(node: Node) -> bool:
    labels = node.labels
    return labels.get(V.GPU_PRESENT) == "true" or V.GPU_PRODUCT in labels


def _nfd_only(node: Node) -> bool:
    """NFD saw an NVIDIA PCI device; the GPU stack never labelled the node."""
    return not _labelled(node) and any(node.labels.get(k) == "true" for k in NFD_NVIDIA_PCI)


def _is_gpu_node(node: Node, advertised: Mapping[str, int]) -> bool:
    """``advertised``: the node's GPU resources (``G.gpu_resources`` of its allocatable)."""
    return _labelled(node) or sum(advertised.values()) > 0 or _nfd_only(node)


def _group(node: Node, by: str | None) -> dict[str, str]:
    labels = node.labels
    product = labels.get(V.GPU_PRODUCT) or (UNLABELLED if _nfd_only(node) else "(no product label)")
    if by is not None:
        return {by: labels.get(by, "(none)"), "product": product}
    return {
        "product": product,
        "driver": G.driver_major(labels) or "-",
        "mig": labels.get(G.MIG_STRATEGY, "-") if labels.get(G.MIG_CAPABLE) == "true" else "-",
        "sharing": labels.get(G.SHARING_STRATEGY, "-"),
    }


def _gpus_and_mig(labels: Mapping[str, str]) -> tuple[int | None, int | None]:
    """``(physical GPUs or None if unknown, MIG devices or None if MIG is off)`` from GFD's labels."""
    count = G.whole_number(labels.get(V.GPU_COUNT))
    product = labels.get(V.GPU_PRODUCT, "")
    if labels.get(G.MIG_STRATEGY) == "single" and "-MIG-" in product:
        model, _, profile = product.partition("-MIG-")
        table = _PER_GPU_A30 if "A30" in model else _PER_GPU
        per = table.get(profile.split("g.", 1)[0]) if "g." in profile else None
        devices = count or 0
        gpus = devices // per if per and devices and devices % per == 0 else None  # MIG-INVALID: count 0, unknown
        return gpus, devices
    mixed = [G.whole_number(v) or 0 for v in G.mig_profile_counts(labels).values()]
    return count or 0, (sum(mixed) if mixed and G.mig_enabled(labels) else None)


def inventory(
    state: ClusterState, by: str | None = None, conditions: Mapping[str, str] | None = None
) -> list[InventoryRow]:
    """The rows, largest first (nodes, then GPUs), then by their group values; ``conditions``: the GPU
    health condition types (default: the health check's table)."""
    requested: dict[str, dict[str, int]] = {}
    for pod in state.pods:
        if pod.node_name and not pod.terminal and (asked := G.gpu_resources(pod.requests)):
            mine = requested.setdefault(pod.node_name, {})
            for resource, n in asked.items():
                mine[resource] = mine.get(resource, 0) + n
    rows: dict[tuple[str, ...], InventoryRow] = {}
    for node in state.nodes:
        advertised = G.gpu_resources(node.amounts)
        if not _is_gpu_node(node, advertised):
            continue
        group = _group(node, by)
        row = rows.setdefault(tuple(group.values()), InventoryRow(group))
        row.nodes += 1
        row.names.append(node.name)
        gpus, mig = _gpus_and_mig(node.labels)
        if gpus is None:
            row.unknown_gpus += 1
        else:
            row.gpus += gpus
        if mig is not None:
            row.mig_devices = (row.mig_devices or 0) + mig
        if node.amounts is None:
            row.unknown_allocatable += 1
        for resource, n in advertised.items():
            row.allocatable[resource] = row.allocatable.get(resource, 0) + n
        asked = requested.get(node.name, {})
        for resource, n in asked.items():
            row.requested[resource] = row.requested.get(resource, 0) + n
        use = node_use(node, sum(asked.values()), conditions)
        row.usable += use.usable
        row.unhealthy += use.unhealthy
        row.unschedulable += use.unschedulable
        row.usable_free += use.free
    return sorted(rows.values(), key=lambda r: (-r.nodes, -r.gpus, tuple(r.group.values())))


def totals(rows: Sequence[InventoryRow]) -> InventoryRow:
    """The sum of ``rows``: nodes, GPUs, MIG devices, devices allocatable and requested."""
    out = InventoryRow({})
    for r in rows:
        out.nodes += r.nodes
        out.gpus += r.gpus
        out.unknown_gpus += r.unknown_gpus
        out.unknown_allocatable += r.unknown_allocatable
        if r.mig_devices is not None:
            out.mig_devices = (out.mig_devices or 0) + r.mig_devices
        out.usable += r.usable
        out.unhealthy += r.unhealthy
        out.unschedulable += r.unschedulable
        out.usable_free += r.usable_free
        for k, v in r.allocatable.items():
            out.allocatable[k] = out.allocatable.get(k, 0) + v
        for k, v in r.requested.items():
            out.requested[k] = out.requested.get(k, 0) + v
    return out


def check_by(by: str | None) -> None:
    """``--by`` must be a label key (the API server's rules), or the rows would group on nothing."""
    if by is not None and by != BY_NAMESPACE and (errors := key_errors(by)):
        raise InputError("--by", f"{by!r} is not a label key: {'; '.join(errors)}")


def _wide_line(r: InventoryRow) -> str:
    parts = [f"{res} {r.allocatable.get(res, 0)}/{r.requested.get(res, 0)}" for res in sorted(r.allocatable)]
    extra = "allocatable/requested: " + (", ".join(parts) or "none")
    if r.unknown_allocatable:
        extra += f"; {r.unknown_allocatable} node(s) without status.allocatable"
    if r.unknown_gpus:
        extra += f"; {r.unknown_gpus} MIG node(s) whose GPUs the labels do not tell"
    if r.group.get("product") == UNLABELLED:
        extra += "; NFD found an NVIDIA GPU, the GPU stack never labelled: " + ", ".join(r.names[:5])
    return f"{r.line()} ({extra})"


def _cells(r: InventoryRow) -> dict[str, Cell]:
    return {
        **r.group,
        "nodes": r.nodes,
        "gpus": r.gpus,
        "gpus_unknown": r.unknown_gpus,
        "mig_devices": r.mig_devices,
        "allocatable": r.total_allocatable,
        "requested": r.total_requested,
        "free": r.free,
        "usable": r.usable,
        "unhealthy": r.unhealthy,
        "unschedulable": r.unschedulable,
        "unknown_allocatable": r.unknown_allocatable,
    }


def inventory_result(state: ClusterState, by: str | None = None, conditions: Mapping[str, str] | None = None) -> Result:
    """The ``gpus`` result: sections ``inventory`` (a row per kind of node, then the total line), ``totals``,
    ``deviceclasses`` (DRA devices per DeviceClass), ``extended`` (extended resources DeviceClasses back,
    counted through their devices on the nodes that do not advertise them) and ``unrequested`` (pods that see
    GPUs without requesting them: in use outside the scheduler's count); ``by="namespace"``: GPUs requested
    per namespace and Kueue queue instead (section ``namespaces``)."""
    if by == BY_NAMESPACE:
        rows_ns = namespace_rows(state)
        text = tuple(_namespace_line(r) for r in rows_ns) or ("no pod requests a GPU",)
        return Result("gpus", sections=(Section("namespaces", tuple(rows_ns), text),), ok="", fields={"by": by})
    rows = inventory(state, by, conditions)
    total = totals(rows)
    classes = dra_classes(state)
    tail = (total.line(),) if rows else () if classes else ("no GPU nodes",)
    sections: tuple[Section, ...] = (
        Section(
            "inventory",
            tuple(_cells(r) for r in rows),
            tuple(r.line() for r in rows) + tail,
            tuple(_wide_line(r) for r in rows) + tail,
        ),
        Section("totals", (_cells(total),) if rows else ()),
    )
    if classes:
        sections += (Section("deviceclasses", tuple(c.cells() for c in classes), tuple(c.line() for c in classes)),)
    if extended := extended_rows(state):
        sections += (Section("extended", tuple(e.cells() for e in extended), tuple(e.line() for e in extended)),)
    if unrequested := _unrequested(state):
        sections += unrequested
    sections += rooms_section(state)  # Karpenter's NodePools: the GPUs each may still add under its limits
    return Result("gpus", sections=sections, ok="", fields={"by": by})


def _unrequested(state: ClusterState) -> tuple[Section, ...]:
    """The ``unrequested`` section: pods that see GPUs they did not request (``checks/unrequested``), whose GPUs
    the rows above count free; none when no pod does."""
    rows: list[dict[str, Cell]] = []
    text: list[str] = []
    for u in uses(state):
        how = tuple(sorted({s.sight.way for s in u.seen}))
        rows.append({"node": u.pod.node_name, "pod": u.pod.ref, "sees": u.devices, "how": how})
        text.append(
            f"node={u.pod.node_name} pod={u.pod.ref} sees={u.devices} how={','.join(how)}: in use outside the "
            "scheduler's count"
        )
    return (Section("unrequested", tuple(rows), tuple(text)),) if rows else ()


def _namespace_line(row: Mapping[str, Cell]) -> str:
    queue = f" queue={row['queue']}" if row.get("queue") else ""
    return (
        f"namespace={row['namespace']}{queue} pods={row['pods']} requested={row['requested']} pending={row['pending']}"
    )
