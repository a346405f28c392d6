"""``gpulabel diff``: the lab a week later, line by line, both ways."""

from __future__ import annotations

import io
import json
from pathlib import Path

from gpulabel.checks.diff import diff_states
from gpulabel.cli.main import main
from gpulabel.cluster.snapshot import load_snapshots

ROOT = Path(__file__).parents[2]
LAB = str(ROOT / "examples" / "lab-cluster.yaml")
DRIFTED = str(ROOT / "examples" / "drifted-lab.yaml")
TRAINING = "feature.node.kubernetes.io/custom-gpu-training"

LAB_TO_DRIFTED = [
    "+ node lab-node-3",
    f"lab-node-1 {TRAINING} true -> (absent)",
    "lab-node-1 nvidia.com/gpu.count 2 -> two",
    "lab-node-1 nvidia.com/gpu.memory 22731 -> (absent)",
    "+ audit lab-node-1 nvidia.com/gpu.memory missing",
    "+ audit lab-node-1 nvidia.com/gpu.count not-a-number",
    "+ audit lab-node-3 nvidia.com/gpu.product missing",
    "+ audit lab-node-3 nvidia.com/gpu.count missing",
    "+ audit lab-node-3 nvidia.com/gpu.memory missing",
    "+ operands lab-node-0 container-toolkit not-ready",
    "+ operands lab-node-0 device-plugin out-of-order container-toolkit",
    "+ operands lab-node-0 gpu-feature-discovery out-of-order container-toolkit",
    "+ operands lab-node-0 dcgm-exporter out-of-order container-toolkit",
    "+ operands lab-node-0 operator-validator out-of-order container-toolkit",
    "+ operands lab-node-3 driver missing",
    "+ operands lab-node-3 container-toolkit missing",
    "+ operands lab-node-3 device-plugin missing",
    "+ operands lab-node-3 gpu-feature-discovery missing",
    "+ operands lab-node-3 dcgm-exporter missing",
    "+ operands lab-node-3 operator-validator missing",
    "+ pending ml/train-b affinity 1 node(s) term[0] nvidia.com/gpu.product In [NVIDIA-A10]",
    f"+ pending ml/train-b affinity 2 node(s) term[0] {TRAINING} Exists",
    "+ pending ml/train-b untolerated-taint 1 node(s) dedicated=training:NoSchedule",
    f"+ hazards ml/train-a lab-node-1 affinity term[0] {TRAINING} Exists",
]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_the_lab_a_week_later_prints_exactly_the_changes() -> None:
    code, out, err = run("diff", LAB, DRIFTED)
    assert (code, err) == (1, "")
    assert out.splitlines() == LAB_TO_DRIFTED


def test_the_other_way_round_every_finding_is_resolved_and_the_node_removed() -> None:
    code, out, _ = run("diff", DRIFTED, LAB)
    lines = out.splitlines()
    assert code == 1
    assert lines[:4] == [
        "- node lab-node-3",
        f"lab-node-1 {TRAINING} (absent) -> true",
        "lab-node-1 nvidia.com/gpu.count two -> 2",
        "lab-node-1 nvidia.com/gpu.memory (absent) -> 22731",
    ]
    assert lines[4:] == ["- " + line[2:] for line in LAB_TO_DRIFTED[4:]]


def test_a_snapshot_against_itself_has_no_difference() -> None:
    assert run("diff", LAB, LAB) == (0, "", "")


def test_the_json_names_each_change_with_typed_fields() -> None:
    doc = json.loads(run("diff", LAB, DRIFTED, "-o", "json")[1])
    first, count = doc["findings"][:2]
    assert first == {"check": "diff", "node": "lab-node-3", "reason": "node-added"}
    assert count == {"check": "diff", "node": "lab-node-1", "key": TRAINING, "reason": "label-removed", "old": "true"}
    appeared = [f for f in doc["findings"] if f.get("change") == "appeared"]
    assert len(appeared) == len(LAB_TO_DRIFTED) - 4
    rows = {r["check"]: r for r in doc["checks"]}
    assert rows["audit"] == {"check": "audit", "skipped": None, "before": 0, "after": 5, "appeared": 5, "resolved": 0}
    assert (doc["old"], doc["new"]) == (LAB, DRIFTED)


