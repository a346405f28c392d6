"""Which nodes a pod may go to, by the kube-scheduler's node filters.

A pod spec is parsed once into :class:`PodRequirements` (``spec.nodeName``,
``spec.tolerations``, ``spec.nodeSelector`` and the required node affinity),
then matched against many nodes. Each match returns a :class:`Result` that
explains itself: the failing filter, the term, the requirement and why.

The semantics are those of kube-scheduler v1.37 (docs/scheduling.md):

- filters run in the order NodeUnschedulable, NodeName, TaintToleration,
  NodeAffinity; the first failure is the node's reason;
- only ``NoSchedule`` and ``NoExecute`` taints filter; a toleration with an
  empty effect matches every effect, an empty key with ``Exists`` every taint,
  ``Equal`` (or no operator) compares values exactly, ``Exists`` ignores them;
  ``Lt``/``Gt`` tolerations are behind an alpha feature gate that is off by
  default, so they tolerate nothing;
- ``spec.unschedulable`` fails unless the pod tolerates
  ``node.kubernetes.io/unschedulable:NoSchedule``;
- ``nodeSelector`` entries need the key present with exactly that value (an
  empty value needs an empty label), and are checked before the affinity;
- node selector terms are ORed, the requirements inside a term ANDed; an empty
  term matches nothing; a term with a requirement that does not parse (as
  ``labels.NewRequirement`` parses it) matches nothing, the other terms still
  count; ``NotIn`` and ``DoesNotExist`` match an absent key; ``Gt``/``Lt`` need
  the key, and both numbers must parse as Go's ``strconv.ParseInt(s, 10, 64)``
  does; ``matchFields`` compare ``metadata.name``.

Upstream: ``component-helpers/scheduling/corev1/nodeaffinity``,
``apimachinery/pkg/labels/selector.go``, ``api/core/v1/toleration.go`` and
``pkg/scheduler/framework/plugins/{nodeunschedulable,nodename,tainttoleration,nodeaffinity}``.
Everything here is pure: no I/O, no clock, no cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, Protocol

from gpulabel.k8s import field
from gpulabel.k8s.gostr import go_quote
from gpulabel.k8s.labels import key_errors, value_errors
from gpulabel.k8s.taints import FILTERING_EFFECTS, UNSCHEDULABLE_TAINT, Taint, Toleration, daemon_tolerations

__all__ = [
    "AFFINITY",
    "FIELD_SELECTOR_OPERATORS",
    "NODE_NAME",
    "NODE_SELECTOR_OPERATORS",
    "TAINTS",
    "UNSCHEDULABLE",
    "Failure",
    "Partial",
    "PodRequirements",
    "Requirement",
    "Result",
    "SchedulingNode",
    "Term",
    "compile_pod_spec",
    "parse_int64",
]

UNSCHEDULABLE = "NodeUnschedulable"
NODE_NAME = "NodeName"
TAINTS = "TaintToleration"
AFFINITY = "NodeAffinity"

REQUIRED_PATH = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
# v1.NodeSelectorOperator values, in the order labels.NewRequirement lists them; matchFields take only In/NotIn.
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_SELECTOR_OPERATORS = ("In", "NotIn")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_DIGITS = frozenset("0123456789")


class SchedulingNode(Protocol):
    """What the node filters read of a node (``model.cluster.Node`` has it)."""

    @property
    def name(self) -> str: ...
    @property
    def labels(self) -> Mapping[str, str]: ...
    @property
    def taints(self) -> tuple[Taint, ...]: ...
    @property
    def unschedulable(self) -> bool: ...


def parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``, or ``None`` where Go returns an error.

    One leading ``+`` or ``-`` is allowed; everything else must be ASCII digits
    (no spaces, no underscores, no ``0x``); leading zeros are fine; values
    outside int64 are errors, as are ``""``, ``"+"`` and ``"-"``.
    """
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not _DIGITS.issuperset(body):
        return None
    if len(body.lstrip("0")) > 19:  # beyond any int64; also keeps int() off huge strings
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def _int64_problem(text: str) -> str:
    body = text[1:] if text[:1] in ("+", "-") else text
    if body and _DIGITS.issuperset(body):
        return "is out of the int64 range"
    return "is not a base-10 integer"


