"""Karpenter's label requirements: one key's set of allowed values, and a set of them by key.

A mirror of sigs.k8s.io/karpenter v1.14.1 ``pkg/scheduling/requirement.go`` (``Requirement``) and
``pkg/scheduling/requirements.go`` (``Requirements``, ``Compatible``, ``Intersects``, ``labelHint``), with the
label tables of ``pkg/apis/v1/labels.go`` they read (``NormalizedLabels``). A requirement is a value set or
its complement, with inclusive integer bounds (``Gt N`` becomes ``Gte N+1``, ``Lt N`` becomes ``Lte N-1``).

Go iterates maps in random order where Karpenter reports "the first" of several problems (the undefined key
``Compatible`` names, the typo ``labelHint`` suggests, the order ``Intersects`` joins its errors in): here the
keys are taken in sorted order, and every problem is returned, not only the one Karpenter happened to print.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from gpulabel.k8s.gostr import go_quote

__all__ = [
    "MAX_INT",
    "NORMALIZED_LABELS",
    "Req",
    "Requirements",
    "go_atoi",
    "requirement",
]

MAX_INT = 2**63 - 1  # Go's math.MaxInt on a 64-bit platform
# pkg/apis/v1/labels.go NormalizedLabels: aliased keys a requirement is read under (NewRequirementWithFlexibility)
NORMALIZED_LABELS: Mapping[str, str] = {
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "beta.kubernetes.io/arch": "kubernetes.io/arch",
    "beta.kubernetes.io/os": "kubernetes.io/os",
    "beta.kubernetes.io/instance-type": "node.kubernetes.io/instance-type",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}
_ATOI = re.compile(r"[+-]?[0-9]+")


def go_atoi(text: str) -> int | None:
    """Go's ``strconv.Atoi`` on a 64-bit platform: ``None`` where it fails."""
    if not _ATOI.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value <= MAX_INT else None


@dataclass(frozen=True, slots=True)
class Req:
    """``scheduling.Requirement``: ``values`` (or, with ``complement``, every value but them) within the
    inclusive bounds ``gte``/``lte`` (a bounded value must be an integer)."""

    key: str
    complement: bool
    values: frozenset[str] = frozenset()
    gte: int | None = None
    lte: int | None = None
    min_values: int | None = None

    @property
    def operator(self) -> str:
        """``Operator()``: NotIn or Exists for a complement (bounds read as Exists), In or DoesNotExist else."""
        if self.complement:
            return "NotIn" if self.values else "Exists"
        return "In" if self.values else "DoesNotExist"

    def has(self, value: str) -> bool:
        """``Has``: whether the requirement allows ``value``."""
        inside = value in self.values
        return (inside != self.complement) and _within(value, self.gte, self.lte)

    def intersection(self, other: Req) -> Req:
        """``Intersection``: the values both allow (the bounds narrowed; a concrete set drops its bounds)."""
        complement = self.complement and other.complement
        gte = _max(self.gte, other.gte)
        lte = _min(self.lte, other.lte)
        min_values = _max(self.min_values, other.min_values)
        if gte is not None and lte is not None and gte > lte:
            return requirement(self.key, "DoesNotExist", (), min_values)
        if self.complement and other.complement:
            values = self.values | other.values
        elif self.complement:
            values = other.values - self.values
        elif other.complement:
            values = self.values - other.values
        else:
            values = self.values & other.values
        values = frozenset(v for v in values if _within(v, gte, lte))
        if not complement:
            gte = lte = None
        return Req(self.key, complement, values, gte, lte, min_values)

    def has_intersection(self, other: Req) -> bool:
        """``HasIntersection``: whether some value is allowed by both."""
        gte, lte = _max(self.gte, other.gte), _min(self.lte, other.lte)
        if gte is not None and lte is not None and gte > lte:
            return False
        if self.complement and other.complement:
            return True
        if self.complement:
            return any(v not in self.values and _within(v, gte, lte) for v in other.values)
        if other.complement:
            return any(v not in other.values and _within(v, gte, lte) for v in self.values)
        return any(v in other.values and _within(v, gte, lte) for v in self.values)

    def text(self) -> str:
        """``String()``: ``key Op [v1 v2]`` (at most five values, then ``and N others``), bounds, minValues."""
        op = self.operator
        if op in ("Exists", "DoesNotExist"):
            out = f"{self.key} {op}"
        else:
            values = sorted(self.values)
            if len(values) > 5:
                values = [*values[:5], f"and {len(values) - 5} others"]
            out = f"{self.key} {op} [{' '.join(values)}]"
        if self.gte is not None:
            out += f" >={self.gte}"
        if self.lte is not None:
            out += f" <={self.lte}"
        if self.min_values is not None:
            out += f" minValues {self.min_values}"
        return out


