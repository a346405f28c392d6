"""NodeFeature and NodeFeatureRule objects (nfd.k8s-sigs.io/v1alpha1) from API JSON, as typed records.

Each reader takes the object as the API returns it (a LIST item or a snapshot
document) and a ``where`` naming it in errors; a field of the wrong JSON type
(which the API server's schema refuses) raises
:class:`~gpulabel.errors.SnapshotError` naming the object and the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from gpulabel.errors import SnapshotError
from gpulabel.k8s.jsonfields import Fields
from gpulabel.k8s.nfd.expression import Expression
from gpulabel.k8s.taints import Taint

__all__ = [
    "NFD_KINDS",
    "NODE_NAME_LABEL",
    "Features",
    "NfdState",
    "NodeFeature",
    "NodeFeatureRule",
    "Rule",
    "Term",
    "nodefeature_from_json",
    "nodefeaturerule_from_json",
]

NFD_KINDS = ("NodeFeature", "NodeFeatureRule")
NODE_NAME_LABEL = "nfd.node.kubernetes.io/node-name"
JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Features:
    """A node's raw features: ``None`` elements are a feature whose ``elements`` is null (Go's nil map)."""

    flags: Mapping[str, frozenset[str] | None] = field(default_factory=dict)
    attributes: Mapping[str, Mapping[str, str] | None] = field(default_factory=dict)
    instances: Mapping[str, tuple[Mapping[str, str], ...]] = field(default_factory=dict)

    def has(self, name: str) -> bool:
        return name in self.flags or name in self.attributes or name in self.instances


@dataclass(frozen=True, slots=True)
class NodeFeature:
    namespace: str
    name: str
    node: str  # the nfd.node.kubernetes.io/node-name label; "" when absent (nfd-master ignores it)
    features: Features
    labels: Mapping[str, str]

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class Term:
    feature: str
    expressions: tuple[tuple[str, Expression], ...] | None  # None: no matchExpressions at all
    match_name: Expression | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    labels_template: str = ""
    annotations: Mapping[str, str] = field(default_factory=dict)
    vars: Mapping[str, str] = field(default_factory=dict)
    vars_template: str = ""
    taints: tuple[Taint, ...] = ()
    extended_resources: Mapping[str, str] = field(default_factory=dict)
    match_features: tuple[Term, ...] = ()
    match_any: tuple[tuple[Term, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class NodeFeatureRule:
    name: str
    rules: tuple[Rule, ...]


def _meta(obj: JSON, where: str) -> JSON:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise SnapshotError(where, f"{obj.get('kind')} has no metadata.name")
    return meta


def _shared(table: dict[Any, Any] | None, value: Any, key: Any) -> Any:
    """One object for equal feature values across nodes (node pools publish the same features)."""
    if table is None:
        return value
    return table.setdefault(key, value)


def nodefeature_from_json(obj: JSON, where: str = "", intern: dict[Any, Any] | None = None) -> NodeFeature:
    """One NodeFeature; with ``intern``, equal feature element sets of different objects are one object."""
    meta = _meta(obj, where)
    f = Fields(f"{where} (nodefeature {meta['name']})" if where else f"nodefeature {meta['name']}")
    spec = f.mapping(obj.get("spec"), "spec")
    raw = f.mapping(spec.get("features"), "spec.features")
    flags: dict[str, frozenset[str] | None] = {}
    for name, fs in f.mapping(raw.get("flags"), "spec.features.flags").items():
        elems = f.mapping(fs, f"spec.features.flags.{name}").get("elements")
        if elems is None:
            flags[name] = None
        else:
            keys = frozenset(f.mapping(elems, f"spec.features.flags.{name}.elements"))
            flags[name] = _shared(intern, keys, ("f", keys))
    attributes: dict[str, Mapping[str, str] | None] = {}
    for name, fs in f.mapping(raw.get("attributes"), "spec.features.attributes").items():
        elems = f.mapping(fs, f"spec.features.attributes.{name}").get("elements")
        path = f"spec.features.attributes.{name}.elements"
        if elems is None:
            attributes[name] = None
        else:
            values = f.strmap(elems, path)
            attributes[name] = _shared(intern, values, ("a", frozenset(values.items())))
    instances: dict[str, tuple[Mapping[str, str], ...]] = {}
    for name, fs in f.mapping(raw.get("instances"), "spec.features.instances").items():
        path = f"spec.features.instances.{name}.elements"
        elems = f.items(f.mapping(fs, f"spec.features.instances.{name}").get("elements"), path)
        insts = tuple(
            f.strmap(f.mapping(e, f"{path}[{i}]").get("attributes"), f"{path}[{i}].attributes")
            for i, e in enumerate(elems)
        )
        instances[name] = _shared(intern, insts, ("i", tuple(frozenset(a.items()) for a in insts)))
    labels = f.strmap(meta.get("labels"), "metadata.labels")
    return NodeFeature(
        namespace=f.text(meta.get("namespace"), "metadata.namespace") or "default",
        name=meta["name"],
        node=labels.get(NODE_NAME_LABEL, ""),
        features=Features(flags, attributes, instances),
        labels=f.strmap(spec.get("labels"), "spec.labels"),
    )


def _expression(f: Fields, v: Any, path: str) -> Expression:
    e = f.mapping(v, path)
    if "op" not in e:
        raise SnapshotError(f.here, f"{path}.op is required")
    values = tuple(f.text(x, f"{path}.value[{i}]") for i, x in enumerate(f.items(e.get("value"), f"{path}.value")))
    return Expression(f.text(e.get("op"), f"{path}.op"), values, f.text(e.get("type"), f"{path}.type"))


def _terms(f: Fields, v: Any, path: str) -> tuple[Term, ...]:
    out = []
    for i, t in enumerate(f.items(v, path)):
        tp = f"{path}[{i}]"
        t = f.mapping(t, tp)
        if not isinstance(t.get("feature"), str):
            raise SnapshotError(f.here, f"{tp}.feature is required")
        exprs = None
        if t.get("matchExpressions") is not None:
            me = f.mapping(t["matchExpressions"], f"{tp}.matchExpressions")
            exprs = tuple((k, _expression(f, x, f"{tp}.matchExpressions.{k}")) for k, x in me.items())
        name = _expression(f, t["matchName"], f"{tp}.matchName") if t.get("matchName") is not None else None
        out.append(Term(t["feature"], exprs, name))
    return tuple(out)


def nodefeaturerule_from_json(obj: JSON, where: str = "") -> NodeFeatureRule:
    meta = _meta(obj, where)
    f = Fields(f"{where} (nodefeaturerule {meta['name']})" if where else f"nodefeaturerule {meta['name']}")
    spec = f.mapping(obj.get("spec"), "spec")
    rules = []
    for i, r in enumerate(f.items(spec.get("rules"), "spec.rules")):
        p = f"spec.rules[{i}]"
        r = f.mapping(r, p)
        if not isinstance(r.get("name"), str):
            raise SnapshotError(f.here, f"{p}.name is required")
        taints = []
        for j, t in enumerate(f.items(r.get("taints"), f"{p}.taints")):
            t = f.mapping(t, f"{p}.taints[{j}]")
            taints.append(
                Taint(
                    f.text(t.get("key"), f"{p}.taints[{j}].key"),
                    f.text(t.get("value"), f"{p}.taints[{j}].value"),
                    f.text(t.get("effect"), f"{p}.taints[{j}].effect"),
                )
            )
        any_of = []
        for j, m in enumerate(f.items(r.get("matchAny"), f"{p}.matchAny")):
            m = f.mapping(m, f"{p}.matchAny[{j}]")
            any_of.append(_terms(f, m.get("matchFeatures"), f"{p}.matchAny[{j}].matchFeatures"))
        rules.append(
            Rule(
                name=r["name"],
                labels=f.strmap(r.get("labels"), f"{p}.labels"),
                labels_template=f.text(r.get("labelsTemplate"), f"{p}.labelsTemplate"),
                annotations=f.strmap(r.get("annotations"), f"{p}.annotations"),
                vars=f.strmap(r.get("vars"), f"{p}.vars"),
                vars_template=f.text(r.get("varsTemplate"), f"{p}.varsTemplate"),
                taints=tuple(taints),
                extended_resources=f.strmap(r.get("extendedResources"), f"{p}.extendedResources"),
                match_features=_terms(f, r.get("matchFeatures"), f"{p}.matchFeatures"),
                match_any=tuple(any_of),
            )
        )
    return NodeFeatureRule(meta["name"], tuple(rules))


@dataclass(frozen=True, slots=True)
class NfdState:
    """The NodeFeature and NodeFeatureRule objects of a cluster, NodeFeatures indexed by node (built once)."""

    nodefeatures: tuple[NodeFeature, ...] = ()
    rules: tuple[NodeFeatureRule, ...] = ()
    _by_node: Mapping[str, tuple[NodeFeature, ...]] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_node: dict[str, list[NodeFeature]] = {}
        for nf in self.nodefeatures:
            if nf.node:
                by_node.setdefault(nf.node, []).append(nf)
        object.__setattr__(self, "_by_node", MappingProxyType({k: tuple(v) for k, v in by_node.items()}))

    def for_node(self, node: str) -> tuple[NodeFeature, ...]:
        """The NodeFeatures nfd-master merges for ``node`` (those labelled with its name)."""
        return self._by_node.get(node, ())

    @classmethod
    def of_records(cls, records: Iterable[NodeFeature | NodeFeatureRule]) -> NfdState:
        """The state of records the kinds' readers made (NodeFeatures and NodeFeatureRules, in any order)."""
        nfs: list[NodeFeature] = []
        rules: list[NodeFeatureRule] = []
        for r in records:
            if isinstance(r, NodeFeature):
                nfs.append(r)
            else:
                rules.append(r)
        return cls(nodefeatures=tuple(nfs), rules=tuple(rules))
