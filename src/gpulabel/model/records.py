"""The records gpulabel keeps of the API's objects: small, immutable, only the fields the checks use.

A pod's spec is kept compiled (:class:`gpulabel.model.podspec.PodSpec`: its node selection, tolerations,
gates, claims), one object per distinct spec of a load. :mod:`gpulabel.model.readers` makes the records
from the API's JSON; the records of one load share their equal parts (a node pool's allocatable, taints
and conditions; pods' specs, conditions, labels and owners: one copy each, found by content), so nothing
may change a record's parts after it is made.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpulabel.k8s.nodeaffinity import PodRequirements, compile_pod_spec
from gpulabel.k8s.taints import Taint
from gpulabel.model.gpusight import Sight
from gpulabel.model.podspec import PodSpec

__all__ = [
    "JSON",
    "KUBELET_CONDITIONS",
    "DaemonSet",
    "DeviceHealth",
    "LabelWrite",
    "Node",
    "NodeCondition",
    "Pod",
    "RuntimeClass",
]

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class LabelWrite:
    """Who last wrote a label key, from ``metadata.managedFields``."""

    manager: str
    operation: str
    time: str


# The conditions the kubelet itself sets on a Node (k8s.io/api core/v1 types.go, NodeConditionType):
# every other condition type was written by another agent (node-problem-detector, a health monitor).
KUBELET_CONDITIONS = frozenset({"Ready", "MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"})


@dataclass(frozen=True, slots=True)
class NodeCondition:
    """A node condition that the kubelet does not set, kept whole: a health agent's verdict and why."""

    type: str
    status: str
    reason: str = ""
    message: str = ""
    since: str = ""  # lastTransitionTime (RFC 3339), "" when absent


@dataclass(frozen=True, slots=True)
class DeviceHealth:
    """One entry of ``status.containerStatuses[].allocatedResourcesStatus[].resources[]`` (KEP-4680,
    core/v1 ``ResourceHealth``) that is not ``Healthy``: the resource, the device and its health."""

    container: str
    resource: str  # the resource name, or "claim:<claim>/<request>" for a DRA claim
    resource_id: str
    health: str  # Unhealthy or Unknown


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    conditions: Mapping[str, str] = field(default_factory=dict)
    managed_fields: tuple[JSON, ...] = ()
    # status.allocatable and status.capacity as the API gives them (quantity strings);
    # None when the object has no status.allocatable (a hand-written snapshot).
    allocatable: Mapping[str, str] | None = None
    capacity: Mapping[str, str] = field(default_factory=dict)
    # status.allocatable in the scheduler's units (cpu in millicores), parsed once
    amounts: Mapping[str, int] | None = None
    # the conditions the kubelet does not set (KUBELET_CONDITIONS), with reason, message and since
    other_conditions: tuple[NodeCondition, ...] = ()
    # status.runtimeHandlers[].name: the handlers the container runtime reports (Kubernetes 1.30+); () unknown
    runtime_handlers: tuple[str, ...] = ()

    @property
    def ready(self) -> bool:
        return self.conditions.get("Ready") == "True"

    def label_time(self, key: str) -> str | None:
        """When ``key`` was last written (RFC 3339, from managedFields), or ``None`` if unknown."""
        write = self.label_writers().get(key)
        return write.time if write is not None and write.time else None

    def label_writers(self) -> dict[str, LabelWrite]:
        """The manager that last wrote each label key.

        When several managers share a key (server-side apply), the most recent
        entry wins; entries without a time sort first.
        """
        out: dict[str, LabelWrite] = {}
        entries = sorted(self.managed_fields, key=lambda e: str(e.get("time") or ""))
        for entry in entries:
            fields = entry.get("fieldsV1") or {}
            labels = (fields.get("f:metadata") or {}).get("f:labels") or {}
            write = LabelWrite(
                manager=str(entry.get("manager") or "unknown"),
                operation=str(entry.get("operation") or ""),
                time=str(entry.get("time") or ""),
            )
            for fkey in labels:
                if fkey.startswith("f:"):
                    out[fkey[2:]] = write
        return out