def test_a_changed_pending_count_is_the_same_finding() -> None:
    """Findings are matched on what they say, not on their explanation or node count."""
    state = load_snapshots([DRIFTED])
    smaller = type(state)(state.nodes[:3], state.pods, state.daemonsets, state.cluster_policies, kinds=state.kinds)
    result = diff_states(state, smaller)
    pending = [f.line() for f in result.findings if f.check == "pending"]
    assert pending == ["ml/train-b untolerated-taint 1 node(s) dedicated=training:NoSchedule"]


def test_cordon_taints_ready_and_allocatable_changes_are_listed(tmp_path: Path) -> None:
    import yaml

    doc = yaml.safe_load(Path(LAB).read_text())
    before = tmp_path / "before.yaml"
    before.write_text(yaml.safe_dump(doc))
    node = next(o for o in doc["items"] if o["kind"] == "Node" and o["metadata"]["name"] == "lab-node-1")
    node.setdefault("spec", {})["unschedulable"] = True
    node["spec"]["taints"] = [{"key": "nvidia.com/gpu.xid", "value": "79", "effect": "NoSchedule"}]
    status = node.setdefault("status", {})
    status["conditions"] = [{"type": "Ready", "status": "False"}]
    status["allocatable"] = {**status.get("allocatable", {}), "nvidia.com/gpu": "1"}
    after = tmp_path / "after.yaml"
    after.write_text(yaml.safe_dump(doc))
    out, err = io.StringIO(), io.StringIO()
    assert main(["diff", str(before), str(after)], out, err) == 1
    lines = out.getvalue().splitlines()
    was = load_snapshots([str(before)])
    old_ready = next(n for n in was.nodes if n.name == "lab-node-1").conditions.get("Ready")
    old_gpus = (next(n for n in was.nodes if n.name == "lab-node-1").allocatable or {}).get("nvidia.com/gpu")
    assert lines[:4] == [
        "lab-node-1 cordoned",
        "lab-node-1 taint-added nvidia.com/gpu.xid=79:NoSchedule",
        f"lab-node-1 Ready {old_ready or '(absent)'} -> False",
        f"lab-node-1 allocatable nvidia.com/gpu {old_gpus or '(absent)'} -> 1",
    ]
    out = io.StringIO()
    assert main(["diff", str(after), str(before)], out, err) == 1
    assert out.getvalue().splitlines()[:2] == [
        "lab-node-1 uncordoned",
        "lab-node-1 taint-removed nvidia.com/gpu.xid=79:NoSchedule",
    ]


def test_one_file_given_twice_is_read_once_and_each_check_runs_once(monkeypatch: object, tmp_path: Path) -> None:
    import pytest

    from gpulabel.checks import diff as diff_module
    from gpulabel.cluster import snapshot

    mp: pytest.MonkeyPatch = monkeypatch  # type: ignore[assignment]
    loads: list[list[str]] = []
    runs: list[str] = []
    real_load, real_run = snapshot.load_snapshots, diff_module.run_check
    mp.setattr(snapshot, "load_snapshots", lambda paths, warn=None: loads.append(list(paths)) or real_load(paths, warn))
    mp.setattr(
        diff_module, "run_check", lambda check, state, opts: runs.append(check.name) or real_run(check, state, opts)
    )
    out, err = io.StringIO(), io.StringIO()
    assert main(["diff", DRIFTED, DRIFTED, "-o", "json"], out, err) == 0
    assert loads == [[DRIFTED]]
    assert len(runs) == len(set(runs)) == len(json.loads(out.getvalue())["checks"])
    copy = tmp_path / "copy.yaml"
    copy.write_bytes(Path(DRIFTED).read_bytes())
    loads.clear()
    assert main(["diff", DRIFTED, str(copy)], io.StringIO(), io.StringIO()) == 0  # another file: read both
    assert loads == [[DRIFTED], [str(copy)]]
