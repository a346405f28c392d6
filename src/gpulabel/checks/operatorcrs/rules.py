"""``operatorcrs``: the GPU Operator's NVIDIADriver and GPUCluster custom resources, judged by the operator's rules.

Each rule is the operator's own, read in ``github.com/NVIDIA/gpu-operator`` v26.7.0 (a22dbf6; the 2025-09-17
pseudo-version labcluster runs where it differs, named ``2025-09``):

- ``drivers-overlap``: two NVIDIADrivers that are not the default select one node. The operator's node-selector
  validator (``internal/validator/validator.go`` ``Validate``) LISTs every node each non-default driver's
  ``GetNodeSelector()`` matches (absent: ``nvidia.com/gpu.present=true``; any node, GPU or not) and refuses at
  the first node two of them select: ``multiple NVIDIADrivers match the same node <node>: [<a> <b>]``, condition
  ``Error`` with reason ``ConflictingNodeSelector`` on every NVIDIADriver it reconciles, state ``notReady``, no
  DaemonSet synced (``controllers/nvidiadriver_controller.go``). Node owners are not changed while it holds
  (``internal/nvidiadriver/nvidiadriver.go`` ``AssignOwners`` fails closed). 2025-09 has no default driver and
  says ``conflicting NVIDIADriver NodeSelectors found for resource: <cr>, nodeSelector: map[...]``.
- ``multiple-default-drivers``: more than one live ``spec.default: true`` driver: ``multiple default NVIDIADrivers
  found: [<a> <b>]``, reason ``ReconcileFailed`` (v26.7.0).
- ``reserved-selector-label``: a nodeSelector naming the owner label ``nvidia.com/gpu-operator.driver.owner``
  (``ValidateNodeSelector``): ``NVIDIADriver "<cr>" nodeSelector cannot use reserved label "<key>"``.
- ``node-without-driver``: where NVIDIADrivers manage the driver (the ClusterPolicy's ``driver.useNvidiaDriverCRD:
  true``, or a GPUCluster: ``controllers/nodelabeling_controller.go`` ``usesNvidiaDriverCRD``) the ClusterPolicy's
  own driver state is off (``state_manager.go`` ``isStateEnabled``), so a GPU node no NVIDIADriver selects and
  with no default driver gets no driver (``AssignOwners``: owner ``""``). Under a GPUCluster only once some
  NVIDIADriver exists (without any, the driver is the host's); not where ``driver.enabled`` is false or the
  node's ``gpu.deploy.driver`` is another value than ``true`` (a driver provided outside the operator).
- ``owner-label-stale``: a GPU node whose ``nvidia.com/gpu-operator.driver.owner`` is not the NVIDIADriver
  ``AssignOwners`` routes it to (the first non-default driver selecting it, else the default); the driver
  DaemonSets select on it (``internal/state/nodepool.go``). Judged only where some node carries the label (an
  operator of v26.7.0 or later) and no refusal above holds (then the operator keeps the labels as they are).
- ``driver-not-ready`` / ``gpucluster-not-ready``: the CR's ``Error`` condition is ``True``: its reason and
  message as the operator wrote them (``internal/conditions``).
- ``gpucluster-beside-clusterpolicy``: v26.7.0 refuses both at once: the ClusterPolicy controller says
  ``conflicting GPUCluster resource "<g>" detected; ClusterPolicy and GPUCluster cannot co-exist`` (state
  ``notReady``, ``ReconcileFailed``), the GPUCluster controller ``A ClusterPolicy CR "<p>" exists; a
  ClusterPolicy CR and GPUCluster CR may not exist at the same time`` (``PrerequisiteNotMet``), and the node
  labeller labels no node (``both ClusterPolicy and GPUCluster CRs exist; only one may be present at a time``).
  The ClusterPolicy named is the oldest (``controllers/active_config.go`` ``getSingletonClusterPolicy``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding
from gpulabel.model.nvidiacrs import DRIVER_OWNER_LABEL, GpuCluster, NvidiaDriver, selects
from gpulabel.model.severity import Reason

__all__ = ["CONFLICT", "REASONS", "operator_crs"]

CONFLICT = "ConflictingNodeSelector"  # internal/conditions/nvidiadriver.go
_CHECK = "operatorcrs"
_DEPLOY_DRIVER = V.DEPLOY_PREFIX + "driver"

REASONS: dict[str, Reason] = {
    "drivers-overlap": Reason(
        "error",
        "two NVIDIADrivers (neither the default) select the same node: the GPU Operator refuses every NVIDIADriver "
        "(ConflictingNodeSelector) and deploys no driver until the selectors are disjoint",
    ),
    "multiple-default-drivers": Reason(
        "error", "more than one NVIDIADriver has spec.default: true: the GPU Operator refuses them (ReconcileFailed)"
    ),
    "reserved-selector-label": Reason(
        "error",
        f"an NVIDIADriver's nodeSelector names the operator's routing label {DRIVER_OWNER_LABEL}: the operator "
        "refuses it",
    ),
    "node-without-driver": Reason(
        "error",
        "NVIDIADrivers manage the driver (ClusterPolicy driver.useNvidiaDriverCRD: true, or a GPUCluster) and no "
        "NVIDIADriver selects this GPU node, nor is there a default one: no driver is deployed on it",
    ),
    "owner-label-stale": Reason(
        "warning",
        f"the node's {DRIVER_OWNER_LABEL} is not the NVIDIADriver the operator routes it to: the driver DaemonSets "
        "select on that label, so the node runs another driver's pods or none until the operator relabels it",
    ),
    "driver-not-ready": Reason(
        "warning", "an NVIDIADriver's Error condition is True: the operator's reason and message"
    ),
    "gpucluster-beside-clusterpolicy": Reason(
        "error",
        "a GPUCluster and a ClusterPolicy exist together: the GPU Operator refuses both (the ClusterPolicy goes "
        "notReady, the GPUCluster PrerequisiteNotMet) and labels no node",
    ),
    "gpucluster-not-ready": Reason(
        "warning", "the GPUCluster's Error condition is True: the operator's reason and message"
    ),
}


def _policy(policies: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """``getSingletonClusterPolicy``: the oldest creationTimestamp, the lowest name on a tie (RFC 3339 UTC
    timestamps of the API server order as strings)."""

    def key(p: Mapping[str, Any]) -> tuple[str, str]:
        meta = p.get("metadata") or {}
        return (str(meta.get("creationTimestamp") or ""), str(meta.get("name") or ""))

    return min(policies, key=key) if policies else None


def _name(policy: Mapping[str, Any]) -> str:
    return str((policy.get("metadata") or {}).get("name") or "")


def _driver_spec(policy: Mapping[str, Any] | None) -> Mapping[str, Any]:
    spec = (policy or {}).get("spec") or {}
    driver = spec.get("driver") if isinstance(spec, dict) else None
    return driver if isinstance(driver, dict) else {}


def _go_list(names: Sequence[str]) -> str:
    return "[" + " ".join(names) + "]"


def _overlaps(drivers: Sequence[NvidiaDriver], nodes: Sequence[Node]) -> list[Finding]:
    """One finding per pair of non-default drivers selecting a node, at the first such node by name."""
    chosen = [d for d in drivers if not d.default]
    together: dict[tuple[str, str], list[str]] = {}
    for node in nodes:
        mine = [d.name for d in chosen if selects(d.selector, node.labels)]
        for i, a in enumerate(mine):
            for b in mine[i + 1 :]:
                together.setdefault((a, b), []).append(node.name)
    by_name = {d.name: d for d in drivers}
    found = []
    for (a, b), where in sorted(together.items()):
        said = next(
            (d.error for d in (by_name[a], by_name[b]) if d.error is not None and d.error.reason == CONFLICT), None
        )
        operator = (
            f"the operator says (Error {CONFLICT}): {said.message}"
            if said is not None
            else f'the operator refuses it: "multiple NVIDIADrivers match the same node {where[0]}: '
            f'{_go_list([a, b])}" (v26.7.0; reason {CONFLICT}, state notReady)'
        )
        detail = (
            f"NVIDIADrivers {a} ({_show(by_name[a])}) and {b} ({_show(by_name[b])}) both select node {where[0]}"
            f"{f' and {len(where) - 1} more' if len(where) > 1 else ''}: {operator}. No driver is synced until "
            "each node is selected by one NVIDIADriver at most: make the selectors disjoint (a node-pool label), "
            "or make one the default (spec.default: true without a nodeSelector, v26.7.0)"
        )
        found.append(Finding(_CHECK, "drivers-overlap", node=where[0], args=(a, b), count=len(where), detail=detail))
    return found


def _show(driver: NvidiaDriver) -> str:
    if driver.node_selector is None:
        return "no nodeSelector: every nvidia.com/gpu.present=true node"
    if not driver.node_selector:
        return "an empty nodeSelector: every node"
    return "nodeSelector " + ",".join(f"{k}={v}" for k, v in sorted(driver.node_selector.items()))


def _refusals(drivers: Sequence[NvidiaDriver]) -> list[Finding]:
    found = []
    defaults = sorted(d.name for d in drivers if d.default and not d.deleting)
    if len(defaults) > 1:
        message = f"multiple default NVIDIADrivers found: {_go_list(defaults)}"
        found.append(
            Finding(
                _CHECK,
                "multiple-default-drivers",
                args=tuple(defaults),
                detail=f"the operator refuses every NVIDIADriver with {message!r} (ReconcileFailed): keep one "
                "spec.default: true",
            )
        )
    for d in drivers:
        if d.node_selector is not None and DRIVER_OWNER_LABEL in d.node_selector:
            message = f'NVIDIADriver "{d.name}" nodeSelector cannot use reserved label "{DRIVER_OWNER_LABEL}"'
            found.append(
                Finding(
                    _CHECK,
                    "reserved-selector-label",
                    key=DRIVER_OWNER_LABEL,
                    args=(d.name,),
                    detail=f"the operator says {message!r}: the operator writes that label itself; select on "
                    "a label of the node pool instead",
                )
            )
    return found


def _owner(node: Node, drivers: Sequence[NvidiaDriver]) -> tuple[str, ...]:
    """``desiredOwnerForNode``: the non-default live drivers selecting the node (their names)."""
    return tuple(d.name for d in drivers if not d.default and not d.deleting and selects(d.selector, node.labels))


def _routing(state: ClusterState, policy: Mapping[str, Any] | None, refused: bool) -> list[Finding]:
    drivers = state.nvidia_drivers
    driver = _driver_spec(policy)
    # a GPUCluster alone leaves the driver to NVIDIADrivers once one exists (none: a host driver, not judged)
    managed = (bool(state.gpu_clusters) and policy is None and bool(drivers)) or driver.get(
        "useNvidiaDriverCRD"
    ) is True
    if not managed or driver.get("enabled") is False:
        return []
    defaults = [d.name for d in drivers if d.default and not d.deleting]
    fallback = defaults[0] if len(defaults) == 1 else ""
    labelled = any(DRIVER_OWNER_LABEL in n.labels for n in state.nodes)
    why = (
        "ClusterPolicy driver.useNvidiaDriverCRD is true, so its own driver DaemonSet is off"
        if policy is not None
        else f"GPUCluster {state.gpu_clusters[0].name} leaves the driver to NVIDIADrivers"
    )
    found = []
    for node in state.nodes:
        if node.labels.get(V.GPU_PRESENT) != "true":
            continue
        owners = _owner(node, drivers)
        want = owners[0] if len(owners) == 1 else fallback if not owners else ""
        if not owners and not defaults and node.labels.get(_DEPLOY_DRIVER, "true") == "true":
            names = ", ".join(d.name for d in drivers) or "none exists"
            detail = (
                f"{why}, and no NVIDIADriver selects node {node.name} (NVIDIADrivers: {names}) nor is one the "
                "default: no driver is deployed there. Add a nodeSelector matching it, or a default NVIDIADriver "
                "(spec.default: true, v26.7.0)"
            )
            found.append(Finding(_CHECK, "node-without-driver", node=node.name, operand="driver", detail=detail))
        elif labelled and not refused and len(owners) <= 1:
            have = node.labels.get(DRIVER_OWNER_LABEL, "")
            if have != want:
                detail = (
                    f"{DRIVER_OWNER_LABEL}={have!r} but the operator routes node {node.name} to "
                    f"{want or 'no NVIDIADriver'} (AssignOwners: the non-default NVIDIADriver selecting it, else "
                    "the default); the driver DaemonSets select on this label"
                )
                found.append(
                    Finding(
                        _CHECK, "owner-label-stale", node=node.name, key=DRIVER_OWNER_LABEL, value=have, detail=detail
                    )
                )
    return found


def _not_ready(kind: str, reason: str, cr: NvidiaDriver | GpuCluster, skip: frozenset[str]) -> list[Finding]:
    error = cr.error
    if error is None or error.reason in skip:
        return []
    detail = f"{kind} {cr.name} is {cr.state or 'without a state'}: Error {error.reason}: {error.message}"
    return [Finding(_CHECK, reason, args=(cr.name, error.reason), detail=detail)]


def _coexistence(clusters: Sequence[GpuCluster], policy: Mapping[str, Any] | None) -> list[Finding]:
    if not clusters or policy is None:
        return []
    g, p = clusters[0].name, _name(policy)
    detail = (
        f"GPUCluster {g} and ClusterPolicy {p} exist together. The ClusterPolicy controller says "
        f'"conflicting GPUCluster resource "{g}" detected; ClusterPolicy and GPUCluster cannot co-exist" and '
        f'the GPUCluster controller "A ClusterPolicy CR "{p}" exists; a ClusterPolicy CR and GPUCluster CR may '
        'not exist at the same time" (v26.7.0): neither stack is reconciled and no node is labelled. Delete the '
        "one you do not mean to run"
    )
    return [Finding(_CHECK, "gpucluster-beside-clusterpolicy", args=(g, p), detail=detail)]


def operator_crs(state: ClusterState) -> list[Finding]:
    """Every finding of the NVIDIADrivers and the GPUCluster of ``state`` with its ClusterPolicies."""
    drivers = state.nvidia_drivers
    policy = _policy(state.cluster_policies)
    overlaps = _overlaps(drivers, state.nodes)
    refusals = _refusals(drivers)
    found = [*_coexistence(state.gpu_clusters, policy), *refusals, *overlaps]
    found += _routing(state, policy, refused=bool(overlaps or refusals))
    said = frozenset({CONFLICT}) if overlaps else frozenset()
    for d in drivers:
        found += _not_ready("NVIDIADriver", "driver-not-ready", d, said)
    coexist = frozenset({"PrerequisiteNotMet"}) if policy is not None else frozenset()
    for g in state.gpu_clusters:
        found += _not_ready("GPUCluster", "gpucluster-not-ready", g, coexist)
    return found
