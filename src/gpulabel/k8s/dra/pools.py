"""The pools a node sees, as the 1.37 allocator gathers them (``structured/internal/incubating/pools_incubating.go``),
and what allocated devices consume of their shared counters (``checkAvailableCounters``' first half).

``gather_pools``: the slices that target the node (``nodeName``, ``allNodes``, ``nodeSelector``, or with
``perDeviceNodeSelection`` any device's own node selection), the newest generation of each pool, incomplete
pools (and, when the node's slices do not complete a pool, the pool's other slices counted), invalid pools
(duplicate device names, unknown counter sets or counters), slices with ``compatibilityGroups`` ignored,
pools with binding conditions last. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gpulabel.k8s.dra.objects import ResourceClaim, ResourceSlice

__all__ = [
    "Counters",
    "DeviceID",
    "NodeMatcher",
    "Pool",
    "counter_shortfall",
    "counters_left",
    "device_id_text",
    "gather_pools",
    "in_use_devices",
    "shared_use",
]


class DeviceID(NamedTuple):
    """A device as the scheduler names it: driver, pool, device."""

    driver: str
    pool: str
    device: str


JSON = dict[str, Any]
NodeMatcher = Callable[[Mapping[str, Any]], bool]  # a NodeSelector (API JSON) -> does the node match


def device_id_text(d: DeviceID) -> str:
    return "/".join(d)


@dataclass
class Pool:
    """``Pool`` of pools_incubating.go: the device slices that target the node (sorted by name), the
    pool's counter sets, the device slices of the pool that do not target the node (their allocated
    devices consume the same counters), and the devices a per-device node selection puts elsewhere."""

    driver: str
    name: str
    slices: list[ResourceSlice] = field(default_factory=list)  # targeting the node, sorted by name
    incomplete: bool = False
    invalid: str = ""  # why the pool is invalid (duplicate device names, unknown counter sets or counters)
    counter_sets: dict[str, Mapping[str, int]] = field(default_factory=dict)
    others: list[ResourceSlice] = field(default_factory=list)  # device slices not targeting the node
    off_node: frozenset[str] = frozenset()  # devices whose own node selection does not match the node
    binding: bool = False  # a device has bindingConditions: such pools are searched last

    @property
    def id_text(self) -> str:
        return f"{self.driver}/{self.name}"


def _targets(node_name: str, name: str, all_nodes: bool, selector: JSON | None, matches: NodeMatcher) -> bool:
    """``NodeMatches``: a node name, all nodes, or a node selector."""
    if name:
        return name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return matches(selector)
    return False


def _slice_targets(s: ResourceSlice, node_name: str, selector_matches: NodeMatcher) -> bool | None:
    if s.node_name or s.all_nodes or s.node_selector is not None:
        return _targets(node_name, s.node_name, s.all_nodes, s.node_selector, selector_matches)
    if s.per_device_node_selection:
        return any(_targets(node_name, d.node_name, d.all_nodes, d.node_selector, selector_matches) for d in s.devices)
    return None  # no node selection: not for this gather


def _build_pool(
    driver: str,
    name: str,
    mine: list[ResourceSlice],
    everywhere: Sequence[ResourceSlice],
    node_name: str,
    matches: NodeMatcher,
) -> Pool:
    """``buildPool``: device slices and counter sets, validated as the allocator validates them."""
    pool = Pool(driver, name)
    own = {s.name for s in mine}
    counter_slices = [s for s in mine if s.counter_sets]
    pool.slices = sorted((s for s in mine if not s.counter_sets), key=lambda s: s.name)
    for s in everywhere:
        if s.name not in own:
            (counter_slices if s.counter_sets else pool.others).append(s)
    seen: set[str] = set()
    for s in pool.slices:
        for d in s.devices:
            if d.name in seen:
                pool.invalid = f"duplicate device name {d.name}"
                return pool
            seen.add(d.name)
    for s in counter_slices:
        for set_name, counters in s.counter_sets.items():
            if set_name in pool.counter_sets:
                pool.invalid = f"duplicate counter set name {set_name}"
                return pool
            pool.counter_sets[set_name] = counters
    for s in (*pool.slices, *pool.others):
        for d in s.devices:
            for set_name, amounts in d.consumes:
                have = pool.counter_sets.get(set_name)
                if have is None:
                    pool.invalid = f"counter set {set_name} not found"
                    return pool
                for counter, _ in amounts:
                    if counter not in have:
                        pool.invalid = f"counter {counter} not found in counter set {set_name}"
                        return pool
    pool.off_node = frozenset(
        d.name
        for s in pool.slices
        if s.per_device_node_selection
        for d in s.devices
        if not _targets(node_name, d.node_name, d.all_nodes, d.node_selector, matches)
    )
    pool.binding = any(d.binding_conditions for s in pool.slices for d in s.devices)
    return pool


def gather_pools(
    node_name: str,
    slices: Sequence[ResourceSlice],
    selector_matches: NodeMatcher,
    all_by_pool: Mapping[tuple[str, str], Sequence[ResourceSlice]] | None = None,
) -> list[Pool]:
    """``GatherPools``: the pools the node sees, sorted by driver then pool name; pools with devices
    that have binding conditions after the others (sorted the same way)."""
    found: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        if s.compatibility_groups:
            continue  # the 1.37 allocator ignores such slices (DRADeviceCompatibilityGroups is off)
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
        everywhere: Sequence[ResourceSlice] = ()
        if len(members) != members[0].slice_count and all_by_pool is not None:
            generation = members[0].generation
            pool_slices = all_by_pool.get((driver, name), ())
            if any(s.generation > generation for s in pool_slices):
                continue  # obsolete: a newer generation exists elsewhere
            everywhere = [s for s in pool_slices if s.generation == generation and not s.compatibility_groups]
        if len(members) != members[0].slice_count and len(everywhere) != members[0].slice_count:
            pools.append(Pool(driver, name, incomplete=True))
            continue
        pools.append(_build_pool(driver, name, members, everywhere, node_name, selector_matches))
    pools.sort(key=lambda p: (p.binding, p.driver, p.name))
    return pools


def in_use_devices(claims: Sequence[ResourceClaim]) -> dict[DeviceID, str]:
    """Every allocated device and the claim (``ns/name``) that holds it; an admin-access result holds
    nothing (``foreachAllocatedDevice`` in the scheduler's allocateddevices.go)."""
    out: dict[DeviceID, str] = {}
    for c in claims:
        for d in c.allocated or ():
            if not d.admin_access and not d.share_id:
                out[DeviceID(driver=d.driver, pool=d.pool, device=d.device)] = c.ref
    return out


def shared_use(claims: Sequence[ResourceClaim]) -> dict[DeviceID, dict[str, int]]:
    """Devices allocated in shares (``shareID``): what the shares consume of each capacity, summed
    (the scheduler's ``AggregatedCapacity``; such a device is allocated, not held)."""
    out: dict[DeviceID, dict[str, int]] = {}
    for c in claims:
        for d in c.allocated or ():
            if d.share_id and not d.admin_access:
                have = out.setdefault(DeviceID(driver=d.driver, pool=d.pool, device=d.device), {})
                for name, amount in d.consumed.items():
                    have[name] = have.get(name, 0) + amount
    return out


Counters = dict[str, dict[str, int]]  # counter set -> counter -> nano-units


def counters_left(pool: Pool, in_use: Mapping[DeviceID, Any]) -> Counters:
    """``checkAvailableCounters``' first half: the pool's counter sets minus what its allocated devices
    (on any node) consume."""
    left = {name: dict(counters) for name, counters in pool.counter_sets.items()}
    for s in (*pool.slices, *pool.others):
        for d in s.devices:
            if d.consumes and DeviceID(s.driver, s.pool, d.name) in in_use:
                for set_name, counters in d.consumes:
                    have = left.get(set_name, {})
                    for counter, amount in counters:
                        if counter in have:
                            have[counter] -= amount
    return left


def counter_shortfall(left: Counters, consumed: Mapping[tuple[str, str], int]) -> tuple[str, str, int, int] | None:
    """The first counter (set, name, consumed, left) of which less is left than ``consumed`` takes;
    every counter of the pool is compared, as upstream compares them (a counter already overdrawn
    refuses every device of the pool)."""
    for set_name, counters in sorted(left.items()):
        for counter, have in sorted(counters.items()):
            used = consumed.get((set_name, counter), 0)
            if have < used or have < 0:
                return set_name, counter, used, have
    return None
