"""The estimated cost of a DRA selector, as the API server estimates it before it stores one.

``validateCELSelector`` (``pkg/apis/resource/validation``) refuses a selector
whose estimated worst-case cost exceeds ``CELSelectorExpressionMaxCost``
(1,000,000) with ``Forbidden: too complex, exceeds cost limit``; the scheduler
then runs it with that same number as cel-go's runtime cost limit
(``k8s.io/dynamic-resource-allocation/cel`` ``CompileCELExpression``). A
selector the estimate admits cannot cost more than the estimate at run time, so
refusing what the estimate refuses bounds every evaluation gpulabel runs.

cel-expr-python does not estimate costs. The checked expression it serializes
(a ``cel.expr.CheckedExpr`` protobuf: the tree, each node's type and each
call's overload) is decoded here and costed by the rules of cel-go's
``checker/cost.go``:

- a literal costs 0, an identifier 1, a field selection on a map or an object 1
  (plus its operand), ``has()`` 1;
- a call costs its arguments plus 1, except: ``&&``/``||`` and ``?:`` (their
  arguments only), string and bytes concatenation (the result's size x 0.1, the
  result's size the sum of both sides'), list concatenation (1), string
  comparisons and ``==`` (the smaller side's size x 0.1), ``in`` a list (the list's
  size), ``contains`` (size x size x 0.01), ``matches`` (string x pattern / 4 x 0.1),
  ``startsWith``/``endsWith`` (the argument's size x 0.1);
- a list or map literal costs its entries plus 10 (list) or 30 (map);
- a comprehension (``all``, ``exists``, ``map``, ``filter``) costs its range and
  initial value plus, per element of the range (its estimated size), its
  condition and step; ``cel.bind`` costs its value and its body once.

Sizes: a string literal is its number of characters, a number or a bool 1;
what is read from ``device`` has the maximum sizes the DRA environment
declares (32 domains and 32 attributes or capacities per device, 64
characters or list values per attribute, a driver name of 63). The
Kubernetes library's estimates (``k8s.io/apiserver/pkg/cel/library/cost.go``)
are followed for ``lowerAscii``/``upperAscii``/``substring``/``trim``
(traversal, same size), ``replace`` (twice the traversal; the longest result
it can build), ``split`` (twice the traversal), ``find``/``findAll`` and
``indexOf`` on a string. Anything else is of unknown size, which cel-go counts
as the largest number: an expression concatenating it is then too complex for
both.

Checked: the 31 rows of ``compile_test.go`` that the DRA environment here
accepts give upstream's ``expectCost`` exactly (``tests/cel_cost_rows.py``).
Not modelled (counted as a plain call, 1 plus the arguments): ``join``, the
``includes`` function (not in this environment), ``quantity``/``semver``
string parsing (O(1) there too when called as functions, as here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["MAX_COST", "UNKNOWN", "attribute_range_offset", "estimate_cost"]

MAX_COST = 1_000_000  # resource.CELSelectorExpressionMaxCost (pkg/apis/resource/types.go)
UNKNOWN = (1 << 64) - 1  # cel-go's unknown size: math.MaxUint64
_TRAVERSAL = 0.1  # common.StringTraversalCostFactor
_REGEX = 0.25  # common.RegexStringLengthCostFactor

# the maximum sizes of what the device variable holds (k8s.io/dynamic-resource-allocation/cel newCompiler)
_ATTRIBUTES_PER_DEVICE = 32  # resource.ResourceSliceMaxAttributesAndCapacitiesPerDevice
_ATTRIBUTE_VALUE = 64  # resource.DeviceAttributeMaxValueLength (and list values per attribute, at most 64)
_DRIVER = 63  # resource.DriverNameMaxLength
_DOMAIN = 63  # resource.DeviceMaxDomainLength
_ID = 32  # resource.DeviceMaxIDLength


# -- the protobuf wire format, just enough for cel.expr.CheckedExpr ------------------------------------------


def _fields(data: bytes) -> list[tuple[int, int, bytes | int]]:
    """``(field number, wire type, value)`` of one message: varints and fixed as ints, the rest as bytes."""
    out: list[tuple[int, int, bytes | int]] = []
    i, end = 0, len(data)
    while i < end:
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            out.append((number, wire, value))
        elif wire == 1:
            out.append((number, wire, int.from_bytes(data[i : i + 8], "little")))
            i += 8
        elif wire == 2:
            size, i = _varint(data, i)
            out.append((number, wire, data[i : i + size]))
            i += size
        elif wire == 5:
            out.append((number, wire, int.from_bytes(data[i : i + 4], "little")))
            i += 4
        else:
            raise ValueError(f"protobuf wire type {wire}")
    return out


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def _first(fields: list[tuple[int, int, bytes | int]], number: int) -> bytes | int | None:
    return next((v for n, _, v in fields if n == number), None)


def _all(fields: list[tuple[int, int, bytes | int]], number: int) -> list[bytes]:
    return [v for n, _, v in fields if n == number and isinstance(v, bytes)]


def _text(value: bytes | int | None) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else ""


@dataclass
class _Expr:
    """One node of the tree: ``kind`` is const, ident, select, call, list, struct or comprehension."""

    id: int
    kind: str
    name: str = ""  # ident name, select field, call function
    value: object = None  # a constant's value
    test_only: bool = False
    target: _Expr | None = None
    args: list[_Expr] = field(default_factory=list)
    entries: list[tuple[_Expr | None, _Expr]] = field(default_factory=list)  # map literal (key, value)
    iter_var: str = ""
    iter_var2: str = ""
    accu_var: str = ""
    parts: dict[str, _Expr] = field(default_factory=dict)  # comprehension: range, init, cond, step, result


_EXPR_KINDS = ((3, "const"), (4, "ident"), (5, "select"), (6, "call"), (7, "list"), (8, "struct"), (9, "comp"))


def _sub(value: bytes | int | None) -> _Expr:
    """A nested expression field, or a constant standing for an absent one."""
    return _expr(value) if isinstance(value, bytes) else _Expr(0, "const")


def _expr(data: bytes) -> _Expr:
    f = _fields(data)
    ident = int(_first(f, 2) or 0)
    for number, kind in _EXPR_KINDS:
        body = _first(f, number)
        if isinstance(body, bytes):
            return _node(ident, kind, _fields(body))
    return _Expr(ident, "const")


def _node(ident: int, kind: str, f: list[tuple[int, int, bytes | int]]) -> _Expr:
    if kind == "const":
        value: object = None
        for number, _, v in f:
            if number == 2:
                value = bool(v)
            elif number == 6:
                value = _text(v)
            elif number == 7:
                value = v if isinstance(v, bytes) else b""
            elif number in (3, 4, 5):
                value = v
        return _Expr(ident, "const", value=value)
    if kind == "ident":
        return _Expr(ident, "ident", name=_text(_first(f, 1)))
    if kind == "select":
        operand = _first(f, 1)
        return _Expr(
            ident,
            "select",
            name=_text(_first(f, 2)),
            test_only=bool(_first(f, 3)),
            target=_expr(operand) if isinstance(operand, bytes) else None,
        )
    if kind == "call":
        target = _first(f, 1)
        return _Expr(
            ident,
            "call",
            name=_text(_first(f, 2)),
            target=_expr(target) if isinstance(target, bytes) else None,
            args=[_expr(a) for a in _all(f, 3)],
        )
    if kind == "list":
        return _Expr(ident, "list", args=[_expr(a) for a in _all(f, 1)])
    if kind == "struct":
        entries = []
        for raw in _all(f, 2):
            e = _fields(raw)
            key, value = _first(e, 3), _first(e, 4)
            entries.append((_expr(key) if isinstance(key, bytes) else None, _sub(value)))
        return _Expr(ident, "struct", name=_text(_first(f, 1)), entries=entries)
    parts = {}
    for number, part in ((2, "range"), (4, "init"), (5, "cond"), (6, "step"), (7, "result")):
        parts[part] = _sub(_first(f, number))
    return _Expr(
        ident,
        "comp",
        iter_var=_text(_first(f, 1)),
        accu_var=_text(_first(f, 3)),
        iter_var2=_text(_first(f, 8)),
        parts=parts,
    )


@dataclass
class _Checked:
    expr: _Expr
    overloads: dict[int, list[str]]
    kinds: dict[int, str]  # node id -> "map", "list", "struct", "param", "string", ... (what select cost needs)


_TYPE_KINDS = {1: "dyn", 2: "null", 3: "primitive", 4: "wrapper", 5: "wellknown", 6: "list", 7: "map"}
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_SCALARS = ("bool", "int", "uint", "double", "null", "wellknown")  # computeTypeSize: size 1


def _checked(serialized: bytes) -> _Checked:
    top = _fields(serialized)
    body = _first(top, 2)  # google.protobuf.Any.value
    f = _fields(body if isinstance(body, bytes) else b"")
    if _text(_first(top, 1)).endswith(".ParsedExpr"):  # not type-checked: the tree alone (field 2)
        root = _first(f, 2)
        return _Checked(_expr(root) if isinstance(root, bytes) else _Expr(0, "const"), {}, {})
    overloads: dict[int, list[str]] = {}
    for raw in _all(f, 2):  # reference_map
        entry = _fields(raw)
        ref = _first(entry, 2)
        ids = [_text(o) for o in _all(_fields(ref), 3)] if isinstance(ref, bytes) else []
        overloads[int(_first(entry, 1) or 0)] = ids
    kinds: dict[int, str] = {}
    for raw in _all(f, 3):  # type_map
        entry = _fields(raw)
        t = _first(entry, 2)
        first = _fields(t)[0] if isinstance(t, bytes) and t else (1, 0, 0)
        kind = {9: "struct", 10: "param", 14: "abstract"}.get(first[0], _TYPE_KINDS.get(first[0], "other"))
        if kind == "primitive":
            kind = _PRIMITIVES.get(int(first[2]) if isinstance(first[2], int) else 0, "other")
        kinds[int(_first(entry, 1) or 0)] = kind
    root = _first(f, 4)
    return _Checked(_expr(root) if isinstance(root, bytes) else _Expr(0, "const"), overloads, kinds)


# -- the estimate ---------------------------------------------------------------------------------------------

_Cost = tuple[int, int]  # (min, max), saturating at UNKNOWN


def _add(*costs: _Cost) -> _Cost:
    return (min(sum(c[0] for c in costs), UNKNOWN), min(sum(c[1] for c in costs), UNKNOWN))


def _times(size: _Cost, cost: _Cost) -> _Cost:
    return (min(size[0] * cost[0], UNKNOWN), min(size[1] * cost[1], UNKNOWN))


def _factor(size: _Cost, f: float) -> _Cost:
    def one(x: int) -> int:
        return UNKNOWN if x >= UNKNOWN else min(math.ceil(x * f), UNKNOWN)

    return (one(size[0]), one(size[1]))


# the overloads a call of an expression that was not type-checked may be (cel.py compiles some unchecked)
_UNCHECKED = {
    "_+_": ["add_string", "add_list"],
    "_==_": ["equals"],
    "_!=_": ["not_equals"],
    "_&&_": ["logical_and"],
    "_||_": ["logical_or"],
    "_?_:_": ["conditional"],
    "@in": ["in_list"],
    "_[_]": ["index_map"],
    "contains": ["contains_string"],
    "matches": ["matches_string"],
    "startsWith": ["starts_with_string"],
    "endsWith": ["ends_with_string"],
}

_COMPARISONS = frozenset(
    f"{op}_{t}" for op in ("less", "greater", "less_equals", "greater_equals") for t in ("string", "bytes")
) | {"equals", "not_equals"}

_ZERO: _Cost = (0, 0)
_ONE: _Cost = (1, 1)
_UNKNOWN_SIZE: _Cost = (0, UNKNOWN)


class _Coster:
    def __init__(self, checked: _Checked) -> None:
        self.c = checked
        self.sizes: dict[int, _Cost] = {}
        self.paths: dict[int, tuple[str, ...]] = {}
        self.scopes: dict[str, list[tuple[tuple[str, ...], _Cost | None]]] = {}

    # sizes and paths

    def _device_size(self, path: tuple[str, ...]) -> _Cost | None:
        if not path or path[0] != "device":
            return None
        rest = path[1:]
        if rest == ("driver",):
            return (0, _DRIVER)
        if rest[:1] in (("attributes",), ("capacity",)):
            depth = len(rest) - 1
            if depth == 0:
                return (0, _ATTRIBUTES_PER_DEVICE)
            if rest[-1] == "@keys":
                return (0, _DOMAIN if depth == 1 else _ID)
            if depth == 1:
                return (0, _ATTRIBUTES_PER_DEVICE)
            return (0, _ATTRIBUTE_VALUE)
        return None

    def size(self, e: _Expr) -> _Cost | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        if e.kind == "const" and isinstance(e.value, str):
            return (len(e.value), len(e.value))
        if e.kind == "const" and isinstance(e.value, bytes):
            return (len(e.value), len(e.value))
        if e.kind == "const":
            return (1, 1)  # a number, a bool, null
        if e.kind == "list":
            return (len(e.args), len(e.args))
        if e.kind == "struct" and not e.name:
            return (len(e.entries), len(e.entries))
        found = self._device_size(self.path(e))
        if found is not None:
            return found
        if self.c.kinds.get(e.id) in _SCALARS:
            return (1, 1)
        if e.kind == "ident":
            stack = self.scopes.get(e.name)
            if stack and stack[-1][1] is not None:
                return stack[-1][1]
        return None

    def size_or_unknown(self, e: _Expr) -> _Cost:
        s = self.size(e)
        return _UNKNOWN_SIZE if s is None else s

    def path(self, e: _Expr) -> tuple[str, ...]:
        if e.kind == "ident":
            stack = self.scopes.get(e.name)
            if stack:
                return stack[-1][0]
            if e.name.startswith("device_"):  # cel.py checks device.<field> as the variable device_<field>
                return ("device", e.name[len("device_") :])
            return (e.name,)
        return self.paths.get(e.id, ())

    def push(self, name: str, path: tuple[str, ...], size: _Cost | None) -> None:
        self.scopes.setdefault(name, []).append((path, size))

    def pop(self, name: str) -> None:
        self.scopes[name].pop()

    # costs

    def cost(self, e: _Expr) -> _Cost:
        kind = e.kind
        if kind == "const":
            return _ZERO
        if kind == "ident":
            if e.name.startswith("device_") and e.name not in self.scopes:
                return (2, 2)  # device.<field>, checked as one variable: the identifier and the selection
            return _ONE
        if kind == "select":
            assert e.target is not None
            if e.test_only:
                return _add(_ONE, self.cost(e.target))
            total = self.cost(e.target)
            if self.c.kinds.get(e.target.id) in ("map", "struct", "param", "dyn", "abstract"):
                total = _add(total, _ONE)
            self.paths[e.id] = (*self.path(e.target), e.name)
            return total
        if kind == "call":
            return self.call(e)
        if kind == "list":
            return _add(*(self.cost(a) for a in e.args), (10, 10))
        if kind == "struct":
            parts = [self.cost(v) for k, v in e.entries] + [self.cost(k) for k, _ in e.entries if k is not None]
            return _add(*parts, (30, 30) if not e.name else (40, 40))
        return self.comprehension(e)

    def comprehension(self, e: _Expr) -> _Cost:
        p = e.parts
        rng, init = p["range"], p["init"]
        is_bind = (
            rng.kind == "list" and not rng.args and p["cond"].kind == "const" and p["cond"].value is False
        ) and e.accu_var != "__result__"
        if is_bind:
            total = _add(self.cost(rng), self.cost(init))
            self.push(e.accu_var, self.path(init), self.size(init))
            total = _add(total, self.cost(p["result"]))
            self.pop(e.accu_var)
            result_size = self.size(p["result"])
            if result_size is not None:
                self.sizes[e.id] = result_size
            return total
        total = _add(self.cost(rng), self.cost(init))
        self.push(e.accu_var, self.path(init), self.size(init))
        container = "list" if self.c.kinds.get(rng.id) == "list" or rng.kind == "list" else "map"
        base = self.path(rng)
        if e.iter_var2:
            self.push(e.iter_var, (*base, "@indices" if container == "list" else "@keys"), None)
            self.push(e.iter_var2, (*base, "@items" if container == "list" else "@values"), None)
        else:
            self.push(e.iter_var, (*base, "@items" if container == "list" else "@keys"), None)
        per_item = _add(self.cost(p["cond"]), self.cost(p["step"]))
        self.pop(e.iter_var)
        if e.iter_var2:
            self.pop(e.iter_var2)
        total = _add(total, self.cost(p["result"]))
        self.pop(e.accu_var)
        count = self.size_or_unknown(rng)
        total = _add(total, _times(count, per_item))
        if init.kind in ("list", "struct"):
            self.sizes[e.id] = count
        elif init.kind == "const":
            s = self.size(init)
            if s is not None:
                self.sizes[e.id] = s
        return total

    def call(self, e: _Expr) -> _Cost:
        if e.name == "dyn" and e.args:
            arg_cost = self.cost(e.args[0])
            s = self.size(e.args[0])
            if s is not None:
                self.sizes[e.id] = s
            self.paths[e.id] = self.path(e.args[0])
            return _add(_ONE, arg_cost)
        arg_costs = [self.cost(a) for a in e.args]
        total = _ZERO
        if e.target is not None:
            total = self.cost(e.target)
        ids = self.c.overloads.get(e.id) or _UNCHECKED.get(e.name, ["-"])
        low, high, result = UNKNOWN, 0, None
        for overload in ids:
            c, size = self.function(e, overload, arg_costs)
            low, high = min(low, c[0]), max(high, c[1])
            if size is not None:
                result = size if result is None else (min(result[0], size[0]), max(result[1], size[1]))
            if overload in ("index_list", "index_map") and e.args:
                self.paths[e.id] = (*self.path(e.args[0]), "@items" if overload == "index_list" else "@values")
        if result is None:
            result = self._device_size(self.paths.get(e.id, ()))
        if result is not None:
            self.sizes[e.id] = result
        return _add(total, (low, high))

    def _replaced(self, size: _Cost, args: list[_Expr]) -> _Cost:
        """The size ``replace`` can return: the Kubernetes library's bound (``EstimateCallCost``, ``replace``)."""
        old, new = self.size_or_unknown(args[0]), self.size_or_unknown(args[1])
        if old[0] == 0:
            count_max, kept_max = (size[1] + 1 if size[1] < UNKNOWN else size[1]), size[1]
        elif new[1] <= old[0]:
            count_max, kept_max = 0, size[1]
        else:
            count_max, kept_max = math.ceil(size[1] / old[0]) if size[1] < UNKNOWN else UNKNOWN, 0
        if old[1] == 0:
            count_min, kept_min = (size[0] + 1 if size[0] < UNKNOWN else size[0]), size[0]
        elif old[1] <= new[0]:
            count_min, kept_min = 0, size[0]
        else:
            count_min, kept_min = math.ceil(size[0] / old[1]), 0
        return _add(_times((count_min, count_max), new), (kept_min, kept_max))

    def function(self, e: _Expr, overload: str, arg_costs: list[_Cost]) -> tuple[_Cost, _Cost | None]:
        args = e.args
        argsum = _add(*arg_costs) if arg_costs else _ZERO
        target = e.target
        if overload in ("logical_or", "logical_and"):
            lhs, rhs = arg_costs
            return (lhs[0], _add(lhs, rhs)[1]), None
        if overload == "conditional":
            s1, s2 = self.size_or_unknown(args[1]), self.size_or_unknown(args[2])
            branch = (min(arg_costs[1][0], arg_costs[2][0]), max(arg_costs[1][1], arg_costs[2][1]))
            return _add(arg_costs[0], branch), (min(s1[0], s2[0]), max(s1[1], s2[1]))
        if overload in ("add_string", "add_bytes", "add_list"):
            size = _add(self.size_or_unknown(args[0]), self.size_or_unknown(args[1]))
            if overload == "add_list":
                return _add(_ONE, argsum), size
            return _add(_factor(size, _TRAVERSAL), argsum), size
        if overload in _COMPARISONS:
            smallest = min(self.size_or_unknown(args[0])[1], self.size_or_unknown(args[1])[1])
            return _add(_factor((1 if smallest else 0, smallest), _TRAVERSAL), argsum), None
        if overload == "in_list" and len(args) == 2:
            return _add(self.size_or_unknown(args[1]), argsum), None
        if overload in ("starts_with_string", "ends_with_string") and args:
            return _add(_factor(self.size_or_unknown(args[0]), _TRAVERSAL), argsum), None
        if overload == "contains_string" and target is not None and args:
            a = _factor(self.size_or_unknown(target), _TRAVERSAL)
            b = _factor(self.size_or_unknown(args[0]), _TRAVERSAL)
            return _add(_times(a, b), argsum), None
        if overload == "matches_string" and target is not None and args:
            text = _factor(_add(self.size_or_unknown(target), _ONE), _TRAVERSAL)
            pattern = _factor(self.size_or_unknown(args[0]), _REGEX)
            return _add(_times(text, pattern), argsum), None
        if target is not None and e.name in ("lowerAscii", "upperAscii", "substring", "trim"):
            size = self.size_or_unknown(target)
            return _add(_factor(size, _TRAVERSAL), argsum), size
        if target is not None and e.name in ("indexOf", "lastIndexOf") and self.c.kinds.get(target.id) == "string":
            return _add(_factor(self.size_or_unknown(target), _TRAVERSAL), argsum), None
        if target is not None and e.name == "replace" and len(args) >= 2:
            size = self.size_or_unknown(target)
            return _add(_factor(size, 2 * _TRAVERSAL), argsum), self._replaced(size, args)
        if target is not None and e.name == "split":
            size = self.size_or_unknown(target)
            most = size[1]
            if len(args) > 1 and args[1].kind == "const" and type(args[1].value) is int:
                most = args[1].value
            return _add(_factor(size, 2 * _TRAVERSAL), argsum), (0, most)
        if target is not None and e.name in ("find", "findAll") and args:
            size = self.size_or_unknown(target)
            text = _factor(_add(size, _ONE), _TRAVERSAL)
            return _add(_times(text, _factor(self.size_or_unknown(args[0]), _REGEX)), argsum), (0, size[1])
        if e.name == "string" and args:
            kind = self.c.kinds.get(args[0].id)
            if kind in ("string",):
                s = self.size(args[0])
                if s is not None:
                    return _add(_ONE, argsum), s
        return _add(_ONE, argsum), None


