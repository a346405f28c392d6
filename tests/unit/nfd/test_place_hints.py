"""``place`` and ``pending`` name the NodeFeatureRule behind a selected NFD label that no node has."""

from __future__ import annotations

import io
from pathlib import Path

import yaml

from gpulabel.cli.main import main
from tests.objects import nodefeaturerule

ROOT = Path(__file__).parents[3]
EXAMPLE = ROOT / "examples" / "nfd-rules.yaml"

NVLINK_RULE = nodefeaturerule(
    "nvlink",
    {"nvlink": "true"},
    {"feature": "pci.device", "matchExpressions": {"vendor": {"op": "In", "value": ["10de"]}}},
    {"feature": "kernel.loadedmodule", "matchExpressions": {"nvidia_peermem": {"op": "Exists"}}},
)
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "train", "namespace": "ml"},
    "spec": {
        "nodeSelector": {"feature.node.kubernetes.io/nvlink": "true"},
        "containers": [{"name": "c", "image": "x"}],
    },
}
WANT = (
    "feature.node.kubernetes.io/nvlink: rule nvlink/nvlink did not match on 3 node(s): "
    "term[1] kernel.loadedmodule (feature absent) (2); term[0] pci.device vendor In [10de] (1)"
)


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out, io.StringIO())
    return code, out.getvalue()


def test_place_wide_says_which_rule_would_set_the_label_and_why_it_does_not(tmp_path: Path) -> None:
    rules = tmp_path / "nvlink.yaml"
    rules.write_text(yaml.safe_dump(NVLINK_RULE))
    pod = tmp_path / "pod.yaml"
    pod.write_text(yaml.safe_dump(POD))
    code, out = run("place", str(pod), "--snapshot", str(EXAMPLE), "--snapshot", str(rules), "-o", "wide")
    assert code == 1
    assert f"    nfd: {WANT}" in out.splitlines()
    # plain text stays one line per node
    assert "nfd:" not in run("place", str(pod), "--snapshot", str(EXAMPLE), "--snapshot", str(rules))[1]


def test_pending_wide_too(tmp_path: Path) -> None:
    rules = tmp_path / "nvlink.yaml"
    rules.write_text(yaml.safe_dump(NVLINK_RULE))
    pending = {**POD, "status": {"phase": "Pending"}}
    pods = tmp_path / "pods.yaml"
    pods.write_text(yaml.safe_dump(pending))
    code, out = run(
        "pending", "--all-pods", "--snapshot", str(EXAMPLE), "--snapshot", str(rules), "--snapshot", str(pods), "-o",
        "wide",
    )  # fmt: skip
    assert code == 0  # not a GPU pod (--all-pods lists it); a Pending pod is a warning, below --fail-level error
    assert f"ml/train nfd: {WANT}" in out.splitlines()


def test_a_label_a_matching_rule_sets_but_nfd_master_has_not_written(tmp_path: Path) -> None:
    doc = yaml.safe_load(EXAMPLE.read_text())
    for item in doc["items"]:
        if item["kind"] == "Node":
            item["metadata"]["labels"].pop("feature.node.kubernetes.io/nvidia-gpu", None)
    snap = tmp_path / "snap.yaml"
    snap.write_text(yaml.safe_dump(doc))
    pod = tmp_path / "pod.yaml"
    spec = {**POD["spec"], "nodeSelector": {"feature.node.kubernetes.io/nvidia-gpu": "true"}}
    pod.write_text(yaml.safe_dump({**POD, "spec": spec}))
    code, out = run("place", str(pod), "--snapshot", str(snap), "-o", "wide")
    assert code == 1
    assert (
        "    nfd: feature.node.kubernetes.io/nvidia-gpu: rule gpu-nodes/nvidia-gpu sets it on 2 node(s) "
        "(gpu-1, gpu-2), "
        "but nfd-master has not written it there"
    ) in out.splitlines()
