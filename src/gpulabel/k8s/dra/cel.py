"""The CEL environment of DRA device selectors (``k8s.io/dynamic-resource-allocation/cel``).

Built on ``cel-expr-python`` (Google's C++ CEL runtime and type checker; the
choice and its measurements are in docs/dra.md). Two environments are made:

- a *checking* environment that declares what the API server's does for a
  selector: ``device`` with ``driver``, ``allowMultipleAllocations``,
  ``attributes`` (domain -> name -> any) and ``capacity`` (domain -> name ->
  ``kubernetes.Quantity``); ``semver()``/``isSemver()`` with
  ``isGreaterThan``/``isLessThan``/``compareTo``/``major``/``minor``/``patch``;
  ``quantity()``/``isQuantity()`` with ``compareTo``/``isGreaterThan``/
  ``isLessThan``/``add``/``sub``/``asInteger``/``asApproximateFloat``/
  ``isInteger``/``sign``; ``cel.bind``, optionals and the strings extension.
  Its errors read as the API server's (``compilation failed: ERROR: <input>:1:5:
  ...``), and the result must be ``bool`` (or the attribute type);
- an *evaluating* environment with the same functions, where versions and
  quantities travel as tagged maps (the runtime cannot carry opaque Python
  values), implemented in :mod:`gpulabel.k8s.dra.values`.

At evaluation a device's attributes are grouped by domain (an unqualified name
belongs to the driver's domain), an unknown domain reads as an empty map, and a
missing attribute is the runtime error ``no such key: <name>``, as upstream.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from gpulabel.errors import CelError
from gpulabel.k8s.dra.values import (
    QuantityError,
    SemverError,
    compare_semver,
    parse_quantity,
    parse_semver,
)
from gpulabel.k8s.quantity import NANOS, Quantity

__all__ = [
    "COST_LIMIT_EXCEEDED",
    "MAX_EXPRESSION_LENGTH",
    "CelError",
    "Selector",
    "compile_selector",
    "device_input",
    "selector_cost",
]

MAX_EXPRESSION_LENGTH = 10 * 1024  # resource.CELSelectorExpressionMaxLength, in bytes
COST_LIMIT_EXCEEDED = "too complex, exceeds cost limit"  # validateCELSelector, over CELSelectorExpressionMaxCost
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_SEMVER = "$kubernetes.Semver"
_QUANTITY = "$kubernetes.Quantity"


# -- the runtime value encodings ------------------------------------------------------


def semver_value(text: str) -> dict[str, str]:
    parse_semver(text)  # raises SemverError with blang's message
    return {_SEMVER: text}


def quantity_value(text: str) -> dict[str, str]:
    parse_quantity(text)
    return {_QUANTITY: text}


def _sv(v: Mapping[str, Any]) -> Any:
    text = v.get(_SEMVER)
    if text is None:
        raise TypeError("no such overload")
    return parse_semver(text)


def _q(v: Mapping[str, Any]) -> Fraction:
    text = v.get(_QUANTITY)
    if text is None:
        raise TypeError("no such overload")
    return parse_quantity(text)


def _cmp(a: Fraction, b: Fraction) -> int:
    return (a > b) - (a < b)


def _is_semver(s: str) -> bool:
    try:
        parse_semver(s)
    except SemverError:
        return False
    return True


def _is_quantity(s: str) -> bool:
    try:
        parse_quantity(s)
    except QuantityError:
        return False
    return True


def _quantity_text(value: Fraction) -> str:
    """A sum or difference carried through the runtime as its canonical quantity (always whole nano-units)."""
    return str(Quantity(int(value * NANOS)))


def _quantity_int(v: Mapping[str, Any]) -> int:
    q = _q(v)
    if q.denominator != 1 or not -(1 << 63) <= q.numerator < (1 << 63):
        raise ValueError("cannot convert value to integer")
    return q.numerator


# name -> (overload id, result, params, member, impl); types are resolved per environment
_FUNCTIONS: list[tuple[str, str, str, tuple[str, ...], bool, Any]] = [
    ("semver", "string_to_semver", "S", ("string",), False, semver_value),
    ("isSemver", "is_semver_string", "bool", ("string",), False, _is_semver),
    (
        "isGreaterThan",
        "semver_is_greater_than",
        "bool",
        ("S", "S"),
        True,
        lambda a, b: compare_semver(_sv(a), _sv(b)) == 1,
    ),
    ("isLessThan", "semver_is_less_than", "bool", ("S", "S"), True, lambda a, b: compare_semver(_sv(a), _sv(b)) == -1),
    ("compareTo", "semver_compare_to", "int", ("S", "S"), True, lambda a, b: compare_semver(_sv(a), _sv(b))),
    ("major", "semver_major", "int", ("S",), True, lambda a: _sv(a).major),
    ("minor", "semver_minor", "int", ("S",), True, lambda a: _sv(a).minor),
    ("patch", "semver_patch", "int", ("S",), True, lambda a: _sv(a).patch),
    ("quantity", "string_to_quantity", "Q", ("string",), False, quantity_value),
    ("isQuantity", "is_quantity_string", "bool", ("string",), False, _is_quantity),
    ("sign", "quantity_sign", "int", ("Q",), True, lambda a: _cmp(_q(a), Fraction(0))),
    ("isGreaterThan", "quantity_is_greater_than", "bool", ("Q", "Q"), True, lambda a, b: _q(a) > _q(b)),
    ("isLessThan", "quantity_is_less_than", "bool", ("Q", "Q"), True, lambda a, b: _q(a) < _q(b)),
    ("compareTo", "quantity_compare_to", "int", ("Q", "Q"), True, lambda a, b: _cmp(_q(a), _q(b))),
    ("asApproximateFloat", "quantity_get_float", "double", ("Q",), True, lambda a: float(_q(a))),
    ("asInteger", "quantity_get_int", "int", ("Q",), True, _quantity_int),
    ("isInteger", "quantity_is_integer", "bool", ("Q",), True, lambda a: _q(a).denominator == 1),
    ("add", "quantity_add", "Q", ("Q", "Q"), True, lambda a, b: {_QUANTITY: _quantity_text(_q(a) + _q(b))}),
    ("add", "quantity_add_int", "Q", ("Q", "int"), True, lambda a, b: {_QUANTITY: _quantity_text(_q(a) + b)}),
    ("sub", "quantity_sub", "Q", ("Q", "Q"), True, lambda a, b: {_QUANTITY: _quantity_text(_q(a) - _q(b))}),
    ("sub", "quantity_sub_int", "Q", ("Q", "int"), True, lambda a, b: {_QUANTITY: _quantity_text(_q(a) - b)}),
]


def _dispatch(impls: list[tuple[str, Any]]) -> Any:
    if len(impls) == 1:
        return impls[0][1]
    by_tag = {(_SEMVER if first == "S" else _QUANTITY): impl for first, impl in impls}

    def call(receiver: Any, *args: Any) -> Any:
        for tag, impl in by_tag.items():
            if isinstance(receiver, Mapping) and tag in receiver:
                return impl(receiver, *args)
        raise TypeError("no such overload")

    return call


class _Envs:
    """The two environments, built once on first use (importing the C++ runtime costs ~50 ms)."""

    _instance: _Envs | None = None

    def __init__(self) -> None:
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

        self.cel = cel
        t = cel.Type
        semver_t, quantity_t = t.AbstractType("kubernetes.Semver"), t.AbstractType("kubernetes.Quantity")
        tagged = t.Map(t.STRING, t.DYN)
        basic = {"string": t.STRING, "bool": t.BOOL, "int": t.INT, "double": t.DOUBLE}

        def decls(check: bool) -> list[Any]:
            types = {**basic, "S": semver_t if check else tagged, "Q": quantity_t if check else tagged}
            by_name: dict[str, list[Any]] = {}
            if check:
                for name, oid, result, params, member, impl in _FUNCTIONS:
                    by_name.setdefault(name, []).append(
                        cel.Overload(oid, types[result], [types[p] for p in params], is_member=member, impl=impl)
                    )
                return [cel.FunctionDecl(name, overloads) for name, overloads in by_name.items()]
            # At run time versions and quantities are both tagged maps: one overload per
            # signature that dispatches on the tag of its receiver.
            merged: dict[tuple[str, tuple[str, ...], bool], list[tuple[str, Any]]] = {}
            results: dict[tuple[str, tuple[str, ...], bool], str] = {}
            for name, _oid, result, params, member, impl in _FUNCTIONS:
                sig = (name, tuple("M" if p in ("S", "Q") else p for p in params), member)
                merged.setdefault(sig, []).append((params[0], impl))
                results[sig] = "M" if result in ("S", "Q") else result
            types["M"] = tagged
            for sig, impls in merged.items():
                name, params, member = sig
                oid = f"gpulabel_{name}_{'_'.join(params)}"
                by_name.setdefault(name, []).append(
                    cel.Overload(
                        oid, types[results[sig]], [types[p] for p in params], is_member=member, impl=_dispatch(impls)
                    )
                )
            return [cel.FunctionDecl(name, overloads) for name, overloads in by_name.items()]

        def extensions() -> list[Any]:
            return [ext_bindings.ExtBindings(), ext_optional.ExtOptional(), ext_strings.ExtStrings()]

        # The API server declares device as an object; a map of dyn gives the same
        # checks for driver/attributes/capacity lookups (see _device_fields below).
        # The checking environment sees "device.<field>" rewritten to "device_<field>" (same length, so
        # error columns stay put): each field gets its own type, as in the API server's object type.
        self.check = cel.NewEnv(
            variables={
                "device": t.Map(t.STRING, t.DYN),
                "device_driver": t.STRING,
                "device_allowMultipleAllocations": t.BOOL,
                "device_attributes": t.Map(t.STRING, t.Map(t.STRING, t.DYN)),
                "device_capacity": t.Map(t.STRING, t.Map(t.STRING, quantity_t)),
            },
            functions=decls(True),
            extensions=extensions(),
        )
        self.run = cel.NewEnv(variables={"device": tagged}, functions=decls(False), extensions=extensions())

    @classmethod
    def get(cls) -> _Envs:
        if cls._instance is None:
            cls._instance = _Envs()
        return cls._instance


_TYPE_NAMES = {
    "BOOL": "bool",
    "INT": "int",
    "UINT": "uint",
    "DOUBLE": "double",
    "STRING": "string",
    "BYTES": "bytes",
    "NULL": "null",
    "DYN": "dyn",
    "TIMESTAMP": "google.protobuf.Timestamp",
    "DURATION": "google.protobuf.Duration",
    "TYPE": "type",
}


def go_type_name(name: str) -> str:
    """cel-cpp's type name (``LIST<INT>``) as cel-go prints it (``list(int)``)."""
    m = re.fullmatch(r"(LIST|MAP|OPTIONAL_TYPE|TYPE)<(.*)>", name)
    if m:
        inner = [go_type_name(p.strip()) for p in _split_params(m.group(2))]
        head = {"LIST": "list", "MAP": "map", "OPTIONAL_TYPE": "optional_type", "TYPE": "type"}[m.group(1)]
        return f"{head}({', '.join(inner)})"
    return _TYPE_NAMES.get(name, name)


