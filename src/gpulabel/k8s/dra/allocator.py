"""The scheduler's structured allocator for one node (``k8s.io/dynamic-resource-allocation/structured``).

Mirrors the variant kube-scheduler 1.37 runs with its default feature gates
(``internal/incubating``): pools are gathered from the slices that target the
node (``nodeName``, ``allNodes``, ``nodeSelector``), the newest generation of
each pool wins, a pool whose slices are not all published is incomplete and
skipped (and fails a request for ``All`` devices); pools are searched in
(driver, pool) order, slices by name, devices in slice order. A device is
selectable when the class's selectors and then the request's selectors all
evaluate to true; a CEL error on any device the search reaches fails the
whole node with the scheduler's message. Devices in use by other claims are
skipped, untolerated ``NoSchedule``/``NoExecute`` device taints refuse a
device, ``matchAttribute`` constraints are checked as devices are added, and
the search backtracks exactly as upstream, ``firstAvailable`` subrequests in
order.

Not modelled (not used by gpulabel's tests; reported as unsupported):
partitionable devices (counters), consumable capacity requests, admin
access, binding conditions, per-device node selection.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gpulabel.k8s.dra.cel import CelError, DeviceInput, Selector, compile_selector, device_input
from gpulabel.k8s.dra.objects import Constraint, Device, DeviceClass, DeviceRequest, ResourceClaim, ResourceSlice

__all__ = [
    "AllocationError",
    "DeviceID",
    "Outcome",
    "Pool",
    "allocate",
    "gather_pools",
    "in_use_devices",
]


class DeviceID(NamedTuple):
    """A device as the scheduler names it: driver, pool, device."""

    driver: str
    pool: str
    device: str


NodeMatcher = Callable[[Mapping[str, Any]], bool]  # a NodeSelector (API JSON) -> does the node match


class AllocationError(Exception):
    """The allocator stopped with an error for this node; ``str()`` is the scheduler's text."""


def device_id_text(d: DeviceID) -> str:
    return "/".join(d)


@dataclass
class Pool:
    driver: str
    name: str
    slices: list[ResourceSlice] = field(default_factory=list)  # targeting the node, sorted by name
    incomplete: bool = False

    @property
    def id_text(self) -> str:
        return f"{self.driver}/{self.name}"


def _slice_targets(s: ResourceSlice, node_name: str, selector_matches: NodeMatcher) -> bool | None:
    if s.node_name:
        return s.node_name == node_name
    if s.all_nodes:
        return True
    if s.node_selector is not None:
        return selector_matches(s.node_selector)
    return None  # per-device node selection or no node selection: not for this gather


def gather_pools(
    node_name: str,
    slices: Sequence[ResourceSlice],
    selector_matches: NodeMatcher,
    all_by_pool: Mapping[tuple[str, str], Sequence[ResourceSlice]] | None = None,
) -> list[Pool]:
    """``GatherPools``: the pools the node sees, sorted by driver then pool name."""
    found: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        if s.per_device_node_selection or s.shared_counters:
            continue  # partitionable devices: not modelled
        if not _slice_targets(s, node_name, selector_matches):
            continue
        key = (s.driver, s.pool)
        have = found.get(key)
        if not have or s.generation > have[0].generation:
            found[key] = [s]
        elif s.generation == have[0].generation:
            have.append(s)
    pools = []
    for (driver, name), members in found.items():
        complete = len(members) == members[0].slice_count
        if not complete and all_by_pool is not None:
            generation = members[0].generation
            everywhere = [s for s in all_by_pool.get((driver, name), ()) if s.generation >= generation]
            if any(s.generation > generation for s in everywhere):
                continue  # obsolete: a newer generation exists elsewhere
            complete = len(everywhere) == members[0].slice_count
        pools.append(Pool(driver, name, sorted(members, key=lambda s: s.name), incomplete=not complete))
    pools.sort(key=lambda p: (p.driver, p.name))
    return pools


def in_use_devices(claims: Sequence[ResourceClaim]) -> dict[DeviceID, str]:
    """Every allocated device and the claim (``ns/name``) that holds it."""
    out: dict[DeviceID, str] = {}
    for c in claims:
        for d in c.allocated or ():
            out[DeviceID(driver=d.driver, pool=d.pool, device=d.device)] = c.ref
    return out


