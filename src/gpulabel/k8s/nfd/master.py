"""nfd-master's pipeline for one node: what it writes from the NodeFeatures and the NodeFeatureRules.

1. The node's NodeFeature objects are merged (nfd-master's own namespace
   first, then by name, then by namespace; later objects overwrite flag and
   attribute elements and labels, instance lists are concatenated).
2. NodeFeatureRule objects run in name order, their rules in list order; after
   each rule that did not error, its raw labels and then its vars go into
   ``rule.matched`` for the rules after it.
3. Labels, annotations and extended resources get the default prefix; rule
   labels overwrite NodeFeature labels; ``@domain.feature.element`` values are
   resolved; then the namespace rules, ``labelWhiteList``, ``resourceLabels``,
   taints (only with ``enableTaints``) and the bookkeeping annotations.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpulabel.errors import InputError
from gpulabel.k8s.labels import is_valid_key, is_valid_value
from gpulabel.k8s.nfd.objects import Features, NodeFeature, NodeFeatureRule, Rule
from gpulabel.k8s.nfd.rule import Outcome, execute
from gpulabel.k8s.resources import QuantityError, parse_quantity
from gpulabel.k8s.taints import TAINT_EFFECTS, Taint

__all__ = [
    "DEFAULT_NS",
    "Memo",
    "NfdConfig",
    "NodeResult",
    "RuleResult",
    "config_from_mapping",
    "is_nfd_namespace",
    "merge_features",
    "process_node",
]

DEFAULT_NS = "feature.node.kubernetes.io"
PROFILE_NS = "profile.node.kubernetes.io"
NFD_ANNOTATION_NS = "nfd.node.kubernetes.io"


@dataclass(frozen=True, slots=True)
class NfdConfig:
    """The parts of nfd-master's configuration (``-config`` file) that decide what it writes."""

    enable_taints: bool = False
    deny_label_ns: frozenset[str] = frozenset()
    extra_label_ns: frozenset[str] = frozenset()
    label_whitelist: str = ""
    auto_default_ns: bool = True  # false: the DisableAutoPrefix behaviour (no prefixing)
    resource_labels: frozenset[str] = frozenset()
    disable_labels: bool = False
    disable_annotations: bool = False
    disable_extended_resources: bool = False
    deny_node_feature_labels: bool = False
    instance: str = ""
    namespace: str = "node-feature-discovery"  # where nfd-master runs: its NodeFeatures merge first

    def __post_init__(self) -> None:
        if self.label_whitelist:
            try:
                re.compile(self.label_whitelist)
            except re.error as err:
                raise InputError("labelWhiteList", f"invalid regexp: {err}") from None


def _strings(v: Any, where: str) -> frozenset[str]:
    if v is None:
        return frozenset()
    if isinstance(v, str):
        return frozenset(s for s in v.split(",") if s)
    if isinstance(v, list) and all(isinstance(s, str) for s in v):
        return frozenset(v)
    raise InputError(where, "must be a list of strings")


def _bool(v: Any, where: str) -> bool:
    if v is None:
        return False
    if not isinstance(v, bool):
        raise InputError(where, "must be true or false")
    return v


_KNOWN = {
    "enableTaints", "denyLabelNs", "extraLabelNs", "labelWhiteList", "autoDefaultNs", "resourceLabels",
    "restrictions", "noPublish", "resyncPeriod", "leaderElection", "nfdApiParallelism", "klog",
    "informerPageSize", "featureGates", "instance", "namespace",
}  # fmt: skip


