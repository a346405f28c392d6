"""``health``: the GPUs a node lost, and the health signals the cluster already publishes about them.

The signals, each from the API as its publisher writes it (docs/health.md):

- the device plugin takes a device it finds unhealthy out of ``status.allocatable`` and leaves it in
  ``status.capacity`` (NVIDIA's device plugin, ``internal/rm/health.go``: any critical Xid but the
  application ones): capacity minus allocatable, per GPU resource (MIG resources included), are GPUs lost;
- the kubelet reports each allocated device's health in the pods that hold it:
  ``status.containerStatuses[].allocatedResourcesStatus`` (KEP-4680, core/v1 ``ResourceHealth``:
  ``Healthy``, ``Unhealthy`` or ``Unknown``), which names the device (``resourceID``);
- health agents publish node conditions (:data:`DEFAULT_CONDITIONS`, each row naming its publisher);
  the kubelet's own conditions are not read here (NotReady stays ``capacity``'s ``node-not-ready``);
- health agents taint the node (NVSentinel's quarantine, a cloud's): the taint keys the config names;
- DRA drivers put device conditions in ``ResourceClaim.status.devices[].conditions``. A device is placed on
  the node its pool's ResourceSlice names (``spec.nodeName``), else on the node of a pod its claim is
  reserved for; a condition whose node the input does not hold (a deleted node's slice, a partial
  snapshot) is said once, about no node, naming the slice and the node (:func:`unplaced_claim_findings`);
  with ``-l`` such nodes are the ones it left out, and nothing is said of them.

One lost or unhealthy GPU is an error (it costs a GPU and nobody meant it); a device whose health is
``Unknown`` is a warning. A finding names the device when anyone reported it and the pod holding it.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from gpulabel.k8s.dra.objects import DeviceCondition
from gpulabel.model import gpustack as G
from gpulabel.model.cluster import ClusterState, Node, Pod
from gpulabel.model.findings import Finding
from gpulabel.model.records import DeviceHealth
from gpulabel.model.repairs import with_repairs
from gpulabel.model.severity import Reason

__all__ = [
    "DEFAULT_CONDITIONS",
    "DEFAULT_HEALTH_TAINTS",
    "REASONS",
    "HealthCondition",
    "claims_by_node",
    "condition_table",
    "health",
    "node_health",
    "unplaced_claim_findings",
]

REASONS: dict[str, Reason] = {
    "gpus-lost": Reason(
        "error",
        "status.capacity has GPU devices status.allocatable no longer has: the device plugin took them out",
    ),
    "device-unhealthy": Reason("error", "a pod's allocatedResourcesStatus reports the GPU it holds Unhealthy"),
    "device-unknown": Reason("warning", "a pod's allocatedResourcesStatus reports the health of its GPU Unknown"),
    "condition": Reason("error", "a GPU health condition of a health agent is in its problem state"),
    "condition-unknown": Reason("warning", "a GPU health condition's status is Unknown"),
    "health-taint": Reason(
        "error", "a health agent's NoSchedule/NoExecute taint (NVSentinel's keys, or the config's) is on the node"
    ),
    "claim-device-not-ready": Reason("error", "a DRA claim's device condition says the device is not ready"),
    "claim-device-unknown": Reason("warning", "a DRA claim's device condition (Ready) is Unknown"),
}


@dataclass(frozen=True, slots=True)
class HealthCondition:
    """A node condition type that says a node's GPUs are in trouble, and the status that means trouble."""

    type: str
    problem: str  # "True" (NPD's convention: the problem is present) or "False" (a "...Healthy" condition)
    source: str