@dataclass
class _Req:
    request: DeviceRequest
    parent: str | None  # the parent request's name for a subrequest
    cls: DeviceClass | None
    num: int = 0
    all_devices: list[tuple[DeviceID, Device, Pool]] = field(default_factory=list)

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
        inputs: dict[tuple[str, str], DeviceInput] | None = None,
    ) -> None:
        self.pools = pools
        self.claims = list(claims)
        self.classes = classes
        self.in_use = in_use
        self.inputs = inputs if inputs is not None else {}
        self.req: dict[tuple[int, int, int], _Req] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.allocating: set[DeviceID] = set()
        self.result: list[list[tuple[str, DeviceID]]] = [[] for _ in self.claims]
        self.match_cache: dict[tuple[DeviceID, int, int, int], bool] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}

    # -- CEL ---------------------------------------------------------------------------

    def device_input(self, did: DeviceID, device: Device) -> DeviceInput:
        key = (did[0], f"{did[1]}/{did[2]}")
        found = self.inputs.get(key)
        if found is None:
            found = self.inputs[key] = device_input(did[0], device.attributes, device.capacity, device.allow_multiple)
        return found

    def _selectors_match(
        self, ci: int, did: DeviceID, device: Device, cls: DeviceClass | None, exprs: Sequence[str]
    ) -> bool:
        for i, expr in enumerate(exprs):
            sel: Selector = compile_selector(expr)
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

    def selectable(self, key: tuple[int, int, int], rd: _Req, did: DeviceID, device: Device) -> bool:
        if device.binding_conditions:
            pass  # DRADeviceBindingConditions is on by default: such devices are selectable
        mk = (did, *key)
        hit = self.match_cache.get(mk)
        if hit is not None:
            return hit
        ok = True
        if (
            rd.cls is not None and not self._selectors_match(key[0], did, device, rd.cls, rd.cls.selectors)
        ) or not self._selectors_match(key[0], did, device, None, rd.request.selectors):
            ok = False
        self.match_cache[mk] = ok
        return ok

    # -- setup -------------------------------------------------------------------------

    def _validate(self, key: tuple[int, int, int], request: DeviceRequest, parent: str | None) -> _Req:
        claim = self.claims[key[0]]
        if request.admin_access:
            raise AllocationError(
                f"claim {claim.ref}, request {request.name}: admin access is not modelled by gpulabel"
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
                for s in pool.slices:
                    for device in s.devices:
                        did = DeviceID(driver=s.driver, pool=s.pool, device=device.name)
                        if self.selectable(key, rd, did, device):
                            rd.all_devices.append((did, device, pool))
            rd.num = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {claim.ref}, request {request.name}: unsupported count mode {request.mode}")
        return rd

    def run(self) -> Outcome:
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
                cons = []
                for i, c in enumerate(claim.constraints):
                    if c.match_attribute:
                        cons.append(_MatchAttribute(c))
                    else:
                        raise AllocationError(
                            f"claim {claim.ref}, constraint #{i}: only matchAttribute is modelled by gpulabel"
                        )
                self.constraints.append(cons)
            done = self._one(0, 0, 0, 0, False, (0, 0, 0))
        except AllocationError as err:
            return Outcome(False, error=str(err))
        if not done:
            return Outcome(False)
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
            undo = self._allocate_device(ci, rd, did, device, must=True)
            if undo is None:
                return False
            if self._one(ci, ri, si, di + 1, in_sub, (0, 0, 0)):
                return True
            undo()
            return False
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete:
                continue
            s0 = start[1] if pi == start[0] else 0
            for sj in range(s0, len(pool.slices)):
                s = pool.slices[sj]
                d0 = start[2] if (pi == start[0] and sj == start[1]) else 0
                for dk in range(d0, len(s.devices)):
                    device = s.devices[dk]
                    did = DeviceID(driver=pool.driver, pool=pool.name, device=device.name)
                    if did in self.in_use or did in self.allocating:
                        continue
                    if not self.selectable((ci, ri, si), rd, did, device):
                        continue
                    undo = self._allocate_device(ci, rd, did, device, must=False)
                    if undo is None:
                        continue
                    if self._one(ci, ri, si, di + 1, in_sub, (pi, sj, dk + 1)):
                        return True
                    undo()
        return False

    def _allocate_device(
        self, ci: int, rd: _Req, did: DeviceID, device: Device, must: bool
    ) -> Callable[[], None] | None:
        if did in self.in_use or did in self.allocating:
            return None
        if taint_prevents(device, rd.request):
            return None
        added: list[_MatchAttribute] = []
        for c in self.constraints[ci]:
            if not c.add(rd.base_name, rd.sub_name, device, did):
                for a in reversed(added):
                    a.remove(rd.base_name, rd.sub_name)
                if must:
                    raise AllocationError(
                        f"claim {self.claims[ci].ref}, request {rd.request.name}: cannot add device "
                        f"{device_id_text(did)} because a claim constraint would not be satisfied"
                    )
                return None
            added.append(c)
        self.allocating.add(did)
        name = rd.base_name if rd.parent is None else f"{rd.base_name}/{rd.sub_name}"
        self.result[ci].append((name, did))

        def undo() -> None:
            self.result[ci].pop()
            self.allocating.discard(did)
            for a in reversed(added):
                a.remove(rd.base_name, rd.sub_name)

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
    inputs: dict[tuple[str, str], DeviceInput] | None = None,
) -> Outcome:
    """Allocate ``claims`` together on the node whose ``pools`` are given, as ``Allocator.Allocate`` does."""
    return Allocator(pools, claims, classes, in_use, inputs).run()
