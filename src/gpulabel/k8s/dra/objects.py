"""DRA objects (resource.k8s.io/v1): only what allocation reads.

They are read from API JSON by :mod:`gpulabel.k8s.dra.readers`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpulabel.k8s.dra.capacity import CapacityPolicy
from gpulabel.k8s.taints import Taint, Toleration

__all__ = [
    "DRA_KINDS",
    "AllocatedDevice",
    "Constraint",
    "Device",
    "DeviceClass",
    "DeviceCondition",
    "DeviceRequest",
    "DeviceTaint",
    "DeviceTaintRule",
    "DeviceToleration",
    "Request",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ResourceSlice",
]

DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule")
JSON = dict[str, Any]


# A device taint and a claim's toleration match as a node taint and a pod's toleration do
# (resourceclaim.ToleratesTaint and v1.Toleration.ToleratesTaint agree): one pair of types serves both.
DeviceTaint = Taint
DeviceToleration = Toleration


@dataclass(frozen=True, slots=True)
class Device:
    name: str
    attributes: Mapping[str, tuple[str, Any]]  # qualified name -> (type, value)
    capacity: Mapping[str, str]  # qualified name -> quantity string
    taints: tuple[DeviceTaint, ...] = ()
    allow_multiple: bool = False
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    # counter set -> ((counter, amount in nano-units), ...), in the order published
    consumes: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()
    # per-device node selection (a slice with ``perDeviceNodeSelection``): nodeName, nodeSelector, allNodes
    node_name: str = ""
    node_selector: JSON | None = None
    all_nodes: bool = False
    taint_rules: tuple[str, ...] = ()  # per taint: the DeviceTaintRule that added it ("" for the slice's own)
    unmodelled: tuple[str, ...] = ()  # fields gpulabel does not model (paths within the device)
    amounts: Mapping[str, int] = field(default_factory=dict)  # capacity in nano-units
    policies: Mapping[str, CapacityPolicy] = field(default_factory=dict)  # capacity -> its requestPolicy


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str
    node_selector: JSON | None
    all_nodes: bool
    per_device_node_selection: bool
    devices: tuple[Device, ...]
    counter_sets: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # set -> counter -> nano-units
    compatibility_groups: bool = False  # a device names compatibilityGroups: the 1.37 allocator ignores the slice
    unmodelled: tuple[str, ...] = ()  # fields gpulabel does not model: ``spec.<path>``

    @property
    def shared_counters(self) -> bool:
        return bool(self.counter_sets)


@dataclass(frozen=True, slots=True)
class DeviceTaintRule:
    """A DeviceTaintRule: its taint on every device its selector names (an absent selector names none)."""

    name: str
    driver: str | None
    pool: str | None
    device: str | None
    taint: DeviceTaint
    selects: bool = True  # False: no deviceSelector

    def applies(self, s: ResourceSlice, device: Device) -> bool:
        """``Tracker.applyPatches``: driver, pool and device, each when set."""
        return (
            self.selects
            and (self.driver is None or self.driver == s.driver)
            and (self.pool is None or self.pool == s.pool)
            and (self.device is None or self.device == device.name)
        )


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...]
    extended_resource: str = ""  # spec.extendedResourceName
    created: str = ""  # metadata.creationTimestamp (RFC 3339: orders as text)


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """``exactly`` or one ``firstAvailable`` entry: what one request asks of one class."""

    name: str
    class_name: str
    selectors: tuple[str, ...]
    mode: str  # ExactCount | All
    count: int
    tolerations: tuple[DeviceToleration, ...] = ()
    admin_access: bool = False
    derived_attributes: bool = False
    unmodelled: tuple[str, ...] = ()  # fields gpulabel does not model (paths within the claim)
    capacity: Mapping[str, int] = field(default_factory=dict)  # capacity.requests in nano-units


@dataclass(frozen=True, slots=True)
class Request:
    name: str
    exactly: DeviceRequest | None
    first_available: tuple[DeviceRequest, ...] = ()

    def alternatives(self) -> tuple[DeviceRequest, ...]:
        return self.first_available if self.first_available else ((self.exactly,) if self.exactly else ())


@dataclass(frozen=True, slots=True)
class Constraint:
    requests: tuple[str, ...]
    match_attribute: str | None
    distinct_attribute: str | None = None


@dataclass(frozen=True, slots=True)
class AllocatedDevice:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False  # not counted as holding the device (allocateddevices.go foreachAllocatedDevice)
    share_id: str = ""  # a share of a device that allows multiple allocations
    consumed: Mapping[str, int] = field(default_factory=dict)  # consumedCapacity in nano-units
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceCondition:
    """One of ``status.devices[].conditions`` of a claim (resource/v1 ``AllocatedDeviceStatus``): what the
    driver says of an allocated device (metav1.Condition: type, status True|False|Unknown, reason, message)."""

    driver: str
    pool: str
    device: str
    type: str
    status: str
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class ResourceClaim:
    namespace: str
    name: str
    requests: tuple[Request, ...]
    constraints: tuple[Constraint, ...] = ()
    allocated: tuple[AllocatedDevice, ...] | None = None  # None: not allocated
    reserved_for: tuple[str, ...] = ()
    uid: str = ""
    node_selector: JSON | None = None  # status.allocation.nodeSelector: where the allocated devices are
    allocated_at: str = ""  # status.allocation.allocationTimestamp
    # status.devices: (driver, pool, device) -> condition type -> (status, reason, message)
    device_conditions: Mapping[tuple[str, str, str], Mapping[str, tuple[str, str, str]]] = field(default_factory=dict)
    extended_for: str = ""  # the pod (name) whose extended resources the scheduler made this claim for

    def device_condition_list(self) -> tuple[DeviceCondition, ...]:
        """``status.devices[].conditions``, one per device and condition type, in the order read."""
        return tuple(
            DeviceCondition(driver, pool, device, kind, status, reason, message)
            for (driver, pool, device), conditions in self.device_conditions.items()
            for kind, (status, reason, message) in conditions.items()
        )

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    namespace: str
    name: str
    claim: ResourceClaim  # the spec every generated claim gets (named after the template until generated)