def _strings(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, list):
        return tuple(v if isinstance(v, str) else str(v) for v in value)
    return (str(value),)


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``matchExpressions`` (labels) or ``matchFields`` (node name) entry, parsed.

    ``errors`` holds the parse errors the scheduler's helper would report, with
    their field paths; a requirement with errors makes its whole term fail.
    """

    key: str
    operator: str
    values: tuple[str, ...]
    path: str
    is_field: bool = False
    errors: tuple[str, ...] = ()
    value_set: frozenset[str] = frozenset()
    bound: int | None = None  # Gt/Lt: the parsed number

    def text(self) -> str:
        """``key Op [v1 v2]``, as Go's ``%v`` prints a string slice."""
        if self.operator in ("Exists", "DoesNotExist") and not self.values:
            return f"{self.key} {self.operator}"
        return f"{self.key} {self.operator} [{' '.join(self.values)}]"

    def why_not(self, labels: Mapping[str, str], name: str) -> str | None:
        """``None`` when the node satisfies the requirement, else the reason it does not."""
        if self.errors:
            return "does not parse: " + "; ".join(self.errors)
        if self.is_field:
            # fields.Set lookups give "" for any field but metadata.name. The
            # reason does not name the node, so nodes not named by the pod share it.
            if self.key != "metadata.name":
                inside = self.values[0] == ""
                return None if inside == (self.operator == "In") else f"{self.key} is not a node field"
            inside = name == self.values[0]
            if inside == (self.operator == "In"):
                return None
            return f"the node is not {self.values[0]}" if self.operator == "In" else f"the node is {self.values[0]}"
        op = self.operator
        val = labels.get(self.key)
        if op == "Exists":
            return None if val is not None else "label absent"
        if op == "DoesNotExist":
            return None if val is None else f"label present with value {go_quote(val)}"
        if op == "NotIn":
            return None if val is None or val not in self.value_set else f"value {go_quote(val)} is in the set"
        if val is None:
            return "label absent"
        if op == "In":
            return None if val in self.value_set else f"value {go_quote(val)} is not in the set"
        number = parse_int64(val)
        if number is None:
            return f"node value {go_quote(val)} {_int64_problem(val)}"
        assert self.bound is not None
        if op == "Gt":
            return None if number > self.bound else f"{number} is not greater than {self.bound}"
        return None if number < self.bound else f"{number} is not less than {self.bound}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "operator": self.operator, "values": list(self.values)}
        out["path"] = self.path
        if self.is_field:
            out["field"] = True
        if self.errors:
            out["errors"] = list(self.errors)
        return out


