"""One match expression, a set of them on one feature, and matchName (NFD's expression.go semantics).

An expression is evaluated against an element that may be absent
(``valid=False``). ``Exists``, ``DoesNotExist`` and the internal match-any op
check their arity before looking at the element; every other op is false on an
absent element (or a flag, which carries no value) without checking its values.
Integers are parsed as Go's ``strconv.Atoi`` does, versions as Masterminds
semver's ``NewVersion`` with the pre-release dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpulabel.errors import ExpressionError

__all__ = [
    "OPS",
    "Element",
    "Expression",
    "ExpressionError",
    "evaluate",
    "go_atoi",
    "match_instances",
    "match_keys",
    "match_multi",
    "match_names_multi",
    "match_values",
    "parse_version",
]

Element = dict[str, str]  # a matched element: {Name}, {Name, Value} or an instance's attributes

OPS = (
    "In",
    "NotIn",
    "InRegexp",
    "Exists",
    "DoesNotExist",
    "Gt",
    "Ge",
    "Lt",
    "Le",
    "GtLt",
    "GeLe",
    "IsTrue",
    "IsFalse",
)
MATCH_ANY = ""  # the internal always-true op; the CRD's enum keeps it out of the API


@dataclass(frozen=True, slots=True)
class Expression:
    op: str
    value: tuple[str, ...] = ()
    type: str = ""

    def describe(self) -> str:
        """``Gt [5]``, ``Exists``, ``Gt [5.15] (version)``."""
        text = self.op or "Any"
        if self.value:
            text += " [" + ",".join(self.value) + "]"
        if self.type:
            text += f" ({self.type})"
        return text


_INT64_MAX = 2**63 - 1
_ATOI = re.compile(r"[+-]?[0-9]+", re.ASCII)


def go_atoi(text: str) -> int:
    """``strconv.Atoi`` on a 64-bit platform: base 10, an optional sign, no spaces, int64 range."""
    if not _ATOI.fullmatch(text):
        raise ValueError(text)
    n = int(text)
    if n > _INT64_MAX or n < -_INT64_MAX - 1:
        raise ValueError(text)
    return n


# Masterminds semver v3 NewVersion (lenient: v prefix, 1-3 numeric parts, pre-release and build)
_SEMVER = re.compile(
    r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?",
    re.ASCII,
)
_UINT64_MAX = 2**64 - 1


def parse_version(text: str) -> tuple[int, int, int]:
    """A version as NFD compares it: (major, minor, patch); the pre-release and build parts are dropped."""
    m = _SEMVER.fullmatch(text)
    if m is None:
        raise ValueError(text)
    parts = [int(m.group(1)), int((m.group(2) or ".0")[1:]), int((m.group(3) or ".0")[1:])]
    if any(p > _UINT64_MAX for p in parts):
        raise ValueError(text)
    pre = m.group(5)
    if pre:
        for ident in pre.split("."):
            if ident.isdigit() and len(ident) > 1 and ident.startswith("0"):
                raise ValueError(text)  # a numeric pre-release identifier with a leading zero
    return parts[0], parts[1], parts[2]


def _regexp(pattern: str) -> re.Pattern[str] | None:
    """``pattern`` compiled (the re module keeps recent patterns compiled), or None if it is not valid."""
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _values(e: Expression, n: int | None, at_least: int = 0) -> None:
    if n is not None and len(e.value) != n:
        if n == 0:
            raise ExpressionError(
                f"invalid expression, 'value' field must be empty for Op {e.op!r} (have {list(e.value)})"
            )
        raise ExpressionError(
            f"invalid expression, 'value' field must contain exactly {'one element' if n == 1 else 'two elements'} "
            f"for Op {e.op!r} (have {list(e.value)})"
        )
    if at_least and len(e.value) < at_least:
        raise ExpressionError(f"invalid expression, 'value' field must be non-empty for Op {e.op!r}")


def _compare(e: Expression, value: str, bounds: Sequence[str]) -> tuple[object, list[object]]:
    if e.type == "version":
        try:
            left: object = parse_version(value)
        except ValueError:
            raise ExpressionError(f"not a version {value!r}") from None
        right: list[object] = []
        for b in bounds:
            try:
                right.append(parse_version(b))
            except ValueError:
                raise ExpressionError(f"not a version {b!r} in {e.describe()}") from None
        return left, right
    if e.type:
        raise ExpressionError(f"invalid value type {e.type!r} for Op {e.op!r}")
    try:
        left = go_atoi(value)
    except ValueError:
        raise ExpressionError(f"not a number {value!r}") from None
    right = []
    for b in bounds:
        try:
            right.append(go_atoi(b))
        except ValueError:
            raise ExpressionError(f"not a number {b!r} in {e.describe()}") from None
    return left, right


def evaluate(e: Expression, valid: bool, value: str | None) -> bool:
    """NFD's ``evaluateMatchExpression``: ``valid`` says the element exists; ``value`` is None for a flag."""
    op = e.op
    if op != MATCH_ANY and op not in OPS:
        raise ExpressionError(f"invalid Op {op!r}")
    if op in (MATCH_ANY, "Exists", "DoesNotExist"):
        _values(e, 0)
        return True if op == MATCH_ANY else (valid if op == "Exists" else not valid)
    if not valid or value is None:
        return False
    if op in ("In", "NotIn", "InRegexp"):
        _values(e, None, at_least=1)
        if op == "In":
            return value in e.value
        if op == "NotIn":
            return value not in e.value
        patterns = [_regexp(v) for v in e.value]
        if any(p is None for p in patterns):
            raise ExpressionError(  # sic: NFD's message has the typo
                f"invalid expressiom, 'value' field must only contain valid regexps for Op {op!r} "
                f"(have {list(e.value)})"
            )
        return any(p.search(value) is not None for p in patterns if p is not None)
    if op in ("Gt", "Ge", "Lt", "Le"):
        _values(e, 1)
        left, (right,) = _compare(e, value, e.value)
        lt, eq = left < right, left == right  # type: ignore[operator]
        return bool({"Gt": not lt and not eq, "Ge": not lt, "Lt": lt, "Le": lt or eq}[op])
    if op in ("GtLt", "GeLe"):
        _values(e, 2)
        v, (lo, hi) = _compare(e, value, e.value)
        if e.type != "version" and lo >= hi:  # type: ignore[operator]
            raise ExpressionError(
                f"invalid expression, value[0] must be less than Value[1] for Op {op!r} (have {list(e.value)})"
            )
        if op == "GtLt":
            return bool(lo < v < hi)  # type: ignore[operator]
        return bool(lo <= v <= hi)  # type: ignore[operator]
    _values(e, 0)  # IsTrue, IsFalse
    return value == ("true" if op == "IsTrue" else "false")


