"""sources: owners by key pattern, NFD's annotation, and managedFields."""

from __future__ import annotations

import pytest

from gpulabel.checks.labels.sources import node_sources
from gpulabel.model.cluster import node_from_json
from gpulabel.model.vocabulary import nfd_owned_keys, owner_of
from tests.objects import node

OWNER_CASES = [
    ("feature.node.kubernetes.io/pci-10de.present", "nfd-worker"),
    ("feature.node.kubernetes.io/custom-gpu-training", "nfd-worker"),
    ("nvidia.com/gpu.present", "gpu-operator"),
    ("nvidia.com/gpu.deploy.driver", "gpu-operator"),
    ("nvidia.com/gpu.deploy.operands", "gpu-operator"),
    ("nvidia.com/mig.config", "gpu-operator"),
    ("nvidia.com/gpu.product", "gpu-feature-discovery"),
    ("nvidia.com/gpu.count", "gpu-feature-discovery"),
    ("nvidia.com/gpu.memory", "gpu-feature-discovery"),
    ("nvidia.com/gpu.compute.major", "gpu-feature-discovery"),
    ("nvidia.com/cuda.driver.major", "gpu-feature-discovery"),
    ("nvidia.com/cuda.runtime-version.minor", "gpu-feature-discovery"),
    ("nvidia.com/mig-1g.5gb.count", "gpu-feature-discovery"),
    ("nvidia.com/gfd.timestamp", "gpu-feature-discovery"),
    ("nvidia.com/something-else", "unknown"),
    ("example.com/nvidia.com/gpu.product", "unknown"),
    ("kubernetes.io/hostname", "unknown"),
]


@pytest.mark.parametrize(("key", "owner"), OWNER_CASES, ids=[f"{k} is {o}'s" for k, o in OWNER_CASES])
def test_owner_by_key(key: str, owner: str) -> None:
    assert owner_of(key) == owner


def test_nfd_annotation_adds_the_default_prefix_and_keeps_others() -> None:
    keys = nfd_owned_keys({"nfd.node.kubernetes.io/feature-labels": "cpu-model.id, example.com/rack ,"})
    assert keys == {"feature.node.kubernetes.io/cpu-model.id", "example.com/rack"}
    assert owner_of("example.com/rack", keys) == "nfd-worker"
    assert owner_of("nvidia.com/gpu.product", keys | {"nvidia.com/gpu.product"}) == "gpu-feature-discovery"


def test_the_last_writer_comes_from_managed_fields() -> None:
    mf = [
        {
            "manager": "nfd-master",
            "operation": "Update",
            "time": "2026-01-01T00:00:00Z",
            "fieldsV1": {"f:metadata": {"f:labels": {"f:nvidia.com/gpu.count": {}, "f:a": {}}}},
        },
        {
            "manager": "kubectl-label",
            "operation": "Update",
            "time": "2026-02-01T00:00:00Z",
            "fieldsV1": {"f:metadata": {"f:labels": {"f:nvidia.com/gpu.count": {}}}},
        },
    ]
    n = node_from_json(node("n", {"nvidia.com/gpu.count": "9", "a": "1", "b": "2"}, managed_fields=mf))
    rows = {r.key: r for r in node_sources(n)}
    assert rows["nvidia.com/gpu.count"].written_by is not None
    assert rows["nvidia.com/gpu.count"].written_by.manager == "kubectl-label"
    assert rows["a"].written_by is not None and rows["a"].written_by.manager == "nfd-master"
    assert rows["b"].written_by is None
    assert rows["nvidia.com/gpu.count"].line() == (
        "nvidia.com/gpu.count=gpu-feature-discovery value=9 manager=kubectl-label operation=Update "
        "time=2026-02-01T00:00:00Z"
    )
