"""``admission``: GPU pods the kubelet rejected at admission, node by node.

The kubelet admits a pod the scheduler bound before it starts it; when the device manager or the topology
manager cannot give the pod its devices, it rejects it: the pod is ``Failed`` with the kubelet's reason and
``Pod was rejected: <message>`` (``pkg/kubelet/kubelet.go`` ``rejectPod``, Kubernetes v1.37.2), and a
Warning Event of the same reason. The pod stays Failed (its controller makes another, which may fail the same
way), so a node that keeps rejecting GPU pods piles them up. The reasons read here (v1.37.2, each file under
``pkg/kubelet/``):

- ``UnexpectedAdmissionError``: the device manager's ``Allocate`` failed (``cm/admission/errors.go``
  ``unexpectedAdmissionError``: ``Allocate failed due to <err>, which is unexpected``; the errors are those of
  ``cm/devicemanager/manager.go`` ``devicesToAllocate``, :data:`KUBELET_LINES`), or the plugin resources could
  not be updated (``lifecycle/predicate.go``: ``Update plugin resources failed due to <err>, which is
  unexpected.``);
- ``TopologyAffinityError``: the topology manager's policy found no NUMA alignment
  (``cm/topologymanager/topology_manager.go``: ``Resources cannot be allocated with Topology locality``);
- ``OutOf<resource>`` of a GPU resource: the kubelet's own count of the node's devices was short
  (``lifecycle/predicate.go`` ``InsufficientResourceError``: ``Node didn't have enough resource: ...``), as
  before a device plugin registers again after a kubelet restart.

Only GPU pods (requesting an ``nvidia.com/`` resource) on GPU nodes are counted, one finding per node and
kubelet reason: its pods, the kubelet's message, what the message means, and the cause where the node says
it now (MIG being reconfigured; the device plugin not registered: the resource's allocatable 0). One or two
pods are a warning (a kubelet restart's race the controller recovered from); :data:`REPEATED` or more an
error: the node keeps taking GPU pods it cannot start.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gpulabel.checks.operands.standalone import gpu_node
from gpulabel.model import gpustack as G
from gpulabel.model.cluster import ClusterState, Node, Pod
from gpulabel.model.findings import Finding
from gpulabel.model.severity import Reason

__all__ = [
    "KUBELET_LINES",
    "REASONS",
    "REJECTED_PREFIX",
    "REPEATED",
    "KubeletLine",
    "admission",
    "node_admission",
    "rejected",
]

REPEATED = 3  # GPU pods rejected on one node for the same reason: from here on an error
REJECTED_PREFIX = "Pod was rejected: "  # pkg/kubelet/kubelet.go rejectPod: status.message
_GPU_PREFIX = "nvidia.com/"
_TOPOLOGY = "TopologyAffinityError"  # cm/topologymanager/topology_manager.go ErrorTopologyAffinity
_UNEXPECTED = "UnexpectedAdmissionError"  # lifecycle/predicate.go, cm/admission/errors.go ErrorReasonUnexpected
_OUT_OF = "OutOf"  # lifecycle/predicate.go InsufficientResourcePrefix

REASONS: dict[str, Reason] = {
    "rejected": Reason(
        "warning",
        f"fewer than {REPEATED} GPU pods on the node Failed at the kubelet's admission (UnexpectedAdmissionError, "
        "TopologyAffinityError, OutOf<GPU resource>)",
    ),
    "rejected-repeatedly": Reason(
        "error",
        f"{REPEATED} or more GPU pods on the node Failed at the kubelet's admission for the same reason: it keeps "
        "rejecting the GPU pods the scheduler binds to it",
    ),
}


@dataclass(frozen=True, slots=True)
class KubeletLine:
    """A message of the kubelet's admission (after ``Pod was rejected: ``), what it means, and where it is."""

    pattern: re.Pattern[str]
    means: str
    source: str  # the file of k8s.io/kubernetes v1.37.2 that writes it