_AKS = "AKS NPD (learn.microsoft.com/azure/aks/node-problem-detector, GPU only)"
# Read from the publishers' own documentation; the config file adds types (health.conditions).
DEFAULT_CONDITIONS: tuple[HealthCondition, ...] = (
    HealthCondition("GPUMissing", "True", _AKS),
    HealthCondition("XIDErrors", "True", _AKS),
    HealthCondition("GPUXIDErrors", "True", "AKS GPU health monitoring (docs.azure.cn/aks/gpu-health-monitoring)"),
    HealthCondition("NVLinkStatusInactive", "True", _AKS),
    HealthCondition("IBLinkFlapping", "True", _AKS),
    HealthCondition("GPUClockThrottling", "True", _AKS),
    HealthCondition(
        "UnhealthyNvidiaDevicePlugin", "True", "AKS NPD (learn.microsoft.com/azure/aks/node-problem-detector)"
    ),
    HealthCondition("GpuXidError", "True", "NVSentinel (docs/INTEGRATIONS.md: the GpuXidError check of its rulesets)"),
    *(
        HealthCondition(kind, "True", "NVSentinel (NVIDIA/NVSentinel docs/INTEGRATIONS.md, standard condition types)")
        for kind in (
            "GpuMemWatch",
            "GpuThermalWatch",
            "GpuPcieWatch",
            "GpuPowerWatch",
            "GpuInforomWatch",
            "GpuSmWatch",
            "GpuNvlinkWatch",
            "GpuMcuWatch",
            "GpuPmuWatch",
            "GpuDriverWatch",
            "GpuCpusetWatch",
            "SysLogsXIDError",
            "SysLogsSXIDError",
            "SysLogsGPUFallenOff",
            "NVSwitchFatalError",
            "NVSwitchDown",
        )
    ),
    HealthCondition("NebiusGPUError", "True", "Nebius (docs.nebius.com/kubernetes/maintenance/health-checks)"),
    HealthCondition("GcmXidErrorsProblem", "True", "Meta GCM on NPD (facebookresearch.github.io/gcm, Kubernetes)"),
)

# The taint keys NVSentinel's fault quarantine sets in its test suite and documents as the recommended
# pattern (NVIDIA/NVSentinel docs/INTEGRATIONS.md, "Default Taint Examples"; tainting is opt-in there, and
# any key may be configured: the config's health.taints adds keys).
DEFAULT_HEALTH_TAINTS = (
    "nvidia.com/gpu-xid-error",
    "nvidia.com/gpu-nvlink-error",
    "nvidia.com/syslog-xid-error",
    "nvidia.com/gpu-error",
)

_SOURCES = {c.type: c.source for c in DEFAULT_CONDITIONS}  # a condition's publisher, named in its repair line
_READY = ("Ready", "Healthy")  # DRA device condition types whose False means the device is not usable


def condition_table(extra: Mapping[str, str] = {}) -> dict[str, str]:
    """``type -> problem status``: the defaults, then the config's (``"None"`` drops a type)."""
    table = {c.type: c.problem for c in DEFAULT_CONDITIONS}
    for kind, problem in extra.items():
        if problem == "None":
            table.pop(kind, None)
        else:
            table[kind] = problem
    return table


