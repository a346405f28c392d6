"""``rules``, the ``nfd`` check, ``audit`` and ``sources`` on examples/nfd-rules.yaml, and nfd-master's config file."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gpulabel.cli.main import main

ROOT = Path(__file__).parents[3]
EXAMPLE = str(ROOT / "examples" / "nfd-rules.yaml")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_rules_prints_one_line_per_node_and_rule_that_did_not_match() -> None:
    code, out, _ = run("rules", "--snapshot", EXAMPLE)
    assert code == 0
    assert out.splitlines() == [
        'cpu-1 rule nvidia-gpu term[0] pci.device vendor In [10de]: values "8086" on 1 instance(s)',
        "cpu-1 rule gpu-training term[1] rule.matched nvidia-gpu IsTrue: absent",
        'gpu-2 rule gpu-training term[0] kernel.version major Gt [5]: value "5"',
    ]


def test_rules_json_has_a_section_per_node_and_per_node_and_rule() -> None:
    doc = json.loads(run("rules", "--snapshot", EXAMPLE, "--node", "gpu-1", "-o", "json")[1])
    (node,) = doc["nodes"]
    assert "feature.node.kubernetes.io/custom-gpu-training=true" in node["labels"]
    assert [(r["rule"], r["matched"]) for r in doc["rules"]] == [
        ("nvidia-gpu", True),
        ("gpu-training", True),
        ("os-release", True),
    ]


def test_an_unknown_node_is_bad_input() -> None:
    code, _, err = run("rules", "--snapshot", EXAMPLE, "--node", "nope")
    assert code == 2 and err == "gpulabel: node nope: not found\n"


def test_without_nfd_objects_rules_says_skipped(tmp_path: Path) -> None:
    p = tmp_path / "n.json"
    p.write_text(json.dumps({"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n"}}))
    doc = json.loads(run("rules", "--snapshot", str(p), "-o", "json")[1])
    assert doc["skipped"].startswith("no nodefeatures or nodefeaturerules")
    doc = json.loads(run("check", "--snapshot", str(p), "-o", "json")[1])
    assert doc["summary"]["checks"]["nfd"] == {"skipped": "no nodefeatures in the input"}


def test_check_and_audit_report_the_missing_and_the_unexplained_label_with_the_rule() -> None:
    code, out, _ = run("audit", "--snapshot", EXAMPLE)
    assert code == 1
    assert out.splitlines() == [
        "gpu-1 feature.node.kubernetes.io/custom-gpu-training nfd-missing want true rule gpu-training/gpu-training",
        "gpu-2 feature.node.kubernetes.io/custom-gpu-training nfd-unexplained",
    ]
    doc = json.loads(run("check", "--snapshot", EXAMPLE, "-o", "json")[1])
    assert doc["summary"]["checks"]["nfd"]["reasons"] == {"nfd-missing": 1, "nfd-unexplained": 1}


def test_sources_names_the_rule_that_produces_a_label() -> None:
    out = run("sources", "--node", "gpu-1", "--snapshot", EXAMPLE)[1]
    assert "feature.node.kubernetes.io/nvidia-gpu=nfd-worker value=true produced-by=rule/gpu-nodes/nvidia-gpu" in out


def test_nfd_config_deny_label_ns_and_whitelist(tmp_path: Path) -> None:
    conf = tmp_path / "nfd-master.conf"
    conf.write_text('labelWhiteList: "^(nvidia-gpu|os-id)$"\n')
    doc = json.loads(run("rules", "--snapshot", EXAMPLE, "--node", "cpu-1", "--nfd-config", str(conf), "-o", "json")[1])
    (node,) = doc["nodes"]
    assert node["labels"] == ["feature.node.kubernetes.io/os-id=ubuntu"]
    assert "label feature.node.kubernetes.io/os-version_id: not in labelWhiteList" in node["dropped"]


@pytest.mark.parametrize(
    ("text", "err"),
    [
        ("enableTaints: yes-please\n", "enableTaints: must be true or false"),
        ("denyLabelNs: 3\n", "denyLabelNs: must be a list of strings"),
        ("labelWhitelist: x\n", "unknown field 'labelWhitelist'"),
        ("labelWhiteList: '('\n", "labelWhiteList: invalid regexp"),
        ("- a\n", "nfd-master configuration must be a mapping"),
    ],
)
def test_a_bad_nfd_config_is_one_line_exit_2(tmp_path: Path, text: str, err: str) -> None:
    conf = tmp_path / "c.yaml"
    conf.write_text(text)
    code, _, stderr = run("rules", "--snapshot", EXAMPLE, "--nfd-config", str(conf))
    assert code == 2 and err in stderr and stderr.count("\n") == 1


def test_an_unexplained_label_nfd_master_owns_says_it_will_be_removed(tmp_path: Path) -> None:
    import yaml

    doc = yaml.safe_load(Path(EXAMPLE).read_text())
    for item in doc["items"]:
        if item["kind"] == "Node" and item["metadata"]["name"] == "gpu-2":
            item["metadata"]["annotations"] = {
                "nfd.node.kubernetes.io/feature-labels": "custom-gpu-training,nvidia-gpu"
            }
    snap = tmp_path / "s.yaml"
    snap.write_text(yaml.safe_dump(doc))
    out = json.loads(run("check", "--snapshot", str(snap), "-o", "json")[1])
    (f,) = [f for f in out["findings"] if f["reason"] == "nfd-unexplained"]
    assert f["node"] == "gpu-2" and f["detail"].endswith("removes it at its next update")
