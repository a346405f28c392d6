"""The cluster as gpulabel sees it: nodes, pods and DaemonSets, loaded once.

Objects are built from the API's JSON (a live LIST or a snapshot file) into
small immutable records. Only the fields the checks use are lifted out; pod
specs stay as the API's dicts, since the matcher parses them on its own terms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpulabel.errors import SnapshotError
from gpulabel.k8s.dra.objects import DRA_KINDS
from gpulabel.k8s.dra.plugin import DraState
from gpulabel.k8s.resources import NodeCapacity, QuantityError, node_amounts, pod_requests, scheduler_amounts
from gpulabel.k8s.taints import Taint

__all__ = [
    "SUPPORTED_KINDS",
    "ClusterState",
    "DaemonSet",
    "LabelWrite",
    "Node",
    "NodeCapacity",
    "Pod",
    "Taint",
]

SUPPORTED_KINDS = ("Node", "Pod", "DaemonSet", "ClusterPolicy", *DRA_KINDS)

JSON = dict[str, Any]

# What the checks read of a pod's spec; containers, volumes and the rest are
# dropped when a pod is loaded, which keeps 150,000 pods in memory affordable.
SCHEDULING_FIELDS = (
    "nodeName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "hostNetwork",
    "schedulingGates",
    "resourceClaims",
    "preemptionPolicy",
)


@dataclass(frozen=True, slots=True)
class LabelWrite:
    """Who last wrote a label key, from ``metadata.managedFields``."""

    manager: str
    operation: str
    time: str


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    conditions: Mapping[str, str] = field(default_factory=dict)
    managed_fields: tuple[JSON, ...] = ()
    # status.allocatable and status.capacity as the API gives them (quantity strings);
    # None when the object has no status.allocatable (a hand-written snapshot).
    allocatable: Mapping[str, str] | None = None
    capacity: Mapping[str, str] = field(default_factory=dict)
    # status.allocatable in the scheduler's units (cpu in millicores), parsed once
    amounts: Mapping[str, int] | None = None

    @property
    def ready(self) -> bool:
        return self.conditions.get("Ready") == "True"

    def label_time(self, key: str) -> str | None:
        """When ``key`` was last written (RFC 3339, from managedFields), or ``None`` if unknown."""
        write = self.label_writers().get(key)
        return write.time if write is not None and write.time else None

    def label_writers(self) -> dict[str, LabelWrite]:
        """The manager that last wrote each label key.

        When several managers share a key (server-side apply), the most recent
        entry wins; entries without a time sort first.
        """
        out: dict[str, LabelWrite] = {}
        entries = sorted(self.managed_fields, key=lambda e: str(e.get("time") or ""))
        for entry in entries:
            fields = entry.get("fieldsV1") or {}
            labels = (fields.get("f:metadata") or {}).get("f:labels") or {}
            write = LabelWrite(
                manager=str(entry.get("manager") or "unknown"),
                operation=str(entry.get("operation") or ""),
                time=str(entry.get("time") or ""),
            )
            for fkey in labels:
                if fkey.startswith("f:"):
                    out[fkey[2:]] = write
        return out


@dataclass(frozen=True, slots=True)
class Pod:
    namespace: str
    name: str
    node_name: str
    phase: str
    labels: Mapping[str, str]
    conditions: Mapping[str, JSON]
    owners: tuple[tuple[str, str], ...]  # (kind, uid) of each ownerReference
    spec: JSON  # the scheduling part of the pod's spec only (SCHEDULING_FIELDS)
    # status.resourceClaimStatuses: the claims the resourceclaim controller made from templates
    claim_statuses: tuple[JSON, ...] = ()
    # What the scheduler counts for the pod (k8s.resources.pod_requests: containers,
    # init containers, sidecars, pod-level resources and overhead), in its units.
    requests: Mapping[str, int] = field(default_factory=dict)
    priority: int = 0

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def ready(self) -> bool:
        return (self.conditions.get("Ready") or {}).get("status") == "True"

    def condition_message(self, kind: str) -> str:
        cond = self.conditions.get(kind) or {}
        return str(cond.get("message") or "")


@dataclass(frozen=True, slots=True)
class DaemonSet:
    namespace: str
    name: str
    uid: str
    template_spec: JSON
    status: Mapping[str, int]
    selector: JSON = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    def selector_string(self) -> str:
        """``spec.selector`` in the API's labelSelector query syntax."""
        parts = [f"{k}={v}" for k, v in sorted((self.selector.get("matchLabels") or {}).items())]
        for expr in self.selector.get("matchExpressions") or ():
            key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
            if op == "In":
                parts.append(f"{key} in ({','.join(values)})")
            elif op == "NotIn":
                parts.append(f"{key} notin ({','.join(values)})")
            elif op == "Exists":
                parts.append(key)
            elif op == "DoesNotExist":
                parts.append(f"!{key}")
        return ",".join(parts)


