"""The place, pending and hazards commands: output contracts, exit codes, errors."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
import yaml

from gpulabel.cli.main import main
from tests.unit.test_placement import TRAINING, story_state

ROOT = Path(__file__).parents[2]
LAB = str(ROOT / "examples" / "lab-cluster.yaml")
PODS = ROOT / "examples" / "pods"


def run(*argv: str, stdin: str | None = None, monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def story(tmp_path: Path) -> str:
    """The lab after the training label left lab-node-1, with train-b Pending, as a snapshot file."""
    items = yaml.safe_load(Path(LAB).read_text())["items"]
    for item in items:
        if item["metadata"]["name"] == "lab-node-1":
            del item["metadata"]["labels"][TRAINING]
    train_b = yaml.safe_load((PODS / "train-b.yaml").read_text())
    train_b["metadata"]["namespace"] = "ml"
    (p,) = [p for p in story_state().pods if p.name == "train-b"]
    train_b["status"] = {"phase": "Pending", "conditions": [dict(c) for c in p.conditions.values()]}
    path = tmp_path / "story.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [*items, train_b]}))
    return str(path)


# -- place --------------------------------------------------------------------------


def test_place_prints_one_line_per_verdict_and_exits_zero_when_a_node_fits() -> None:
    assert run("place", str(PODS / "exists-notin.yaml"), "--snapshot", LAB) == (
        0,
        "no affinity term[0] nvidia.com/gpu.product NotIn [NVIDIA-A100-SXM4-40GB] 1 node(s): lab-node-0\n"
        "yes 1 node(s): lab-node-1\n"
        "no affinity term[0] nvidia.com/gpu.present Exists 1 node(s): lab-node-2\n",
        "",
    )


def test_place_groups_thousands_of_nodes_into_a_few_lines(tmp_path: Path) -> None:
    node = yaml.safe_load(Path(LAB).read_text())["items"][1]
    items = [{**node, "metadata": {**node["metadata"], "name": f"n-{i:04d}"}} for i in range(2000)]
    snap = tmp_path / "big.yaml"
    snap.write_text(yaml.safe_dump({"kind": "List", "apiVersion": "v1", "items": items}))
    out = run("place", str(PODS / "exists-notin.yaml"), "--snapshot", str(snap))[1]
    assert out == "yes 2000 node(s): n-0000, n-0001, n-0002, ...\n"
    assert (
        len(run("place", str(PODS / "exists-notin.yaml"), "--snapshot", str(snap), "--per-node")[1].splitlines())
        == 2000
    )


def test_place_per_node_prints_one_line_per_node() -> None:
    assert run("place", str(PODS / "exists-notin.yaml"), "--snapshot", LAB, "--per-node") == (
        0,
        "lab-node-0 no affinity term[0] nvidia.com/gpu.product NotIn [NVIDIA-A100-SXM4-40GB]\n"
        "lab-node-1 yes\n"
        "lab-node-2 no affinity term[0] nvidia.com/gpu.present Exists\n",
        "",
    )


def test_place_exits_one_when_no_node_fits(tmp_path: Path) -> None:
    manifest = tmp_path / "l4.yaml"
    manifest.write_text((PODS / "in.yaml").read_text().replace("NVIDIA-A100-SXM4-40GB", "NVIDIA-L4"))
    code, out, _ = run("place", str(manifest), "--snapshot", LAB, "--per-node")
    assert code == 1
    assert out.splitlines()[0] == "lab-node-0 no affinity term[0] nvidia.com/gpu.product In [NVIDIA-L4]"


def test_place_reports_cordons_and_taints_first(tmp_path: Path) -> None:
    items = yaml.safe_load(Path(LAB).read_text())["items"]
    items[0]["spec"] = {"unschedulable": True}
    items[1]["spec"] = {"taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]}
    snap = tmp_path / "lab.yaml"
    snap.write_text(yaml.safe_dump({"kind": "List", "apiVersion": "v1", "items": items}))
    code, out, _ = run("place", str(PODS / "in.yaml"), "--snapshot", str(snap), "--per-node")
    assert (code, out.splitlines()[:2]) == (
        1,
        ["lab-node-0 no unschedulable", "lab-node-1 no untolerated-taint nvidia.com/gpu=true:NoSchedule"],
    )


def test_place_reads_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run(
        "place", "-", "--snapshot", LAB, "--per-node", stdin=(PODS / "gt.yaml").read_text(), monkeypatch=monkeypatch
    )
    assert (code, out.splitlines()[0]) == (0, "lab-node-0 yes")


def test_place_reads_json(tmp_path: Path) -> None:
    manifest = tmp_path / "p.json"
    manifest.write_text(json.dumps(yaml.safe_load((PODS / "ored-terms.yaml").read_text())))
    assert run("place", str(manifest), "--snapshot", LAB, "--per-node")[1].splitlines()[2] == "lab-node-2 yes"


def test_place_prefixes_lines_with_the_workload_when_given_several() -> None:
    code, out, _ = run("place", str(PODS / "in.yaml"), str(PODS / "gt.yaml"), "--snapshot", LAB, "--per-node")
    assert code == 0
    assert out.splitlines()[0] == "default/in lab-node-0 yes"
    assert out.splitlines()[3] == "default/gt lab-node-0 yes"


def test_place_wide_lists_every_failure_and_the_closest_fix(story: str) -> None:
    code, out, _ = run("place", str(PODS / "train-b.yaml"), "--snapshot", story, "-o", "wide", "--per-node")
    assert code == 1
    lines = out.splitlines()
    assert lines[-2:] == [
        f"closest lab-node-1: kubectl label node lab-node-1 {TRAINING}=true (through term[0])",
        f"    note: {TRAINING} is owned by nfd-worker: a hand edit lasts only until it next updates the node",
    ]
    assert f"    NodeAffinity: affinity term[0] {TRAINING} Exists: label absent" in lines
    assert "    NodeAffinity: affinity term[0] nvidia.com/gpu.product In [NVIDIA-A10]: label absent" in lines


def test_place_json_carries_the_same_verdicts(story: str) -> None:
    code, out, _ = run("place", str(PODS / "train-b.yaml"), "--snapshot", story, "-o", "json")
    doc = json.loads(out)
    (workload,) = doc["workloads"]
    assert code == 1 and workload["fits"] == []
    assert [n["reason"] for n in doc["nodes"]] == [
        "affinity term[0] nvidia.com/gpu.product In [NVIDIA-A10]",
        f"affinity term[0] {TRAINING} Exists",
        f"affinity term[0] {TRAINING} Exists",
    ]
    assert workload["closest"] == "lab-node-1"
    assert workload["changes"] == [f"{TRAINING}=true"]


def test_place_table_is_for_people() -> None:
    out = run("place", str(PODS / "in.yaml"), "--snapshot", LAB, "-o", "table")[1]
    assert "lab-node-0" in out and "yes" in out


def test_an_invalid_manifest_prints_the_servers_error_and_exits_two(tmp_path: Path) -> None:
    manifest = tmp_path / "bad.yaml"
    manifest.write_text((PODS / "gt.yaml").read_text().replace('- "3"', '- "3"\n            - "4"'))
    code, out, err = run("place", str(manifest), "--snapshot", LAB)
    assert (code, out) == (2, "")
    assert err == (
        f'gpulabel: {manifest}: Pod "gt" is invalid: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnored'
        "DuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Required value: "
        "must be specified single value when `operator` is 'Lt' or 'Gt'\n"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: Service\napiVersion: v1\nmetadata: {name: s}\n", "no workload found: place takes Pod, Deployment"),
        ("kind: Pod\nspec: [\n", "invalid YAML"),
    ],
    ids=["no workload in the file", "unparsable YAML"],
)
def test_unusable_manifests_exit_two(tmp_path: Path, text: str, message: str) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(text)
    code, _, err = run("place", str(manifest), "--snapshot", LAB)
    assert code == 2 and message in err and str(manifest) in err and err.count("\n") == 1


def test_a_missing_manifest_exits_two(tmp_path: Path) -> None:
    code, _, err = run("place", str(tmp_path / "nope.yaml"), "--snapshot", LAB)
    assert (code, err) == (2, f"gpulabel: {tmp_path / 'nope.yaml'}: No such file or directory\n")


# -- pending and hazards ------------------------------------------------------------


def test_hazards_line_and_exit_code(story: str) -> None:
    assert run("hazards", "--snapshot", story, "--fail-level", "warning")[0] == 1
    assert run("hazards", "--snapshot", story) == (
        0,  # a hazard is a warning: below the default --fail-level error
        f"ml/train-a lab-node-1 affinity term[0] {TRAINING} Exists\n",
        "",
    )


def test_hazards_ok_on_the_lab() -> None:
    assert run("hazards", "--snapshot", LAB) == (0, "OK\n", "")


def test_hazards_namespace_filter(story: str) -> None:
    assert run("hazards", "--snapshot", story, "-n", "gpu-operator") == (0, "OK\n", "")


def test_pending_lines_then_the_schedulers_message(story: str) -> None:
    code, out, _ = run("pending", "--snapshot", story)
    assert code == 0  # a Pending GPU pod is a warning
    assert out.splitlines() == [
        "ml/train-b affinity 1 node(s) term[0] nvidia.com/gpu.product In [NVIDIA-A10]",
        f"ml/train-b affinity 2 node(s) term[0] {TRAINING} Exists",
        "ml/train-b scheduler: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    ]


def test_pending_per_node_keeps_the_matrix(story: str) -> None:
    code, out, _ = run("pending", "--per-node", "--snapshot", story, "--fail-level", "warning")
    assert code == 1
    assert out.splitlines() == [
        "ml/train-b lab-node-0 affinity term[0] nvidia.com/gpu.product In [NVIDIA-A10]",
        f"ml/train-b lab-node-1 affinity term[0] {TRAINING} Exists",
        f"ml/train-b lab-node-2 affinity term[0] {TRAINING} Exists",
        "ml/train-b scheduler: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    ]


def test_pending_wide_adds_why_and_the_prediction(story: str) -> None:
    out = run("pending", "--snapshot", story, "-o", "wide")[1].splitlines()
    assert out[0].endswith('(NodeAffinity: value "NVIDIA-A100-SXM4-40GB" is not in the set; nodes: lab-node-0)')
    assert out[1].endswith("(NodeAffinity: label absent; nodes: lab-node-1, lab-node-2)")
    assert out[-1].startswith("ml/train-b predicted: 0/3 nodes are available")


def test_pending_json(story: str) -> None:
    doc = json.loads(run("pending", "--snapshot", story, "-o", "json")[1])
    assert doc["pods"][0]["pod"] == "ml/train-b"
    assert doc["pods"][0]["scheduler_message"] == doc["pods"][0]["predicted_message"]
    assert doc["summary"] == {
        "findings": 2,
        "reasons": {"affinity": 2},
        "severities": {"error": 0, "warning": 2, "info": 0},
        "pods": 1,
    }
    assert [(f["pod"], f["count"]) for f in doc["findings"]] == [("ml/train-b", 1), ("ml/train-b", 2)]


def test_check_includes_pending_and_hazards(story: str) -> None:
    code, out, _ = run("check", "--snapshot", story)
    assert code == 0  # its Pending pod and its hazard are warnings
    assert run("check", "--snapshot", story, "--fail-level", "warning")[0] == 1
    assert "pending: 2 finding(s) affinity=2" in out.splitlines()
    assert "hazards: 1 finding(s) affinity=1" in out.splitlines()


def test_on_the_drifted_lab_the_predicted_message_is_the_schedulers() -> None:
    drifted = str(ROOT / "examples" / "drifted-lab.yaml")
    doc = json.loads(run("pending", "--snapshot", drifted, "-o", "json")[1])
    assert doc["pods"], "the drifted lab has a Pending pod"
    for p in doc["pods"]:
        assert p["predicted_message"] == p["scheduler_message"]
    assert run("hazards", "--snapshot", drifted)[1] == f"ml/train-a lab-node-1 affinity term[0] {TRAINING} Exists\n"
