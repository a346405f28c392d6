"""Kueue's objects (``kueue.x-k8s.io``) from API JSON, as typed records: the flavors, queues, topologies and
workloads that decide which nodes a queued GPU job's pods are sent to.

The fields are those of Kueue v0.17.0's API types (``apis/kueue/v1beta2/*_types.go``, the storage version,
and ``apis/kueue/v1beta1``, still served). Of the fields read here only the ClusterQueue's cohort differs:
``spec.cohortName`` in v1beta2, ``spec.cohort`` in v1beta1 (``clusterqueue_types.go``); each reader takes
either, so a snapshot of either version reads the same. A field of the wrong JSON type (which the API
server's schema refuses) is one :class:`~gpulabel.errors.SnapshotError` naming the object and the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpulabel.errors import SnapshotError
from gpulabel.k8s.nodeaffinity import PodRequirements, compile_pod_spec
from gpulabel.k8s.quantity import NANOS, decode_nanos
from gpulabel.k8s.resources import QuantityError, pod_requests, scheduler_amounts
from gpulabel.k8s.taints import Taint, Toleration
from gpulabel.model.fields import Fields
from gpulabel.model.redaction import redact_text

__all__ = [
    "KUEUE_GROUP",
    "KUEUE_KINDS",
    "KUEUE_VERSIONS",
    "ClusterQueue",
    "FlavorQuotas",
    "KueueState",
    "LocalQueue",
    "PodSet",
    "PodSetAssignment",
    "Quota",
    "ResourceFlavor",
    "ResourceGroup",
    "Topology",
    "Workload",
    "clusterqueue_from_json",
    "localqueue_from_json",
    "resourceflavor_from_json",
    "topology_from_json",
    "workload_from_json",
]

JSON = dict[str, Any]
KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_VERSIONS = ("v1beta2", "v1beta1")  # the storage version first, then the older one v0.17.0 still serves
KUEUE_KINDS = ("ResourceFlavor", "ClusterQueue", "LocalQueue", "Topology", "Workload")


@dataclass(frozen=True, slots=True)
class ResourceFlavor:
    """``spec.nodeLabels`` (injected into an admitted workload's pods as nodeSelector), ``spec.nodeTaints``
    (what an admitted workload must tolerate), ``spec.tolerations`` (injected) and ``spec.topologyName``."""

    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)
    node_taints: tuple[Taint, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    topology: str = ""


@dataclass(frozen=True, slots=True)
class Quota:
    """One resource of a flavor in a ClusterQueue: its nominal quota and limits as written (quantity text),
    with the nominal quota in whole units (rounded up, as the scheduler rounds a scalar resource)."""

    resource: str
    nominal: str
    units: int
    borrowing_limit: str | None = None
    lending_limit: str | None = None


@dataclass(frozen=True, slots=True)
class FlavorQuotas:
    flavor: str
    quotas: tuple[Quota, ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceGroup:
    covered: tuple[str, ...] = ()
    flavors: tuple[FlavorQuotas, ...] = ()


@dataclass(frozen=True, slots=True)
class ClusterQueue:
    name: str
    cohort: str = ""
    groups: tuple[ResourceGroup, ...] = ()
    # status.flavorsUsage: (flavor, resource) -> whole units in use by admitted workloads
    usage: Mapping[tuple[str, str], int] = field(default_factory=dict)

    def flavor_names(self) -> list[str]:
        """Every flavor its resource groups name, in their order."""
        return [fq.flavor for group in self.groups for fq in group.flavors]

    def quotas(self) -> Iterable[tuple[str, Quota]]:
        """Every ``(flavor, quota)`` of every resource group."""
        for group in self.groups:
            for fq in group.flavors:
                for q in fq.quotas:
                    yield fq.flavor, q


@dataclass(frozen=True, slots=True)
class LocalQueue:
    namespace: str
    name: str
    cluster_queue: str


@dataclass(frozen=True, slots=True)
class Topology:
    name: str
    levels: tuple[str, ...] = ()  # spec.levels[].nodeLabel, from the top level down


@dataclass(frozen=True, slots=True)
class PodSet:
    """``spec.podSets[]``: its pods' count, scheduling fields (compiled) and requests per pod."""

    name: str
    count: int
    requirements: PodRequirements
    requests: Mapping[str, int] = field(default_factory=dict)  # the scheduler's units (whole GPUs)


@dataclass(frozen=True, slots=True)
class PodSetAssignment:
    """``status.admission.podSetAssignments[]``: the flavor assigned per resource."""

    name: str
    flavors: Mapping[str, str] = field(default_factory=dict)
    count: int | None = None


@dataclass(frozen=True, slots=True)
class Workload:
    namespace: str
    name: str
    queue: str = ""  # spec.queueName: a LocalQueue of its namespace
    pod_sets: tuple[PodSet, ...] = ()
    conditions: Mapping[str, tuple[str, str, str]] = field(default_factory=dict)  # type -> (status, reason, message)
    cluster_queue: str = ""  # status.admission.clusterQueue
    assignments: tuple[PodSetAssignment, ...] = ()
    owners: tuple[tuple[str, str], ...] = ()  # (kind, uid) of each ownerReference: the Job its pods also name

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    def condition(self, kind: str) -> bool:
        return self.conditions.get(kind, ("",))[0] == "True"

    @property
    def admitted(self) -> bool:
        return self.condition("Admitted")


def _meta(obj: JSON, where: str) -> tuple[Fields, JSON]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise SnapshotError(where, f"{obj.get('kind')} has no metadata.name")
    kind = str(obj.get("kind") or "object").lower()
    return Fields(f"{where} ({kind} {meta['name']})" if where else f"{kind} {meta['name']}"), meta


def _taints(f: Fields, value: Any, path: str) -> tuple[Taint, ...]:
    return tuple(
        Taint(
            f.string(t.get("key"), f"{path}[{i}].key"),
            f.string(t.get("value"), f"{path}[{i}].value"),
            f.string(t.get("effect"), f"{path}[{i}].effect"),
        )
        for i, t in enumerate(f.items(value, path))
    )


def _tolerations(f: Fields, value: Any, path: str) -> tuple[Toleration, ...]:
    return tuple(
        Toleration(*(f.string(t.get(k), f"{path}[{i}].{k}") for k in ("key", "operator", "value", "effect")))
        for i, t in enumerate(f.items(value, path))
    )


def _units(f: Fields, value: Any, path: str) -> tuple[str, int]:
    """A quantity's text and its whole units, rounded up (an extended resource is whole)."""
    text = f.string(value, path) if not isinstance(value, int | float) or isinstance(value, bool) else str(value)
    try:
        nanos = decode_nanos(text) if text else 0
    except QuantityError as e:
        raise SnapshotError(f.here, f"{path}: {e}") from None
    return text or "0", -(-nanos // NANOS)


def resourceflavor_from_json(obj: JSON, where: str = "") -> ResourceFlavor:
    f, meta = _meta(obj, where)
    spec = f.mapping(obj.get("spec"), "spec")
    return ResourceFlavor(
        name=meta["name"],
        node_labels=f.str_map(spec.get("nodeLabels"), "spec.nodeLabels"),
        node_taints=_taints(f, spec.get("nodeTaints"), "spec.nodeTaints"),
        tolerations=_tolerations(f, spec.get("tolerations"), "spec.tolerations"),
        topology=f.string(spec.get("topologyName"), "spec.topologyName"),
    )


def _quota(f: Fields, q: JSON, path: str) -> Quota:
    nominal, units = _units(f, q.get("nominalQuota"), f"{path}.nominalQuota")
    limits = [
        None if q.get(k) is None else _units(f, q.get(k), f"{path}.{k}")[0] for k in ("borrowingLimit", "lendingLimit")
    ]
    return Quota(f.string(q.get("name"), f"{path}.name"), nominal, units, *limits)


def _groups(f: Fields, value: Any) -> tuple[ResourceGroup, ...]:
    groups = []
    for i, g in enumerate(f.items(value, "spec.resourceGroups")):
        gp = f"spec.resourceGroups[{i}]"
        flavors = []
        for j, fq in enumerate(f.items(g.get("flavors"), f"{gp}.flavors")):
            fp = f"{gp}.flavors[{j}]"
            quotas = tuple(
                _quota(f, q, f"{fp}.resources[{k}]")
                for k, q in enumerate(f.items(fq.get("resources"), f"{fp}.resources"))
            )
            flavors.append(FlavorQuotas(f.string(fq.get("name"), f"{fp}.name"), quotas))
        groups.append(
            ResourceGroup(tuple(f.strings(g.get("coveredResources"), f"{gp}.coveredResources")), tuple(flavors))
        )
    return tuple(groups)


def clusterqueue_from_json(obj: JSON, where: str = "") -> ClusterQueue:
    f, meta = _meta(obj, where)
    spec = f.mapping(obj.get("spec"), "spec")
    status = f.mapping(obj.get("status"), "status")
    usage: dict[tuple[str, str], int] = {}
    for i, fu in enumerate(f.items(status.get("flavorsUsage"), "status.flavorsUsage")):
        name = f.string(fu.get("name"), f"status.flavorsUsage[{i}].name")
        for j, r in enumerate(f.items(fu.get("resources"), f"status.flavorsUsage[{i}].resources")):
            rp = f"status.flavorsUsage[{i}].resources[{j}]"
            usage[(name, f.string(r.get("name"), f"{rp}.name"))] = _units(f, r.get("total"), f"{rp}.total")[1]
    # v1beta2 spec.cohortName, v1beta1 spec.cohort (Kueue v0.17.0 apis/kueue/*/clusterqueue_types.go)
    cohort = f.string(spec.get("cohortName"), "spec.cohortName") or f.string(spec.get("cohort"), "spec.cohort")
    return ClusterQueue(meta["name"], cohort, _groups(f, spec.get("resourceGroups")), usage)


def localqueue_from_json(obj: JSON, where: str = "") -> LocalQueue:
    f, meta = _meta(obj, where)
    spec = f.mapping(obj.get("spec"), "spec")
    namespace = f.string(meta.get("namespace"), "metadata.namespace") or "default"
    return LocalQueue(namespace, meta["name"], f.string(spec.get("clusterQueue"), "spec.clusterQueue"))


def topology_from_json(obj: JSON, where: str = "") -> Topology:
    f, meta = _meta(obj, where)
    spec = f.mapping(obj.get("spec"), "spec")
    levels = f.items(spec.get("levels"), "spec.levels")
    return Topology(
        meta["name"], tuple(f.string(lv.get("nodeLabel"), f"spec.levels[{i}].nodeLabel") for i, lv in enumerate(levels))
    )


def _pod_set(f: Fields, ps: JSON, path: str) -> PodSet:
    template = f.mapping(ps.get("template"), f"{path}.template")
    spec = f.mapping(template.get("spec"), f"{path}.template.spec")
    try:
        requests = scheduler_amounts(pod_requests(spec))
    except QuantityError as e:
        raise SnapshotError(f.here, f"{path}.template: {e}") from None
    count = f.integer(ps.get("count"), f"{path}.count")
    requirements = compile_pod_spec(spec, f"{path}.template.spec")
    return PodSet(
        f.string(ps.get("name"), f"{path}.name") or "main", 1 if count is None else count, requirements, requests
    )


def _admission(f: Fields, status: JSON) -> tuple[str, tuple[PodSetAssignment, ...]]:
    admission = f.mapping(status.get("admission"), "status.admission")
    out = []
    for i, a in enumerate(f.items(admission.get("podSetAssignments"), "status.admission.podSetAssignments")):
        ap = f"status.admission.podSetAssignments[{i}]"
        flavors = f.str_map(a.get("flavors"), f"{ap}.flavors")
        out.append(
            PodSetAssignment(f.string(a.get("name"), f"{ap}.name"), flavors, f.integer(a.get("count"), f"{ap}.count"))
        )
    return f.string(admission.get("clusterQueue"), "status.admission.clusterQueue"), tuple(out)


def workload_from_json(obj: JSON, where: str = "") -> Workload:
    f, meta = _meta(obj, where)
    spec = f.mapping(obj.get("spec"), "spec")
    status = f.mapping(obj.get("status"), "status")
    pod_sets = tuple(
        _pod_set(f, ps, f"spec.podSets[{i}]") for i, ps in enumerate(f.items(spec.get("podSets"), "spec.podSets"))
    )
    conditions = {}
    for i, c in enumerate(f.items(status.get("conditions"), "status.conditions")):
        cp = f"status.conditions[{i}]"
        conditions[f.string(c.get("type"), f"{cp}.type")] = (
            f.string(c.get("status"), f"{cp}.status"),
            f.string(c.get("reason"), f"{cp}.reason"),
            redact_text(f.string(c.get("message"), f"{cp}.message")),  # explain quotes it
        )
    cluster_queue, assignments = _admission(f, status)
    refs = f.items(meta.get("ownerReferences"), "metadata.ownerReferences")
    owners = tuple(
        (
            f.string(o.get("kind"), f"metadata.ownerReferences[{i}].kind"),
            f.string(o.get("uid"), f"metadata.ownerReferences[{i}].uid"),
        )
        for i, o in enumerate(refs)
    )
    return Workload(
        namespace=f.string(meta.get("namespace"), "metadata.namespace") or "default",
        name=meta["name"],
        queue=f.string(spec.get("queueName"), "spec.queueName"),
        pod_sets=pod_sets,
        conditions=conditions,
        cluster_queue=cluster_queue,
        assignments=assignments,
        owners=owners,
    )


@dataclass(frozen=True, slots=True)
class KueueState:
    """A cluster's Kueue objects, by name (LocalQueues and Workloads by ``namespace/name``)."""

    flavors: Mapping[str, ResourceFlavor] = field(default_factory=dict)
    cluster_queues: Mapping[str, ClusterQueue] = field(default_factory=dict)
    local_queues: Mapping[str, LocalQueue] = field(default_factory=dict)
    topologies: Mapping[str, Topology] = field(default_factory=dict)
    workloads: Mapping[str, Workload] = field(default_factory=dict)

    @classmethod
    def of_records(cls, records: Iterable[Any]) -> KueueState:
        """The state of records the kinds' readers made, in any order; each kind sorted by name."""
        by: dict[type, dict[str, Any]] = {k: {} for k in (ResourceFlavor, ClusterQueue, LocalQueue, Topology, Workload)}
        for r in records:
            key = f"{r.namespace}/{r.name}" if isinstance(r, LocalQueue | Workload) else r.name
            by[type(r)][key] = r

        def ordered(kind: type) -> dict[str, Any]:
            return dict(sorted(by[kind].items()))

        return cls(
            ordered(ResourceFlavor), ordered(ClusterQueue), ordered(LocalQueue), ordered(Topology), ordered(Workload)
        )