def config_from_mapping(doc: Mapping[str, Any], where: str = "--nfd-config") -> NfdConfig:
    """nfd-master's configuration file (YAML already parsed); an unknown key is an error, as nfd-master's is."""
    unknown = sorted(set(doc) - _KNOWN)
    if unknown:
        raise InputError(where, f"unknown field {unknown[0]!r} in nfd-master configuration")
    r = doc.get("restrictions") or {}
    if not isinstance(r, dict):
        raise InputError(f"{where}: restrictions", "must be a mapping")
    gates = doc.get("featureGates") or {}
    auto = doc.get("autoDefaultNs", True)
    if not isinstance(auto, bool):
        raise InputError(f"{where}: autoDefaultNs", "must be true or false")
    if isinstance(gates, dict) and gates.get("DisableAutoPrefix") is True:
        auto = False
    wl = doc.get("labelWhiteList") or ""
    if not isinstance(wl, str):
        raise InputError(f"{where}: labelWhiteList", "must be a string (a regexp)")
    return NfdConfig(
        enable_taints=_bool(doc.get("enableTaints"), f"{where}: enableTaints"),
        deny_label_ns=_strings(doc.get("denyLabelNs"), f"{where}: denyLabelNs"),
        extra_label_ns=_strings(doc.get("extraLabelNs"), f"{where}: extraLabelNs"),
        label_whitelist=wl,
        auto_default_ns=auto,
        resource_labels=_strings(doc.get("resourceLabels"), f"{where}: resourceLabels"),
        disable_labels=_bool(r.get("disableLabels"), f"{where}: restrictions.disableLabels"),
        disable_annotations=_bool(r.get("disableAnnotations"), f"{where}: restrictions.disableAnnotations"),
        disable_extended_resources=_bool(
            r.get("disableExtendedResources"), f"{where}: restrictions.disableExtendedResources"
        ),
        deny_node_feature_labels=_bool(r.get("denyNodeFeatureLabels"), f"{where}: restrictions.denyNodeFeatureLabels"),
        instance=str(doc.get("instance") or ""),
        namespace=str(doc.get("namespace") or "node-feature-discovery"),
    )


@dataclass(frozen=True, slots=True)
class RuleResult:
    """One rule's outcome on one node, and where it sits."""

    object: str  # the NodeFeatureRule's name
    rule: str
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class NodeResult:
    """What nfd-master would write on one node, and why."""

    node: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    extended_resources: Mapping[str, str]
    taints: tuple[Taint, ...]
    rules: tuple[RuleResult, ...]
    label_sources: Mapping[str, str] = field(default_factory=dict)  # key -> "rule OBJ/RULE" or "NodeFeature NS/NAME"
    dropped: Mapping[str, str] = field(default_factory=dict)  # "label KEY" -> why nfd-master drops it
    nodefeatures: tuple[str, ...] = ()


# ---------------------------------------------------------------------------- namespaces


def _kubernetes_family(ns: str) -> bool:
    return ns == "kubernetes.io" or ns.endswith(".kubernetes.io")


def _nfd_allowed(ns: str) -> bool:
    return any(ns == x or ns.endswith("." + x) for x in (DEFAULT_NS, PROFILE_NS))


def is_nfd_namespace(ns: str, cfg: NfdConfig) -> bool:
    """A label namespace nfd-master owns: the feature and profile namespaces, their subdomains, extraLabelNs."""
    return _nfd_allowed(ns) or ns in cfg.extra_label_ns


def _add_ns(key: str, cfg: NfdConfig) -> str:
    return key if "/" in key or not cfg.auto_default_ns else f"{DEFAULT_NS}/{key}"


def _prefixed(m: Mapping[str, str], cfg: NfdConfig) -> dict[str, str]:
    """``addNsToMapKeys``: within one map, a prefixed key beats its unprefixed twin."""
    out: dict[str, str] = {}
    for k, v in m.items():
        nk = _add_ns(k, cfg)
        if nk != k and nk in m:
            continue
        out[nk] = v
    return out


def _dynamic(value: str, features: Features) -> str | None:
    """``@domain.feature.element``: an attribute element's value (flags and instances do not resolve)."""
    parts = value[1:].split(".", 2)
    if len(parts) != 3:
        return None
    attrs = features.attributes.get(f"{parts[0]}.{parts[1]}")
    if attrs is None or parts[2] not in attrs:
        return None
    return attrs[parts[2]]


