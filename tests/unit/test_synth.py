"""bench.synth: deterministic, realistic, and its injected problems are exactly what the checks find."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.synth import DEFAULT_OPERANDS, Synth, generate
from bench.synth import main as synth_main

from gpulabel.checks.audit.rules import audit
from gpulabel.checks.operands.rules import check_operands
from gpulabel.checks.pending.rules import hazards, pending_pods
from gpulabel.cluster.snapshot import load_snapshots
from gpulabel.model.cluster import ClusterState


@pytest.fixture(scope="module")
def synth() -> Synth:
    return generate(1000, seed=3, problem_rate=0.01)


@pytest.fixture(scope="module")
def state(synth: Synth) -> ClusterState:
    return ClusterState.from_objects(("synth", o) for o in synth.objects)


def test_the_same_seed_gives_the_same_cluster_and_another_seed_another() -> None:
    assert generate(200, seed=1).objects == generate(200, seed=1).objects
    assert generate(200, seed=1).objects != generate(200, seed=2).objects


def test_about_85_percent_of_nodes_are_gpu_nodes_with_about_three_operand_pods_each(state: ClusterState) -> None:
    gpu = [n for n in state.nodes if n.labels.get("nvidia.com/gpu.present") == "true"]
    operand_pods = [p for p in state.pods if p.namespace == "gpu-operator"]
    assert len(state.nodes) == 1000
    assert 0.80 < len(gpu) / len(state.nodes) < 0.90
    assert 2.8 < len(operand_pods) / len(gpu) <= 3.0
    assert {o.removeprefix("nvidia.com/gpu.deploy.") for n in gpu for o in n.labels if ".deploy." in o} == set(
        DEFAULT_OPERANDS
    )


def test_gpu_nodes_carry_matching_product_count_and_memory(state: ClusterState) -> None:
    memory = {
        "NVIDIA-A100-SXM4-40GB": "40960",
        "NVIDIA-H100-80GB-HBM3": "81559",
        "NVIDIA-A10": "23028",
        "NVIDIA-L4": "23034",
    }
    seen = set()
    for n in state.nodes:
        product = n.labels.get("nvidia.com/gpu.product")
        if product is None or not n.labels.get("nvidia.com/gpu.count", "").isdigit():
            continue
        seen.add(product)
        assert n.labels.get("nvidia.com/gpu.memory", memory[product]) == memory[product]
        if product.startswith(("NVIDIA-A100", "NVIDIA-H100")):
            assert n.labels["nvidia.com/gpu.count"] == "8"
    assert seen == set(memory)


@pytest.mark.parametrize(
    ("check", "reason", "problems"),
    [
        ("audit", "missing", ["missing-labels"]),
        ("audit", "not-a-number", ["not-a-number"]),
        ("operands", "not-ready", ["toolkit-not-ready"]),
        ("operands", "out-of-order", ["toolkit-not-ready"]),
        ("operands", "missing", ["tainted"]),
        ("hazards", "affinity", ["hazard"]),
    ],
)
def test_each_injected_problem_is_found_on_exactly_its_nodes(
    synth: Synth, state: ClusterState, check: str, reason: str, problems: list[str]
) -> None:
    findings = {
        "audit": lambda: audit(state),
        "operands": lambda: check_operands(state).findings,
        "hazards": lambda: hazards(state),
    }[check]()
    where = {f.node if check in ("hazards", "audit", "operands") else f.pod for f in findings if f.reason == reason}
    expected = {n for p in problems for n in synth.problems[p]}
    assert expected and where == expected


def test_the_pending_pods_are_the_injected_ones_and_the_scheduler_message_is_the_predicted_one(
    synth: Synth, state: ClusterState
) -> None:
    pods = pending_pods(state)
    assert sorted(p.pod.ref for p in pods) == sorted(synth.problems["pending"])
    assert all(p.message == p.predicted for p in pods)


def test_the_script_writes_a_snapshot_gpulabel_reads(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    assert synth_main(["--nodes", "50", "--out", str(out), "--seed", "5"]) == 0
    assert json.loads(out.read_text())["kind"] == "List"
    assert len(load_snapshots([str(out)]).nodes) == 50


def test_an_unknown_operand_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown operand 'dcgm'"):
        generate(10, operands=["driver", "dcgm"])


def test_20000_nodes_have_unique_pod_names_and_no_false_missing_operands() -> None:
    # 5-character suffixes (27^5) collide by the birthday bound at ~17,000 pods of one
    # DaemonSet: two pods of one name became one, and its node showed "operands missing".
    big = generate(20000, seed=7)
    pods = [o["metadata"] for o in big.objects if o["kind"] == "Pod"]
    refs = {(m["namespace"], m["name"]) for m in pods}
    assert len(pods) > 50000 and len(refs) == len(pods)
    state = ClusterState.from_objects(("synth", o) for o in big.objects)
    missing = {f.node for f in check_operands(state).findings if f.reason == "missing"}
    assert missing == set(big.problems["tainted"])
