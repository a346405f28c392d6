"""The label keys of a GPU cluster and who writes them.

Provenance follows the GPU stack's division of labour: NFD owns
``feature.node.kubernetes.io/*`` (and whatever its master lists in the
``nfd.node.kubernetes.io/feature-labels`` annotation), the GPU Operator owns
``gpu.present`` and the deploy labels, and GPU Feature Discovery owns the
labels that describe the GPUs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "DEPLOY_OPERANDS",
    "DEPLOY_PREFIX",
    "GPU_COUNT",
    "GPU_MEMORY",
    "GPU_PRESENT",
    "GPU_PRODUCT",
    "NFD_FEATURE_LABELS",
    "PCI_PRESENT",
    "has_nvidia_pci",
    "nfd_owned_keys",
    "owner_of",
]

GPU_PRESENT = "nvidia.com/gpu.present"
GPU_PRODUCT = "nvidia.com/gpu.product"
GPU_COUNT = "nvidia.com/gpu.count"
GPU_MEMORY = "nvidia.com/gpu.memory"
DEPLOY_PREFIX = "nvidia.com/gpu.deploy."
DEPLOY_OPERANDS = DEPLOY_PREFIX + "operands"
PCI_PRESENT = (
    "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/pci-0302_10de.present",
    "feature.node.kubernetes.io/pci-0300_10de.present",
)
NFD_PREFIX = "feature.node.kubernetes.io/"
NFD_FEATURE_LABELS = "nfd.node.kubernetes.io/feature-labels"

NFD, GFD, OPERATOR, UNKNOWN = "nfd-worker", "gpu-feature-discovery", "gpu-operator", "unknown"

# nvidia.com/<name> keys written by GFD (exact names, then patterns).
_GFD_NAMES = frozenset(
    {
        "gpu.product",
        "gpu.count",
        "gpu.memory",
        "gpu.family",
        "gpu.machine",
        "gpu.replicas",
        "gpu.sharing-strategy",
        "gpu.mode",
        "gpu.clique",
        "gpu.imex-domain",
        "mig.capable",
        "mig.strategy",
        "mps.capable",
        "gfd.timestamp",
        "vgpu.present",
        "vgpu.host-driver-version",
        "vgpu.host-driver-branch",
    }
)
_GFD_PATTERNS = re.compile(r"(gpu\.compute\..+|cuda\.driver.*|cuda\.runtime.*|mig-.+|sharing\..+)")
_OPERATOR_NAMES = frozenset(
    {
        "gpu.present",
        "mig.config",
        "mig.config.state",
        "gpu.workload.config",
        "gpu-driver-upgrade-state",
        "gpu-operator.driver.owner",  # NVIDIADriverOwnerLabel (v26.7.0 internal/consts): the node's NVIDIADriver
    }
)


def owner_of(key: str, nfd_keys: frozenset[str] = frozenset()) -> str:
    """The component that writes ``key``: one of :data:`NFD`, :data:`GFD`, :data:`OPERATOR` or :data:`UNKNOWN`.

    ``nfd_keys`` are the keys NFD's master says it owns on the node (see
    :func:`nfd_owned_keys`). GFD publishes through NFD, so a GFD key listed
    there is still GFD's; any other listed key is NFD's (a feature file or rule).
    """
    if key.startswith(NFD_PREFIX):
        return NFD
    prefix, _, name = key.rpartition("/")
    if prefix == "nvidia.com":
        if name in _OPERATOR_NAMES or key.startswith(DEPLOY_PREFIX):
            return OPERATOR
        if name in _GFD_NAMES or _GFD_PATTERNS.fullmatch(name):
            return GFD
    return NFD if key in nfd_keys else UNKNOWN


def nfd_owned_keys(annotations: Mapping[str, str]) -> frozenset[str]:
    """Keys listed in NFD's ``feature-labels`` annotation, with the default prefix restored."""
    raw = annotations.get(NFD_FEATURE_LABELS, "")
    keys = set()
    for item in raw.split(","):
        item = item.strip()
        if item:
            keys.add(item if "/" in item else NFD_PREFIX + item)
    return frozenset(keys)


def has_nvidia_pci(labels: Mapping[str, str]) -> bool:
    return any(labels.get(k) == "true" for k in PCI_PRESENT)


# What makes a pod a GPU pod (checks/pending/rules.py GpuPods; said in pending --help).
GPU_POD_RULE = (
    "A GPU pod: it requests nvidia.com/* or another extended resource the GPU nodes advertise, holds a DRA "
    "claim, or its nodeSelector or node affinity names a key the GPU stack manages (nvidia.com/*: GFD and the "
    "operator; feature.node.kubernetes.io/* and profile.node.kubernetes.io/*: NFD and its feature files) or a "
    "key only GPU nodes carry (when the cluster has other nodes)."
)
