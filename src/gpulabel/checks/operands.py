"""``gpulabel operands``: are the operands that should run on each node running, and in order?

The GPU Operator's status counts DaemonSet pods against
``desiredNumberScheduled``, which silently leaves out nodes whose labels are
wrong or whose taints the DaemonSet does not tolerate. This check works per
node, from the deploy labels and the pods that are actually there.

An operand's DaemonSet is found by what its pod template requires
(``nvidia.com/gpu.deploy.<operand>: "true"``), never by name, and its pods by
their ownerReferences.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpulabel.k8s.nodeaffinity import PodRequirements, compile_pod_spec
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, DaemonSet, Node, Pod
from gpulabel.model.findings import Finding

__all__ = [
    "CATALOGUE",
    "CLUSTER_POLICY_KEYS",
    "OperandReport",
    "check_operands",
    "disabled_by_cluster_policy",
    "operand_of_daemonset",
    "operand_order",
]

# operand (deploy-label suffix) -> its direct prerequisites
CATALOGUE: Mapping[str, tuple[str, ...]] = {
    "driver": (),
    "container-toolkit": ("driver",),
    "device-plugin": ("container-toolkit",),
    "gpu-feature-discovery": ("container-toolkit",),
    "dcgm": ("container-toolkit",),
    "dcgm-exporter": ("container-toolkit",),
    "mig-manager": ("container-toolkit",),
    "operator-validator": ("device-plugin",),
    "node-status-exporter": (),
    "sandbox-device-plugin": (),
    "sandbox-validator": (),
    "vgpu-manager": (),
    "vgpu-device-manager": (),
    "vfio-manager": (),
    "cc-manager": (),
    "kata-manager": (),
}

# operand -> the ClusterPolicy spec section whose ``enabled`` switches it cluster-wide
CLUSTER_POLICY_KEYS: Mapping[str, str] = {
    "driver": "driver",
    "container-toolkit": "toolkit",
    "device-plugin": "devicePlugin",
    "gpu-feature-discovery": "gfd",
    "dcgm": "dcgm",
    "dcgm-exporter": "dcgmExporter",
    "mig-manager": "migManager",
    "node-status-exporter": "nodeStatusExporter",
    "sandbox-device-plugin": "sandboxDevicePlugin",
    "vgpu-manager": "vgpuManager",
    "vgpu-device-manager": "vgpuDeviceManager",
    "vfio-manager": "vfioManager",
    "cc-manager": "ccManager",
    "kata-manager": "kataManager",
}

_PROVIDED_ELSEWHERE = frozenset({"false", "pre-installed"})


def operand_order(extra: Iterable[str] = ()) -> list[str]:
    """The catalogue's operands in its order, then any ``extra`` ones it does not know, sorted."""
    names = list(CATALOGUE)
    names += sorted(set(extra) - set(names))
    return names


def _deploy_requirement(spec: Mapping[str, Any]) -> str | None:
    """The operand whose deploy label a pod spec requires to be ``true``, if any."""
    for key, value in (spec.get("nodeSelector") or {}).items():
        if key.startswith(V.DEPLOY_PREFIX) and value == "true":
            return str(key[len(V.DEPLOY_PREFIX) :])
    affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = affinity.get("nodeSelectorTerms") or []
    found: set[str] = set()
    for term in terms:
        term_ops = {
            str(e["key"][len(V.DEPLOY_PREFIX) :])
            for e in (term or {}).get("matchExpressions") or []
            if isinstance(e, dict)
            and str(e.get("key", "")).startswith(V.DEPLOY_PREFIX)
            and e.get("operator") == "In"
            and list(e.get("values") or []) == ["true"]
        }
        if not term_ops:
            return None  # a term that does not require a deploy label: not gated
        found |= term_ops
    return found.pop() if len(found) == 1 else None


def operand_of_daemonset(ds: DaemonSet) -> str | None:
    return _deploy_requirement(ds.template_spec)


def disabled_by_cluster_policy(policies: Sequence[Mapping[str, Any]]) -> set[str]:
    """Operands that a ClusterPolicy switches off (``<component>.enabled: false``)."""
    off: set[str] = set()
    for policy in policies:
        spec = policy.get("spec") or {}
        for operand, section in CLUSTER_POLICY_KEYS.items():
            part = spec.get(section)
            if isinstance(part, dict) and part.get("enabled") is False:
                off.add(operand)
    return off


def daemonset_requirements(ds: DaemonSet) -> PodRequirements:
    """The DaemonSet's node selection as its pods get it, the controller's tolerations included."""
    return compile_pod_spec(ds.template_spec, f"{ds.ref} spec.template.spec", daemonset=True)


def untolerated_taints(ds: DaemonSet, node: Node, requirements: PodRequirements | None = None) -> list[str]:
    """The node's NoSchedule/NoExecute taints that the DaemonSet's pods do not tolerate."""
    req = requirements or daemonset_requirements(ds)
    return [str(t) for t in node.taints if t.effect in ("NoSchedule", "NoExecute") and not req.tolerates(t)]


@dataclass
class OperandReport:
    """The findings, plus a per-DaemonSet account of ``desiredNumberScheduled``."""

    findings: list[Finding]
    daemonsets: list[dict[str, Any]]


def _pods_by_owner(pods: Iterable[Pod]) -> dict[str, list[Pod]]:
    out: dict[str, list[Pod]] = {}
    for pod in pods:
        for kind, uid in pod.owners:
            if kind == "DaemonSet":
                out.setdefault(uid, []).append(pod)
    return out