def _denied_ns(ns: str, cfg: NfdConfig) -> bool:
    if _kubernetes_family(ns) and not _nfd_allowed(ns):
        return True
    return any(d in ("*", ns) or (d.startswith("*.") and ns.endswith(d[1:])) for d in cfg.deny_label_ns)


def _filter_label(key: str, value: str, cfg: NfdConfig, features: Features) -> tuple[str | None, str]:
    """The value nfd-master writes for ``key``, or None and why it drops the label."""
    if value.startswith("@"):
        resolved = _dynamic(value, features)
        if resolved is None:
            return None, f"dynamic value {value} does not resolve"
        value = resolved
    ns, slash, name = key.rpartition("/")
    if not slash:
        if cfg.auto_default_ns:
            return None, "unprefixed label name"
        ns, name = "", key
    if not is_valid_key(key):
        return None, "invalid label name"
    value_ok = is_valid_value(value)
    if ns and _denied_ns(ns, cfg):
        if ns not in cfg.extra_label_ns:
            return None, f"namespace {ns} is not allowed"
        # extraLabelNs re-allows the namespace; on that code path the value is not validated
    elif not value_ok:
        return None, "invalid label value"
    if cfg.label_whitelist and re.search(cfg.label_whitelist, name) is None:
        return None, "not in labelWhiteList"
    return value, ""


def _filter_key(key: str) -> str:
    """The annotation / extended resource name rule (no deny/extra lists): '' if allowed."""
    ns, slash, _ = key.rpartition("/")
    if not slash:
        return "unprefixed name"
    if _kubernetes_family(ns) and not (ns == DEFAULT_NS or ns.endswith("." + DEFAULT_NS)):
        return f"namespace {ns} is not allowed"
    return ""


# ---------------------------------------------------------------------------- merging


def _merge_order(nf: NodeFeature, nfd_ns: str) -> tuple[int, str, str]:
    return (0 if nf.namespace == nfd_ns else 1, nf.name, nf.namespace)


def merge_features(objects: Iterable[NodeFeature], cfg: NfdConfig) -> tuple[Features, dict[str, str], dict[str, str]]:
    """The node's merged features, its NodeFeature labels, and which object each label came from."""
    flags: dict[str, frozenset[str] | None] = {}
    attrs: dict[str, Mapping[str, str] | None] = {}
    insts: dict[str, tuple[Mapping[str, str], ...]] = {}
    labels: dict[str, str] = {}
    source: dict[str, str] = {}
    for nf in sorted(objects, key=lambda o: _merge_order(o, cfg.namespace)):
        for k, fl in nf.features.flags.items():
            if k in flags or fl is not None:
                flags[k] = (flags.get(k) or frozenset()) | (fl or frozenset())
            else:
                flags[k] = None
        for k, at in nf.features.attributes.items():
            if k in attrs or at is not None:
                attrs[k] = {**(attrs.get(k) or {}), **(at or {})}
            else:
                attrs[k] = None
        for k, il in nf.features.instances.items():
            insts[k] = insts.get(k, ()) + il
        third_party = nf.namespace != cfg.namespace or nf.name != nf.node
        if cfg.deny_node_feature_labels and third_party:
            continue
        for k, v in _prefixed(nf.labels, cfg).items():
            labels[k] = v
            source[k] = f"NodeFeature {nf.ref}"
    return Features(flags, attrs, insts), labels, source


# ---------------------------------------------------------------------------- the node


def _with_matched(features: Features, matched: Mapping[str, str] | None) -> Features:
    if matched is None:
        return features
    attrs = dict(features.attributes)
    attrs["rule.matched"] = matched
    return Features(features.flags, attrs, features.instances)


_ABSENT = object()


def _rule_features(rule: Rule) -> tuple[tuple[str, ...], bool]:
    names = {t.feature.lower() for t in rule.match_features} | {t.feature.lower() for m in rule.match_any for t in m}
    backref = "rule.matched" in names
    names.discard("rule.matched")
    return tuple(sorted(names)), backref


