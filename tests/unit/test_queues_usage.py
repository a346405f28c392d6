"""``gpus --by flavor`` and ``gpus --by clusterqueue``: quota, admitted and reserved GPUs, and the flavor's nodes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from gpulabel.checks.queues.usage import BY_CLUSTERQUEUE, BY_FLAVOR, queue_rows
from gpulabel.model.cluster import ClusterState
from tests import kueueobjects as K
from tests.unit.karpenter.objects import nodepool

ROOT = Path(__file__).resolve().parents[2]
A100 = "NVIDIA-A100-SXM4-40GB"
PRODUCT = "nvidia.com/gpu.product"
TAINT = {"key": "dedicated", "value": "train", "effect": "NoSchedule"}


def _state(*objects: dict[str, Any]) -> ClusterState:
    return ClusterState.from_objects(("t", o) for o in objects)


def _cluster() -> list[dict[str, Any]]:
    finished = K.workload("ml", "done", "q", gpus=8, admitted_to=("team", "a100"))
    finished["status"]["conditions"].append({"type": "Finished", "status": "True", "reason": "Succeeded"})
    reserved = K.workload("ml", "waiting", "q", gpus=2, count=2, admitted_to=("other", "a100"))
    reserved["status"]["conditions"] = reserved["status"]["conditions"][:1]  # QuotaReserved, not yet Admitted
    running = K.job_pod("ml", "r-0", "u1", {PRODUCT: A100}, gpus=3, node="a")
    return [
        K.gpu_node("a", A100),
        K.gpu_node("b", A100, taints=[TAINT]),
        K.flavor("a100", {PRODUCT: A100}, taints=[TAINT]),
        K.flavor("h100", {PRODUCT: "NVIDIA-H100-80GB-HBM3"}),
        K.cluster_queue("team", {"a100": {"nvidia.com/gpu": 16}}, usage={"a100": {"nvidia.com/gpu": "12"}}),
        K.cluster_queue("other", {"a100": {"nvidia.com/gpu": 4}, "h100": {"nvidia.com/gpu": 8}}),
        K.workload("ml", "r", "q", gpus=4, count=3, admitted_to=("team", "a100"), owner_uid="u1"),
        finished,
        reserved,
        running,
        nodepool("h100", labels={PRODUCT: "NVIDIA-H100-80GB-HBM3"}),
    ]


def test_per_flavor_quota_admitted_reserved_and_the_nodes_gpus() -> None:
    rows = [r.cells() for r in queue_rows(_state(*_cluster()), BY_FLAVOR)]
    assert rows == [
        {
            "flavor": "a100",
            "clusterqueues": ("other", "team"),
            "quota": 20,
            "admitted": 12,  # 3 pods of 4; the Finished one not counted
            "reserved": 16,  # and 2 pods of 2 holding quota, not yet admitted
            "usage": 12,  # team's status.flavorsUsage
            "nodes": 2,
            "allocatable": 16,
            "usable": 16,  # node b's taint is the flavor's nodeTaint: its pods tolerate it
            "free": 13,
            "nodepools": (),
            "flavor_missing": False,
        },
        {
            "flavor": "h100",
            "clusterqueues": ("other",),
            "quota": 8,
            "admitted": 0,
            "reserved": 0,
            "usage": None,
            "nodes": 0,
            "allocatable": 0,
            "usable": 0,
            "free": 0,
            "nodepools": ("h100",),  # no node yet; a NodePool makes them
            "flavor_missing": False,
        },
    ]


def test_per_clusterqueue_one_row_for_each_of_its_flavors() -> None:
    rows = queue_rows(_state(*_cluster()), BY_CLUSTERQUEUE)
    got = [(r.cluster_queue, r.flavor, r.quota, r.admitted, r.reserved, r.usage) for r in rows]
    assert got == [("other", "a100", 4, 0, 4, None), ("other", "h100", 8, 0, 0, None), ("team", "a100", 16, 12, 12, 12)]
    assert rows[2].line() == (
        "clusterqueue=team flavor=a100 quota=16 admitted=12 reserved=12 usage=12 nodes=2 allocatable=16 usable=16 "
        "free=13"
    )


def test_a_flavor_a_clusterqueue_names_that_is_not_in_the_cluster_is_a_row_that_says_so() -> None:
    rows = queue_rows(
        _state(K.gpu_node("a", A100), K.cluster_queue("team", {"gone": {"nvidia.com/gpu": 8}})), BY_FLAVOR
    )
    assert [(r.flavor, r.quota, r.missing) for r in rows] == [("gone", 8, True)]
    assert rows[0].line().endswith("(flavor not in the cluster)")


def _gpus(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpulabel", "gpus", *args], capture_output=True, text=True)


def test_the_command_on_the_examples_and_without_kueue() -> None:
    twin = str(ROOT / "examples" / "kueue-twin.yaml")
    run = _gpus("--by", "flavor", "--snapshot", twin, "-o", "json")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert [(r["flavor"], r["quota"], r["usable"]) for r in doc["flavors"]] == [("a100", 16, 16), ("h100", 8, 8)]
    run = _gpus("--by", "clusterqueue", "--snapshot", str(ROOT / "examples" / "drifted-lab.yaml"))
    assert (run.returncode, run.stdout) == (0, "no Kueue ResourceFlavor or ClusterQueue in the input\n")
    run = _gpus("--by", "flavor", "--snapshot", twin, "-n", "nobody")
    assert "admitted=0" in run.stdout and "admitted=8" not in run.stdout