@dataclass(frozen=True, slots=True)
class Pod:
    namespace: str
    name: str
    node_name: str
    phase: str
    labels: Mapping[str, str]
    conditions: Mapping[str, JSON]  # by type, each cut to type, status, reason and message (no times)
    owners: tuple[tuple[str, str], ...]  # (kind, uid) of each ownerReference
    spec: PodSpec  # the scheduling part of the pod's spec (SCHEDULING_FIELDS but nodeName), compiled
    # status.resourceClaimStatuses: the claims the resourceclaim controller made from templates
    claim_statuses: tuple[JSON, ...] = ()
    # What the scheduler counts for the pod (k8s.resources.pod_requests: containers,
    # init containers, sidecars, pod-level resources and overhead), in its units.
    requests: Mapping[str, int] = field(default_factory=dict)
    priority: int = 0
    waiting: str = ""  # why it is not running: the first waiting (init) container's reason, "Init:1/3", ...
    restarts: int = 0  # restartCount summed over its containers
    gpu_resources: tuple[str, ...] = ()  # nvidia.com/* resources its containers request or limit
    # the devices its containers' allocatedResourcesStatus reports not Healthy (KEP-4680)
    device_health: tuple[DeviceHealth, ...] = ()
    pinned: str = ""  # the node a DaemonSet pin in its required affinity names (PodSpec.pinned), else ""
    # status.reason and status.message: why the pod is in its phase (the kubelet's admission rejection,
    # "UnexpectedAdmissionError" and "Pod was rejected: ...", an eviction)
    status_reason: str = ""
    status_message: str = ""
    runtime_class: str = ""  # spec.runtimeClassName
    sight: tuple[Sight, ...] = ()  # how its containers ask to see GPUs besides requests (model/gpusight.py)
    messages: tuple[str, ...] = ()  # its containers' waiting and terminated messages (model/terminations.py)
    uid: str = ""  # metadata.uid: an Event about a pod of the same name made before is not about this one

    @property
    def requirements(self) -> PodRequirements:
        """The pod's node selection and tolerations, its pin to a node included (not ``spec.nodeName``)."""
        return self.spec.requirements_for(self.pinned)

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def ready(self) -> bool:
        return (self.conditions.get("Ready") or {}).get("status") == "True"

    def condition_message(self, kind: str) -> str:
        cond = self.conditions.get(kind) or {}
        return str(cond.get("message") or "")


@dataclass(frozen=True, slots=True)
class DaemonSet:
    namespace: str
    name: str
    uid: str
    template_spec: JSON
    status: Mapping[str, int]
    selector: JSON = field(default_factory=dict)
    # The template's node selection as its pods get it, the DaemonSet controller's tolerations included
    # (pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations): compiled once, when the record is made.
    requirements: PodRequirements = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        path = f"{self.ref} spec.template.spec"
        object.__setattr__(self, "requirements", compile_pod_spec(self.template_spec, path, daemonset=True))

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    def selector_string(self) -> str:
        """``spec.selector`` in the API's labelSelector query syntax."""
        parts = [f"{k}={v}" for k, v in sorted((self.selector.get("matchLabels") or {}).items())]
        for expr in self.selector.get("matchExpressions") or ():
            key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
            if op == "In":
                parts.append(f"{key} in ({','.join(values)})")
            elif op == "NotIn":
                parts.append(f"{key} notin ({','.join(values)})")
            elif op == "Exists":
                parts.append(key)
            elif op == "DoesNotExist":
                parts.append(f"!{key}")
        return ",".join(parts)


@dataclass(frozen=True, slots=True)
class RuntimeClass:
    """A RuntimeClass (node.k8s.io/v1): its name, which pods' ``runtimeClassName`` names, and the CRI handler
    the kubelet asks the container runtime for (``handler``)."""

    name: str
    handler: str
