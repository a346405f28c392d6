"""The one table of template-time labels: each provider's GPU labels are keys Karpenter knows before a node
boots; the labels NFD, GFD and the GPU Operator write after boot are known to none of them."""

from __future__ import annotations

import pytest

from gpulabel.k8s.karpenter.providers import AWS, AZURE, CORE, GCP, PROVIDERS, Provider, kwok
from gpulabel.k8s.karpenter.scheduling import decide, pod_terms
from tests.unit.karpenter.test_scheduling import pool

AFTER_BOOT = (
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.count",
    "nvidia.com/gpu.memory",
    "nvidia.com/gpu.present",
    "nvidia.com/gpu.deploy.driver",
    "nvidia.com/mig.config",
    "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/custom-gpu-training",
)


@pytest.mark.parametrize(
    "provider", [*PROVIDERS, kwok(["example.com/gpu-name"], ["example.com/gpu-name"])], ids=lambda p: p.name
)
def test_gpu_labels_are_template_time_and_after_boot_labels_are_not(provider: Provider) -> None:
    assert provider.gpu_labels and set(provider.gpu_labels) <= provider.well_known
    assert CORE.well_known <= provider.well_known
    assert not provider.well_known.intersection(AFTER_BOOT)


@pytest.mark.parametrize(
    ("provider", "key", "value"),
    [
        (AWS, "karpenter.k8s.aws/instance-gpu-name", "a100"),
        (AZURE, "karpenter.azure.com/sku-gpu-name", "A100"),
        (GCP, "karpenter.k8s.gcp/instance-gpu-name", "nvidia-a100-80gb"),
        (GCP, "cloud.google.com/gke-accelerator", "nvidia-l4"),
        (kwok(["example.com/gpu-name"], ["example.com/gpu-name"]), "example.com/gpu-name", "h100"),
    ],
    ids=lambda v: v.name if isinstance(v, Provider) else v,
)
def test_a_pod_selecting_a_template_time_gpu_label_needs_no_nodepool_to_name_it(
    provider: Provider, key: str, value: str
) -> None:
    """Allowed undefined (``AllowUndefinedWellKnownLabels``): the provider's instance types give its values.
    The same pod on GFD's product label is refused by the same NodePool, whatever the provider."""
    plain = pool("gpu")
    assert decide(pod_terms({"nodeSelector": {key: value}}), [plain], provider).nodepool == "gpu"
    gfd = decide(pod_terms({"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}}), [plain], provider)
    assert gfd.nodepool is None
    assert gfd.message.endswith('label "nvidia.com/gpu.product" does not have known values')


def test_declaring_the_label_in_the_nodepool_template_is_the_other_fix() -> None:
    """The seeds' step-7 training pod selects an NFD rule's label: only a NodePool that declares it serves it."""
    training = pod_terms({"nodeSelector": {"feature.node.kubernetes.io/custom-gpu-training": "true"}})
    declared = pool("train", labels={"feature.node.kubernetes.io/custom-gpu-training": "true"})
    assert decide(training, [pool("gpu"), declared], AWS).nodepool == "train"
    assert decide(training, [pool("gpu")], AWS).nodepool is None


def test_provider_restricted_domains() -> None:
    """A provider's own group is restricted unless well-known (``IsRestrictedLabel``)."""
    made_up = pod_terms({"nodeSelector": {"karpenter.k8s.aws/instance-gpu-colour": "green"}})
    verdict = decide(made_up, [pool("gpu")], AWS)
    assert (
        verdict.nodepool is None
        and "using label karpenter.k8s.aws/instance-gpu-colour is not allowed" in verdict.message
    )
    assert "karpenter.k8s.aws" in AWS.restricted_domains and "karpenter.k8s.aws" not in CORE.restricted_domains