def _missing_cause(
    operand: str, node: Node, dss: list[DaemonSet], pods: list[Pod], reqs: Mapping[str, PodRequirements]
) -> tuple[str, dict[str, Any]]:
    label = f"{V.DEPLOY_PREFIX}{operand}=true"
    if not dss:
        return f"no DaemonSet selects {label}", {"cause": "no-daemonset"}
    for ds in dss:
        taints = untolerated_taints(ds, node, reqs[ds.ref])
        if taints:
            return f"{ds.ref} does not tolerate taint {', '.join(taints)}", {
                "cause": "untolerated-taint",
                "taints": taints,
                "daemonset": ds.ref,
            }
    for ds in dss:
        result = reqs[ds.ref].match(node)
        if not result.fits:
            return f"{ds.ref} does not select this node: {result.reason}", {
                "cause": "not-selected",
                "reason": result.reason,
                "daemonset": ds.ref,
            }
    pending = [p for p in pods if p.phase == "Pending"]
    if pending:
        msg = pending[0].condition_message("PodScheduled") or "not scheduled yet"
        return f"pod {pending[0].ref} Pending: {msg}", {"cause": "pod-pending", "pod": pending[0].ref, "message": msg}
    failed = [p for p in pods if p.phase == "Failed"]
    if failed:
        return f"pod {failed[0].ref} Failed", {"cause": "pod-failed", "pod": failed[0].ref}
    refs = ", ".join(d.ref for d in dss)
    return f"no pod of {refs} on this node", {"cause": "no-pod", "daemonsets": [d.ref for d in dss]}


def check_operands(
    state: ClusterState,
    disabled: Iterable[str] = (),
) -> OperandReport:
    """Per-node operand findings over ``state``; sorted by node, then catalogue order."""
    off = set(disabled) | disabled_by_cluster_policy(state.cluster_policies)
    ds_by_operand: dict[str, list[DaemonSet]] = {}
    for ds in state.daemonsets:
        op = operand_of_daemonset(ds)
        if op is not None:
            ds_by_operand.setdefault(op, []).append(ds)
    reqs = {ds.ref: daemonset_requirements(ds) for dss in ds_by_operand.values() for ds in dss}
    owned = _pods_by_owner(state.pods)
    # (operand, node) -> that operand's pods on that node
    pods_at: dict[tuple[str, str], list[Pod]] = {}
    for op, dss in ds_by_operand.items():
        for ds in dss:
            for pod in owned.get(ds.uid, ()):
                if pod.node_name:
                    pods_at.setdefault((op, pod.node_name), []).append(pod)
    operands = operand_order(ds_by_operand)
    findings: list[Finding] = []
    for node in state.nodes:
        labels = node.labels
        isolated = labels.get(V.DEPLOY_OPERANDS) == "false"

        def present(op: str, node_name: str = node.name) -> bool:
            return any(p.phase == "Running" and p.ready for p in pods_at.get((op, node_name), ()))

        for op in operands:
            pods = pods_at.get((op, node.name), [])
            running = [p for p in pods if p.phase == "Running"]
            expected = not isolated and op not in off and labels.get(V.DEPLOY_PREFIX + op) == "true"
            if expected and not running:
                detail, data = _missing_cause(op, node, ds_by_operand.get(op, []), pods, reqs)
                findings.append(Finding("operands", node.name, op, "missing", detail=detail, data=data))
            elif expected and not any(p.ready for p in running):
                ref = running[0].ref
                findings.append(
                    Finding(
                        "operands",
                        node.name,
                        op,
                        "not-ready",
                        detail=f"pod {ref} Running but not Ready",
                        data={"pod": ref},
                    )
                )
            if running and not expected:
                why = (
                    "node isolated (nvidia.com/gpu.deploy.operands=false)"
                    if isolated
                    else (
                        "operand disabled cluster-wide"
                        if op in off
                        else f"{V.DEPLOY_PREFIX}{op}={labels.get(V.DEPLOY_PREFIX + op, '<absent>')}"
                    )
                )
                findings.append(
                    Finding(
                        "operands",
                        node.name,
                        op,
                        "unexpected",
                        detail=f"pod {running[0].ref} running; {why}",
                        data={"pod": running[0].ref},
                    )
                )
            if running:
                for need in CATALOGUE.get(op, ()):
                    if present(need):
                        continue
                    if labels.get(V.DEPLOY_PREFIX + need) in _PROVIDED_ELSEWHERE or need in off:
                        continue
                    findings.append(
                        Finding(
                            "operands",
                            node.name,
                            op,
                            "out-of-order",
                            (need,),
                            detail=f"{op} is running but {need} is not running and ready on this node",
                            data={"prerequisite": need},
                        )
                    )
    return OperandReport(findings, _daemonset_accounts(state, ds_by_operand, reqs))


def _daemonset_accounts(
    state: ClusterState, ds_by_operand: Mapping[str, list[DaemonSet]], reqs: Mapping[str, PodRequirements]
) -> list[dict[str, Any]]:
    """Why each operand DaemonSet's desiredNumberScheduled differs from the labelled nodes."""
    accounts = []
    for op, dss in sorted(ds_by_operand.items()):
        labelled = [n for n in state.nodes if n.labels.get(V.DEPLOY_PREFIX + op) == "true"]
        for ds in dss:
            excluded = {n.name: taints for n in labelled if (taints := untolerated_taints(ds, n, reqs[ds.ref]))}
            accounts.append(
                {
                    "daemonset": ds.ref,
                    "operand": op,
                    "labelled_nodes": len(labelled),
                    "desired_number_scheduled": ds.status.get("desiredNumberScheduled"),
                    "excluded": [{"node": n, "untolerated_taints": t} for n, t in sorted(excluded.items())],
                }
            )
    return accounts
