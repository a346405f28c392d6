"""``managed``: a cloud's own GPU stack and the GPU Operator's on the same node.

GKE runs its managed NVIDIA device plugin on every GPU node (``cloud.google.com/gke-accelerator``) unless
the node pool was created with the label ``gke-no-default-nvidia-gpu-device-plugin=true`` (no prefix:
GKE's "GPU Operator on GKE" guide, and NVIDIA's GKE setup guide, which requires exactly one advertiser of
``nvidia.com/gpu`` per node). Where the GPU Operator also deploys its device plugin
(``nvidia.com/gpu.deploy.device-plugin=true`` and the ClusterPolicy's ``devicePlugin`` not off), both
plugins register ``nvidia.com/gpu`` with the kubelet's device manager: nothing errors, and the node's GPU
count and health are whichever plugin registered last. EKS and AKS are not modelled: their managed
plugins are not confirmed here from their own documentation, so they raise nothing.
"""

from __future__ import annotations

from gpulabel.model.cluster import Node
from gpulabel.model.findings import Finding, label_finding
from gpulabel.model.operands import deploy_key
from gpulabel.model.severity import Reason

__all__ = ["DEVICE_PLUGIN", "GKE_ACCELERATOR", "GKE_NO_DEFAULT_PLUGIN", "REASONS", "managed_node"]

GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"  # GKE's GPU node label: its managed stack's
GKE_NO_DEFAULT_PLUGIN = "gke-no-default-nvidia-gpu-device-plugin"  # "true": GKE leaves the plugin to others
DEVICE_PLUGIN = "device-plugin"  # the operand whose deploy label gates the operator's plugin

REASONS: dict[str, Reason] = {
    "two-device-plugins": Reason(
        "error",
        "a GKE GPU node where GKE's managed device plugin runs (no gke-no-default-nvidia-gpu-device-plugin=true) "
        "and the GPU Operator deploys its own: both register nvidia.com/gpu",
    ),
}


def managed_node(node: Node, operator_plugin_off: bool) -> list[Finding]:
    """The node's finding when both GKE's and the operator's device plugins serve its GPUs."""
    accelerator = node.labels.get(GKE_ACCELERATOR)
    if accelerator is None or node.labels.get(GKE_NO_DEFAULT_PLUGIN) == "true" or operator_plugin_off:
        return []
    deploy = deploy_key(DEVICE_PLUGIN)
    if node.labels.get(deploy) != "true":
        return []
    detail = (
        f"GKE's managed device plugin serves this {accelerator} node ({GKE_NO_DEFAULT_PLUGIN}=true is absent) and "
        f"the GPU Operator deploys its own here ({deploy}=true): both register nvidia.com/gpu. Create the node "
        f"pool with the label {GKE_NO_DEFAULT_PLUGIN}=true (GKE then leaves the plugin to the operator), or set "
        "the ClusterPolicy's devicePlugin.enabled=false to keep GKE's"
    )
    return [label_finding("managed", "two-device-plugins", node, GKE_NO_DEFAULT_PLUGIN, detail)]
