"""The GPU Operator's deploy labels (``nvidia.com/gpu.deploy.<name>``): which stack writes each, what it gates,
and the release it appeared in.

Read from ``github.com/NVIDIA/gpu-operator`` at every release tag (v1.7.0 ... v26.7.0, the newest): the first
tag whose non-test Go code names the key (``git grep 'nvidia\\.com/gpu\\.deploy\\.[a-z0-9-]*' <tag> -- '*.go'``);
the labels of v26.7.0 are ``controllers/state_manager.go`` ``gpuStateLabels`` (the ClusterPolicy stack, per
workload config), ``gpuClusterStateLabels`` (the GPUCluster stack), ``kubevirtDevicePluginDeployLabelKey``,
``kataDevicePluginDeployLabelKey`` and ``migManagerLabelKey``, and the assets' and manifests' DaemonSet
nodeSelectors. docs/gpu-operator.md has the table for people.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

from gpulabel.model.vocabulary import DEPLOY_PREFIX

__all__ = [
    "DEPLOY_LABELS",
    "GPU_CLUSTER_KEYS",
    "NEWEST_RELEASE",
    "DeployLabel",
    "gpu_cluster_node",
    "known_deploy_key",
    "nearest_deploy_key",
]

NEWEST_RELEASE = "v26.7.0"  # the operator release the table follows (tag of 2026-08-20)

CLUSTER_POLICY, GPU_CLUSTER, BOTH, SWITCH, NONE = "ClusterPolicy", "GPUCluster", "both", "switch", "none"


@dataclass(frozen=True, slots=True)
class DeployLabel:
    """One deploy label: its name after the prefix, the release it appeared in, the stack whose node labeller
    writes it, and what selects on it (the operand's DaemonSet)."""

    name: str
    since: str
    stack: str
    gates: str

    @property
    def key(self) -> str:
        return DEPLOY_PREFIX + self.name


DEPLOY_LABELS: tuple[DeployLabel, ...] = (
    DeployLabel("driver", "v1.7.0", BOTH, "nvidia-driver-daemonset (ClusterPolicy) or an NVIDIADriver's DaemonSets"),
    DeployLabel("container-toolkit", "v1.7.0", CLUSTER_POLICY, "nvidia-container-toolkit-daemonset"),
    DeployLabel("device-plugin", "v1.7.0", CLUSTER_POLICY, "nvidia-device-plugin-daemonset, mps-control-daemon"),
    DeployLabel("gpu-feature-discovery", "v1.7.0", CLUSTER_POLICY, "gpu-feature-discovery"),
    DeployLabel("dcgm-exporter", "v1.7.0", CLUSTER_POLICY, "nvidia-dcgm-exporter"),
    DeployLabel("mig-manager", "v1.7.0", CLUSTER_POLICY, "nvidia-mig-manager (MIG-capable nodes)"),
    DeployLabel("operator-validator", "v1.7.0", CLUSTER_POLICY, "nvidia-operator-validator"),
    DeployLabel("dcgm", "v1.8.0", CLUSTER_POLICY, "nvidia-dcgm"),
    DeployLabel("node-status-exporter", "v1.8.0", CLUSTER_POLICY, "nvidia-node-status-exporter"),
    DeployLabel("operands", "v1.10.0", SWITCH, "false removes every other deploy label (isolation)"),
    DeployLabel("sandbox-device-plugin", "v1.11.0", CLUSTER_POLICY, "nvidia-sandbox-device-plugin-daemonset"),
    DeployLabel("sandbox-validator", "v1.11.0", CLUSTER_POLICY, "nvidia-sandbox-validator"),
    DeployLabel("vfio-manager", "v1.11.0", CLUSTER_POLICY, "nvidia-vfio-manager"),
    DeployLabel("vgpu-manager", "v1.11.0", BOTH, "nvidia-vgpu-manager-daemonset, an NVIDIADriver of vgpu-host-manager"),
    DeployLabel("vgpu-device-manager", "v1.11.0", CLUSTER_POLICY, "nvidia-vgpu-device-manager"),
    DeployLabel("cc-manager", "v23.6.0", CLUSTER_POLICY, "nvidia-cc-manager"),
    DeployLabel("kata-manager", "v23.6.0", CLUSTER_POLICY, "nvidia-kata-manager"),
    DeployLabel("kata-sandbox-device-plugin", "v26.3.0", CLUSTER_POLICY, "the Kata sandbox device plugin"),
    DeployLabel("client", "v26.7.0", CLUSTER_POLICY, "third-party GPU client pods (no DaemonSet of the operator)"),
    DeployLabel("dra-driver", "v26.7.0", GPU_CLUSTER, "nvidia-dra-driver-kubelet-plugin"),
    DeployLabel("dra-validator", "v26.7.0", GPU_CLUSTER, "nvidia-dra-validator"),
    DeployLabel("dcgm-dra", "v26.7.0", GPU_CLUSTER, "nvidia-dcgm-dra"),
    DeployLabel("dcgm-exporter-dra", "v26.7.0", GPU_CLUSTER, "nvidia-dcgm-exporter-dra"),
    # seen empty on every GPU node of real clusters (checks/audit); written by no release's Go code
    DeployLabel("nvsm", "", NONE, "nothing the operator's code renders"),
)
_BY_KEY = {d.key: d for d in DEPLOY_LABELS}
# the deploy labels only the GPUCluster stack writes: a node carrying one is labelled for the DRA stack
GPU_CLUSTER_KEYS = frozenset(d.key for d in DEPLOY_LABELS if d.stack == GPU_CLUSTER)
GFD_KEY = DEPLOY_PREFIX + "gpu-feature-discovery"


def known_deploy_key(key: str) -> DeployLabel | None:
    return _BY_KEY.get(key)


def nearest_deploy_key(key: str) -> str:
    """The known deploy label nearest to ``key`` (a typo's), or ``""``."""
    near = difflib.get_close_matches(key, list(_BY_KEY), n=1, cutoff=0.8)
    return near[0] if near else ""


def gpu_cluster_node(labels: Mapping[str, str]) -> bool:
    """Whether a node's labels are the GPUCluster stack's (v26.7.0 ``updateGPUStateLabels``: a DRA-stack deploy
    label is set and the ClusterPolicy stack's GFD label was swept away), so no GFD runs there by design."""
    return GFD_KEY not in labels and any(k in labels for k in GPU_CLUSTER_KEYS)