def estimate_cost(serialized: bytes) -> int:
    """The estimated worst-case cost of the checked expression ``serialized`` (``Expression.serialize()``)."""
    checked = _checked(serialized)
    return _Coster(checked).cost(checked.expr)[1]


# -- a comprehension over an attribute's value ----------------------------------------------------------------


def _positions(serialized: bytes) -> dict[int, int]:
    """Node id -> offset in the expression (``SourceInfo.positions`` of the checked expression)."""
    top = _fields(serialized)
    body = _first(top, 2)
    info = _first(_fields(body if isinstance(body, bytes) else b""), 5)  # CheckedExpr.source_info
    out: dict[int, int] = {}
    for raw in _all(_fields(info if isinstance(info, bytes) else b""), 4):  # positions: map<int64, int32>
        entry = _fields(raw)
        out[int(_first(entry, 1) or 0)] = int(_first(entry, 2) or 0)
    return out


def _attribute_value(e: _Expr) -> bool:
    """``device.attributes[d].n`` or ``device.attributes[d][n]``: one attribute's value (two steps below it)."""

    def step(x: _Expr) -> _Expr | None:
        if x.kind == "select" and not x.test_only:
            return x.target
        if x.kind == "call" and x.name == "_[_]" and len(x.args) == 2:
            return x.args[0]
        return None

    domain = step(e)
    root = step(domain) if domain is not None else None
    return root is not None and root.kind == "ident" and root.name == "device_attributes"