class Memo:
    """Rule outcomes shared by nodes whose features (and ``rule.matched``) are the same objects.

    NodeFeatures of one node pool publish equal features, which the reader interns; a rule's outcome
    depends only on the features it names. Every object a key names by ``id`` is kept alive here, so
    an id is never reused while the memo lives.
    """

    def __init__(self) -> None:
        self.outcomes: dict[tuple[Any, ...], Outcome] = {}
        self.features: dict[int, tuple[tuple[str, ...], bool]] = {}
        self._alive: list[Any] = []

    def key(self, rule: Rule, features: Features, matched_key: Any) -> tuple[Any, ...]:
        names, backref = self.features.get(id(rule)) or self.features.setdefault(id(rule), _rule_features(rule))
        parts: list[Any] = [id(rule), matched_key if backref else None]
        for n in names:
            for table in (features.flags, features.attributes, features.instances):
                v = table.get(n, _ABSENT)
                parts.append(id(v))
                if v is not _ABSENT and v is not None:
                    self._alive.append(v)
        self._alive.append(rule)
        return tuple(parts)

    def execute(self, rule: Rule, features: Features, matched_key: Any) -> Outcome:
        key = self.key(rule, features, matched_key)
        out = self.outcomes.get(key)
        if out is None:
            out = self.outcomes[key] = execute(rule, features)
        return out


@dataclass
class _RulesOutput:
    """What the rules say about one node, in the order nfd-master applies them."""

    results: list[RuleResult] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    extended_resources: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    taints: list[Taint] = field(default_factory=list)
    matched: dict[str, str] | None = None  # rule.matched: the labels and vars of the rules run so far


def _node_features(
    node: str, nodefeatures: Sequence[NodeFeature], cfg: NfdConfig
) -> tuple[Features, dict[str, str], dict[str, str]]:
    """The node's features, the NodeFeatures' labels (prefixed) and where each label came from."""
    one = nodefeatures[0] if len(nodefeatures) == 1 else None
    if one is not None and not (cfg.deny_node_feature_labels and (one.namespace != cfg.namespace or one.name != node)):
        labels = _prefixed(one.labels, cfg)  # nothing to merge: keep the (interned) feature objects
        return one.features, labels, dict.fromkeys(labels, f"NodeFeature {one.ref}")
    return merge_features(nodefeatures, cfg)


def _run_rules(
    base: Features, rules: Sequence[NodeFeatureRule], cfg: NfdConfig, memo: Memo, sources: dict[str, str]
) -> _RulesOutput:
    """Every rule in name order over ``base`` (each later rule sees ``rule.matched`` of the earlier ones);
    the source of each label a rule writes goes into ``sources``."""
    out = _RulesOutput()
    matched_key: Any = None
    for obj in sorted(rules, key=lambda r: r.name):
        for rule in obj.rules:
            done = memo.execute(rule, _with_matched(base, out.matched), matched_key)
            out.results.append(RuleResult(obj.name, rule.name, done))
            if done.error:
                continue
            matched_key = (matched_key, id(done))  # done is kept alive by the memo
            out.matched = {**(out.matched or {}), **done.labels, **done.vars}
            if not done.matched:
                continue
            for k, v in _prefixed(done.labels, cfg).items():
                out.labels[k] = v
                sources[k] = f"rule {obj.name}/{rule.name}"
            out.extended_resources.update(_prefixed(done.extended_resources, cfg))
            out.annotations.update(_prefixed(done.annotations, cfg))
            out.taints.extend(done.taints)
    return out