def _line(pattern: str, means: str, source: str) -> KubeletLine:
    return KubeletLine(re.compile(pattern), means, source)


_ALLOCATE = r"Allocate failed due to "
_UNEXPECTED_END = r", which is unexpected$"
_DM = "pkg/kubelet/cm/devicemanager/manager.go devicesToAllocate, via pkg/kubelet/cm/admission/errors.go"
KUBELET_LINES: tuple[KubeletLine, ...] = (
    _line(
        _ALLOCATE + r"requested number of devices unavailable for (?P<resource>\S+)\. "
        r"Requested: (?P<requested>\d+), Available: (?P<available>\d+)" + _UNEXPECTED_END,
        "the kubelet's device manager had fewer healthy free devices than the scheduler counted (devices "
        "held by pods it still counts, devices turned unhealthy, or a device plugin that re-registered "
        "with fewer after a kubelet restart)",
        _DM,
    ),
    _line(
        _ALLOCATE + r"cannot allocate unregistered device (?P<resource>\S+)" + _UNEXPECTED_END,
        "no device plugin of the resource is registered with the kubelet (after a kubelet restart or a "
        "reboot, before the device plugin registers again)",
        _DM,
    ),
    _line(
        _ALLOCATE
        + r"no healthy devices present; cannot allocate unhealthy devices (?P<resource>\S+)"
        + _UNEXPECTED_END,
        "the device plugin reports every device of the resource unhealthy",
        _DM,
    ),
    _line(
        _ALLOCATE + r"previously allocated devices are no longer healthy; cannot allocate unhealthy devices "
        r"(?P<resource>\S+)" + _UNEXPECTED_END,
        "devices the pod held before turned unhealthy",
        _DM,
    ),
    _line(
        _ALLOCATE + r"unexpectedly allocated less resources than required\. Requested: (?P<requested>\d+), "
        r"Got: \d+" + _UNEXPECTED_END,
        "the device manager found fewer aligned and preferred devices than the pod asked for",
        _DM,
    ),
    _line(
        r"Update plugin resources failed due to .*, which is unexpected\.$",
        "the kubelet could not update the node's device plugin resources for the pod",
        "pkg/kubelet/lifecycle/predicate.go Admit",
    ),
    _line(
        r"^(Pod Scope )?Resources cannot be allocated with Topology locality$",
        "the kubelet's topology manager policy (single-numa-node or restricted) found no NUMA node that holds "
        "the pod's GPUs with its CPUs and other devices",
        "pkg/kubelet/cm/topologymanager/topology_manager.go TopologyAffinityError",
    ),
    _line(
        r"^Node didn't have enough resource: (?P<resource>[^,]+), requested: (?P<requested>\d+), "
        r"used: (?P<used>\d+), capacity: (?P<capacity>\d+)$",
        "the kubelet's own count of the node's devices was short of the scheduler's (a device plugin not "
        "registered again yet after a kubelet restart)",
        "pkg/kubelet/lifecycle/predicate.go InsufficientResourceError",
    ),
)


def _gpu_reason(reason: str) -> bool:
    return reason in (_UNEXPECTED, _TOPOLOGY) or (
        reason.startswith(_OUT_OF) and reason[len(_OUT_OF) :].startswith(_GPU_PREFIX)
    )


def rejected(pod: Pod) -> bool:
    """A GPU pod the kubelet rejected at admission: Failed on a node, with an admission reason of GPU devices."""
    return pod.phase == "Failed" and bool(pod.node_name and pod.gpu_resources) and _gpu_reason(pod.status_reason)


def _message(pod: Pod) -> str:
    m = pod.status_message
    return m[len(REJECTED_PREFIX) :] if m.startswith(REJECTED_PREFIX) else m


def matched(message: str) -> tuple[KubeletLine, re.Match[str]] | None:
    """The kubelet line ``message`` (without ``Pod was rejected: ``) is, with its match, or ``None``."""
    for line in KUBELET_LINES:
        m = line.pattern.search(message)
        if m is not None:
            return line, m
    return None


