"""Consumable capacity, as the 1.37 allocator checks it (``structured/internal/incubating/consumable_capacity.go``).

Every capacity of a device is charged on every allocation: a request's amount rounded up by the
capacity's ``requestPolicy`` (below ``validRange.min``: the minimum; else up to the next
``min + n * step``; or the first of ``validValues`` not below it), or, when the request does not name
it, the policy's ``default`` (else the whole value). The charge must satisfy the policy (``default``
always does; at most ``max``; on a step; one of ``validValues``) and, added to what other claims'
shares and this allocation already consume, must not exceed the value. A request naming a
capacity the device lacks never fits. Amounts are exact nano-units; steps are taken in whole units
(Go's ``Value()``, which rounds up), so quantities that are not whole numbers are refused by the
reader rather than rounded in a way the ``DRAFractionalCapacityRange`` gate may do otherwise. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "CapacityPolicy",
    "Charge",
    "charge",
    "consumption",
    "fits_capacity",
    "quantity_text",
    "violates",
]

NANO = 10**9


@dataclass(frozen=True, slots=True)
class CapacityPolicy:
    """A capacity's ``requestPolicy``; amounts in nano-units."""

    default: int | None = None
    has_range: bool = False  # validRange is set
    min: int | None = None
    max: int | None = None
    step: int | None = None
    values: tuple[int, ...] | None = None  # validValues, ascending


def _units(nanos: int) -> int:
    """``Quantity.Value()``: whole units, rounded up."""
    return -(-nanos // NANO)


def charge(requested: int | None, value: int, policy: CapacityPolicy | None) -> int:
    """``calculateConsumedCapacity``: what an allocation is charged of one capacity."""
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return value
    if policy is None:
        return requested
    if policy.has_range and policy.min is not None:
        if requested < policy.min:
            return policy.min
        if policy.step is None:
            return requested
        req, step, low = _units(requested), _units(policy.step), _units(policy.min)
        n = -(-(req - low) // step)
        return (low + step * n) * NANO
    if policy.values is not None:
        return next((v for v in policy.values if requested <= v), requested)
    return requested


def violates(amount: int, policy: CapacityPolicy | None) -> bool:
    """``violatesPolicy``: the charge is not one the policy allows."""
    if policy is None or (policy.default is not None and amount == policy.default):
        return False
    if policy.has_range:
        if policy.max is not None and amount > policy.max:
            return True
        if policy.step is not None:
            return (_units(amount) - _units(policy.min or 0)) % _units(policy.step) != 0
        return False
    if policy.values:
        return amount not in policy.values
    return False


@dataclass(frozen=True, slots=True)
class Charge:
    """Why a device's capacity refuses a request: the capacity, its value, what is consumed, the charge."""

    capacity: str
    value: int
    consumed: int
    charged: int
    requested: int | None
    violates: bool = False  # the charge breaks the policy (not the value)
    missing: bool = False  # the request names a capacity the device lacks


def fits_capacity(
    requests: Mapping[str, int],
    capacity: Mapping[str, int],
    policies: Mapping[str, CapacityPolicy],
    consumed: Mapping[str, int],
) -> Charge | None:
    """``CmpRequestOverCapacity``: ``None`` when the device can take the request, else the first refusal.

    ``capacity``: the device's values; ``consumed``: what shares of other claims and this allocation
    already take of each.
    """
    for name in requests:
        if name not in capacity:
            return Charge(name, 0, 0, 0, requests[name], missing=True)
    for name, value in capacity.items():
        requested = requests.get(name)
        amount = charge(requested, value, policies.get(name))
        if violates(amount, policies.get(name)):
            return Charge(name, value, consumed.get(name, 0), amount, requested, violates=True)
        if consumed.get(name, 0) + amount > value:
            return Charge(name, value, consumed.get(name, 0), amount, requested)
    return None


def consumption(
    requests: Mapping[str, int], capacity: Mapping[str, int], policies: Mapping[str, CapacityPolicy]
) -> dict[str, int]:
    """``GetConsumedCapacityFromRequest``: what a share takes of each capacity of the device."""
    return {name: charge(requests.get(name), value, policies.get(name)) for name, value in capacity.items()}


def quantity_text(nanos: int) -> str:
    """An amount in nano-units as a quantity: binary suffixes where exact, else whole, milli- or nano-units."""
    if nanos % 10**9 == 0:
        units = nanos // 10**9
        for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if units and units % size == 0:
                return f"{units // size}{suffix}"
        return str(units)
    if nanos % 10**6 == 0:
        return f"{nanos // 10**6}m"
    return f"{nanos}n"
