"""Karpenter's NodePools and NodeClaims (``karpenter.sh/v1``) from API JSON, as typed records.

The fields follow ``pkg/apis/v1/nodepool.go``, ``nodepool_status.go``, ``nodeclaim.go`` and
``nodeclaim_status.go`` of sigs.k8s.io/karpenter v1.14.1: a NodePool's ``spec.template`` (its
``metadata.labels``, ``spec.requirements`` with ``minValues``, ``taints``, ``startupTaints``,
``nodeClassRef``), ``spec.limits``, ``spec.weight`` and ``status.resources``/``nodes``/``conditions``; a
NodeClaim's requirements, taints, requested resources and ``status`` (``nodeName``, ``providerID``,
capacity, allocatable, the ``Launched``/``Registered``/``Initialized`` conditions). Quantities are kept as
the API wrote them. A field of the wrong JSON type (which the CRD's schema refuses) raises
:class:`~gpulabel.errors.SnapshotError` naming the object and the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpulabel.errors import SnapshotError
from gpulabel.k8s.jsonfields import Fields
from gpulabel.k8s.taints import Taint

__all__ = [
    "INITIALIZED_LABEL",
    "KARPENTER_KINDS",
    "NODEPOOL_LABEL",
    "REGISTERED_LABEL",
    "Condition",
    "KarpenterState",
    "NodeClaim",
    "NodePool",
    "Requirement",
    "nodeclaim_from_json",
    "nodepool_from_json",
]

KARPENTER_KINDS = ("NodePool", "NodeClaim")
# pkg/apis/v1/labels.go (v1.14.1): the labels Karpenter puts on the nodes it makes
NODEPOOL_LABEL = "karpenter.sh/nodepool"
REGISTERED_LABEL = "karpenter.sh/registered"
INITIALIZED_LABEL = "karpenter.sh/initialized"
JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Requirement:
    """``NodeSelectorRequirementWithMinValues``: a node selector requirement (operators ``In``, ``NotIn``,
    ``Exists``, ``DoesNotExist``, ``Gt``, ``Lt``, ``Gte``, ``Lte``) with an optional ``minValues``."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    min_values: int | None = None


@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    since: str = ""  # lastTransitionTime, as written


@dataclass(frozen=True, slots=True)
class NodePool:
    name: str
    labels: Mapping[str, str]  # spec.template.metadata.labels
    requirements: tuple[Requirement, ...]
    taints: tuple[Taint, ...] = ()
    startup_taints: tuple[Taint, ...] = ()
    limits: Mapping[str, str] = field(default_factory=dict)  # spec.limits: resource -> quantity
    weight: int | None = None
    node_class: tuple[str, str, str] = ("", "", "")  # nodeClassRef: group, kind, name
    resources: Mapping[str, str] = field(default_factory=dict)  # status.resources: what its nodes have now
    nodes: int | None = None  # status.nodes
    conditions: tuple[Condition, ...] = ()
    replicas: int | None = None  # spec.replicas: a static NodePool (its nodes are not made for pods)
    deleting: bool = False  # metadata.deletionTimestamp set

    @property
    def ready(self) -> bool:
        """Its ``Ready`` condition is True: ``Provisioner.NewScheduler`` ignores any other NodePool."""
        return any(c.type == "Ready" and c.status == "True" for c in self.conditions)


@dataclass(frozen=True, slots=True)
class NodeClaim:
    name: str
    nodepool: str  # the karpenter.sh/nodepool label ("" when absent)
    labels: Mapping[str, str]
    requirements: tuple[Requirement, ...]
    taints: tuple[Taint, ...] = ()
    startup_taints: tuple[Taint, ...] = ()
    requests: Mapping[str, str] = field(default_factory=dict)  # spec.resources.requests
    node_name: str = ""  # status.nodeName: the node it became
    provider_id: str = ""
    capacity: Mapping[str, str] = field(default_factory=dict)
    allocatable: Mapping[str, str] = field(default_factory=dict)
    conditions: tuple[Condition, ...] = ()
    created: str = ""  # metadata.creationTimestamp, as written

    def condition(self, kind: str) -> Condition | None:
        return next((c for c in self.conditions if c.type == kind), None)


class _F(Fields):
    """Typed reads of one object's fields (:class:`~gpulabel.k8s.jsonfields.Fields`) and of Karpenter's shapes."""

    def quantities(self, v: Any, path: str) -> dict[str, str]:
        """A ResourceList: quantities are strings or (in hand-written objects) numbers, kept as text."""
        out = {}
        for k, x in self.mapping(v, path).items():
            if isinstance(x, bool) or not isinstance(x, (str, int, float)):
                raise self.fail(f"{path}.{k}", "a quantity")
            out[k] = str(x)
        return out

    def requirements(self, v: Any, path: str) -> tuple[Requirement, ...]:
        out = []
        for i, raw in enumerate(self.items(v, path)):
            p = f"{path}[{i}]"
            r = self.mapping(raw, p)
            values = tuple(self.text(x, f"{p}.values[{j}]") for j, x in enumerate(self.items(r.get("values"), p)))
            out.append(
                Requirement(
                    self.text(r.get("key"), f"{p}.key"),
                    self.text(r.get("operator"), f"{p}.operator"),
                    values,
                    self.integer(r.get("minValues"), f"{p}.minValues"),
                )
            )
        return tuple(out)

    def taints(self, v: Any, path: str) -> tuple[Taint, ...]:
        out = []
        for i, raw in enumerate(self.items(v, path)):
            t = self.mapping(raw, f"{path}[{i}]")
            out.append(
                Taint(
                    self.text(t.get("key"), f"{path}[{i}].key"),
                    self.text(t.get("value"), f"{path}[{i}].value"),
                    self.text(t.get("effect"), f"{path}[{i}].effect"),
                )
            )
        return tuple(out)

    def conditions(self, v: Any, path: str) -> tuple[Condition, ...]:
        out = []
        for i, raw in enumerate(self.items(v, path)):
            p = f"{path}[{i}]"
            c = self.mapping(raw, p)
            out.append(
                Condition(
                    self.text(c.get("type"), f"{p}.type"),
                    self.text(c.get("status"), f"{p}.status"),
                    self.text(c.get("reason"), f"{p}.reason"),
                    self.text(c.get("message"), f"{p}.message"),
                    self.text(c.get("lastTransitionTime"), f"{p}.lastTransitionTime"),
                )
            )
        return tuple(out)


