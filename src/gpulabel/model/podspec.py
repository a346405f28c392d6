"""A pod's scheduling fields compiled once, when the pod is read: what every check asks of a pod spec.

kube-scheduler parses a pod's node selection once per scheduling cycle, not once per node
(component-helpers/scheduling/corev1/nodeaffinity ``GetRequiredNodeAffinity``, kept in the NodeAffinity
and TaintToleration plugins' PreFilter state); gpulabel parses it once per distinct spec of a load, when
the pod is read (:func:`compiled`): its ``nodeSelector`` and required node affinity, its tolerations
(``k8s.nodeaffinity.compile_pod_spec``), the label keys it selects on (preferred terms included), its
scheduling gates, its preemption policy and its ResourceClaims. Its resource requests are the record's
``Pod.requests`` (``k8s.resources.pod_requests``, also one dict per distinct request of a load).

Pods of one workload carry equal specs, so a load's table (:data:`Specs`) keeps one :class:`PodSpec` per
distinct content, keyed by the JSON text of the fields it was compiled from (never by an object's
``id()``): a ReplicaSet's replicas share one, and so do a DaemonSet's pods, since the DaemonSet
controller's pin (each pod's ``matchFields: metadata.name In [its node]``,
pkg/controller/daemon/util ``ReplaceDaemonSetPodNodeNameNodeAffinity``) is taken out of the spec: the
compiled form holds the stand-in :data:`PINNED` and the pod's record names the node (``Pod.pinned``).
:meth:`PodSpec.requirements_for` puts the node back where a check needs the pod's real requirements.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from gpulabel.k8s.nodeaffinity import PodRequirements, Term, compile_pod_spec
from gpulabel.model.shapes import SCHEDULING_FIELDS

__all__ = ["COMPILED_FIELDS", "PINNED", "TABLE_LIMIT", "PodSpec", "Shared", "compiled", "kept"]

JSON = dict[str, Any]

# Stands for the node a DaemonSet pod is pinned to; no node is called this (a name cannot hold a NUL).
PINNED = "\x00pinned"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PIN_FIELDS = frozenset(("key", "operator", "values"))
# what a PodSpec is compiled from: the scheduling fields but spec.nodeName (the record's Pod.node_name)
COMPILED_FIELDS = tuple(k for k in SCHEDULING_FIELDS if k != "nodeName")


@dataclass(frozen=True, slots=True, eq=False)
class PodSpec:
    """A pod spec's scheduling part, compiled. Equal (and hashed) by the content it was compiled from."""

    key: bytes | str  # the content: the JSON text of the fields compiled (repr where JSON cannot hold them)
    requirements: PodRequirements  # nodeSelector, required node affinity, tolerations; never spec.nodeName
    pinned: bool  # the required affinity's matchFields were a pin to one node, now PINNED (Pod.pinned: the node)
    held: PodRequirements | None  # requirements.affinity_only(); None: no nodeSelector and no required affinity
    selected_keys: tuple[str, ...]  # the label keys of nodeSelector and of every node affinity term
    gated: bool  # spec.schedulingGates is not empty
    preemption_policy: str
    resource_claims: tuple[JSON, ...]  # spec.resourceClaims, as read

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, PodSpec) and self.key == other.key)

    def __hash__(self) -> int:
        return hash(self.key)

    def requirements_for(self, pin: str) -> PodRequirements:
        """The pod's own requirements: with the node ``pin`` (its ``Pod.pinned``) in place of the stand-in."""
        return _pinned_to(self.requirements, pin) if self.pinned else self.requirements

    def held_for(self, pin: str) -> PodRequirements | None:
        """The NodeAffinity filter alone (what holds a running pod to its node), pinned to ``pin``."""
        if self.held is None or not self.pinned:
            return self.held
        return _pinned_to(self.held, pin)

    def named_node(self, pin: str) -> str:
        """The node the first ``matchFields: metadata.name In [one node]`` of the required affinity names."""
        for term in self.requirements_for(pin).terms or ():
            for r in term.fields:
                if r.key == "metadata.name" and r.operator == "In" and len(r.values) == 1:
                    return r.values[0]
        return ""


def _pinned_to(req: PodRequirements, node: str) -> PodRequirements:
    terms = tuple(_term_pinned_to(t, node) for t in req.terms or ())
    return PodRequirements(req.node_name, req.tolerations, req.node_selector, terms, req.path)


def _term_pinned_to(term: Term, node: str) -> Term:
    if not term.fields:
        return term
    fields = tuple(replace(r, values=(node,), value_set=frozenset((node,))) for r in term.fields)
    return replace(term, fields=fields)


# One load's table of the equal parts of its records (compiled specs, conditions, labels, owners, requests,
# a node pool's taints): tagged content key -> the one copy. Keys are content (JSON text, tuples of
# strings), never an object's id().
Shared = dict[tuple[Any, ...], Any]