@dataclass(frozen=True, slots=True)
class ClusterState:
    """Everything one run looks at, loaded once and never changed."""

    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    daemonsets: tuple[DaemonSet, ...] = ()
    cluster_policies: tuple[JSON, ...] = ()
    source: str = ""
    kinds: frozenset[str] = frozenset()
    dra: DraState = field(default_factory=DraState)  # DeviceClasses, ResourceSlices, claims and templates

    def node(self, name: str) -> Node | None:
        for n in self.nodes:
            if n.name == name:
                return n
        return None

    def capacities(self) -> dict[str, NodeCapacity]:
        """Each node's allocatable and what its non-terminal pods request, as the scheduler's cache has it.

        Nodes without ``status.allocatable`` (hand-written snapshots) are left
        out: for them resources are unknown, not zero.
        """
        bound: dict[str, list[Pod]] = {}
        for pod in self.pods:
            if pod.node_name and not pod.terminal:
                bound.setdefault(pod.node_name, []).append(pod)
        out = {}
        for n in self.nodes:
            if n.amounts is not None:
                mine = bound.get(n.name, [])
                out[n.name] = NodeCapacity.of(n.amounts, [p.requests for p in mine], [p.priority for p in mine])
        return out

    @classmethod
    def from_objects(
        cls, objects: Iterable[tuple[str, JSON]], source: str = "", kinds: Iterable[str] = ()
    ) -> ClusterState:
        """Build from ``(where, object)`` pairs; ``where`` names the object in errors."""
        nodes: list[Node] = []
        pods: list[Pod] = []
        daemonsets: list[DaemonSet] = []
        policies: list[JSON] = []
        dra: list[tuple[str, JSON]] = []
        seen: set[str] = set(kinds)
        for where, obj in objects:
            kind = obj.get("kind")
            if kind in DRA_KINDS:
                dra.append((where, obj))
                seen.add(str(kind))
                continue
            if kind == "Node":
                nodes.append(node_from_json(obj, where))
            elif kind == "Pod":
                pods.append(pod_from_json(obj, where))
            elif kind == "DaemonSet":
                daemonsets.append(daemonset_from_json(obj, where))
            elif kind == "ClusterPolicy":
                policies.append(obj)
            else:
                continue
            seen.add(kind)
        nodes.sort(key=lambda n: n.name)
        return cls(
            tuple(nodes),
            tuple(pods),
            tuple(daemonsets),
            tuple(policies),
            source,
            frozenset(seen),
            DraState.from_objects(dra),
        )


def _meta(obj: JSON, where: str) -> JSON:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise SnapshotError(where, f"{obj.get('kind')} has no metadata")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise SnapshotError(where, f"{obj.get('kind')} has no metadata.name")
    return meta