def _meta(obj: JSON, where: str) -> tuple[JSON, _F]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise SnapshotError(where, f"{obj.get('kind')} has no metadata.name")
    what = f"{str(obj.get('kind') or '').lower()} {meta['name']}"
    return meta, _F(f"{where} ({what})" if where else what)


def _node_class(f: _F, ref: JSON) -> tuple[str, str, str]:
    path = "spec.template.spec.nodeClassRef"
    return (
        f.text(ref.get("group"), f"{path}.group"),
        f.text(ref.get("kind"), f"{path}.kind"),
        f.text(ref.get("name"), f"{path}.name"),
    )


def _claim_spec(f: _F, spec: JSON, path: str) -> tuple[tuple[Requirement, ...], tuple[Taint, ...], tuple[Taint, ...]]:
    """A NodeClaim's spec, or a NodePool's template of one: requirements, taints, startupTaints."""
    return (
        f.requirements(spec.get("requirements"), f"{path}.requirements"),
        f.taints(spec.get("taints"), f"{path}.taints"),
        f.taints(spec.get("startupTaints"), f"{path}.startupTaints"),
    )


def nodepool_from_json(obj: JSON, where: str = "") -> NodePool:
    """One NodePool as the API returns it."""
    meta, f = _meta(obj, where)
    spec = f.mapping(obj.get("spec"), "spec")
    template = f.mapping(spec.get("template"), "spec.template")
    tspec = f.mapping(template.get("spec"), "spec.template.spec")
    tmeta = f.mapping(template.get("metadata"), "spec.template.metadata")
    ref = f.mapping(tspec.get("nodeClassRef"), "spec.template.spec.nodeClassRef")
    status = f.mapping(obj.get("status"), "status")
    requirements, taints, startup_taints = _claim_spec(f, tspec, "spec.template.spec")
    return NodePool(
        name=meta["name"],
        labels=f.strmap(tmeta.get("labels"), "spec.template.metadata.labels"),
        requirements=requirements,
        taints=taints,
        startup_taints=startup_taints,
        limits=f.quantities(spec.get("limits"), "spec.limits"),
        weight=f.integer(spec.get("weight"), "spec.weight"),
        node_class=_node_class(f, ref),
        resources=f.quantities(status.get("resources"), "status.resources"),
        nodes=f.integer(status.get("nodes"), "status.nodes"),
        conditions=f.conditions(status.get("conditions"), "status.conditions"),
        replicas=f.integer(spec.get("replicas"), "spec.replicas"),
        deleting=meta.get("deletionTimestamp") is not None,
    )


def nodeclaim_from_json(obj: JSON, where: str = "") -> NodeClaim:
    """One NodeClaim as the API returns it."""
    meta, f = _meta(obj, where)
    spec = f.mapping(obj.get("spec"), "spec")
    status = f.mapping(obj.get("status"), "status")
    labels = f.strmap(meta.get("labels"), "metadata.labels")
    requirements, taints, startup_taints = _claim_spec(f, spec, "spec")
    return NodeClaim(
        name=meta["name"],
        nodepool=labels.get(NODEPOOL_LABEL, ""),
        labels=labels,
        requirements=requirements,
        taints=taints,
        startup_taints=startup_taints,
        requests=f.quantities(
            f.mapping(spec.get("resources"), "spec.resources").get("requests"), "spec.resources.requests"
        ),
        node_name=f.text(status.get("nodeName"), "status.nodeName"),
        provider_id=f.text(status.get("providerID"), "status.providerID"),
        capacity=f.quantities(status.get("capacity"), "status.capacity"),
        allocatable=f.quantities(status.get("allocatable"), "status.allocatable"),
        conditions=f.conditions(status.get("conditions"), "status.conditions"),
        created=f.text(meta.get("creationTimestamp"), "metadata.creationTimestamp"),
    )


@dataclass(frozen=True, slots=True)
class KarpenterState:
    """A cluster's NodePools and NodeClaims (none where Karpenter's CRDs are not served)."""

    nodepools: tuple[NodePool, ...] = ()
    nodeclaims: tuple[NodeClaim, ...] = ()

    def nodepool(self, name: str) -> NodePool | None:
        return next((p for p in self.nodepools if p.name == name), None)

    @classmethod
    def of_records(cls, records: Iterable[NodePool | NodeClaim]) -> KarpenterState:
        """The state of records the kinds' readers made (NodePools and NodeClaims, in any order), by name."""
        pools: list[NodePool] = []
        claims: list[NodeClaim] = []
        for r in records:
            if isinstance(r, NodePool):
                pools.append(r)
            else:
                claims.append(r)
        return cls(tuple(sorted(pools, key=lambda p: p.name)), tuple(sorted(claims, key=lambda c: c.name)))