def _split_params(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


_DEVICE_FIELDS = ("driver", "allowMultipleAllocations", "attributes", "capacity")
_FIELD_RE = re.compile(r"""(?<![\w.])device\s*\.\s*([A-Za-z_]\w*)""")
_STRING_RE = re.compile(r"""(?:[rR]?)("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# constructs that can reach an attribute without naming it
_OPAQUE_RE = re.compile(
    r"\b(?:exists|exists_one|all|map|filter|size|keys|values|transformMap|transformList|string)\s*\(|\bin\b"
)


def _cel_error_text(raw: str) -> str:
    """cel-cpp's status text without its status code decorations."""
    text = re.sub(r"^[A-Z_]+: ", "", raw.strip())
    return re.sub(r" \[[A-Z_]+\]$", "", text)


def _any_range(expression: str, offset: int) -> str:
    """cel-go's issue for a comprehension over an attribute's value (``any`` with list attributes off)."""
    line = expression.count("\n", 0, offset) + 1
    start = expression.rfind("\n", 0, offset) + 1
    text = expression.splitlines()[line - 1] if expression else ""
    return (
        f"ERROR: <input>:{line}:{offset - start + 1}: expression of type 'any' cannot be range of a comprehension"
        f" (must be list, map, or dynamic)\n{_caret(text, offset - start)}"
    )


def _caret(expression: str, column: int) -> str:
    return f" | {expression}\n | {'.' * column}^"


@dataclass(frozen=True)
class Selector:
    """One compiled selector expression.

    ``error`` is the API server's validation detail when the expression does
    not compile (``compilation failed: ...``, ``must evaluate to bool ...``);
    ``names`` the identifiers and string literals it mentions, used to key the
    evaluation cache, or ``None`` when it may read attributes it does not name.
    """

    expression: str
    error: str | None
    names: frozenset[str] | None
    program: Any = field(default=None, repr=False, compare=False)
    _cache: dict[Any, bool | CelError] = field(default_factory=dict, repr=False, compare=False)

    def evaluate(self, device: DeviceInput) -> bool:
        """Whether ``device`` matches; raises :class:`CelError` as the scheduler's evaluation fails."""
        key = device.key(self.names)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._run(device)
        if isinstance(hit, CelError):
            raise hit
        return hit

    def _run(self, device: DeviceInput) -> bool | CelError:
        envs = _Envs.get()
        data = device.data(self.names)
        try:
            value = self.program.eval(data={"device": data})
        except Exception as err:  # the runtime raises for errors inside function implementations
            return CelError(_runtime_message(str(err)))
        kind = value.type().name()
        if kind == "ERROR" or value.type() == envs.cel.Type.ERROR:
            return CelError(_runtime_message(str(value.value())))
        result = value.value()
        if kind != "BOOL" or not isinstance(result, bool):
            return CelError(
                f"CEL result of type {go_type_name(kind)} could not be converted to bool: "
                f"type conversion error from '{go_type_name(kind)}' to 'bool'"
            )
        return result

    def read_names(self) -> frozenset[str]:
        return self.names or frozenset()


def _runtime_message(raw: str) -> str:
    text = _cel_error_text(raw)
    m = re.fullmatch(r'Key not found in map : "?(.*?)"?', text)
    if m:
        return f"no such key: {m.group(1)}"
    m = re.fullmatch(r"No matching overloads found : (.*)", text)
    if m:
        return "no such overload"
    return text


def compile_selector(expression: str) -> Selector:
    """``expression`` compiled (each call compiles: a run keeps its selectors in a ``DraEvaluator``)."""
    envs = _Envs.get()
    expression = _SURROGATE_RE.sub("\ufffd", expression)  # as Go's decoders read invalid UTF-8: U+FFFD
    if len(expression.encode()) > MAX_EXPRESSION_LENGTH:  # Go's len: bytes
        return Selector(expression, f"must be no more than {MAX_EXPRESSION_LENGTH} bytes", None)
    out_type: str | None = None
    checked = None
    try:
        checked = envs.check.compile(_typed_fields(expression))
        out_type = checked.return_type().name()
    except Exception as err:
        raw = _cel_error_text(str(err))
        if _only_cross_numeric(raw):
            out_type = "BOOL"  # CrossTypeNumericComparisons: cel-go accepts 1 < 2.0; the runtime compares them
    if out_type is None:
        issues = _go_issues(raw, expression)
        if "Syntax error" in issues:
            return Selector(expression, "compilation failed: " + issues, None)
        return Selector(expression, "compilation failed: " + (_unknown_field(expression) or issues), None)
    unknown = _unknown_field(expression)
    if unknown:
        return Selector(expression, "compilation failed: " + unknown, None)
    if out_type not in ("BOOL", "DYN"):
        return Selector(expression, f"must evaluate to bool or the unknown type, not {go_type_name(out_type)}", None)
    from gpulabel.k8s.dra.celcost import MAX_COST, attribute_range_offset, estimate_cost

    if checked is not None and (at := attribute_range_offset(checked.serialize())) is not None:
        return Selector(expression, "compilation failed: " + _any_range(expression, at), None)
    program = envs.run.compile(expression, disable_check=True)

    # checked: with types and overloads, as the API server estimates; else (1 < 2.0) the parsed tree
    if estimate_cost((checked if checked is not None else program).serialize()) > MAX_COST:
        return Selector(expression, COST_LIMIT_EXCEEDED, None)  # validateCELSelector: field.Forbidden
    names: frozenset[str] | None = None
    if not _OPAQUE_RE.search(_STRING_RE.sub('""', expression)):
        literals = {_unquote(s) for s in _STRING_RE.findall(expression)}
        names = frozenset(_IDENT_RE.findall(_STRING_RE.sub(" ", expression))) | literals
    return Selector(expression, None, names, program)


def selector_cost(expression: str) -> int:
    """The API server's estimated worst-case cost of a selector that type-checks (``CompilationResult.MaxCost``)."""
    from gpulabel.k8s.dra.celcost import estimate_cost

    return estimate_cost(_Envs.get().check.compile(_typed_fields(expression)).serialize())


_FIELD_TOKEN_RE = re.compile(r"(?<![\w.])device\.(driver|allowMultipleAllocations|attributes|capacity)\b")


def _typed_fields(expression: str) -> str:
    """``device.capacity`` -> ``device_capacity`` outside string literals (same length)."""
    out, last = [], 0
    for m in _STRING_RE.finditer(expression):
        out.append(_FIELD_TOKEN_RE.sub(r"device_\1", expression[last : m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_FIELD_TOKEN_RE.sub(r"device_\1", expression[last:]))
    return "".join(out)


_OVERLOAD_RE = re.compile(
    r"ERROR: <input>:(\d+):(\d+): found no matching overload for '([^']+)' applied to '\((.*)\)'"
    r"(\n \| [^\n]*\n \| [.]*\^)?"
)
_LITERAL_RE = re.compile(r"""-?\d+(?:\.\d+)?u?|null|true|false|"[^"\\]*"|'[^'\\]*'""")


def _logical_operand(expression: str, op_at: int, kinds: list[str]) -> tuple[int, str] | None:
    """cel-go checks each operand of && and || to be bool: where the first literal one that is not sits."""
    left, right = kinds
    if left not in ("bool", "any", "dyn", "!error!"):
        end = op_at
        while end > 0 and expression[end - 1] == " ":
            end -= 1
        m = None
        for cand in _LITERAL_RE.finditer(expression[:end]):
            if cand.end() == end:
                m = cand
        if m is None:
            return None
        return m.start(), left
    if right not in ("bool", "any", "dyn", "!error!"):
        start = op_at + 2
        while start < len(expression) and expression[start] == " ":
            start += 1
        m = _LITERAL_RE.match(expression, start)
        if m is None:
            return None
        return start, right
    return None


def _go_issues(text: str, expression: str) -> str:
    """cel-cpp's issue text as cel-go writes it for the same expression."""
    text = _FIELD_TOKEN_RE.sub(lambda m: m.group(0), text)
    text = re.sub(r"\bdevice_(driver|allowMultipleAllocations|attributes|capacity)\b", r"device.\1", text)
    text = text.replace("'\\u003F'", "'?'")
    text = text.replace("has() argument must be a field selection", "invalid argument to has() macro")
    text = re.sub(
        r"expression of type '([^']+)' cannot be the operand of a select operation",
        r"type '\1' does not support field selection",
        text,
    )

    def overload(m: re.Match[str]) -> str:
        line, col, fn, args = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        kinds = (
            [go_type_name(a.strip()).replace("dyn", "any").replace("null_type", "null") for a in _split_params(args)]
            if args
            else []
        )
        if fn in ("_&&_", "_||_") and len(kinds) == 2:
            logical = _logical_operand(expression, col - 1, kinds)
            if logical is not None:
                at, kind = logical
                return (
                    f"ERROR: <input>:{line}:{at + 1}: expected type 'bool' but found '{kind}'\n{_caret(expression, at)}"
                )
        start = col - 1 - len(fn)  # the column is the call's "("; a member call has "." before the name
        if kinds and start >= 1 and expression[start - 1 : start] == "." and expression[start : col - 1] == fn:
            applied = f"{kinds[0]}.({', '.join(kinds[1:])})"
        else:
            applied = f"({', '.join(kinds)})"
        return f"ERROR: <input>:{line}:{col}: found no matching overload for '{fn}' applied to '{applied}'" + (
            m.group(5) or ""
        )

    return _OVERLOAD_RE.sub(overload, text)


_ISSUE_RE = re.compile(r"^ERROR: <input>:\d+:\d+: (.*)$", re.M)
_NUMERIC = {"INT", "UINT", "DOUBLE", "int", "uint", "double"}


def _only_cross_numeric(issues: str) -> bool:
    """Whether every issue is an ordering of two different numeric types (cel-go allows those)."""
    found = _ISSUE_RE.findall(issues)
    for text in found:
        m = re.fullmatch(r"found no matching overload for '_(?:<|<=|>|>=)_' applied to '\((\w+), (\w+)\)'", text)
        if not m or m.group(1) not in _NUMERIC or m.group(2) not in _NUMERIC or m.group(1) == m.group(2):
            return False
    return bool(found)


def _unknown_field(expression: str) -> str | None:
    """cel-go's error for ``device.<name>`` when the device object type has no such field (the first one)."""
    stripped = _STRING_RE.sub(lambda m: " " * len(m.group(0)), expression)
    for m in _FIELD_RE.finditer(stripped):
        if m.group(1) not in _DEVICE_FIELDS:
            col = m.start(1) - 1
            return f"ERROR: <input>:1:{col + 1}: undefined field '{m.group(1)}'\n{_caret(expression, col)}"
    return None


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    return body.encode().decode("unicode_escape") if "\\" in body else body


# -- devices as CEL sees them -------------------------------------------------------


@dataclass(frozen=True)
class DeviceInput:
    """A device as the selector reads it: driver, attributes and capacity by domain."""

    driver: str
    attributes: Mapping[str, Mapping[str, Any]]  # domain -> name -> runtime value
    capacity: Mapping[str, Mapping[str, Any]]
    allow_multiple: bool = False
    _keys: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def key(self, names: frozenset[str] | None) -> Any:
        """What an expression naming only ``names`` can see of this device (``None``: everything)."""
        found = self._keys.get(names)
        if found is None:

            def part(maps: Mapping[str, Mapping[str, Any]]) -> tuple[Any, ...]:
                return tuple(
                    sorted(
                        (d, n, repr(v))
                        for d, inner in maps.items()
                        for n, v in inner.items()
                        if names is None or n in names
                    )
                )

            found = self._keys[names] = (self.driver, self.allow_multiple, part(self.attributes), part(self.capacity))
        return found

    def data(self, names: frozenset[str] | None) -> dict[str, Any]:
        attrs: dict[str, Any] = {d: dict(v) for d, v in self.attributes.items()}
        caps: dict[str, Any] = {d: dict(v) for d, v in self.capacity.items()}
        # An unknown domain reads as an empty map upstream: add the literals the
        # expression names, so "device.attributes[\"x\"].y" fails on y, not on x.
        for name in names or ():
            attrs.setdefault(name, {})
            caps.setdefault(name, {})
        return {
            "driver": self.driver,
            "allowMultipleAllocations": self.allow_multiple,
            "attributes": attrs,
            "capacity": caps,
        }


def device_input(
    driver: str,
    attributes: Mapping[str, tuple[str, Any]],
    capacity: Mapping[str, str],
    allow_multiple: bool = False,
) -> DeviceInput:
    """Group ``attributes`` (name -> (type, value)) and ``capacity`` (name -> quantity string) by domain."""
    attrs: dict[str, dict[str, Any]] = {}
    for name, (kind, value) in attributes.items():
        domain, _, ident = name.rpartition("/") if "/" in name else (driver, "", name)
        attrs.setdefault(domain, {})[ident] = semver_value(value) if kind == "version" else value
    caps: dict[str, dict[str, Any]] = {}
    for name, value in capacity.items():
        domain, _, ident = name.rpartition("/") if "/" in name else (driver, "", name)
        caps.setdefault(domain, {})[ident] = quantity_value(value)
    return DeviceInput(driver, attrs, caps, allow_multiple)