def _parse_expression(raw: Mapping[str, Any], path: str) -> Requirement:
    """A ``matchExpressions`` entry as ``nodeSelectorRequirementsAsSelector`` parses it."""
    key, op = str(raw.get("key") or ""), str(raw.get("operator") or "")
    raw_values = _strings(raw.get("values"))
    values = raw_values or ()
    errors: list[str] = []
    bound: int | None = None
    if op not in NODE_SELECTOR_OPERATORS:
        errors.append(field.not_supported(f"{path}.operator", field.Named(op), NODE_SELECTOR_OPERATORS))
        return Requirement(key=key, operator=op, values=values, path=path, errors=tuple(errors))
    # labels.NewRequirement: key, then the operator's arity, then every value.
    if kerrs := key_errors(key):
        errors.append(field.invalid(f"{path}.key", key, "; ".join(kerrs)))
    # a []string bad value prints as JSON (nil: null)
    shown = list(raw_values) if raw_values is not None else None
    if op in ("In", "NotIn") and not values:
        errors.append(field.invalid(f"{path}.values", shown, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist") and values:
        errors.append(field.invalid(f"{path}.values", shown, "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errors.append(
                field.invalid(f"{path}.values", shown, "for 'Gt', 'Lt' operators, exactly one value is required")
            )
        for i, v in enumerate(values):
            if parse_int64(v) is None:
                errors.append(
                    field.invalid(f"{path}.values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")
                )
        if len(values) == 1:
            bound = parse_int64(values[0])
    for i, v in enumerate(values):
        if verrs := value_errors(v):
            errors.append(field.invalid(f"{path}.values[{i}][{key}]", v, "; ".join(verrs)))
    return Requirement(
        key=key,
        operator=op,
        values=values,
        path=path,
        is_field=False,
        errors=tuple(errors),
        value_set=frozenset(values),
        bound=bound,
    )


def _parse_field(raw: Mapping[str, Any], path: str) -> Requirement:
    """A ``matchFields`` entry as ``nodeSelectorRequirementsAsFieldSelector`` parses it."""
    key, op = str(raw.get("key") or ""), str(raw.get("operator") or "")
    raw_values = _strings(raw.get("values"))
    values = raw_values or ()
    errors: list[str] = []
    if op not in FIELD_SELECTOR_OPERATORS:
        errors.append(field.not_supported(f"{path}.operator", field.Named(op), FIELD_SELECTOR_OPERATORS))
    elif len(values) != 1:
        shown = list(raw_values) if raw_values is not None else None
        errors.append(field.invalid(f"{path}.values", shown, "must have one element"))
    return Requirement(
        key=key, operator=op, values=values, path=path, is_field=True, errors=tuple(errors), value_set=frozenset(values)
    )


@dataclass(frozen=True, slots=True)
class Term:
    index: int
    path: str
    expressions: tuple[Requirement, ...] = ()
    fields: tuple[Requirement, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.expressions and not self.fields

    @property
    def parses(self) -> bool:
        return not any(r.errors for r in (*self.expressions, *self.fields))

    @property
    def label(self) -> str:
        return f"term[{self.index}]"


@dataclass(frozen=True, slots=True)
class Failure:
    """Why one filter rejects a node.

    ``reason`` is the plain-text contract (``unschedulable``,
    ``node-name NAME``, ``untolerated-taint K=V:EFFECT``, ``node-selector K=V``,
    ``affinity term[I] KEY OP [VALUES]``, ``affinity term[I] empty``,
    ``affinity no-terms``); ``why`` explains it for people.
    """

    filter: str
    reason: str
    why: str
    term: int | None = None
    requirement: Requirement | None = None
    data: Mapping[str, Any] = dataclass_field(default_factory=dict)  # figures for -o json (resources)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"filter": self.filter, "reason": self.reason, "why": self.why}
        if self.term is not None:
            out["term"] = self.term
        if self.requirement is not None:
            out["requirement"] = self.requirement.to_json()
        out.update(self.data)
        return out


@dataclass(frozen=True, slots=True)
class Result:
    """The verdict for one node: no failures means the pod may go there."""

    failures: tuple[Failure, ...] = ()

    @property
    def fits(self) -> bool:
        return not self.failures

    @property
    def reason(self) -> str:
        return self.failures[0].reason if self.failures else ""

    @property
    def filter(self) -> str:
        return self.failures[0].filter if self.failures else ""

    def line(self, node: str) -> str:
        return f"{node} yes" if self.fits else f"{node} no {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {"fits": self.fits, "reason": self.reason, "failures": [f.to_json() for f in self.failures]}


FITS = Result()
_TOLERATE_ALL = (Toleration(operator="Exists"),)


@dataclass(frozen=True, slots=True)
class Partial:
    """What a node's labels, taints and schedulability decide, before its name is known.

    Nodes that agree on those (a group) share one ``Partial``; ``finish`` adds
    the checks that need the node's name (``spec.nodeName``, ``matchFields``).
    """

    unschedulable: Failure | None
    taints: tuple[Failure, ...]
    selector: tuple[Failure, ...]
    terms: tuple[tuple[Failure, ...], ...] | None  # label-side failures per term; None: not evaluated
    full: bool


@dataclass(frozen=True, slots=True)
class PodRequirements:
    """A pod spec's node selection, parsed once; match it against many nodes."""

    node_name: str = ""
    tolerations: tuple[Toleration, ...] = ()
    node_selector: tuple[tuple[str, str], ...] = ()  # sorted by key, as labels.SelectorFromSet sorts
    terms: tuple[Term, ...] | None = None  # None: no required node affinity
    path: str = "spec"
    # The label keys the pod reads: nodes that agree on these (and on taints and
    # schedulability) get the same verdict.
    label_keys: tuple[str, ...] = dataclass_field(init=False, compare=False, repr=False)
    # the hash of the fields compared, made once: the incremental keepers look a pod's requirements up per event
    _hash: int = dataclass_field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        keys = {k for k, _ in self.node_selector}
        keys.update(r.key for t in self.terms or () for r in t.expressions)
        object.__setattr__(self, "label_keys", tuple(sorted(keys)))
        object.__setattr__(self, "_hash", hash((self.node_name, self.tolerations, self.node_selector, self.terms)))

    def __hash__(self) -> int:
        return self._hash

    @property
    def name_dependent(self) -> bool:
        """True when the verdict can differ between nodes with the same labels and taints."""
        return bool(self.node_name) or any(t.fields for t in self.terms or ())

    def named_nodes(self) -> frozenset[str]:
        """The node names the pod mentions (``spec.nodeName``, ``metadata.name`` fields).

        Nodes with the same labels and taints whose names are not mentioned all
        get the same verdict, with the same explanation.
        """
        names = {self.node_name} if self.node_name else set()
        for term in self.terms or ():
            names.update(v for r in term.fields if r.key == "metadata.name" for v in r.values)
        return frozenset(names)

    def affinity_only(self) -> PodRequirements:
        """The NodeAffinity filter alone: what still holds a pod to a node after it is running."""
        return PodRequirements("", _TOLERATE_ALL, self.node_selector, self.terms, self.path)

    def unbound(self) -> PodRequirements:
        """The same pod before it was bound: without ``spec.nodeName``."""
        return PodRequirements("", self.tolerations, self.node_selector, self.terms, self.path)

    def tolerates(self, taint: Taint) -> bool:
        return any(t.tolerates(taint) for t in self.tolerations)

    def _untolerated(self, taint: Taint) -> str:
        if not self.tolerations:
            return "the pod has no tolerations"
        return f"none of the pod's tolerations ({', '.join(map(str, self.tolerations))}) matches {taint}"

    # -- matching ---------------------------------------------------------------

    def match(self, node: SchedulingNode, *, full: bool = False) -> Result:
        """Match one node. ``full`` collects every failure of every filter and term, not just the first."""
        return self.finish(self.evaluate(node.labels, node.taints, node.unschedulable, full=full), node.name)

    def evaluate(
        self, labels: Mapping[str, str], taints: Iterable[Taint], unschedulable: bool, *, full: bool = False
    ) -> Partial:
        """The name-independent part of a match; the same for every node in a group."""
        unsched = None
        if unschedulable and not self.tolerates(UNSCHEDULABLE_TAINT):
            unsched = Failure(
                UNSCHEDULABLE,
                "unschedulable",
                "the node is cordoned (spec.unschedulable) and the pod does not tolerate "
                "node.kubernetes.io/unschedulable:NoSchedule",
            )
            if not full:
                return Partial(unsched, (), (), None, full)
        taint_failures: list[Failure] = []
        for taint in taints:
            if taint.effect in FILTERING_EFFECTS and not self.tolerates(taint):
                taint_failures.append(Failure(TAINTS, f"untolerated-taint {taint}", self._untolerated(taint)))
                if not full:
                    return Partial(unsched, tuple(taint_failures), (), None, full)
        selector: list[Failure] = []
        for key, want in self.node_selector:
            got = labels.get(key)
            if got != want:
                why = "label absent" if got is None else f"value {go_quote(got)} is not {go_quote(want)}"
                selector.append(Failure(AFFINITY, f"node-selector {key}={want}", why))
                if not full:
                    return Partial(unsched, tuple(taint_failures), tuple(selector), None, full)
        terms = None
        if self.terms is not None:
            terms = tuple(self._term_label_failures(t, labels, full) for t in self.terms)
        return Partial(unsched, tuple(taint_failures), tuple(selector), terms, full)

    def _term_label_failures(self, term: Term, labels: Mapping[str, str], full: bool) -> tuple[Failure, ...]:
        if term.empty:
            return (Failure(AFFINITY, f"affinity {term.label} empty", "an empty term matches no node", term.index),)
        out: list[Failure] = []
        broken = not term.parses
        for req in (*term.expressions, *term.fields) if broken else term.expressions:
            if broken and not req.errors:
                continue
            why = req.why_not(labels, "")
            if why is not None:
                if broken:
                    why += "; the whole term matches no node"
                out.append(Failure(AFFINITY, f"affinity {term.label} {req.text()}", why, term.index, req))
                if not full:
                    break
        return tuple(out)

    def finish(self, partial: Partial, name: str) -> Result:
        """Complete a group's ``Partial`` for the node called ``name``."""
        full = partial.full
        failures: list[Failure] = []
        if partial.unschedulable is not None:
            failures.append(partial.unschedulable)
            if not full:
                return Result(tuple(failures))
        if self.node_name and self.node_name != name:
            failures.append(
                Failure(NODE_NAME, f"node-name {self.node_name}", f"the pod asks for node {self.node_name}")
            )
            if not full:
                return Result(tuple(failures))
        failures.extend(partial.taints)
        failures.extend(partial.selector)
        if failures and not full:
            return Result(tuple(failures))
        if self.terms is not None and partial.terms is not None:
            failures.extend(self._affinity_failures(partial.terms, name, full))
        return Result(tuple(failures)) if failures else FITS

    def _affinity_failures(
        self, label_failures: tuple[tuple[Failure, ...], ...], name: str, full: bool
    ) -> list[Failure]:
        assert self.terms is not None
        if not self.terms:
            return [Failure(AFFINITY, "affinity no-terms", "nodeSelectorTerms is empty: no node matches")]
        out: list[Failure] = []
        for term, failed in zip(self.terms, label_failures, strict=True):
            if failed:
                out.extend(failed)
                continue
            field_failures = []
            for req in term.fields:
                why = req.why_not({}, name)
                if why is not None:
                    field_failures.append(
                        Failure(AFFINITY, f"affinity {term.label} {req.text()}", why, term.index, req)
                    )
                    if not full:
                        break
            if not field_failures:
                return []  # terms are ORed: this one matches
            out.extend(field_failures)
        return out if full else out[:1]

    # -- for the scheduler's message ---------------------------------------------

    def prefilter_names(self) -> frozenset[str] | None:
        """The node names NodeAffinity's PreFilter restricts scheduling to, or ``None`` for all nodes.

        Only when every term has a ``metadata.name In`` requirement; the set is
        the union over terms of the intersection within each term.
        """
        if not self.terms:
            return None
        names: set[str] = set()
        for term in self.terms:
            within: set[str] | None = None
            for req in term.fields:
                if req.key == "metadata.name" and req.operator == "In":
                    within = set(req.values) if within is None else within & set(req.values)
            if within is None:
                return None
            names |= within
        return frozenset(names)


# -- parsing ------------------------------------------------------------------------


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def compile_pod_spec(spec: Mapping[str, Any], path: str = "spec", *, daemonset: bool = False) -> PodRequirements:
    """Parse a pod spec's node selection once.

    ``path`` is where the spec sits (``spec`` for a Pod, ``spec.template.spec``
    for a workload's template) and prefixes every field path in explanations.
    ``daemonset`` adds the tolerations the DaemonSet controller adds. Shapes are
    taken as given: validate a manifest first (:mod:`gpulabel.k8s.podvalidation`).
    """
    tolerations = tuple(
        Toleration(_text(t.get("key")), _text(t.get("operator")), _text(t.get("value")), _text(t.get("effect")))
        for t in _list(spec.get("tolerations"))
        if isinstance(t, dict)
    )
    if daemonset:
        tolerations += daemon_tolerations(bool(spec.get("hostNetwork")))
    selector = tuple(sorted((str(k), _text(v)) for k, v in _mapping(spec.get("nodeSelector")).items()))
    node_affinity = _mapping(_mapping(spec.get("affinity")).get("nodeAffinity"))
    raw_required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    # An empty object is not nil: it has no terms, so nothing matches.
    required = raw_required if isinstance(raw_required, dict) else None
    terms: tuple[Term, ...] | None = None
    if required is not None:
        base = f"{path}.{REQUIRED_PATH}.nodeSelectorTerms"
        parsed = []
        for i, raw in enumerate(_list(required.get("nodeSelectorTerms"))):
            raw_term = _mapping(raw)
            tpath = f"{base}[{i}]"
            exprs = tuple(
                _parse_expression(_mapping(e), f"{tpath}.matchExpressions[{j}]")
                for j, e in enumerate(_list(raw_term.get("matchExpressions")))
            )
            fields = tuple(
                _parse_field(_mapping(e), f"{tpath}.matchFields[{j}]")
                for j, e in enumerate(_list(raw_term.get("matchFields")))
            )
            parsed.append(Term(i, tpath, exprs, fields))
        terms = tuple(parsed)
    return PodRequirements(_text(spec.get("nodeName")), tolerations, selector, terms, path)
