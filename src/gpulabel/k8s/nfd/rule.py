"""One rule executed as nfd-master does (``Execute`` with failFast), and why it did not match.

nfd-master stops at the first failing term and records nothing; this module
does the same evaluation and keeps the term and expression that failed, with
the element's actual value or its absence. Expressions of one set are taken in
the order the object lists them (Go iterates a map in random order: when one
set holds both a failing and an invalid expression, nfd-master sometimes
reports no match and sometimes an error; see docs/nfd.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gpulabel.k8s.nfd.expression import (
    Element,
    Expression,
    ExpressionError,
    evaluate,
    match_multi,
    match_names_multi,
)
from gpulabel.k8s.nfd.gotemplate import TemplateError, Unsupported, expand_map
from gpulabel.k8s.nfd.objects import Features, Rule, Term
from gpulabel.k8s.taints import Taint

__all__ = ["Failure", "Outcome", "execute"]

TemplateData = dict[str, dict[str, list[Element]]]


@dataclass(frozen=True, slots=True)
class Failure:
    """The term (and expression) of a rule that did not hold on a node."""

    term: str  # term[0], matchAny[1].term[0]
    feature: str
    key: str = ""  # the expression's element name; "" for the feature itself or matchName
    expression: str = ""  # Gt [5], matchName In [x]
    actual: str = ""  # value "5", absent, feature absent, ...
    may_error: str = ""  # the set also holds an invalid expression: nfd-master (Go map order) may fail the rule

    def line(self) -> str:
        head = " ".join(p for p in (self.term, self.feature, self.key, self.expression) if p)
        tail = (
            f" (nfd-master may fail the rule instead, its order is random: {self.may_error})" if self.may_error else ""
        )
        return f"{head}: {self.actual}{tail}"


@dataclass(frozen=True, slots=True)
class Outcome:
    matched: bool
    error: str = ""
    unsupported: bool = False  # the error is a limit of gpulabel's template subset, not of NFD
    failures: tuple[Failure, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    vars: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    extended_resources: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()

    def why(self) -> str:
        if self.error:
            return f"error: {self.error}"
        return "; ".join(f.line() for f in self.failures)


def _q(values: Sequence[str], limit: int = 4) -> str:
    shown = ", ".join(f'"{v}"' for v in values[:limit])
    return shown + (f" (+{len(values) - limit} more)" if len(values) > limit else "")


def _side(e: Expression, name: str, keys: frozenset[str] | None, values: Mapping[str, str] | None) -> bool:
    """Does ``e`` hold on the flag/attribute union (DoesNotExist in both)?"""
    hk = keys is not None and evaluate(e, name in keys, None)
    hv = values is not None and evaluate(e, name in values, values.get(name))
    if e.op == "DoesNotExist":
        return (keys is None or hk) and (values is None or hv) and (keys is not None or values is not None)
    return hk or hv


def _actual(name: str, keys: frozenset[str] | None, values: Mapping[str, str] | None) -> str:
    if values is not None and name in values:
        return f'value "{values[name]}"'
    if keys is not None and name in keys:
        return "flag (a flag has no value)"
    return "absent"


def _explain(term: Term, path: str, name: str, features: Features) -> Failure:
    keys, values = features.flags.get(name), features.attributes.get(name)
    insts = features.instances.get(name) or ()
    exprs = term.expressions
    if exprs is not None:
        if not exprs:
            return Failure(
                path, term.feature, actual="no elements (the feature's elements are null or it has no instances)"
            )
        side_fail = next(((k, e) for k, e in exprs if not _side(e, k, keys, values)), None)
        if not insts and side_fail is not None:
            k, e = side_fail
            return Failure(path, term.feature, k, e.describe(), _actual(k, keys, values))
        if insts and keys is None and values is None:
            for k, e in exprs:
                if not any(evaluate(e, k in a, a.get(k)) for a in insts):
                    seen = list(dict.fromkeys(a[k] for a in insts if k in a))
                    actual = f"values {_q(seen)} on {len(insts)} instance(s)" if seen else "absent on every instance"
                    return Failure(path, term.feature, k, e.describe(), actual)
            k, e = next((k, e) for k, e in exprs if not evaluate(e, k in insts[0], insts[0].get(k)))
            return Failure(path, term.feature, k, e.describe(), "each expression holds on some instance, none on all")
        if side_fail is not None:
            k, e = side_fail
            return Failure(path, term.feature, k, e.describe(), _actual(k, keys, values) + ", and no instance matches")
    names = sorted({*(keys or ()), *(values or {})} | {k for a in insts for k in a})
    m = term.match_name
    expr = f"matchName {m.describe()}" if m is not None else "matchName"
    return Failure(path, term.feature, "", expr, f"no element name matches (names: {', '.join(names) or 'none'})")


def _hidden_error(term: Term, features: Features, name: str) -> str:
    """An error another order of the failing set would raise (nfd-master iterates a Go map)."""
    keys, values = features.flags.get(name), features.attributes.get(name)
    insts = features.instances.get(name) or ()
    for k, e in term.expressions or ():
        try:
            if keys is not None:
                evaluate(e, k in keys, None)
            if values is not None:
                evaluate(e, k in values, values.get(k))
            for a in insts:
                evaluate(e, k in a, a.get(k))
        except ExpressionError as err:
            return str(err)
    return ""


def _matcher(terms: Sequence[Term], features: Features, prefix: str) -> tuple[bool, TemplateData, Failure | None]:
    data: TemplateData = {}
    for i, term in enumerate(terms):
        path = f"{prefix}term[{i}]"
        name = term.feature.lower()
        dom, dot, nam = term.feature.partition(".")
        if not dot:
            dom, nam = name, ""
        data.setdefault(dom, {})
        if not features.has(name):
            return False, data, Failure(path, term.feature, actual="feature absent")
        keys, values = features.flags.get(name), features.attributes.get(name)
        insts = features.instances.get(name)
        ok, elems = True, list[Element]()
        if term.expressions is not None:
            ok, elems = match_multi(term.expressions, keys, values, insts)
        if ok and term.match_name is not None:
            ok, more = match_names_multi(term.match_name, keys, values, insts)
            elems = elems + more
        data[dom][nam] = data[dom].get(nam, []) + elems
        if not ok:
            try:
                fail = _explain(term, path, name, features)
            except (ExpressionError, StopIteration):  # an expression nfd-master never reached is invalid
                fail = Failure(path, term.feature, actual="does not match")
            hidden = _hidden_error(term, features, name)
            if hidden:
                fail = dataclasses.replace(fail, may_error=hidden)
            return False, data, fail
    return True, data, None


def _templates(rule: Rule, data: TemplateData, labels: dict[str, str], vars_: dict[str, str]) -> None:
    if rule.labels_template:
        labels.update(expand_map(rule.labels_template, data))
    if rule.vars_template:
        vars_.update(expand_map(rule.vars_template, data))


def execute(rule: Rule, features: Features) -> Outcome:
    """NFD's ``Execute(rule, features, failFast=true)``, keeping why it did not match."""
    labels: dict[str, str] = {}
    vars_: dict[str, str] = {}
    try:
        if rule.match_any:
            any_ok, fails = False, []
            for j, terms in enumerate(rule.match_any):
                ok, data, fail = _matcher(terms, features, f"matchAny[{j}].")
                if ok:
                    any_ok = True
                    if not rule.labels_template and not rule.vars_template:
                        break  # no template: the first matching element is enough
                    _templates(rule, data, labels, vars_)
                elif fail is not None:
                    fails.append(fail)
            if not any_ok:
                return Outcome(False, failures=tuple(fails))
        if rule.match_features:
            ok, data, fail = _matcher(rule.match_features, features, "")
            if not ok:
                return Outcome(False, failures=(fail,) if fail else ())
            _templates(rule, data, labels, vars_)
    except Unsupported as err:
        return Outcome(False, error=str(err), unsupported=True)
    except (ExpressionError, TemplateError) as err:
        return Outcome(False, error=str(err))
    labels.update(rule.labels)
    vars_.update(rule.vars)
    return Outcome(
        True,
        labels=labels,
        vars=vars_,
        annotations=dict(rule.annotations),
        extended_resources=dict(rule.extended_resources),
        taints=rule.taints,
    )
