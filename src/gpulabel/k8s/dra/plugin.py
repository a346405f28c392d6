"""The scheduler's DynamicResources filter for one pod: on which nodes its claims can be allocated.

A pod's claims come from ``spec.resourceClaims``: a ``resourceClaimName``, or a
``resourceClaimTemplateName`` whose generated claim is named in the pod's
``status.resourceClaimStatuses`` (before the resourceclaim controller has made
it, the template's spec stands in for it). Claims that are already allocated
are not allocated again (gpulabel does not check their node selector yet);
the unallocated ones are allocated together on each node, against the devices
every other claim already holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpulabel.k8s.dra.allocator import DeviceID, Outcome, Pool, allocate, gather_pools, in_use_devices
from gpulabel.k8s.dra.cel import DeviceInput, compile_selector, device_input
from gpulabel.k8s.dra.objects import (
    Device,
    DeviceClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    claim_from_json,
    class_from_json,
    slice_from_json,
    template_from_json,
)
from gpulabel.k8s.nodeaffinity import SchedulingNode, compile_pod_spec

__all__ = ["DraState", "PodClaims", "pod_claims"]

JSON = dict[str, Any]


@dataclass
class DraState:
    """The DRA objects of a cluster, indexed for allocation."""

    slices: tuple[ResourceSlice, ...] = ()
    classes: Mapping[str, DeviceClass] = field(default_factory=dict)
    claims: tuple[ResourceClaim, ...] = ()
    templates: Mapping[tuple[str, str], ResourceClaimTemplate] = field(default_factory=dict)
    _by_pool: dict[tuple[str, str], list[ResourceSlice]] = field(default_factory=dict, repr=False)
    _in_use: dict[DeviceID, str] | None = field(default=None, repr=False)
    _inputs: dict[tuple[str, str], DeviceInput] = field(default_factory=dict, repr=False)
    _pools: dict[str, list[Pool]] = field(default_factory=dict, repr=False)
    _by_node: dict[str, list[ResourceSlice]] = field(default_factory=dict, repr=False)
    _shared: list[ResourceSlice] = field(default_factory=list, repr=False)
    _claims: dict[tuple[str, str], ResourceClaim] = field(default_factory=dict, repr=False)
    _content: dict[tuple[int, frozenset[str] | None], int] = field(default_factory=dict, repr=False)
    _intern: dict[Any, int] = field(default_factory=dict, repr=False)  # contents and signatures -> small ints
    _named: dict[frozenset[str], tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict, repr=False)
    _all_keys: tuple[tuple[str, ...], tuple[str, ...]] | None = field(default=None, repr=False)
    _signatures: dict[tuple[str, frozenset[str] | None], int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for s in self.slices:
            self._by_pool.setdefault((s.driver, s.pool), []).append(s)
            if s.node_name:
                self._by_node.setdefault(s.node_name, []).append(s)
            else:
                self._shared.append(s)
        self._claims = {(c.namespace, c.name): c for c in self.claims}

    @classmethod
    def from_objects(cls, objects: Iterable[tuple[str, JSON]]) -> DraState:
        slices, classes, claims, templates = [], {}, [], {}
        for where, obj in objects:
            kind = obj.get("kind")
            if kind == "ResourceSlice":
                slices.append(slice_from_json(obj, where))
            elif kind == "DeviceClass":
                c = class_from_json(obj, where)
                classes[c.name] = c
            elif kind == "ResourceClaim":
                claims.append(claim_from_json(obj, where))
            elif kind == "ResourceClaimTemplate":
                t = template_from_json(obj, where)
                templates[(t.namespace, t.name)] = t
        return cls(tuple(slices), classes, tuple(claims), templates)

    def with_objects(self, objects: Iterable[tuple[str, JSON]], namespace: str = "default") -> DraState:
        """This state plus ``objects`` (e.g. from manifests; namespaced ones default to ``namespace``)."""
        extra = DraState.from_objects(
            (w, {**o, "metadata": {"namespace": namespace, **(o.get("metadata") or {})}}) for w, o in objects
        )
        mine = {(c.namespace, c.name) for c in extra.claims}
        return DraState(
            self.slices + extra.slices,
            {**self.classes, **extra.classes},
            tuple(c for c in self.claims if (c.namespace, c.name) not in mine) + extra.claims,
            {**self.templates, **extra.templates},
        )

    @property
    def in_use(self) -> dict[DeviceID, str]:
        if self._in_use is None:
            self._in_use = in_use_devices(self.claims)
        return self._in_use

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self._claims.get((namespace, name))

    def pools(self, node: SchedulingNode) -> list[Pool]:
        found = self._pools.get(node.name)
        if found is None:

            def matches(selector: Mapping[str, Any]) -> bool:
                spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": selector}}}
                return compile_pod_spec(spec).affinity_only().match(node).fits

            mine = self._by_node.get(node.name, []) + self._shared
            found = self._pools[node.name] = gather_pools(node.name, mine, matches, self._by_pool)
        return found

    def _keys_named(self, names: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The attribute and capacity names (qualified as published) whose identifier is in ``names``."""
        found = self._named.get(names)
        if found is None:
            if self._all_keys is None:
                attrs = {k for s in self.slices for d in s.devices for k in d.attributes}
                caps = {k for s in self.slices for d in s.devices for k in d.capacity}
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
            content = (attrs, caps, device.taints, device.allow_multiple)
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
                    cls = self.classes.get(alt.class_name)
                    for expr in (*(cls.selectors if cls else ()), *alt.selectors):
                        sel = compile_selector(expr)
                        if sel.names is None:
                            return None
                        names |= sel.names
        return frozenset(names)

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
        in_use = self.in_use
        full = tuple(
            (
                p.driver,
                p.incomplete,
                tuple(
                    (self._device_content(d, names), DeviceID(driver=p.driver, pool=p.name, device=d.name) in in_use)
                    for s in p.slices
                    for d in s.devices
                ),
            )
            for p in self.pools(node)
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

    def device_input(self, did: DeviceID, device: Device) -> DeviceInput:
        """The device as selectors read it (built once per device and shared with the allocator)."""
        key = (did[0], f"{did[1]}/{did[2]}")
        found = self._inputs.get(key)
        if found is None:
            found = self._inputs[key] = device_input(did[0], device.attributes, device.capacity, device.allow_multiple)
        return found

    def allocate(self, node: SchedulingNode, claims: Sequence[ResourceClaim]) -> Outcome:
        return allocate(self.pools(node), claims, self.classes, self.in_use, self._inputs)


@dataclass(frozen=True)
class PodClaims:
    """The claims of one pod: those to allocate, and what stops it before any node is tried."""

    to_allocate: tuple[ResourceClaim, ...]
    allocated: tuple[ResourceClaim, ...]
    missing: str | None  # e.g. 'resourceclaim "x" not found'


def pod_claims(
    namespace: str, name: str, spec: Mapping[str, Any], status: Mapping[str, Any], state: DraState
) -> PodClaims:
    generated = {
        str(s.get("name")): s.get("resourceClaimName")
        for s in status.get("resourceClaimStatuses") or ()
        if isinstance(s, dict)
    }
    todo: list[ResourceClaim] = []
    done: list[ResourceClaim] = []
    for entry in spec.get("resourceClaims") or ():
        if not isinstance(entry, dict):
            continue
        ref = str(entry.get("name", ""))
        claim_name = entry.get("resourceClaimName")
        template_name = entry.get("resourceClaimTemplateName")
        claim: ResourceClaim | None = None
        if claim_name:
            claim = state.claim(namespace, str(claim_name))
            if claim is None:
                return PodClaims((), (), f'resourceclaim "{claim_name}" not found')
        elif template_name:
            made = generated.get(ref)
            if made:
                claim = state.claim(namespace, str(made))
            if claim is None:
                template = state.templates.get((namespace, str(template_name)))
                if template is None:
                    return PodClaims((), (), f'resourceclaimtemplate "{template_name}" not found')
                t = template.claim
                claim = ResourceClaim(namespace, f"{name}-{ref}", t.requests, t.constraints)
        else:
            continue
        (done if claim.allocated is not None else todo).append(claim)
    return PodClaims(tuple(todo), tuple(done), None)