def _resource(pod: Pod, found: re.Match[str] | None) -> str:
    named = found.groupdict().get("resource") if found is not None else None
    if named:
        return named
    if pod.status_reason.startswith(_OUT_OF + _GPU_PREFIX):
        return pod.status_reason[len(_OUT_OF) :]
    return pod.gpu_resources[0]


def _cause(node: Node, resource: str) -> tuple[str, str]:
    """The operand behind the rejections as the node says it now, and why: MIG being reconfigured, or the
    device plugin not registered (the resource's allocatable 0); ``("", ...)`` when the node says no cause."""
    state = node.labels.get(G.MIG_CONFIG_STATE, "")
    if state in G.MIG_IN_PROGRESS:
        return "mig-manager", (
            f"MIG is being reconfigured ({G.MIG_CONFIG_STATE}={state}): the device plugin advertises the new "
            "layout when mig-manager is done; GPU pods bound meanwhile are rejected"
        )
    if node.amounts is None:
        return "", "the input has no status.allocatable of the node"
    has, capacity = node.amounts.get(resource, 0), node.capacity.get(resource, "0")
    if has == 0:
        return "device-plugin", (
            f"status.allocatable has no {resource} now (capacity {capacity}): the device plugin is not "
            "registered with the kubelet"
        )
    return "", f"status.allocatable has {resource}={has} now: the node names no cause"


def _fix(reason: str) -> str:
    if reason == _TOPOLOGY:
        return "ask for GPUs one NUMA node holds, or relax the kubelet's --topology-manager-policy"
    return "if more follow, restart the device plugin's pod on the node; delete the Failed pods"


def _node_finding(node: Node, reason: str, pods: Sequence[Pod]) -> Finding:
    messages = Counter(_message(p) for p in pods)
    message = min(messages, key=lambda m: (-messages[m], m))  # the most common, then the first by text
    first = next(p for p in pods if _message(p) == message)
    found = matched(message)
    resource = _resource(first, found[1] if found else None)
    operand, cause = _cause(node, resource)
    names = ", ".join(p.ref for p in pods[:3]) + (f" and {len(pods) - 3} more" if len(pods) > 3 else "")
    others = f" ({len(messages) - 1} other message(s))" if len(messages) > 1 else ""
    means = f": {found[0].means}" if found else ""
    detail = (
        f"{len(pods)} GPU pod(s) Failed at admission ({names}); the kubelet: {REJECTED_PREFIX}{message}{others}"
        f"{means}; {cause}; {_fix(reason)}"
    )
    verdict = "rejected-repeatedly" if len(pods) >= REPEATED else "rejected"
    return Finding("admission", verdict, node=node.name, operand=operand, args=(reason, resource), detail=detail)


def node_admission(node: Node, pods: Iterable[Pod], namespace: str | None = None) -> list[Finding]:
    """The node's findings from the pods bound to it (any pods: the rejected GPU pods are picked here), one per
    kubelet reason, in the reasons' order; none on a node that is not a GPU node."""
    by_reason: dict[str, list[Pod]] = {}
    for p in pods:
        if rejected(p) and (namespace is None or p.namespace == namespace):
            by_reason.setdefault(p.status_reason, []).append(p)
    if not by_reason or not gpu_node(node):
        return []
    return [_node_finding(node, reason, by_reason[reason]) for reason in sorted(by_reason)]


def admission(state: ClusterState, namespace: str | None = None) -> list[Finding]:
    """Every GPU node's findings, by node."""
    by_node: dict[str, list[Pod]] = {}
    for p in state.pods:
        if rejected(p):
            by_node.setdefault(p.node_name, []).append(p)
    found = (node_admission(node, by_node[node.name], namespace) for node in state.nodes if node.name in by_node)
    return [f for node_found in found for f in node_found]
