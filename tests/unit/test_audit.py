"""audit: table-driven over single nodes, then over a whole state."""

from __future__ import annotations

import pytest

from gpulabel.checks.audit import audit, audit_node
from gpulabel.model.cluster import ClusterState, node_from_json
from tests.objects import GPU_LABELS, node

PRODUCT, COUNT, MEMORY = "nvidia.com/gpu.product", "nvidia.com/gpu.count", "nvidia.com/gpu.memory"


def lines(labels: dict[str, str], strict: bool = False) -> list[str]:
    return [f.line() for f in audit_node(node_from_json(node("n", labels)), strict)]


def with_(**changes: str | None) -> dict[str, str]:
    keys = {"product": PRODUCT, "count": COUNT, "memory": MEMORY}
    out = dict(GPU_LABELS)
    for short, value in changes.items():
        if value is None:
            out.pop(keys[short])
        else:
            out[keys[short]] = value
    return out


CASES = [
    ("a healthy GPU node has no findings", with_(), []),
    ("a missing product is reported", with_(product=None), ["n nvidia.com/gpu.product missing"]),
    (
        "every missing key is reported",
        with_(product=None, count=None, memory=None),
        ["n nvidia.com/gpu.product missing", "n nvidia.com/gpu.count missing", "n nvidia.com/gpu.memory missing"],
    ),
    ("a count with letters is not a number", with_(count="4x"), ["n nvidia.com/gpu.count not-a-number"]),
    ("a memory with a unit is not a number", with_(memory="40537MiB"), ["n nvidia.com/gpu.memory not-a-number"]),
    ("a negative count is not a number", with_(count="-1"), ["n nvidia.com/gpu.count not-a-number"]),
    ("an empty count is present but not a number", with_(count=""), ["n nvidia.com/gpu.count not-a-number"]),
    ("an empty product is present but badly formed", with_(product=""), ["n nvidia.com/gpu.product bad-format"]),
    ("a product with a space is badly formed", with_(product="NVIDIA A100"), ["n nvidia.com/gpu.product bad-format"]),
    ("a 63-character product is fine", with_(product="A" * 63), []),
    ("a 64-character product is too long", with_(product="A" * 64), ["n nvidia.com/gpu.product too-long"]),
    (
        "a long badly formed product gets both reasons",
        with_(product="A " * 40),
        ["n nvidia.com/gpu.product too-long", "n nvidia.com/gpu.product bad-format"],
    ),
    ("full-width digits are not a number", with_(count="\uff14"), ["n nvidia.com/gpu.count not-a-number"]),
]


@pytest.mark.parametrize(("name", "labels", "expected"), CASES, ids=[c[0] for c in CASES])
def test_audit_node(name: str, labels: dict[str, str], expected: list[str]) -> None:
    assert lines(labels) == expected


def test_strict_reports_a_gpu_node_without_the_pci_label() -> None:
    labels = dict(GPU_LABELS)
    del labels["feature.node.kubernetes.io/pci-10de.present"]
    assert lines(labels) == []
    assert lines(labels, strict=True) == ["n feature.node.kubernetes.io/pci-10de.present no-pci-label"]


def test_strict_accepts_the_other_pci_class_labels() -> None:
    labels = dict(GPU_LABELS)
    del labels["feature.node.kubernetes.io/pci-10de.present"]
    labels["feature.node.kubernetes.io/pci-0302_10de.present"] = "true"
    assert lines(labels, strict=True) == []


@pytest.mark.parametrize(
    ("value", "bad"),
    [
        ("true", False),
        ("false", False),
        ("pre-installed", False),
        ("paused-for-driver-upgrade", False),
        ("", True),
        ("yes", True),
        ("True", True),
    ],
    ids=["true", "false", "pre-installed", "paused", "empty", "yes", "capitalised True"],
)
def test_strict_checks_deploy_label_values(value: str, bad: bool) -> None:
    labels = {**GPU_LABELS, "nvidia.com/gpu.deploy.driver": value}
    reason = "empty-deploy" if value == "" else "bad-deploy-value"
    expected = [f"n nvidia.com/gpu.deploy.driver {reason}"] if bad else []
    assert lines(labels, strict=True) == expected


def test_empty_deploy_labels_are_said_without_strict_and_without_daemonsets_but_nvsm() -> None:
    # a node read alone (kubectl get node -o yaml), as the GPU Operator left it on real clusters
    labels = {
        **GPU_LABELS,
        "nvidia.com/gpu.deploy.device-plugin": "",
        "nvidia.com/gpu.deploy.gpu-feature-discovery": "",
        "nvidia.com/gpu.deploy.dcgm-exporter": "",
        "nvidia.com/gpu.deploy.nvsm": "",  # the operator's own default: silent
    }
    assert lines(labels) == [
        "n nvidia.com/gpu.deploy.dcgm-exporter empty-deploy",
        "n nvidia.com/gpu.deploy.device-plugin empty-deploy",
        "n nvidia.com/gpu.deploy.gpu-feature-discovery empty-deploy",
    ]
    assert lines(labels, strict=True)[:3] == lines(labels)


def test_only_nodes_with_gpu_present_true_are_audited() -> None:
    state = ClusterState.from_objects(
        [
            ("t", node("cpu", {"kubernetes.io/os": "linux"})),
            ("t", node("off", {"nvidia.com/gpu.present": "false"})),
            ("t", node("new-gpu", {"nvidia.com/gpu.present": "true"})),
        ]
    )
    assert [f.line() for f in audit(state)] == [
        "new-gpu nvidia.com/gpu.product missing",
        "new-gpu nvidia.com/gpu.count missing",
        "new-gpu nvidia.com/gpu.memory missing",
    ]


def test_findings_are_sorted_by_node_name() -> None:
    state = ClusterState.from_objects(
        [("t", node(n, {"nvidia.com/gpu.present": "true", PRODUCT: "x", COUNT: "1"})) for n in ("b", "a", "c")]
    )
    assert [f.node for f in audit(state)] == ["a", "b", "c"]