def requirement(key: str, operator: str, values: Iterable[str] = (), min_values: int | None = None) -> Req:
    """``NewRequirementWithFlexibility``: the key normalized, ``Gt``/``Lt`` made inclusive bounds, an unknown
    operator read as ``Exists`` (the API validated it before; Go's switch falls through to a complement)."""
    key = NORMALIZED_LABELS.get(key, key)
    values = tuple(values)
    if operator == "In":
        return Req(key, False, frozenset(values), min_values=min_values)
    complement = operator != "DoesNotExist"
    kept = frozenset(values) if operator == "NotIn" else frozenset()
    gte = lte = None
    bound = (go_atoi(values[0]) or 0) if values else 0  # "prevalidated": Go ignores Atoi's error and uses 0
    if operator == "Gt":
        if bound == MAX_INT:
            return requirement(key, "DoesNotExist")  # Gt MaxInt matches nothing (min_values dropped, as in Go)
        gte = bound + 1
    elif operator == "Lt":
        lte = bound - 1
    elif operator == "Gte":
        gte = bound
    elif operator == "Lte":
        lte = bound
    return Req(key, complement, kept, gte, lte, min_values)


def _within(value: str, gte: int | None, lte: int | None) -> bool:
    """``withinBounds``: no bounds allow anything; bounds allow only integers inside them."""
    if gte is None and lte is None:
        return True
    number = go_atoi(value)
    if number is None:
        return False
    return (gte is None or number >= gte) and (lte is None or number <= lte)


def _max(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def _min(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def _suffix(key: str) -> str:
    """``getSuffix``: the name after the prefix, or the whole key."""
    return key.split("/", 1)[1] if "/" in key else key


class Requirements(Mapping[str, Req]):
    """``scheduling.Requirements``: one requirement per key; adding a key again intersects. Immutable here
    (``with_``/``added`` return a new set), where Go's ``Add`` changes the map in place."""

    __slots__ = ("_by_key",)

    def __init__(self, reqs: Iterable[Req] = ()) -> None:
        by_key: dict[str, Req] = {}
        for r in reqs:
            existing = by_key.get(r.key)
            by_key[r.key] = r if existing is None else r.intersection(existing)
        self._by_key = by_key

    def __getitem__(self, key: str) -> Req:
        return self._by_key[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_key)

    def __len__(self) -> int:
        return len(self._by_key)

    def __repr__(self) -> str:
        return f"Requirements({', '.join(sorted(r.text() for r in self._by_key.values()))})"

    def added(self, reqs: Iterable[Req]) -> Requirements:
        """``Add``: these requirements intersected into a copy."""
        return Requirements([*self._by_key.values(), *reqs])

    def require(self, key: str) -> Req:
        """``Get``: the key's requirement, or ``Exists`` (any value) when the set has none."""
        return self._by_key.get(key) or requirement(key, "Exists")

    def undefined(self, incoming: Requirements, allow_undefined: frozenset[str] = frozenset()) -> tuple[str, ...]:
        """``Compatible``'s first loop: the keys of ``incoming`` this set has no requirement for, that are not
        allowed undefined (well-known) and whose incoming operator is not NotIn or DoesNotExist (sorted)."""
        return tuple(
            sorted(
                key
                for key, req in incoming.items()
                if key not in allow_undefined and key not in self and req.operator not in ("NotIn", "DoesNotExist")
            )
        )

    def conflicts(self, incoming: Requirements) -> tuple[str, ...]:
        """``Intersects``: for each key both sets constrain and whose values do not meet (unless both sides are
        NotIn or DoesNotExist), ``badKeyError``'s text ``key K, <incoming> not in <existing>`` (sorted by key)."""
        out = []
        for key in sorted(self.keys() & incoming.keys()):
            existing, new = self[key], incoming[key]
            if existing.has_intersection(new):
                continue
            negative = ("NotIn", "DoesNotExist")
            if new.operator in negative and existing.operator in negative:
                continue
            out.append(f"key {key}, {new.text()} not in {existing.text()}")
        return tuple(out)

    def compatible(self, incoming: Requirements, allow_undefined: frozenset[str] = frozenset()) -> str | None:
        """``Compatible``: ``None``, or the error Karpenter prints (the first undefined key with its typo hint,
        else every conflict joined by ``"; "`` as multierr joins them)."""
        undefined = self.undefined(incoming, allow_undefined)
        if undefined:
            key = undefined[0]
            return f"label {go_quote(key)} does not have known values{self.hint(key, allow_undefined)}"
        conflicts = self.conflicts(incoming)
        return "; ".join(conflicts) if conflicts else None

    def hint(self, key: str, allow_undefined: frozenset[str] = frozenset()) -> str:
        """``labelHint``: `` (typo of "K"?)`` for a well-known key, else a key of this set, that contains ``key``
        or ends with its name; "" when none does."""
        for known in (*sorted(allow_undefined), *sorted(self)):
            if key in known or known.endswith(_suffix(key)):
                return f" (typo of {go_quote(known)}?)"
        return ""