def _age(since: str, now: datetime) -> float | None:
    try:
        then = datetime.fromisoformat(since.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (now - then).total_seconds() if then.tzinfo else None


def _duration(seconds: float) -> str:
    s = int(seconds)
    days, hours, mins = s // 86400, s % 86400 // 3600, s % 3600 // 60
    if days or hours:
        return f"{days}d{hours}h" if days else f"{hours}h{mins}m"
    return f"{mins}m{s % 60}s" if s % 60 else f"{mins}m"


def _held(d: DeviceHealth, pod: Pod) -> str:
    return f"{d.resource_id or '(no resourceID)'} held by {pod.ref} container {d.container}"


def _gpu_resource(name: str) -> bool:
    return name.startswith("nvidia.com/") or name.startswith("claim:")


def node_health(
    node: Node,
    pods: Iterable[Pod],
    claims: Iterable[tuple[str, DeviceCondition]],
    conditions: Mapping[str, str],
    taint_keys: Sequence[str],
    now: datetime,
    threshold: float,
) -> list[Finding]:
    """One node's health findings. ``pods``: those bound to it (not terminal); ``claims``: the device
    conditions of the claims whose devices are on it, with the claim's ``namespace/name``;
    ``conditions``: the health condition types (``type -> problem status``); ``threshold``: seconds a
    condition may be in its problem state before its age is said. Each carries its repair (model/repairs.py)."""
    found = [
        *_device_findings(node, pods),
        *_condition_findings(node, conditions, now, threshold),
        *_taint_findings(node, taint_keys),
        *_claim_findings(node, claims, conditions),
    ]
    return with_repairs(found, _SOURCES) if found else found


def _device_findings(node: Node, pods: Iterable[Pod]) -> list[Finding]:
    """GPUs the device plugin took out (capacity minus allocatable) and devices pods report not Healthy."""
    found: list[Finding] = []
    reported: dict[str, list[tuple[DeviceHealth, Pod]]] = {}
    for pod in pods:
        for d in pod.device_health:
            if _gpu_resource(d.resource):
                reported.setdefault(d.resource, []).append((d, pod))
    lost = G.lost_gpus(node)
    for resource, (n, cap) in sorted(lost.items()):
        bad = [(d, p) for d, p in reported.get(resource, ()) if d.health == "Unhealthy"]
        names = tuple(d.resource_id for d, _ in bad if d.resource_id)
        said = (
            f"; Unhealthy in allocatedResourcesStatus: {', '.join(_held(d, p) for d, p in bad)}"
            if bad
            else "; no pod reports which device (allocatedResourcesStatus names only the devices pods hold)"
        )
        detail = f"capacity {cap}, allocatable {cap - n}: the device plugin took {n} device(s) out{said}"
        found.append(
            Finding("health", "gpus-lost", node=node.name, key=resource, args=(f"{n}/{cap}", *names), detail=detail)
        )
    for resource, entries in sorted(reported.items()):
        for d, pod in entries:
            if d.health == "Unhealthy" and resource in lost:
                continue  # named by gpus-lost
            reason = "device-unhealthy" if d.health == "Unhealthy" else "device-unknown"
            detail = f"{pod.ref} container {d.container}: {resource} device {d.resource_id or '?'} is {d.health}"
            args = (d.resource_id or "?", pod.ref, d.container)
            found.append(Finding("health", reason, node=node.name, key=resource, args=args, detail=detail))
    return found


def _condition_findings(node: Node, conditions: Mapping[str, str], now: datetime, threshold: float) -> list[Finding]:
    """GPU health conditions in their problem state (or Unknown), with their age past ``threshold``."""
    found: list[Finding] = []
    for c in node.other_conditions:
        problem = conditions.get(c.type)
        if problem is None or c.status not in (problem, "Unknown"):
            continue
        # the age goes into the detail, not the args: a finding's identity (baselines, the monitor's
        # appeared/resolved) must not change as time passes
        shown = [f"{c.type}={c.status}"] + ([f"reason={c.reason}"] if c.reason else [])
        age = _age(c.since, now) if c.since else None
        since = f"; since {c.since}" if c.since else ""
        if age is not None and age > threshold:
            since += f", for {_duration(age)} (more than {_duration(threshold)})"
        detail = f"{c.message or 'no message'}{since}"
        reason = "condition" if c.status == problem else "condition-unknown"
        found.append(Finding("health", reason, node=node.name, args=tuple(shown), detail=detail))
    return found


def _taint_findings(node: Node, taint_keys: Sequence[str]) -> list[Finding]:
    found: list[Finding] = []
    for t in node.taints:
        if t.key in taint_keys and t.effect in ("NoSchedule", "NoExecute"):
            taint = f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
            found.append(
                Finding("health", "health-taint", node=node.name, args=(taint,), detail="a health agent's taint")
            )
    return found


def _claim_findings(
    node: Node, claims: Iterable[tuple[str, DeviceCondition]], conditions: Mapping[str, str]
) -> list[Finding]:
    return [f for claim, dc in claims if (f := _claim_finding(node.name, claim, dc, conditions)) is not None]


def _claim_finding(
    node: str,
    claim: str,
    dc: DeviceCondition,
    conditions: Mapping[str, str],
    where: tuple[str, ...] = (),
    why: str = "",
) -> Finding | None:
    """The finding of one claim device condition on ``node`` (``""``: a node the input does not hold, said in
    ``where`` and ``why``), or ``None`` when the condition is no problem."""
    ready = dc.type in _READY or dc.type.endswith(_READY)
    if ready and dc.status in ("False", "Unknown"):
        reason = "claim-device-not-ready" if dc.status == "False" else "claim-device-unknown"
    elif conditions.get(dc.type) == dc.status:
        reason = "claim-device-not-ready"
    else:
        return None
    args = (f"{dc.driver}/{dc.pool}/{dc.device}", f"{dc.type}={dc.status}", claim, *where)
    detail = f"{dc.reason + ': ' if dc.reason else ''}{dc.message or 'no message'}{'; ' + why if why else ''}"
    return Finding("health", reason, node=node, args=args, detail=detail)


def unplaced_claim_findings(
    state: ClusterState,
    claims: Mapping[str, Sequence[tuple[str, DeviceCondition]]],
    conditions: Mapping[str, str],
    known: Container[str] | None = None,
) -> list[Finding]:
    """The claim device conditions (``claims``: :func:`claims_by_node`) whose node ``state`` does not hold, each
    about no node (no Event goes to a Node that is not there) with ``slice=`` and ``node=`` in its args: the
    ResourceSlice that puts the device on that node (``spec.nodeName``), or the claim's pod bound there, or
    ``node=?`` when neither says where the device is. None with ``-l``: its left-out nodes are not in the input
    by choice, and a device of theirs is not the selected nodes' business. ``known``: the names of the state's
    nodes, when the caller holds them (else a set is made, if any claim has a device condition)."""
    if state.nodes_selected or not claims:
        return []
    if known is None:
        known = {n.name for n in state.nodes}
    found: list[Finding] = []
    for name in sorted(n for n in claims if n not in known):
        for claim, dc in claims[name]:
            slices = [s for s in state.dra.by_pool.get((dc.driver, dc.pool), ()) if name and s.node_name == name]
            published = next((s for s in slices if any(d.name == dc.device for d in s.devices)), None)
            named = published or (slices[0] if slices else None)
            where: tuple[str, ...]
            if named is not None:
                where = (f"slice={named.name}", f"node={name}")
                why = f"ResourceSlice {named.name} puts the device on node {name}, which is not in the input"
            elif name:
                where, why = (f"node={name}",), f"the claim's pod is bound to node {name}, which is not in the input"
            else:
                where = ("node=?",)
                why = (
                    f"no ResourceSlice in the input publishes pool {dc.pool} on a node, and no pod the claim is "
                    "reserved for is bound: the device's node is unknown"
                )
            f = _claim_finding("", claim, dc, conditions, where, why)
            if f is not None:
                found.append(f)
    return found


def claims_by_node(state: ClusterState) -> dict[str, list[tuple[str, DeviceCondition]]]:
    """Each node's claim device conditions (with the claim's namespace/name): the node of the device's pool,
    else of a pod the claim is reserved for."""
    if not state.dra.claims:
        return {}
    pods_by_ref = {p.ref: p for p in state.pods}
    out: dict[str, list[tuple[str, DeviceCondition]]] = {}
    for claim in state.dra.claims:
        for dc in claim.device_condition_list():
            slices = state.dra.by_pool.get((dc.driver, dc.pool), ())
            nodes = {s.node_name for s in slices if s.node_name}
            if not nodes:
                pods = (pods_by_ref.get(f"{claim.namespace}/{p}") for p in claim.reserved_for)
                nodes = {p.node_name for p in pods if p is not None and p.node_name}
            for name in sorted(nodes) or [""]:
                out.setdefault(name, []).append((claim.ref, dc))
    return out


def health(
    state: ClusterState,
    now: datetime,
    threshold: float,
    conditions: Mapping[str, str] = {},
    taint_keys: Sequence[str] = (),
) -> list[Finding]:
    """Every node's health findings, by node (the state's order)."""
    table = condition_table(conditions)
    taint_keys = (*DEFAULT_HEALTH_TAINTS, *taint_keys)
    on: dict[str, list[Pod]] = {}
    for pod in state.pods:
        if pod.device_health and pod.node_name and not pod.terminal:
            on.setdefault(pod.node_name, []).append(pod)
    claims = claims_by_node(state)
    found = []
    for node in state.nodes:
        found.extend(
            node_health(node, on.get(node.name, ()), claims.get(node.name, ()), table, taint_keys, now, threshold)
        )
    return [*found, *unplaced_claim_findings(state, claims, table)]
