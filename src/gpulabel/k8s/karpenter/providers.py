"""The label keys Karpenter knows before a node exists: the core's, and each cloud provider's.

A key Karpenter knows (``WellKnownLabels``) may be selected by a pod whether or not a NodePool mentions it:
the provider's instance types give its values before launch. Any other key must be in a NodePool's template
(its requirements or labels), or the pod is ``label "K" does not have known values``. The keys NFD, GPU
Feature Discovery and the GPU Operator write (``nvidia.com/gpu.product``, ``feature.node.kubernetes.io/*``)
are on no list: they exist only once a node has booted and run them.

Each row names its source: the ``init()`` that adds to ``v1.WellKnownLabels`` and the constants it adds.

- core: sigs.k8s.io/karpenter v1.14.1 ``pkg/apis/v1/labels.go`` ``WellKnownLabels``, ``RestrictedLabelDomains``
  (``karpenter.sh``), ``RestrictedLabels`` (``kubernetes.io/hostname``).
- AWS: aws/karpenter-provider-aws v1.14.1 ``pkg/apis/v1/labels.go`` ``init()`` (group ``karpenter.k8s.aws``,
  ``pkg/apis/apis.go``); GPU values from ``pkg/providers/instancetype/types.go`` ``computeRequirements``
  (``instance-gpu-name`` is the lower-kebab-case NVML name, e.g. ``a100``, only for single-GPU-model types).
- Azure: Azure/karpenter-provider-azure v1.14.1 ``pkg/apis/v1beta1/labels.go`` ``AzureWellKnownLabels`` (group
  ``karpenter.azure.com``); ``sku-gpu-manufacturer``'s known values are ``nvidia`` and ``amd``.
- GCP: cloudpilot-ai/karpenter-provider-gcp v0.5.0 ``pkg/apis/v1alpha1/labels.go`` ``init()`` (group
  ``karpenter.k8s.gcp``), with ``disktype.AllLabels()`` (``pkg/providers/disktype/compatibility.go``: the
  disk types the vendored ``pdcsi/node-labeler-configmap.yaml`` marks supported, prefixed ``disk-type.gke.io/``).
- kwok: sigs.k8s.io/karpenter v1.14.1 ``kwok/apis/v1alpha1/labels.go`` ``init()`` (group ``karpenter.kwok.sh``)
  and ``kwok/cloudprovider/helpers.go`` ``newInstanceType``: every key of every offering's requirements in the
  instance-types file becomes well-known, which is how a kwok instance type carries template-time GPU labels.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["AWS", "AZURE", "CORE", "GCP", "PROVIDERS", "Provider", "kwok"]


@dataclass(frozen=True, slots=True)
class Provider:
    """What one Karpenter build knows: ``well_known`` keys (the core's included), the template-time GPU label
    keys among them, and the label domains and keys a pod may not select (``IsRestrictedLabel``)."""

    name: str
    source: str
    well_known: frozenset[str]
    gpu_labels: tuple[str, ...]
    restricted_domains: frozenset[str]
    restricted_labels: frozenset[str] = frozenset({"kubernetes.io/hostname"})


_CORE_KEYS = frozenset(
    {
        "karpenter.sh/nodepool",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "karpenter.sh/capacity-type",
        "node.kubernetes.io/windows-build",
    }
)
CORE = Provider(
    "core", "sigs.k8s.io/karpenter@v1.14.1 pkg/apis/v1/labels.go", _CORE_KEYS, (), frozenset({"karpenter.sh"})
)


def _group(group: str, names: Iterable[str]) -> frozenset[str]:
    return frozenset(f"{group}/{n}" for n in names)


_AWS = "karpenter.k8s.aws"
AWS = Provider(
    "aws",
    "aws/karpenter-provider-aws@v1.14.1 pkg/apis/v1/labels.go",
    _CORE_KEYS
    | _group(
        _AWS,
        (
            "capacity-reservation-id",
            "capacity-reservation-type",
            "capacity-reservation-interruptible",
            "instance-hypervisor",
            "instance-encryption-in-transit-supported",
            "instance-category",
            "instance-capability-flex",
            "instance-family",
            "instance-generation",
            "instance-size",
            "instance-local-nvme",
            "instance-cpu",
            "instance-cpu-manufacturer",
            "instance-cpu-sustained-clock-speed-mhz",
            "instance-memory",
            "instance-ebs-bandwidth",
            "instance-network-bandwidth",
            "instance-gpu-name",
            "instance-gpu-manufacturer",
            "instance-gpu-count",
            "instance-gpu-memory",
            "instance-accelerator-name",
            "instance-accelerator-manufacturer",
            "instance-accelerator-count",
            "instance-tenancy",
            "placement-group-id",
            "placement-group-partition",
        ),
    )
    | {"topology.k8s.aws/zone-id"},
    tuple(f"{_AWS}/instance-gpu-{n}" for n in ("name", "manufacturer", "count", "memory")),
    frozenset({"karpenter.sh", _AWS}),
)

_AZURE = "karpenter.azure.com"
AZURE = Provider(
    "azure",
    "Azure/karpenter-provider-azure@v1.14.1 pkg/apis/v1beta1/labels.go",
    _CORE_KEYS
    | _group(
        _AZURE,
        (
            "sku-name",
            "sku-family",
            "sku-series",
            "sku-version",
            "sku-cpu",
            "sku-memory",
            "sku-networking-accelerated",
            "sku-storage-premium-capable",
            "sku-storage-ephemeralos-maxsize",
            "sku-storage-ultra-ssd",
            "sku-gpu-name",
            "sku-gpu-manufacturer",
            "sku-gpu-count",
            "placement-scope",
        ),
    )
    | _group(
        "kubernetes.azure.com",
        ("sku-cpu", "sku-memory", "cluster", "mode", "scalesetpriority", "priority", "os-sku", "fips_enabled"),
    ),
    tuple(f"{_AZURE}/sku-gpu-{n}" for n in ("name", "manufacturer", "count")),
    frozenset({"karpenter.sh", _AZURE}),
)

_GCP = "karpenter.k8s.gcp"
_GCP_DISKS = (
    "hyperdisk-balanced",
    "hyperdisk-balanced-high-availability",
    "hyperdisk-extreme",
    "hyperdisk-ml",
    "hyperdisk-throughput",
    "pd-balanced",
    "pd-extreme",
    "pd-ssd",
    "pd-standard",
)
GCP = Provider(
    "gcp",
    "cloudpilot-ai/karpenter-provider-gcp@v0.5.0 pkg/apis/v1alpha1/labels.go",
    _CORE_KEYS
    | _group(
        _GCP,
        (
            "instance-category",
            "instance-family",
            "instance-shape",
            "instance-generation",
            "instance-size",
            "instance-cpu",
            "instance-cpu-model",
            "instance-memory",
            "instance-gpu-name",
            "instance-gpu-manufacturer",
            "instance-gpu-count",
            "instance-gpu-memory",
        ),
    )
    | {
        "topology.k8s.gcp/zone-id",
        "projectcalico.org/ds-ready",
        "iam.gke.io/gke-metadata-server-enabled",
        "node.kubernetes.io/masq-agent-ds-ready",
        "cloud.google.com/gke-netd-ready",
        "addon.gke.io/node-local-dns-ds-ready",
        "cloud.google.com/gke-accelerator",
        "cloud.google.com/gke-cpu-scaling-level",
    }
    | _group("disk-type.gke.io", _GCP_DISKS),
    (
        *(f"{_GCP}/instance-gpu-{n}" for n in ("name", "manufacturer", "count", "memory")),
        "cloud.google.com/gke-accelerator",
    ),
    frozenset({"karpenter.sh", _GCP}),
)

_KWOK = "karpenter.kwok.sh"


def kwok(offering_keys: Iterable[str] = (), gpu_labels: Iterable[str] = ()) -> Provider:
    """Karpenter's kwok provider with an instance-types file whose offerings' requirements use
    ``offering_keys`` (each becomes well-known); ``gpu_labels``: those of them that describe the GPUs."""
    keys = frozenset(offering_keys)
    return Provider(
        "kwok",
        "sigs.k8s.io/karpenter@v1.14.1 kwok/apis/v1alpha1/labels.go, kwok/cloudprovider/helpers.go",
        _CORE_KEYS | _group(_KWOK, ("instance-size", "instance-family", "instance-cpu", "instance-memory")) | keys,
        tuple(gpu_labels),
        frozenset({"karpenter.sh", _KWOK}),
    )


PROVIDERS: tuple[Provider, ...] = (AWS, AZURE, GCP)
