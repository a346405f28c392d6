"""The scheduler's structured allocator for one node (``k8s.io/dynamic-resource-allocation/structured``).

Mirrors the variant kube-scheduler 1.37 runs with its default feature gates
(``internal/incubating``, v0.37.2): pools are gathered from the slices that
target the node (``nodeName``, ``allNodes``, ``nodeSelector``, or, with
``perDeviceNodeSelection``, any of its devices' own), the newest generation of
each pool wins, a pool whose slices are not all published is incomplete and
skipped (and fails a request for ``All`` devices), a pool with duplicate device
names or counters that do not exist is invalid; pools are searched in (driver,
pool) order, those with binding conditions last, slices by name, devices in
slice order. A device is selectable when the class's selectors, the request's
selectors and its own node selection all hold; a CEL error on any device the
search reaches fails the whole node with the scheduler's message. Devices in
use by other claims are skipped (admin-access requests may use them, and
admin-access results hold nothing), a device's counter consumption must leave
every counter of its pool's shared counter sets non-negative (counting what
allocated devices on any node consume), untolerated ``NoSchedule``/``NoExecute``
device taints (the slice's and DeviceTaintRules') refuse a device,
``matchAttribute`` and ``distinctAttribute`` constraints are checked as devices
are added, and the search backtracks exactly as upstream, ``firstAvailable``
subrequests in order.

Not modelled, refused in one line naming the field (``Outcome.unmodelled``):
consumable capacity (``allowMultipleAllocations``, ``requestPolicy``, capacity
requests) and the alpha fields ``partitionTypeAttribute``,
``skipNodeOperations``, ``nodeAllocatableResources``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpulabel.errors import AllocationError
from gpulabel.k8s.dra.capacity import Charge, consumption, fits_capacity
from gpulabel.k8s.dra.cel import CelError, DeviceInput, Selector, compile_selector, device_input
from gpulabel.k8s.dra.objects import Constraint, Device, DeviceClass, DeviceRequest, ResourceClaim
from gpulabel.k8s.dra.pools import (
    Counters,
    DeviceID,
    Pool,
    counter_shortfall,
    counters_left,
    device_id_text,
    gather_pools,
    in_use_devices,
    shared_use,
)

__all__ = [
    "AllocationError",
    "DeviceID",
    "Outcome",
    "Pool",
    "allocate",
    "counter_shortfall",
    "counters_left",
    "device_id_text",
    "gather_pools",
    "in_use_devices",
    "shared_use",
    "taint_prevents",
]

InputOf = Callable[[DeviceID, Device], DeviceInput]  # a device as CEL reads it


@dataclass
class _Req:
    request: DeviceRequest
    parent: str | None  # the parent request's name for a subrequest
    cls: DeviceClass | None
    num: int = 0
    all_devices: list[tuple[DeviceID, Device, Pool]] = field(default_factory=list)

    @property
    def admin(self) -> bool:
        return self.request.admin_access and self.parent is None  # a subrequest has no admin access

    @property
    def base_name(self) -> str:
        return self.parent if self.parent is not None else self.request.name

    @property
    def sub_name(self) -> str:
        return self.request.name if self.parent is not None else ""


@dataclass(frozen=True)
class Outcome:
    """``ok``: allocated (``devices`` per claim); otherwise unschedulable on this node, ``error`` set if it errored."""

    ok: bool
    devices: tuple[tuple[tuple[str, DeviceID], ...], ...] = ()  # per claim: (request name, device)
    error: str | None = None
    unmodelled: str | None = None  # gpulabel refuses to answer: the field it does not model
    invalid: bool = False  # not found, and an invalid pool was met: "invalid resource pools were encountered"


class _MatchAttribute:
    def __init__(self, c: Constraint) -> None:
        self.requests = frozenset(c.requests)
        self.attribute = c.match_attribute or ""
        self.value: tuple[str, Any] | None = None
        self.n = 0

    def _applies(self, base: str, sub: str) -> bool:
        if not self.requests:
            return True
        return base in self.requests or (bool(sub) and f"{base}/{sub}" in self.requests)

    def add(self, base: str, sub: str, device: Device, did: DeviceID) -> bool:
        if not self._applies(base, sub):
            return True
        value = lookup_attribute(device, did, self.attribute)
        if value is None:
            return False
        if self.n == 0:
            self.value, self.n = value, 1
            return True
        if self.value is None or value[0] != self.value[0] or value[1] != self.value[1]:
            return False
        self.n += 1
        return True

    def remove(self, base: str, sub: str) -> None:
        if self._applies(base, sub):
            self.n -= 1


class _DistinctAttribute:
    """``distinctAttributeConstraint``: every device of the requests has the attribute, no two equal."""

    def __init__(self, c: Constraint) -> None:
        self.requests = frozenset(c.requests)
        self.attribute = c.distinct_attribute or ""
        self.values: list[tuple[str, Any]] = []

    def _applies(self, base: str, sub: str) -> bool:
        if not self.requests:
            return True
        return base in self.requests or (bool(sub) and f"{base}/{sub}" in self.requests)

    def add(self, base: str, sub: str, device: Device, did: DeviceID) -> bool:
        if not self._applies(base, sub):
            return True
        value = lookup_attribute(device, did, self.attribute)
        if value is None or any(v[0] == value[0] and v[1] == value[1] for v in self.values):
            return False
        self.values.append(value)
        return True

    def remove(self, base: str, sub: str) -> None:
        if self._applies(base, sub):
            self.values.pop()


def lookup_attribute(device: Device, did: DeviceID, name: str) -> tuple[str, Any] | None:
    """``lookupAttribute``: the fully qualified name, or the bare name when its domain is the driver."""
    found = device.attributes.get(name)
    if found is not None:
        return found
    domain, sep, ident = name.partition("/")
    if not sep or domain != did.driver:
        return None
    return device.attributes.get(ident)


class Allocator:
    """One node, the pod's claims to allocate: ``run()`` answers as ``Allocate`` does."""

    def __init__(
        self,
        pools: list[Pool],
        claims: Sequence[ResourceClaim],
        classes: Mapping[str, DeviceClass],
        in_use: Mapping[DeviceID, str],
        inputs: InputOf | None = None,
        selector: Callable[[str], Selector] = compile_selector,
        shares: Mapping[DeviceID, Mapping[str, int]] | None = None,
    ) -> None:
        self.pools = pools
        self.shares = shares or {}
        self.allocated = {**in_use, **dict.fromkeys(self.shares, "")}  # IsDeviceAllocated: held or shared
        self.allocating_cap: dict[DeviceID, dict[str, int]] = {}
        self.claims = list(claims)
        self.classes = classes
        self.in_use = in_use
        self.device_input = inputs or _device_input
        self.selector = selector
        self.req: dict[tuple[int, int, int], _Req] = {}
        self.constraints: list[list[_MatchAttribute | _DistinctAttribute]] = []
        self.allocating: dict[DeviceID, set[int]] = {}  # device -> the claims allocating it
        self.left: dict[tuple[str, str], Counters] = {}
        self.consumed: dict[tuple[str, str], dict[tuple[str, str], int]] = {}
        self.result: list[list[tuple[str, DeviceID]]] = [[] for _ in self.claims]
        self.match_cache: dict[tuple[DeviceID, int, int, int], bool] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}

    # -- CEL ---------------------------------------------------------------------------

    def _selectors_match(
        self, ci: int, did: DeviceID, device: Device, cls: DeviceClass | None, exprs: Sequence[str]
    ) -> bool:
        for i, expr in enumerate(exprs):
            sel = self.selector(expr)
            who = f"class {cls.name}" if cls is not None else f"claim {self.claims[ci].ref}"
            if sel.error is not None:
                raise AllocationError(f"{who}: selector #{i}: CEL compile error: {sel.error}")
            try:
                ok = sel.evaluate(self.device_input(did, device))
            except CelError as err:
                text = str(err)
                if "no such key:" in text:
                    text += (
                        ". consider using CEL optional chaining (.? followed by orValue()) or guarding"
                        " the check with has() for optional fields"
                    )
                raise AllocationError(
                    f"{who}: selector #{i} on device {device_id_text(did)}: CEL runtime error: {text}"
                ) from None
            if not ok:
                return False
        return True

    def selectable(
        self, key: tuple[int, int, int], rd: _Req, did: DeviceID, device: Device, pool: Pool | None = None
    ) -> bool:
        """``isSelectable``: the class's selectors, the request's, then a per-device node selection.

        Devices with binding conditions are selectable (DRADeviceBindingConditions is on in 1.37)."""
        mk = (did, *key)
        hit = self.match_cache.get(mk)
        if hit is not None:
            return hit
        ok = (
            (rd.cls is None or self._selectors_match(key[0], did, device, rd.cls, rd.cls.selectors))
            and self._selectors_match(key[0], did, device, None, rd.request.selectors)
            and (pool is None or device.name not in pool.off_node)
        )
        self.match_cache[mk] = ok
        return ok

    # -- setup -------------------------------------------------------------------------

    def _validate(self, key: tuple[int, int, int], request: DeviceRequest, parent: str | None) -> _Req:
        claim = self.claims[key[0]]
        if request.derived_attributes:
            raise AllocationError(
                f"claim {claim.ref}, request {request.name}: cannot handle request with derived attributes, "
                "the feature is disabled"
            )
        if not request.class_name:
            raise AllocationError(
                f"claim {claim.ref}, request {request.name}: missing device class name (unsupported request type?)"
            )
        cls = self.classes.get(request.class_name)
        if cls is None:
            raise AllocationError(
                f"claim {claim.ref}, request {request.name}: could not retrieve device class {request.class_name}: "
                f'deviceclass.resource.k8s.io "{request.class_name}" not found'
            )
        rd = _Req(request, parent, cls)
        if request.mode == "ExactCount":
            rd.num = request.count
        elif request.mode == "All":
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {claim.ref}, request {request.name}: asks for all devices, "
                        f"but resource pool {pool.id_text} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {claim.ref}, request {request.name}: asks for all devices, "
                        f"but resource pool {pool.id_text} is currently invalid"
                    )
                for s in pool.slices:
                    for device in s.devices:
                        did = DeviceID(driver=s.driver, pool=s.pool, device=device.name)
                        if self.selectable(key, rd, did, device, pool) and (
                            fits_capacity(request.capacity, device.amounts, device.policies, {}) is None
                        ):
                            rd.all_devices.append((did, device, pool))
            rd.num = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {claim.ref}, request {request.name}: unsupported count mode {request.mode}")
        return rd

    def _refusal(self) -> str | None:
        """The first field of the node's pools or the claims that gpulabel does not model."""
        for pool in self.pools:
            for s in pool.slices:
                if s.unmodelled:
                    return f"resourceslice {s.name}: {s.unmodelled[0]} is not modelled by gpulabel"
        for claim in self.claims:
            for request in claim.requests:
                for alt in request.alternatives():
                    if alt.unmodelled:
                        return f"claim {claim.ref}, request {alt.name}: {alt.unmodelled[0]} is not modelled by gpulabel"
        return None

    def run(self) -> Outcome:
        refusal = self._refusal()
        if refusal is not None:
            return Outcome(False, unmodelled=refusal)
        try:
            for ci, claim in enumerate(self.claims):
                for ri, request in enumerate(claim.requests):
                    if request.first_available:
                        for si, sub in enumerate(request.first_available):
                            self.req[(ci, ri, si)] = self._validate((ci, ri, si), sub, request.name)
                    elif request.exactly is not None:
                        self.req[(ci, ri, 0)] = self._validate((ci, ri, 0), request.exactly, None)
                    else:
                        raise AllocationError(
                            f"claim {claim.ref}, request {request.name}: neither exactly nor firstAvailable"
                        )
                cons: list[_MatchAttribute | _DistinctAttribute] = []
                for i, c in enumerate(claim.constraints):
                    if c.match_attribute:
                        cons.append(_MatchAttribute(c))
                    elif c.distinct_attribute:
                        cons.append(_DistinctAttribute(c))
                    else:
                        raise AllocationError(
                            f"claim {claim.ref}, constraint #{i}: empty constraint (unsupported constraint type?)"
                        )
                self.constraints.append(cons)
            done = self._one(0, 0, 0, 0, False, (0, 0, 0))
        except AllocationError as err:
            return Outcome(False, error=str(err))
        if not done:
            return Outcome(False, invalid=any(p.invalid for p in self.pools))
        return Outcome(True, tuple(tuple(r) for r in self.result))

    # -- the search --------------------------------------------------------------------

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple[int, int, int]) -> bool:
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            return self._one(ci + 1, 0, 0, 0, False, (0, 0, 0))
        rd = self.req[(ci, ri, si)]
        if not in_sub and rd.parent is not None:
            sub = 0
            while (ci, ri, sub) in self.req:
                if self._one(ci, ri, sub, 0, True, (0, 0, 0)):
                    self.selected_sub[(ci, ri)] = sub
                    return True
                sub += 1
            return False
        if rd.request.mode == "All" and not rd.all_devices:
            return False
        if di >= rd.num:
            return self._one(ci, ri + 1, 0, 0, False, (0, 0, 0))
        if rd.request.mode == "All":
            did, device, pool = rd.all_devices[di]
            undo = self._allocate_device(ci, rd, did, device, pool, must=True)
            if undo is None:
                return False
            if self._one(ci, ri, si, di + 1, in_sub, (0, 0, 0)):
                return True
            undo()
            return False
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            s0 = start[1] if pi == start[0] else 0
            for sj in range(s0, len(pool.slices)):
                s = pool.slices[sj]
                d0 = start[2] if (pi == start[0] and sj == start[1]) else 0
                for dk in range(d0, len(s.devices)):
                    device = s.devices[dk]
                    did = DeviceID(driver=pool.driver, pool=pool.name, device=device.name)
                    if rd.admin:
                        if ci in self.allocating.get(did, ()):
                            continue
                    elif did in self.in_use or self.allocating.get(did):
                        continue
                    if not self.selectable((ci, ri, si), rd, did, device, pool):
                        continue
                    if self._capacity(rd, did, device) is not None:
                        continue
                    undo = self._allocate_device(ci, rd, did, device, pool, must=False)
                    if undo is None:
                        continue
                    if self._one(ci, ri, si, di + 1, in_sub, (pi, sj, dk + 1)):
                        return True
                    undo()
        return False

    def _reserve_counters(self, pool: Pool, device: Device) -> bool:
        """``checkAvailableCounters``: add the device's consumption; keep it only if every counter holds."""
        key = (pool.driver, pool.name)
        left = self.left.get(key)
        if left is None:
            left = self.left[key] = counters_left(pool, self.allocated)
        consumed = self.consumed.setdefault(key, {})
        for set_name, counters in device.consumes:
            for counter, amount in counters:
                consumed[(set_name, counter)] = consumed.get((set_name, counter), 0) + amount
        if counter_shortfall(left, consumed) is not None:
            self._release_counters(pool, device)
            return False
        return True

    def _release_counters(self, pool: Pool, device: Device) -> None:
        consumed = self.consumed[(pool.driver, pool.name)]
        for set_name, counters in device.consumes:
            for counter, amount in counters:
                consumed[(set_name, counter)] -= amount

    def _capacity(self, rd: _Req, did: DeviceID, device: Device) -> Charge | None:
        """``CmpRequestOverCapacity`` with what other claims' shares and this allocation consume."""
        consumed = dict(self.shares.get(did, {}))
        for name, amount in self.allocating_cap.get(did, {}).items():
            consumed[name] = consumed.get(name, 0) + amount
        return fits_capacity(rd.request.capacity, device.amounts, device.policies, consumed)

    def _allocate_device(
        self, ci: int, rd: _Req, did: DeviceID, device: Device, pool: Pool, must: bool
    ) -> Callable[[], None] | None:
        """``allocateDevice``: in use, counters, taints, constraints, capacity, in upstream's order."""
        multiple = device.allow_multiple
        if not multiple and rd.admin and ci in self.allocating.get(did, ()):
            return None
        if not rd.admin and (did in self.in_use or self.allocating.get(did)):
            return None
        # a device already shared consumed its counters with its first share
        counters = bool(device.consumes) and not (multiple and (did in self.shares or did in self.allocating_cap))
        if counters and not self._reserve_counters(pool, device):
            return None
        if taint_prevents(device, rd.request):
            if counters:
                self._release_counters(pool, device)
            return None
        added: list[_MatchAttribute | _DistinctAttribute] = []
        for c in self.constraints[ci]:
            if not c.add(rd.base_name, rd.sub_name, device, did):
                for a in reversed(added):
                    a.remove(rd.base_name, rd.sub_name)
                if counters:
                    self._release_counters(pool, device)
                if must:
                    raise AllocationError(
                        f"claim {self.claims[ci].ref}, request {rd.request.name}: cannot add device "
                        f"{device_id_text(did)} because a claim constraint would not be satisfied"
                    )
                return None
            added.append(c)
        if not multiple:
            self.allocating.setdefault(did, set()).add(ci)
        share: dict[str, int] = {}
        existed = did in self.allocating_cap
        if self._capacity(rd, did, device) is not None:
            if not multiple:
                self.allocating[did].discard(ci)
            for a in reversed(added):
                a.remove(rd.base_name, rd.sub_name)
            if counters:
                self._release_counters(pool, device)
            return None
        if multiple:
            share = consumption(rd.request.capacity, device.amounts, device.policies)
            mine = self.allocating_cap.setdefault(did, {})
            for cap, amount in share.items():
                mine[cap] = mine.get(cap, 0) + amount
        name = rd.base_name if rd.parent is None else f"{rd.base_name}/{rd.sub_name}"
        self.result[ci].append((name, did))

        def undo() -> None:
            self.result[ci].pop()
            if multiple:
                if not existed:
                    del self.allocating_cap[did]
                else:
                    mine = self.allocating_cap[did]
                    for cap, amount in share.items():
                        mine[cap] -= amount
            else:
                self.allocating[did].discard(ci)
            for a in reversed(added):
                a.remove(rd.base_name, rd.sub_name)
            if counters:
                self._release_counters(pool, device)

        return undo


def taint_prevents(device: Device, request: DeviceRequest) -> bool:
    for taint in device.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(t.tolerates(taint) for t in request.tolerations):
            return True
    return False


def allocate(
    pools: list[Pool],
    claims: Sequence[ResourceClaim],
    classes: Mapping[str, DeviceClass],
    in_use: Mapping[DeviceID, str],
    inputs: InputOf | None = None,
    selector: Callable[[str], Selector] = compile_selector,
    shares: Mapping[DeviceID, Mapping[str, int]] | None = None,
) -> Outcome:
    """Allocate ``claims`` together on the node whose ``pools`` are given, as ``Allocator.Allocate`` does.

    ``inputs`` and ``selector`` give devices as CEL reads them and compiled
    selectors; a :class:`~gpulabel.k8s.dra.evaluator.DraEvaluator` passes its own, kept for the run.
    ``shares``: what other claims' shares consume of devices that allow multiple allocations.
    """
    return Allocator(pools, claims, classes, in_use, inputs, selector, shares).run()


def _device_input(did: DeviceID, device: Device) -> DeviceInput:
    return device_input(did[0], device.attributes, device.capacity, device.allow_multiple)
