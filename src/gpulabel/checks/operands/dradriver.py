"""NVIDIA's DRA driver as an operand: its kubelet plugin on every GPU node, Running and Ready.

Without the kubelet plugin on a node, no ResourceSlice publishes the node's GPUs and no claim can be
allocated there: for DRA it is what the device plugin is for ``nvidia.com/gpu``. Its DaemonSet (the
``dra-driver-nvidia-gpu`` chart's, ``model/dradriver.py``) is found by the plugin its containers run,
in any namespace, whether or not the GPU Operator manages the node (the driver is installed beside
the operator, never gated by a deploy label). Only a DaemonSet running the ``gpus`` plugin is judged
(one running only ``compute-domains`` publishes no GPUs).

Per GPU node (``standalone.gpu_node``, which calls this): a DaemonSet of the plugin must take the node, by the DaemonSet
controller's rules (nodeSelector, required node affinity, taints with the controller's own
tolerations), and its pod there must be Running and Ready (the chart's gRPC startup probe). Reasons
are the operands check's: ``missing`` (why: the taint, the selector, the pod's scheduling message, or
no pod), ``not-ready``; and ``nfd-label-mismatch`` when the one thing keeping the node out is the
spelling of NFD's NVIDIA PCI label: the affinity asks ``pci-10de.present`` and NFD (its default
``class_vendor`` fields) wrote ``pci-0302_10de.present`` (kubernetes-sigs/dra-driver-nvidia-gpu
issue 1084; the chart's affinity up to v25.12.0).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from gpulabel.checks.operands.daemonsets import daemonset_requirements, target_node, why_not_placed
from gpulabel.checks.operands.rules import not_ready
from gpulabel.k8s.nodeaffinity import PodRequirements
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, DaemonSet, Node, Pod
from gpulabel.model.dradriver import GPU_PLUGIN, OPERAND, plugin_containers
from gpulabel.model.findings import Finding

__all__ = ["affinity_pci_keys", "dra_plugin_daemonsets", "dra_plugin_findings", "nfd_mismatch"]


def dra_plugin_daemonsets(state: ClusterState) -> list[DaemonSet]:
    """The DaemonSets that run the DRA driver's GPU kubelet plugin, in the state's order."""
    return [ds for ds in state.daemonsets if GPU_PLUGIN in (plugin_containers(ds.name, ds.template_spec) or ())]


def affinity_pci_keys(req: PodRequirements) -> tuple[str, ...]:
    """NFD's NVIDIA PCI labels (``V.PCI_PRESENT``) that the required node affinity terms of ``req`` (a
    DaemonSet's compiled template, ``DaemonSet.requirements``) name."""
    keys: list[str] = []
    for term in req.terms or ():
        for e in term.expressions:
            if e.key in V.PCI_PRESENT and e.key not in keys:
                keys.append(e.key)
    return tuple(keys)


def nfd_mismatch(ds: DaemonSet, node: Node, req: PodRequirements) -> str | None:
    """The node's NVIDIA PCI label when it is the only thing keeping the DaemonSet off the node: the affinity
    names another spelling of it and, were the node labelled that way too, the DaemonSet would take it."""
    asked = affinity_pci_keys(ds.requirements)
    has = [k for k in V.PCI_PRESENT if node.labels.get(k) == "true"]
    if not asked or not has or any(k in asked for k in has):
        return None
    relabelled = dataclasses.replace(node, labels={**node.labels, asked[0]: "true"})
    return has[0] if req.match(relabelled).fits else None


def _found(reason: str, node: Node, ds: DaemonSet, detail: str, args: tuple[str, ...] = ()) -> Finding:
    return Finding("operands", reason, node=node.name, operand=OPERAND, daemonset=ds.ref, args=args, detail=detail)


def _unselected(ds: DaemonSet, node: Node, req: PodRequirements, why: str) -> Finding:
    label = nfd_mismatch(ds, node, req) if why.startswith(f"{ds.ref} does not select") else None
    if label is None:
        return _found("missing", node, ds, why)
    asked = ", ".join(affinity_pci_keys(ds.requirements))
    detail = (
        f"{ds.ref} does not select this node: NFD labelled it {label}=true, its node affinity asks {asked} "
        f"(no kubelet plugin, no ResourceSlices: the node's GPUs cannot be allocated through DRA; "
        f"add a term for {label} or label the node {V.GPU_PRESENT}=true)"
    )
    return _found("nfd-label-mismatch", node, ds, detail, (label,))


def dra_plugin_findings(state: ClusterState, gpu_node: Callable[[Node], bool]) -> list[Finding]:
    """Per GPU node (``gpu_node``), the DRA kubelet plugin: taken by a DaemonSet of it, its pod there Running and Ready.

    A GPU node no DaemonSet of the plugin takes is ``nfd-label-mismatch`` or ``missing`` with the first
    one's reason; of those that take it, each must have a pod Running and Ready there (``not-ready``; a pod
    Pending on the node or none is ``missing``). Nothing when the input has no such DaemonSet.
    """
    dss = dra_plugin_daemonsets(state)
    if not dss:
        return []
    reqs = {ds.ref: daemonset_requirements(ds) for ds in dss}
    uids = {ds.uid for ds in dss}
    by_owner: dict[tuple[str, str], list[Pod]] = {}
    pinned: dict[tuple[str, str], list[Pod]] = {}  # not yet scheduled, by the node the controller pins it to
    for pod in state.pods:
        for owner_kind, uid in pod.owners:
            if owner_kind == "DaemonSet" and uid in uids:
                at = by_owner if pod.node_name else pinned
                at.setdefault((uid, target_node(pod)), []).append(pod)
    out: list[Finding] = []
    for node in state.nodes:
        if not gpu_node(node):
            continue
        why = {ds.ref: why_not_placed(ds, node, reqs[ds.ref]) for ds in dss}
        taking = [ds for ds in dss if not why[ds.ref]]
        if not taking:
            out.append(_unselected(dss[0], node, reqs[dss[0].ref], why[dss[0].ref]))
        for ds in taking:
            pods = by_owner.get((ds.uid, node.name), [])
            if any(p.phase == "Running" and p.ready for p in pods):
                continue
            nr = not_ready(pods)
            if nr is not None:
                out.append(_found("not-ready", node, ds, nr.detail))
            elif not any(p.phase in ("Running", "Pending") for p in pods):
                waiting = [p for p in pinned.get((ds.uid, node.name), ()) if p.phase == "Pending"]
                msg = (waiting[0].condition_message("PodScheduled") or "not scheduled yet") if waiting else ""
                detail = f"pod {waiting[0].ref} Pending: {msg}" if waiting else f"no pod of {ds.ref} on this node"
                out.append(_found("missing", node, ds, detail))
    return out
