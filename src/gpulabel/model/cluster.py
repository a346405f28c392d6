"""The cluster as gpulabel sees it: nodes, pods and DaemonSets, loaded once, and the table of kinds.

Objects are built from the API's JSON (a live LIST or a snapshot file) into small immutable records
(:mod:`gpulabel.model.records`, by :mod:`gpulabel.model.readers`); the state holds them by kind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gpulabel.k8s.clusterautoscaler import StatusConfigMap
from gpulabel.k8s.dra.plugin import DraState
from gpulabel.k8s.karpenter.objects import KarpenterState
from gpulabel.k8s.nfd.objects import NfdState, nodefeature_from_json, nodefeaturerule_from_json
from gpulabel.k8s.resources import NodeCapacity
from gpulabel.k8s.taints import Taint
from gpulabel.model.autoscalerreads import nodeclaim_read, nodepool_read, status_configmap_read
from gpulabel.model.evidence import EventNote, event_from_json
from gpulabel.model.kueue import (
    KUEUE_GROUP,
    KUEUE_VERSIONS,
    KueueState,
    clusterqueue_from_json,
    localqueue_from_json,
    resourceflavor_from_json,
    topology_from_json,
    workload_from_json,
)
from gpulabel.model.nvidiacrs import GpuCluster, NvidiaDriver, gpu_cluster_from_json, nvidia_driver_from_json
from gpulabel.model.readers import (
    cluster_policy_from_json,
    daemonset_from_json,
    node_from_json,
    pod_from_json,
    runtime_class_from_json,
)
from gpulabel.model.records import JSON, DaemonSet, LabelWrite, Node, Pod, RuntimeClass
from gpulabel.model.redaction import redact_text

__all__ = [
    "AUTOSCALER_EVENTS",
    "AUTOSCALER_KINDS",
    "KIND",
    "KINDS",
    "SUPPORTED_KINDS",
    "ClusterState",
    "DaemonSet",
    "Kind",
    "LabelWrite",
    "Node",
    "NodeCapacity",
    "Pod",
    "RuntimeClass",
    "Taint",
    "daemonset_from_json",
    "node_from_json",
    "pod_from_json",
]


@dataclass(frozen=True, slots=True)
class ClusterState:
    """Everything one run looks at, loaded once and never changed."""

    nodes: Sequence[Node] = ()
    pods: Sequence[Pod] = ()
    daemonsets: tuple[DaemonSet, ...] = ()
    cluster_policies: tuple[JSON, ...] = ()
    runtime_classes: tuple[RuntimeClass, ...] = ()  # node.k8s.io/v1 RuntimeClasses
    nvidia_drivers: tuple[NvidiaDriver, ...] = ()  # the GPU Operator's NVIDIADrivers (nvidia.com/v1alpha1)
    gpu_clusters: tuple[GpuCluster, ...] = ()  # the GPU Operator's GPUCluster (nvidia.com/v1alpha1, the DRA stack)
    # core/v1 Warning Events (controllers' FailedCreate, the kubelet's), the autoscalers' pod Events (AUTOSCALER_EVENTS)
    events: tuple[EventNote, ...] = ()
    source: str = ""
    kinds: frozenset[str] = frozenset()
    # -l chose the nodes: a node another object names (a ResourceSlice's nodeName) may be one it left out
    nodes_selected: bool = False
    dra: DraState = field(default_factory=DraState)  # DeviceClasses, ResourceSlices, claims and templates
    nfd: NfdState = field(default_factory=NfdState)  # NodeFeatures and NodeFeatureRules
    kueue: KueueState = field(default_factory=KueueState)  # Kueue's flavors, queues, topologies and workloads
    karpenter: KarpenterState = field(default_factory=KarpenterState)  # NodePools and NodeClaims
    autoscaler: tuple[StatusConfigMap, ...] = ()  # Cluster Autoscaler's status ConfigMap (cluster-autoscaler-status)

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
        records: list[tuple[str, Any]] = []
        seen: set[str] = set(kinds)
        readers = {k.kind: k.reader() for k in KINDS}
        for where, obj in objects:
            kind = KIND.get(str(obj.get("kind")))
            if kind is not None:
                records.append((kind.kind, readers[kind.kind](obj, where)))
                seen.add(kind.kind)
        return cls.of_records(records, source, seen)

    @classmethod
    def of_records(cls, records: Iterable[tuple[str, Any]], source: str, kinds: Iterable[str]) -> ClusterState:
        """The state of ``(kind, record)`` pairs (what each kind's reader made), each kept in its kind's field."""
        fields: dict[str, list[Any]] = {k.field: [] for k in KINDS}
        for kind, record in records:
            fields[KIND[kind].field].append(record)
        # a table row read in part of an API kind (the autoscalers' Events) is that kind, as a snapshot holds it
        return cls(
            nodes=tuple(sorted(fields["nodes"], key=lambda n: n.name)),
            pods=tuple(fields["pods"]),
            daemonsets=tuple(fields["daemonsets"]),
            cluster_policies=tuple(fields["cluster_policies"]),
            runtime_classes=tuple(fields["runtime_classes"]),
            nvidia_drivers=tuple(sorted(fields["nvidia_drivers"], key=lambda d: d.name)),
            gpu_clusters=tuple(sorted(fields["gpu_clusters"], key=lambda g: g.name)),
            events=tuple(fields["events"]),
            source=source,
            kinds=frozenset(KIND[k].object_kind if k in KIND else k for k in kinds),
            dra=DraState.from_objects(fields["dra"]),
            nfd=NfdState.of_records(fields["nfd"]),
            kueue=KueueState.of_records(fields["kueue"]),
            karpenter=KarpenterState.of_records(fields["karpenter"]),
            autoscaler=tuple(fields["autoscaler"]),
        )


def _kept(obj: JSON, where: str) -> tuple[str, JSON]:
    """DRA objects are kept as read, with where they came from, and built into one DraState."""
    return where, obj


def _claim_kept(obj: JSON, where: str) -> tuple[str, JSON]:
    """A ResourceClaim kept as read but for its drivers' device condition messages, redacted
    (``status.devices[].conditions[].message``: the health check quotes them); the object read is not changed, and
    is kept itself when there is nothing to redact."""
    status = obj.get("status")
    devices = status.get("devices") if isinstance(status, dict) else None
    if not devices or type(devices) is not list:
        return where, obj
    redacted = [_redacted_device(d) for d in devices]
    if all(new is old for new, old in zip(redacted, devices, strict=True)):
        return where, obj
    return where, {**obj, "status": {**status, "devices": redacted}}  # type: ignore[dict-item]


def _redacted_device(device: Any) -> Any:
    """One ``status.devices[]`` entry with its conditions' messages redacted; itself when none changes."""
    conditions = device.get("conditions") if isinstance(device, dict) else None
    if type(conditions) is not list:
        return device
    said = [
        {**c, "message": shown}
        if isinstance(c, dict) and isinstance(m := c.get("message"), str) and (shown := redact_text(m)) != m
        else c
        for c in conditions
    ]
    return (
        device if all(new is old for new, old in zip(said, conditions, strict=True)) else {**device, "conditions": said}
    )


def _event(obj: JSON, where: str) -> EventNote:
    """A Warning Event as what ``kubectl describe`` lists: the object it is about, its reason and message."""
    return event_from_json(obj)


# The autoscalers' pod Events, each a LIST of its own: the reason (and type) by field selector
# (pkg/registry/core/event/strategy.go ToSelectableFields: reason, type, source, involvedObject.kind), disjoint from
# the Warning row. Karpenter (sigs.k8s.io/karpenter v1.14.1 pkg/controllers/provisioning/scheduling/events.go):
# Normal Nominated, Warning FailedScheduling, component karpenter (operator.go GetEventRecorderFor(AppName)).
# Cluster Autoscaler (cluster-autoscaler-1.36.1 processors/status/eventing_scale_up_processor.go): Normal
# TriggeredScaleUp and NotTriggerScaleUp (its component, cluster-autoscaler, is not selected on: a managed
# autoscaler may name itself otherwise; the message is what is read).
AUTOSCALER_EVENTS: Mapping[str, str] = {
    "Nominated": "type=Normal,reason=Nominated,involvedObject.kind=Pod",
    "FailedScheduling": "type=Warning,source=karpenter,reason=FailedScheduling,involvedObject.kind=Pod",
    "TriggeredScaleUp": "type=Normal,reason=TriggeredScaleUp,involvedObject.kind=Pod",
    "NotTriggerScaleUp": "type=Normal,reason=NotTriggerScaleUp,involvedObject.kind=Pod",
}
AUTOSCALER_KINDS = (*(f"Event/{reason}" for reason in AUTOSCALER_EVENTS), "ConfigMap")

_ALWAYS_SERVED = ("", "apps")  # the core group and apps/v1


@dataclass(frozen=True, slots=True)
class Kind:
    """A kind gpulabel reads: where the API serves it, how an object becomes a record, where the state keeps it."""

    kind: str
    group: str  # "" for the core group
    version: str
    resource: str  # the plural: in API paths and RBAC rules
    namespaced: bool
    read: Callable[[JSON, str], Any]  # (object, where it came from) -> the record
    field: str  # the ClusterState field holding the records
    # a reader made afresh for each load, for kinds whose records of one load share equal parts
    new_reader: Callable[[], Callable[[JSON, str], Any]] | None = None
    # older versions the server may serve the kind at instead (a CRD's), in the order they are asked for
    older: tuple[str, ...] = ()
    # a kind read in part: the LISTs' and watches' fieldSelector (Events: only the Warnings)
    field_selector: str | None = None
    # the API kind where the row is one part of it (the autoscalers' Events): ``kind`` is then the row's own name
    api_kind: str = ""

    @property
    def object_kind(self) -> str:
        """The ``kind`` of its objects (in a snapshot, a LIST's items): the API kind."""
        return self.api_kind or self.kind

    def reader(self) -> Callable[[JSON, str], Any]:
        """The reader for one load (snapshot files or LISTs): ``new_reader()`` where given, else ``read``."""
        return self.new_reader() if self.new_reader is not None else self.read

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def served_at(self, version: str) -> str:
        """The path that LISTs every object of the kind at ``version`` (the table's or one of ``older``)."""
        return f"/apis/{self.group}/{version}/{self.resource}" if self.group else f"/api/{version}/{self.resource}"

    @property
    def versions(self) -> tuple[str, ...]:
        """The versions to ask discovery about, the table's first."""
        return (self.version, *self.older)

    @property
    def probe(self) -> tuple[str, str] | None:
        """What to ask the server's discovery before LISTing the kind, ``(group/version, resource)``: a CRD's or an
        API group's kind is LISTed only where it is served; ``None`` for the groups every API server serves."""
        return None if self.group in _ALWAYS_SERVED else (self.group_version, self.resource)

    @property
    def path(self) -> str:
        """The path that LISTs every object of the kind (all namespaces)."""
        return self.served_at(self.version)


def _kueue_kind(kind: str, resource: str, namespaced: bool, read: Callable[[JSON, str], Any]) -> Kind:
    """A Kueue kind: LISTed at v1beta2, or at v1beta1 where only that is served (Kueue before v0.15)."""
    version, *older = KUEUE_VERSIONS
    return Kind(kind, KUEUE_GROUP, version, resource, namespaced, read, "kueue", older=tuple(older))


# The one table of kinds: snapshot reading, live LISTs, RBAC rules and SUPPORTED_KINDS come from it.
KINDS: tuple[Kind, ...] = (
    Kind(
        kind="Node",
        group="",
        version="v1",
        resource="nodes",
        namespaced=False,
        read=node_from_json,
        field="nodes",
        # the nodes of one load share their equal allocatable and capacity (a node pool has one)
        new_reader=lambda: partial(node_from_json, shared={}),
    ),
    Kind(
        kind="Pod",
        group="",
        version="v1",
        resource="pods",
        namespaced=True,
        read=pod_from_json,
        field="pods",
        # the pods of one load share their equal requests dicts (one table per load, not per process)
        new_reader=lambda: partial(pod_from_json, shared={}),
    ),
    Kind(
        kind="DaemonSet",
        group="apps",
        version="v1",
        resource="daemonsets",
        namespaced=True,
        read=daemonset_from_json,
        field="daemonsets",
    ),
    Kind(
        kind="ClusterPolicy",
        group="nvidia.com",
        version="v1",
        resource="clusterpolicies",
        namespaced=False,
        read=cluster_policy_from_json,
        field="cluster_policies",
    ),
    # the operator's newer CRs (v1alpha1 since v23.9 and v26.7.0): LISTed where their CRDs are served
    Kind(
        kind="NVIDIADriver",
        group="nvidia.com",
        version="v1alpha1",
        resource="nvidiadrivers",
        namespaced=False,
        read=nvidia_driver_from_json,
        field="nvidia_drivers",
    ),
    Kind(
        kind="GPUCluster",
        group="nvidia.com",
        version="v1alpha1",
        resource="gpuclusters",
        namespaced=False,
        read=gpu_cluster_from_json,
        field="gpu_clusters",
    ),
    Kind(
        kind="RuntimeClass",
        group="node.k8s.io",
        version="v1",
        resource="runtimeclasses",
        namespaced=False,
        read=runtime_class_from_json,
        field="runtime_classes",
    ),
    # Warning Events only (workload controllers' FailedCreate, the kubelet's FailedCreatePodSandBox): the runtime
    # check joins them to the pods and nodes; Normal Events are not LISTed
    Kind(
        kind="Event",
        group="",
        version="v1",
        resource="events",
        namespaced=True,
        read=_event,
        field="events",
        # Karpenter's Warnings are its own row's (Event/FailedScheduling): the LISTs stay apart
        field_selector="type=Warning,source!=karpenter",
    ),
    # the autoscalers' pod Events, each reason one LIST (a field selector matches one value): the autoscaler's
    # verdict of a Pending pod (checks/pending/autoscale.py). A snapshot holds them as Events.
    *(
        Kind(
            kind=f"Event/{reason}",
            group="",
            version="v1",
            resource="events",
            namespaced=True,
            read=_event,
            field="events",
            field_selector=selector,
            api_kind="Event",
        )
        for reason, selector in AUTOSCALER_EVENTS.items()
    ),
    Kind(
        kind="DeviceClass",
        group="resource.k8s.io",
        version="v1",
        resource="deviceclasses",
        namespaced=False,
        read=_kept,
        field="dra",
    ),
    Kind(
        kind="ResourceSlice",
        group="resource.k8s.io",
        version="v1",
        resource="resourceslices",
        namespaced=False,
        read=_kept,
        field="dra",
    ),
    Kind(
        kind="ResourceClaim",
        group="resource.k8s.io",
        version="v1",
        resource="resourceclaims",
        namespaced=True,
        read=_claim_kept,
        field="dra",
    ),
    Kind(
        kind="ResourceClaimTemplate",
        group="resource.k8s.io",
        version="v1",
        resource="resourceclaimtemplates",
        namespaced=True,
        read=_kept,
        field="dra",
    ),
    Kind(
        kind="DeviceTaintRule",
        group="resource.k8s.io",
        version="v1",
        resource="devicetaintrules",
        namespaced=False,
        read=_kept,
        field="dra",
    ),
    Kind(
        kind="NodeFeature",
        group="nfd.k8s-sigs.io",
        version="v1alpha1",
        resource="nodefeatures",
        namespaced=True,
        read=nodefeature_from_json,
        field="nfd",
        # equal feature sets of a node pool become one object within a load
        new_reader=lambda: partial(nodefeature_from_json, intern={}),
    ),
    Kind(
        kind="NodeFeatureRule",
        group="nfd.k8s-sigs.io",
        version="v1alpha1",
        resource="nodefeaturerules",
        namespaced=False,
        read=nodefeaturerule_from_json,
        field="nfd",
    ),
    _kueue_kind("ResourceFlavor", "resourceflavors", False, resourceflavor_from_json),
    _kueue_kind("ClusterQueue", "clusterqueues", False, clusterqueue_from_json),
    _kueue_kind("LocalQueue", "localqueues", True, localqueue_from_json),
    _kueue_kind("Topology", "topologies", False, topology_from_json),
    _kueue_kind("Workload", "workloads", True, workload_from_json),
    # Karpenter's (sigs.k8s.io/karpenter v1.14.1, pkg/apis/v1): LISTed where its CRDs are served
    Kind(
        kind="NodePool",
        group="karpenter.sh",
        version="v1",
        resource="nodepools",
        namespaced=False,
        read=nodepool_read,
        field="karpenter",
    ),
    Kind(
        kind="NodeClaim",
        group="karpenter.sh",
        version="v1",
        resource="nodeclaims",
        namespaced=False,
        read=nodeclaim_read,
        field="karpenter",
    ),
    # Cluster Autoscaler's status (kubernetes/autoscaler cluster-autoscaler-1.36.1 clusterstate/utils/status.go):
    # the one ConfigMap, by name in any namespace (its --namespace); RBAC grants that name alone (resourceNames:
    # a LIST whose fieldSelector names metadata.name is authorized as that name, k8s.io/apiserver
    # pkg/endpoints/request/requestinfo.go)
    Kind(
        kind="ConfigMap",
        group="",
        version="v1",
        resource="configmaps",
        namespaced=True,
        read=status_configmap_read,
        field="autoscaler",
        field_selector="metadata.name=cluster-autoscaler-status",
    ),
)
KIND: Mapping[str, Kind] = {k.kind: k for k in KINDS}
# the API kinds a snapshot may hold (a row read in part of one, as the autoscalers' Events, is that kind)
SUPPORTED_KINDS = tuple(dict.fromkeys(k.object_kind for k in KINDS))