def process_node(
    node: str,
    nodefeatures: Sequence[NodeFeature],
    rules: Sequence[NodeFeatureRule],
    cfg: NfdConfig,
    memo: Memo | None = None,
) -> NodeResult:
    """What nfd-master writes on ``node`` from its NodeFeatures (those labelled with its name) and every rule.

    ``memo`` (one per run over many nodes) shares rule outcomes between nodes with the same features.
    """
    base, nf_labels, sources = _node_features(node, nodefeatures, cfg)
    ruled = _run_rules(base, rules, cfg, memo if memo is not None else Memo(), sources)
    features = _with_matched(base, ruled.matched)
    dropped: dict[str, str] = {}
    labels: dict[str, str] = {}
    if not cfg.disable_labels:
        for k, v in {**nf_labels, **ruled.labels}.items():
            value, why = _filter_label(k, v, cfg, features)
            if value is None:
                dropped[f"label {k}"] = why
            else:
                labels[k] = value
    ers = dict(ruled.extended_resources)
    for k in sorted({_add_ns(r, cfg) for r in cfg.resource_labels} & set(labels)):
        ers[k] = labels.pop(k)
    out_ers = {} if cfg.disable_extended_resources else _kept_resources(ers, features, dropped)
    out_ann = {} if cfg.disable_annotations else _kept_annotations(ruled.annotations, dropped)
    out_taints = _kept_taints(ruled.taints, cfg, dropped)
    out_ann.update(_bookkeeping(labels, out_ers, out_ann, out_taints, cfg))
    return NodeResult(
        node,
        labels,
        out_ann,
        out_ers,
        tuple(out_taints),
        tuple(ruled.results),
        {k: sources[k] for k in labels if k in sources},
        dropped,
        tuple(nf.ref for nf in nodefeatures),
    )


def _kept_resources(ers: Mapping[str, str], features: Features, dropped: dict[str, str]) -> dict[str, str]:
    """The extended resources nfd-master writes (``@feature`` values resolved); the rest into ``dropped``."""
    out: dict[str, str] = {}
    for k, v in ers.items():
        if v.startswith("@"):
            resolved = _dynamic(v, features)
            if resolved is None:
                dropped[f"extended resource {k}"] = f"dynamic value {v} does not resolve"
                continue
            v = resolved
        why = _filter_key(k)
        if not why:
            try:
                parse_quantity(v)
            except QuantityError:
                why = f"{v!r} is not a quantity"
        if why:
            dropped[f"extended resource {k}"] = why
        else:
            out[k] = v
    return out


def _kept_annotations(annotations: Mapping[str, str], dropped: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in annotations.items():
        why = _filter_key(k) or ("value longer than 1024 characters" if len(v) > 1024 else "")
        if why:
            dropped[f"annotation {k}"] = why
        else:
            out[k] = v
    return out


def _kept_taints(taints: Sequence[Taint], cfg: NfdConfig, dropped: dict[str, str]) -> list[Taint]:
    out: list[Taint] = []
    for t in taints:
        why = "" if cfg.enable_taints else "enableTaints is off"
        if not why:
            why = _filter_key(t.key) or ("" if t.effect in TAINT_EFFECTS else f"invalid effect {t.effect!r}")
        if why:
            dropped[f"taint {t}"] = why
        elif t not in out:
            out.append(t)
    return out


def _names(keys: Iterable[str]) -> str:
    return ",".join(sorted(k.removeprefix(DEFAULT_NS + "/") for k in keys))


def _bookkeeping(
    labels: Mapping[str, str], ers: Mapping[str, str], ann: Mapping[str, str], taints: Sequence[Taint], cfg: NfdConfig
) -> dict[str, str]:
    pre = f"{cfg.instance}." if cfg.instance else ""
    out = {}
    if labels:
        out[f"{NFD_ANNOTATION_NS}/{pre}feature-labels"] = _names(labels)
    if ers:
        out[f"{NFD_ANNOTATION_NS}/{pre}extended-resources"] = _names(ers)
    if ann:
        out[f"{NFD_ANNOTATION_NS}/{pre}feature-annotations"] = _names(ann)
    if taints:
        out[f"{NFD_ANNOTATION_NS}/taints"] = ",".join(str(t) for t in taints)
    return out