def _str_map(value: Any, where: str, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SnapshotError(where, f"{what} is not a mapping")
    out = {}
    for k, v in value.items():
        if not isinstance(v, str):
            raise SnapshotError(where, f"{what}[{k}] is not a string: {v!r}")
        out[str(k)] = v
    return out


def _list(value: Any, where: str, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SnapshotError(where, f"{what} is not a list")
    return value


def node_from_json(obj: JSON, where: str = "") -> Node:
    meta = _meta(obj, where)
    name = meta["name"]
    here = f"{where} (node {name})" if where else f"node {name}"
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    taints = tuple(
        Taint(str(t.get("key", "")), str(t.get("value", "") or ""), str(t.get("effect", "")))
        for t in _list(spec.get("taints"), here, "spec.taints")
        if isinstance(t, dict)
    )
    conditions = {
        str(c.get("type")): str(c.get("status"))
        for c in _list(status.get("conditions"), here, "status.conditions")
        if isinstance(c, dict)
    }
    allocatable: dict[str, str] | None = None
    amounts: dict[str, int] | None = None
    if isinstance(status, dict) and status.get("allocatable") is not None:
        allocatable = _str_map(_quantities(status.get("allocatable")), here, "status.allocatable")
        try:
            amounts = node_amounts(allocatable)
        except QuantityError as err:
            raise SnapshotError(here, f"status.allocatable: {err}") from None
    return Node(
        name=name,
        labels=_str_map(meta.get("labels"), here, "metadata.labels"),
        annotations=_str_map(meta.get("annotations"), here, "metadata.annotations"),
        taints=taints,
        unschedulable=bool(spec.get("unschedulable", False)),
        conditions=conditions,
        managed_fields=tuple(
            m for m in _list(meta.get("managedFields"), here, "metadata.managedFields") if isinstance(m, dict)
        ),
        allocatable=allocatable,
        capacity=_str_map(_quantities(status.get("capacity")), here, "status.capacity"),
        amounts=amounts,
    )


def _quantities(value: Any) -> Any:
    # YAML snapshots may carry quantities as numbers (pods: 110); the API writes strings.
    if isinstance(value, dict):
        return {k: str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for k, v in value.items()}
    return value


_REQUESTS: dict[tuple[tuple[str, int], ...], dict[str, int]] = {}


def _shared(requests: dict[str, int]) -> dict[str, int]:
    """One dict per distinct request: replicas and daemon pods ask for the same, 150,000 pods hold a few hundred."""
    key = tuple(sorted(requests.items()))
    got = _REQUESTS.get(key)
    if got is None:
        if len(_REQUESTS) >= 4096:
            _REQUESTS.clear()
        got = _REQUESTS[key] = requests
    return got


def pod_from_json(obj: JSON, where: str = "") -> Pod:
    meta = _meta(obj, where)
    here = f"{where} (pod {meta['name']})" if where else f"pod {meta['name']}"
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    if not isinstance(spec, dict) or not isinstance(status, dict):
        raise SnapshotError(here, "spec and status must be mappings")
    conditions = {
        str(c.get("type")): c for c in _list(status.get("conditions"), here, "status.conditions") if isinstance(c, dict)
    }
    owners = tuple(
        (str(o.get("kind", "")), str(o.get("uid", "")))
        for o in _list(meta.get("ownerReferences"), here, "metadata.ownerReferences")
        if isinstance(o, dict)
    )
    node_name = str(spec.get("nodeName") or "")
    try:
        requests = _shared(scheduler_amounts(pod_requests(spec, status, bound=bool(node_name))))
    except QuantityError as err:
        raise SnapshotError(here, str(err)) from None
    priority = spec.get("priority")
    return Pod(
        namespace=str(meta.get("namespace") or "default"),
        name=meta["name"],
        node_name=node_name,
        phase=str(status.get("phase") or "Pending"),
        labels=_str_map(meta.get("labels"), here, "metadata.labels"),
        conditions=conditions,
        owners=owners,
        spec={k: spec[k] for k in SCHEDULING_FIELDS if k in spec},
        claim_statuses=tuple(
            c
            for c in _list(status.get("resourceClaimStatuses"), here, "status.resourceClaimStatuses")
            if isinstance(c, dict)
        ),
        requests=requests,
        priority=priority if isinstance(priority, int) and not isinstance(priority, bool) else 0,
    )


def daemonset_from_json(obj: JSON, where: str = "") -> DaemonSet:
    meta = _meta(obj, where)
    here = f"{where} (daemonset {meta['name']})" if where else f"daemonset {meta['name']}"
    spec = obj.get("spec") or {}
    template = (spec.get("template") or {}) if isinstance(spec, dict) else {}
    tspec = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(tspec, dict):
        raise SnapshotError(here, "spec.template.spec is missing")
    status = obj.get("status") or {}
    return DaemonSet(
        namespace=str(meta.get("namespace") or "default"),
        name=meta["name"],
        uid=str(meta.get("uid") or ""),
        template_spec=tspec,
        status={k: v for k, v in status.items() if isinstance(v, int)} if isinstance(status, dict) else {},
        selector=spec.get("selector") or {} if isinstance(spec, dict) else {},
    )