def _by_name(elements: list[Element]) -> list[Element]:
    return sorted(elements, key=lambda el: el["Name"])  # stable: a flag before its attribute twin


def match_instances(
    exprs: Sequence[tuple[str, Expression]], instances: Iterable[Mapping[str, str]]
) -> tuple[bool, list[Element]]:
    """The instances that satisfy every expression (each instance on its own), in their order."""
    out: list[Element] = []
    for attrs in instances:
        ok = True
        for name, e in exprs:
            if not evaluate(e, name in attrs, attrs.get(name)):
                ok = False
                break
        if ok:
            out.append(dict(attrs))
    return bool(out), out


def match_multi(
    exprs: Sequence[tuple[str, Expression]],
    keys: frozenset[str] | None,
    values: Mapping[str, str] | None,
    instances: Sequence[Mapping[str, str]] | None,
) -> tuple[bool, list[Element]]:
    """``MatchMulti`` with failFast: flags and attributes as a union per expression, instances apart.

    ``None`` is a feature type the node does not have (or whose elements are null).
    """
    matched = keys is not None or values is not None
    elems: list[Element] = []
    for name, e in exprs:
        mk = mv = False
        if keys is not None:
            mk = evaluate(e, name in keys, None)
            if mk:
                elems.append({"Name": name})
            elif e.op == "DoesNotExist":
                matched, elems = False, []
                break
        if values is not None:
            mv = evaluate(e, name in values, values.get(name))
            if mv:
                elems.append({"Name": name, "Value": values.get(name, "")})
            elif e.op == "DoesNotExist":
                matched, elems = False, []
                break
        if not mk and not mv:
            matched, elems = False, []
            break
    elems = _by_name(elems)
    ok, inst = match_instances(exprs, instances or ())
    return matched or ok, elems + inst


def match_names_multi(
    e: Expression,
    keys: frozenset[str] | None,
    values: Mapping[str, str] | None,
    instances: Sequence[Mapping[str, str]] | None,
) -> tuple[bool, list[Element]]:
    """``MatchNamesMulti``: the expression against element names; every matching element is output."""
    out: list[Element] = []
    for k in keys or ():
        if evaluate(e, True, k):
            out.append({"Name": k})
    for k, v in (values or {}).items():
        if evaluate(e, True, k):
            out.append({"Name": k, "Value": v})
    out = _by_name(out)
    for attrs in instances or ():
        if any([evaluate(e, True, k) for k in attrs]):  # every name: an error in any of them counts
            out.append(dict(attrs))
    return bool(out), out


def match_keys(exprs: Sequence[tuple[str, Expression]], keys: frozenset[str] | None) -> tuple[bool, list[Element]]:
    """``MatchGetKeys``: a pure flag feature; an empty set matches even no keys."""
    elems: list[Element] = []
    for name, e in exprs:
        if not evaluate(e, keys is not None and name in keys, None):
            return False, []
        elems.append({"Name": name})
    return True, _by_name(elems)


def match_values(
    exprs: Sequence[tuple[str, Expression]], values: Mapping[str, str] | None
) -> tuple[bool, list[Element]]:
    """``MatchGetValues``: a pure attribute feature; an empty set matches even no values."""
    values = values or {}
    elems: list[Element] = []
    for name, e in exprs:
        if not evaluate(e, name in values, values.get(name)):
            return False, []
        elems.append({"Name": name, "Value": values.get(name, "")})
    return True, _by_name(elems)