# A table's bound: a monitor keeps its LIST's reader for the watch events after it, and pods come and go
# (a Job's pods have labels and owners of their own), so the parts of gone pods must not pile up in it.
TABLE_LIMIT = 250_000


def kept(table: Shared | None, key: tuple[Any, ...], value: Any) -> Any:
    """The table's copy of ``key``'s value, else ``value`` (kept in the table while it has room)."""
    if table is None:
        return value
    known = table.get(key)
    if known is not None:
        return known
    if len(table) < TABLE_LIMIT:
        table[key] = value
    return value


def _pin_of(term: Any) -> str | None:
    """The node a term's ``matchFields`` pins to when they are exactly ``metadata.name In [node]``."""
    fields = term.get("matchFields")
    if type(fields) is not list or len(fields) != 1:
        return None
    entry = fields[0]
    if type(entry) is not dict or entry.keys() != _PIN_FIELDS:
        return None
    values = entry["values"]
    if entry["key"] != "metadata.name" or entry["operator"] != "In" or type(values) is not list or len(values) != 1:
        return None
    node = values[0]
    return node if type(node) is str else None


def _unpinned(kept: JSON) -> tuple[JSON, str | None]:
    """``kept`` with a pin to one node (every term that has ``matchFields`` has exactly ``metadata.name In
    [node]``, the same node) replaced by :data:`PINNED`, and that node; ``kept`` and None when there is none."""
    affinity = kept.get("affinity")
    if affinity is None:
        return kept, None
    node_affinity = affinity.get("nodeAffinity") if type(affinity) is dict else None
    required = node_affinity.get(_REQUIRED) if type(node_affinity) is dict else None
    terms = required.get("nodeSelectorTerms") if type(required) is dict else None
    if type(terms) is not list:
        return kept, None
    pin: str | None = None
    out = []
    for term in terms:
        if type(term) is not dict:
            return kept, None
        if "matchFields" in term:
            node = _pin_of(term)
            if node is None or (pin is not None and node != pin):
                return kept, None
            pin = node
            term = {**term, "matchFields": [{"key": "metadata.name", "operator": "In", "values": [PINNED]}]}
        out.append(term)
    if pin is None:
        return kept, None
    assert type(affinity) is dict and type(node_affinity) is dict and type(required) is dict
    required = {**required, "nodeSelectorTerms": out}
    affinity = {**affinity, "nodeAffinity": {**node_affinity, _REQUIRED: required}}
    return {**kept, "affinity": affinity}, pin


def _content(spec: JSON, pinned: bool) -> bytes | str:
    """The key of a spec's content: its JSON text (same keys in the same order), else its repr; marked when
    a pin was taken out (a spec that names the stand-in itself is another content)."""
    import orjson

    try:
        return (b"\x01" if pinned else b"\x00") + orjson.dumps(spec)
    except TypeError:  # a YAML snapshot's value JSON cannot hold
        return ("\x01" if pinned else "\x00") + repr(spec)


def _selected_keys(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """The label keys of ``nodeSelector`` and of every node affinity term, required and preferred."""
    selector = spec.get("nodeSelector")
    keys = [str(k) for k in selector] if isinstance(selector, dict) else []
    affinity = spec.get("affinity")
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    if not isinstance(node_affinity, dict):
        return tuple(keys)
    required = node_affinity.get(_REQUIRED) or {}
    terms = [*(required.get("nodeSelectorTerms") or ())]
    terms += [
        p.get("preference") or {} for p in node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
    ]
    keys += [
        str(e.get("key", "")) for t in terms for e in (t or {}).get("matchExpressions") or () if isinstance(e, dict)
    ]
    return tuple(keys)


def _compile(key: bytes | str, spec: JSON, pinned: bool) -> PodSpec:
    requirements = compile_pod_spec(spec)
    affinity = spec.get("affinity")
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    holds = bool(spec.get("nodeSelector")) or bool(node_affinity)
    claims = spec.get("resourceClaims")
    return PodSpec(
        key=key,
        requirements=requirements,
        pinned=pinned,
        held=requirements.affinity_only() if holds else None,
        selected_keys=_selected_keys(spec),
        gated=bool(spec.get("schedulingGates")),
        preemption_policy=str(spec.get("preemptionPolicy") or ""),
        resource_claims=tuple(claims) if isinstance(claims, list) else (),
    )


def compiled(fields: JSON, table: Shared | None = None) -> tuple[PodSpec, str]:
    """A pod spec's scheduling fields (``nodeName`` is left out: it is the record's ``Pod.node_name``)
    compiled, and the node a DaemonSet pin names ("" when none). ``table`` (one per load) gives the one
    PodSpec of each distinct content; None compiles afresh."""
    if "nodeName" in fields:
        fields = {k: v for k, v in fields.items() if k != "nodeName"}
    unpinned, pin = _unpinned(fields)
    key = _content(unpinned, pin is not None)
    known = table.get(("spec", key)) if table is not None else None
    if known is None:
        known = kept(table, ("spec", key), _compile(key, unpinned, pin is not None))
    return known, pin or ""
