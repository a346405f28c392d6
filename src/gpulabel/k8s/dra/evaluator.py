"""What one check run computes from the DRA objects, computed once: a :class:`DraEvaluator`.

A :class:`~gpulabel.k8s.dra.plugin.DraState` is data and never changes; the
evaluator built on it holds what allocation derives from it and reuses across
pods and nodes: the pools each node sees, each device as CEL reads it, each
selector compiled (with its results per device content), node signatures.
Make one per run (or per call): it is never shared between runs, so nothing
outlives the cluster state it was built on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpulabel.k8s.dra.allocator import DeviceID, Outcome, Pool, allocate, counters_left, gather_pools
from gpulabel.k8s.dra.cel import DeviceInput, Selector, compile_selector, device_input
from gpulabel.k8s.dra.objects import Device, DeviceClass, ResourceClaim
from gpulabel.k8s.dra.plugin import DraState
from gpulabel.k8s.nodeaffinity import SchedulingNode, compile_pod_spec

__all__ = ["DraEvaluator"]

Keys = tuple[tuple[str, ...], tuple[str, ...]]  # attribute names, capacity names


class DraEvaluator:
    """Allocation and selectors over one :class:`DraState`, with what they compute kept for this run."""

    def __init__(self, state: DraState) -> None:
        self.state = state
        self._selectors: dict[str, Selector] = {}
        self._inputs: dict[tuple[str, str], DeviceInput] = {}
        self._pools: dict[str, list[Pool]] = {}
        self._content: dict[tuple[int, frozenset[str] | None], int] = {}
        self._intern: dict[Any, int] = {}  # contents and signatures -> small ints
        self._named: dict[frozenset[str], Keys] = {}
        self._all_keys: Keys | None = None
        self._signatures: dict[tuple[str, frozenset[str] | None], int] = {}
        self._allocated: dict[DeviceID, str] | None = None
        self._states: dict[str, int] = {}

    @property
    def allocated(self) -> Mapping[DeviceID, str]:
        """Devices held or shared: what consumes counters (``IsDeviceAllocated``)."""
        if self._allocated is None:
            self._allocated = {**self.state.in_use, **dict.fromkeys(self.state.shares, "")}
        return self._allocated

    @property
    def classes(self) -> Mapping[str, DeviceClass]:
        return self.state.classes

    @property
    def in_use(self) -> Mapping[DeviceID, str]:
        return self.state.in_use

    def selector(self, expression: str) -> Selector:
        """``expression`` compiled once per run (the scheduler caches compiled selectors the same way)."""
        found = self._selectors.get(expression)
        if found is None:
            found = self._selectors[expression] = compile_selector(expression)
        return found

    def device_input(self, did: DeviceID, device: Device) -> DeviceInput:
        """The device as selectors read it (built once per device and shared with the allocator)."""
        key = (did[0], f"{did[1]}/{did[2]}")
        found = self._inputs.get(key)
        if found is None:
            found = self._inputs[key] = device_input(did[0], device.attributes, device.capacity, device.allow_multiple)
        return found

    @staticmethod
    def selects(selector: Mapping[str, Any], node: SchedulingNode) -> bool:
        """Whether a node selector (API JSON: ``nodeSelectorTerms``) selects the node."""
        spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": selector}}}
        return compile_pod_spec(spec).affinity_only().match(node).fits

    def pools(self, node: SchedulingNode) -> list[Pool]:
        found = self._pools.get(node.name)
        if found is None:

            def matches(selector: Mapping[str, Any]) -> bool:
                return self.selects(selector, node)

            mine = [*self.state.by_node.get(node.name, ()), *self.state.shared]
            found = self._pools[node.name] = gather_pools(node.name, mine, matches, self.state.by_pool)
        return found

    def _keys_named(self, names: frozenset[str]) -> Keys:
        """The attribute and capacity names (qualified as published) whose identifier is in ``names``."""
        found = self._named.get(names)
        if found is None:
            if self._all_keys is None:
                attrs = {k for s in self.state.slices for d in s.devices for k in d.attributes}
                caps = {k for s in self.state.slices for d in s.devices for k in d.capacity}
                self._all_keys = (tuple(sorted(attrs)), tuple(sorted(caps)))
            all_attrs, all_caps = self._all_keys
            found = self._named[names] = (
                tuple(k for k in all_attrs if k.rsplit("/", 1)[-1] in names),
                tuple(k for k in all_caps if k.rsplit("/", 1)[-1] in names),
            )
        return found

    def _device_content(self, device: Device, names: frozenset[str] | None) -> int:
        key = (id(device), names)
        found = self._content.get(key)
        if found is None:
            if names is None:
                attrs = tuple(sorted(device.attributes.items()))
                caps = tuple(sorted(device.capacity.items()))
            else:
                attr_keys, cap_keys = self._keys_named(names)
                a, c = device.attributes, device.capacity
                attrs = tuple((k, a[k]) for k in attr_keys if k in a)
                caps = tuple((k, c[k]) for k in cap_keys if k in c)
            # capacity amounts count whatever the selectors read when a policy or sharing can refuse on them
            amounts = tuple(sorted(device.amounts.items())) if device.policies or device.allow_multiple else ()
            content = (
                attrs,
                caps,
                device.taints,
                device.allow_multiple,
                tuple(sorted(device.policies.items())),
                amounts,
            )
            found = self._content[key] = self._intern.setdefault(content, len(self._intern))
        return found

    def read_names(self, claims: Sequence[ResourceClaim]) -> frozenset[str] | None:
        """The attribute names the claims' selectors (and their classes') and constraints can read; None: any."""
        names: set[str] = set()
        for claim in claims:
            for c in claim.constraints:
                if c.match_attribute:
                    names.add(c.match_attribute.rsplit("/", 1)[-1])
            for request in claim.requests:
                for alt in request.alternatives():
                    names.update(k.rsplit("/", 1)[-1] for k in alt.capacity)  # capacity requests read amounts
                    cls = self.state.classes.get(alt.class_name)
                    for expr in (*(cls.selectors if cls else ()), *alt.selectors):
                        sel = self.selector(expr)
                        if sel.names is None:
                            return None
                        names |= sel.names
        return frozenset(names)

    def _node_state(self, node: SchedulingNode) -> int:
        """What of a node's pools does not depend on the selectors (in use, shared, per-device node
        selection, counters left), interned once per node."""
        found = self._states.get(node.name)
        if found is None:
            in_use, shares = self.state.in_use, self.state.shares
            state = tuple(
                (
                    p.driver,
                    p.incomplete,
                    p.invalid,
                    any(s.unmodelled for s in p.slices),
                    tuple(
                        (
                            (p.driver, p.name, d.name) in in_use,
                            tuple(sorted(shares[did].items()))
                            if shares and (did := DeviceID(p.driver, p.name, d.name)) in shares
                            else (),
                            d.name in p.off_node,
                            d.consumes,
                        )
                        for s in p.slices
                        for d in s.devices
                    ),
                    tuple(sorted((k, tuple(sorted(v.items()))) for k, v in counters_left(p, self.allocated).items()))
                    if p.counter_sets
                    else (),
                )
                for p in self.pools(node)
            )
            found = self._states[node.name] = self._intern.setdefault(("state", state), len(self._intern))
        return found

    def node_signature(self, node: SchedulingNode, names: frozenset[str] | None = None) -> int:
        """What allocation can see of a node: its pools' devices, in search order, and which are in use.

        Only the attributes and capacities named in ``names`` count (``None``:
        all). Nodes with equal signatures get the same outcome for claims that
        read only ``names`` (device names differ in messages only).
        """
        key = (node.name, names)
        cached = self._signatures.get(key)
        if cached is not None:
            return cached
        full = (
            self._node_state(node),
            tuple(tuple(self._device_content(d, names) for s in p.slices for d in s.devices) for p in self.pools(node)),
        )
        found = self._signatures[key] = self._intern.setdefault(("node", full), len(self._intern))
        return found

    def allocate_many(self, nodes: Sequence[SchedulingNode], claims: Sequence[ResourceClaim]) -> list[Outcome]:
        """:meth:`allocate` for every node, once per group of nodes with equal signatures."""
        done: dict[int, Outcome] = {}
        out = []
        names = self.read_names(claims)
        for node in nodes:
            sig = self.node_signature(node, names)
            found = done.get(sig)
            if found is None:
                found = done[sig] = self.allocate(node, claims)
            out.append(found)
        return out

    def allocate(self, node: SchedulingNode, claims: Sequence[ResourceClaim]) -> Outcome:
        state = self.state
        return allocate(
            self.pools(node), claims, state.classes, state.in_use, self.device_input, self.selector, state.shares
        )