def attribute_range_offset(serialized: bytes) -> int | None:
    """Where a comprehension (``exists``, ``all``, ``exists_one``, ``map``, ``filter``) ranges over an attribute's
    value, or ``None``.

    With ``DRAListTypeAttributes`` off (1.37's default) the API server declares an attribute's value as
    ``any`` (``k8s.io/dynamic-resource-allocation/cel``: ``attributeTypeV131``), which cel-go's checker
    refuses as a comprehension's range (``expression of type 'any' cannot be range of a comprehension``),
    at the range's position; gpulabel's checking environment has the value as ``dyn``, which it accepts.
    """
    checked = _checked(serialized)
    bound: set[str] = set()  # cel.bind(v, <attribute value>, ...): v is 'any' too
    stack = [checked.expr]
    while stack:
        e = stack.pop()
        if e.kind == "comp" and e.parts["range"].kind == "list" and not e.parts["range"].args:  # cel.bind
            if _attribute_value(e.parts["init"]):
                bound.add(e.accu_var)
        elif e.kind == "comp":
            r = e.parts["range"]
            if _attribute_value(r) or (r.kind == "ident" and r.name in bound):
                return _positions(serialized).get(r.id, 0)
        stack.extend(x for x in (e.target, *e.args, *e.parts.values()) if x is not None)
        stack.extend(x for pair in e.entries for x in pair if x is not None)
    return None
