"""GPU device plugins and GFD without the GPU Operator: the NVIDIA device-plugin chart, a cloud's own plugin.

Such a DaemonSet is found by what its containers run, in any namespace: the
image of NVIDIA's device plugin (``nvcr.io/nvidia/k8s-device-plugin``, the
chart's ``nvidia-device-plugin-daemonset`` in kube-system), of a cloud
provider's GPU plugin (GKE's ``nvidia-gpu-device-plugin``, ...), or GPU
Feature Discovery (its own image, or the device plugin's image running
``gpu-feature-discovery``); NVIDIA's DRA driver's kubelet plugin is judged here too
(``checks/operands/dradriver.py``). It is *standalone* when no deploy label gates it
(the operator's own DaemonSets are the operands check's). No deploy labels are
expected: every GPU node the DaemonSet's selector, affinity and tolerations
take must run one of its pods, Running and Ready, with the operands check's
reasons (``missing``, ``not-ready``); a GPU node it does not take is
``missing`` with why (its selector, or a taint).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpulabel.checks.operands.daemonsets import daemonset_requirements, why_not_placed
from gpulabel.checks.operands.dradriver import dra_plugin_findings
from gpulabel.checks.operands.rules import not_ready
from gpulabel.model import gpustack as G
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, DaemonSet, Node, Pod
from gpulabel.model.dradriver import GPU_PLUGIN, plugin_containers
from gpulabel.model.dradriver import OPERAND as DRA_PLUGIN
from gpulabel.model.findings import Finding

__all__ = ["gpu_node", "plugin_findings", "standalone_findings", "standalone_kind"]

_PLUGIN_IMAGES = ("k8s-device-plugin", "nvidia-gpu-device-plugin", "gpu-device-plugin")
_GFD = "gpu-feature-discovery"
# labels clouds put on their GPU nodes (their plugins select on them)
ACCELERATOR_LABELS = ("cloud.google.com/gke-accelerator", "k8s.amazonaws.com/accelerator")


def _containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [c for c in spec.get("containers") or () if isinstance(c, dict)]


def standalone_kind(ds: DaemonSet) -> str | None:
    """``device-plugin`` or ``gpu-feature-discovery`` when the DaemonSet runs one (by image and command), or
    ``dra-kubelet-plugin`` for NVIDIA's DRA driver's GPU kubelet plugin (judged by ``dra_plugin_findings``)."""
    if GPU_PLUGIN in (plugin_containers(ds.name, ds.template_spec) or ()):
        return DRA_PLUGIN
    for c in _containers(ds.template_spec):
        image = str(c.get("image") or "")
        words = " ".join(str(w) for w in (*(c.get("command") or ()), *(c.get("args") or ())))
        if _GFD in image or _GFD in words or (_GFD in ds.name and any(i in image for i in _PLUGIN_IMAGES)):
            return _GFD
        if any(i in image for i in _PLUGIN_IMAGES):
            return "device-plugin"
    return None


def gpu_node(node: Node) -> bool:
    """A node with a GPU by any account: gpu.present, NFD's NVIDIA PCI label, GPUs advertised, a cloud's label."""
    labels = node.labels
    if labels.get(V.GPU_PRESENT) == "true" or V.has_nvidia_pci(labels):
        return True
    if any(k in labels for k in ACCELERATOR_LABELS):
        return True
    return bool(sum(G.gpu_resources(node.amounts or {}).values()))


def standalone_findings(state: ClusterState, gated: Sequence[DaemonSet]) -> list[Finding]:
    """The standalone kinds' findings (:func:`plugin_findings`), then the DRA driver's kubelet plugin's on
    every GPU node, managed by the operator or not (``checks/operands/dradriver.py``)."""
    return [*plugin_findings(state, gated), *dra_plugin_findings(state, gpu_node)]


def plugin_findings(state: ClusterState, gated: Sequence[DaemonSet]) -> list[Finding]:
    """Per GPU node the operator does not manage (no deploy label), each standalone kind's pod there.

    ``gated``: the operator's DaemonSets (gated by a deploy label), left to the operands check. A GPU
    node no DaemonSet of a kind takes is ``missing`` with the first one's reason; of those that take
    it, each must have a pod Running and Ready there.
    """
    gated_refs = {d.ref for d in gated}
    kinds: dict[str, list[DaemonSet]] = {}
    for ds in state.daemonsets:
        kind = standalone_kind(ds) if ds.ref not in gated_refs else None
        if kind and kind != DRA_PLUGIN:
            kinds.setdefault(kind, []).append(ds)
    if not kinds:
        return []
    reqs = {ds.ref: daemonset_requirements(ds) for dss in kinds.values() for ds in dss}
    by_owner: dict[str, list[Pod]] = {}
    for pod in state.pods:
        for owner_kind, uid in pod.owners:
            if owner_kind == "DaemonSet" and pod.node_name:
                by_owner.setdefault(f"{uid} {pod.node_name}", []).append(pod)
    out: list[Finding] = []
    for node in state.nodes:
        if not gpu_node(node) or any(k.startswith(V.DEPLOY_PREFIX) for k in node.labels):
            continue
        for kind, dss in kinds.items():
            why = {ds.ref: why_not_placed(ds, node, reqs[ds.ref]) for ds in dss}
            taking = [ds for ds in dss if not why[ds.ref]]
            if not taking:
                first = dss[0]
                out.append(_found("missing", node, kind, first, why[first.ref]))
            for ds in taking:
                pods = by_owner.get(f"{ds.uid} {node.name}", [])
                if any(p.phase == "Running" and p.ready for p in pods):
                    continue
                nr = not_ready(pods)
                if nr is not None:
                    out.append(_found("not-ready", node, kind, ds, nr.detail))
                elif not any(p.phase in ("Running", "Pending") for p in pods):
                    out.append(_found("missing", node, kind, ds, f"no pod of {ds.ref} on this node"))
    return out


def _found(reason: str, node: Node, kind: str, ds: DaemonSet, detail: str) -> Finding:
    return Finding("operands", reason, node=node.name, operand=kind, daemonset=ds.ref, detail=detail)
