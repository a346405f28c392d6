"""The scheduler's DynamicResources filter for one pod: on which nodes its claims can be allocated.

A pod's claims come from ``spec.resourceClaims``: a ``resourceClaimName``, or a
``resourceClaimTemplateName`` whose generated claim is named in the pod's
``status.resourceClaimStatuses`` (before the resourceclaim controller has made
it, the template's spec stands in for it). Claims that are already allocated
are not allocated again (``checks/dra/rules.py`` checks their allocation's node
selector and binding conditions); the unallocated ones are allocated together
on each node, against the devices every other claim already holds.
DeviceTaintRules' taints are added to the devices they select when the state is made.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from gpulabel.k8s.dra.allocator import DeviceID, in_use_devices, shared_use
from gpulabel.k8s.dra.extended import extended_classes
from gpulabel.k8s.dra.objects import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from gpulabel.k8s.dra.readers import (
    claim_from_json,
    class_from_json,
    slice_from_json,
    taint_rule_from_json,
    template_from_json,
)

__all__ = ["DraState", "PodClaims", "pod_claims"]

JSON = dict[str, Any]


@dataclass(frozen=True)
class DraState:
    """The DRA objects of a cluster, indexed by pool, node and claim; immutable.

    What allocation computes from them (pools per node, device inputs, node
    signatures, compiled selectors) lives in a :class:`~gpulabel.k8s.dra.evaluator.DraEvaluator`,
    one per check run.
    """

    slices: tuple[ResourceSlice, ...] = ()
    classes: Mapping[str, DeviceClass] = field(default_factory=dict)
    claims: tuple[ResourceClaim, ...] = ()
    templates: Mapping[tuple[str, str], ResourceClaimTemplate] = field(default_factory=dict)
    rules: tuple[DeviceTaintRule, ...] = ()  # DeviceTaintRules: their taints are on the slices' devices
    by_pool: Mapping[tuple[str, str], tuple[ResourceSlice, ...]] = field(init=False, repr=False, compare=False)
    by_node: Mapping[str, tuple[ResourceSlice, ...]] = field(init=False, repr=False, compare=False)
    shared: tuple[ResourceSlice, ...] = field(init=False, repr=False, compare=False)  # not bound to one node
    in_use: Mapping[DeviceID, str] = field(init=False, repr=False, compare=False)  # device -> claim holding it
    shares: Mapping[DeviceID, Mapping[str, int]] = field(init=False, repr=False, compare=False)  # shared: consumed
    extended: Mapping[str, DeviceClass] = field(init=False, repr=False, compare=False)  # resource -> its class
    _claims: Mapping[tuple[str, str], ResourceClaim] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.rules:
            object.__setattr__(self, "slices", tuple(with_rule_taints(s, self.rules) for s in self.slices))
        by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        by_node: dict[str, list[ResourceSlice]] = {}
        shared = []
        for s in self.slices:
            by_pool.setdefault((s.driver, s.pool), []).append(s)
            if s.node_name:
                by_node.setdefault(s.node_name, []).append(s)
            else:
                shared.append(s)
        derived = {
            "by_pool": MappingProxyType({k: tuple(v) for k, v in by_pool.items()}),
            "by_node": MappingProxyType({k: tuple(v) for k, v in by_node.items()}),
            "shared": tuple(shared),
            "in_use": MappingProxyType(in_use_devices(self.claims)),
            "shares": MappingProxyType(shared_use(self.claims)),
            "extended": MappingProxyType(extended_classes(self.classes.values())),
            "_claims": MappingProxyType({(c.namespace, c.name): c for c in self.claims}),
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    @classmethod
    def from_objects(cls, objects: Iterable[tuple[str, JSON]]) -> DraState:
        slices, classes, claims, templates, rules = [], {}, [], {}, []
        for where, obj in objects:
            kind = obj.get("kind")
            if kind == "DeviceTaintRule":
                rules.append(taint_rule_from_json(obj, where))
            elif kind == "ResourceSlice":
                slices.append(slice_from_json(obj, where))
            elif kind == "DeviceClass":
                c = class_from_json(obj, where)
                classes[c.name] = c
            elif kind == "ResourceClaim":
                claims.append(claim_from_json(obj, where))
            elif kind == "ResourceClaimTemplate":
                t = template_from_json(obj, where)
                templates[(t.namespace, t.name)] = t
        return cls(slices=tuple(slices), classes=classes, claims=tuple(claims), templates=templates, rules=tuple(rules))

    def with_objects(self, objects: Iterable[tuple[str, JSON]], namespace: str = "default") -> DraState:
        """This state plus ``objects`` (e.g. from manifests; namespaced ones default to ``namespace``)."""
        extra = DraState.from_objects(
            (w, {**o, "metadata": {"namespace": namespace, **(o.get("metadata") or {})}}) for w, o in objects
        )
        mine = {(c.namespace, c.name) for c in extra.claims}
        return DraState(
            slices=self.slices + extra.slices,
            classes={**self.classes, **extra.classes},
            claims=tuple(c for c in self.claims if (c.namespace, c.name) not in mine) + extra.claims,
            templates={**self.templates, **extra.templates},
            rules=self.rules + tuple(r for r in extra.rules if r.name not in {x.name for x in self.rules}),
        )

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self._claims.get((namespace, name))


def with_rule_taints(s: ResourceSlice, rules: Iterable[DeviceTaintRule]) -> ResourceSlice:
    """The slice with each rule's taint added to the devices it selects (``Tracker.applyPatches``,
    k8s.io/dynamic-resource-allocation/resourceslice/tracker), each rule once."""
    devices = []
    changed = False
    for device in s.devices:
        added = [r for r in rules if r.name not in device.taint_rules and r.applies(s, device)]
        if added:
            changed = True
            device = replace(
                device,
                taints=device.taints + tuple(r.taint for r in added),
                taint_rules=device.taint_rules + tuple(r.name for r in added),
            )
        devices.append(device)
    return replace(s, devices=tuple(devices)) if changed else s


@dataclass(frozen=True)
class PodClaims:
    """The claims of one pod: those to allocate, and what stops it before any node is tried."""

    to_allocate: tuple[ResourceClaim, ...]
    allocated: tuple[ResourceClaim, ...]
    missing: str | None  # e.g. 'resourceclaim "x" not found'
    missing_ref: str = ""  # <namespace>/<name> of the missing claim (or claim template)


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
                return PodClaims((), (), f'resourceclaim "{claim_name}" not found', f"{namespace}/{claim_name}")
        elif template_name:
            made = generated.get(ref)
            if made:
                claim = state.claim(namespace, str(made))
            if claim is None:
                template = state.templates.get((namespace, str(template_name)))
                if template is None:
                    missing = f'resourceclaimtemplate "{template_name}" not found'
                    return PodClaims((), (), missing, f"{namespace}/{template_name}")
                t = template.claim
                claim = ResourceClaim(namespace, f"{name}-{ref}", t.requests, t.constraints)
        else:
            continue
        (done if claim.allocated is not None else todo).append(claim)
    return PodClaims(tuple(todo), tuple(done), None)
