"""``explain workload/NS/NAME``: a Kueue Workload from its queue to its pods' nodes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpulabel.app.checks import ExplainOptions
from gpulabel.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
LAB = str(ROOT / "examples" / "kueue-lab.yaml")
TWIN = str(ROOT / "examples" / "kueue-twin.yaml")
WL = "workload/ml/job-llm-ft-5b8f2"


def _explain(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpulabel", "explain", *args], capture_output=True, text=True)


def test_the_target_takes_kubectls_names_of_the_workload_resource() -> None:
    assert ExplainOptions.of("workload/ml/a") == ExplainOptions("", "ml/a")
    assert ExplainOptions.of("kwl/ml/a") == ExplainOptions("", "ml/a")
    assert ExplainOptions.of("node/n") == ExplainOptions("n")
    for bad in ("workload/ml", "workload/ml/a/b", "workload//a", "deployment/ml/a"):  # pod/NS/NAME: a pod
        with pytest.raises(InputError):
            ExplainOptions.of(bad)


def test_the_80gb_workload_names_its_flavors_label_and_its_pods_reasons() -> None:
    run = _explain(WL, "--snapshot", LAB)
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == (
        "workload/ml/job-llm-ft-5b8f2: admitted by ClusterQueue training to flavor(s) a100; "
        "first broken link: podset main flavor a100"
    )
    assert lines[1] == "ok      queue: LocalQueue ml/training -> ClusterQueue training"
    assert lines[2].startswith("ok      conditions: QuotaReserved=True") and "Admitted=True" in lines[2]
    assert lines[3].endswith(
        "label nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB matches no node "
        "(nearest: NVIDIA-A100-SXM4-40GB (2 node(s)))"
    )
    assert lines[4] == "broken  pod ml/job-llm-ft-0: podset main, Pending, not bound to a node"
    reasons = [line.split()[:3] for line in lines[5:]]
    assert ["error", "queues", "nvidia.com/gpu.product"] in reasons and [
        "warning",
        "pending",
        "node-selector",
    ] in reasons


def test_the_twin_workload_runs_and_its_json_is_the_explain_envelope() -> None:
    run = _explain(WL, "--snapshot", TWIN, "-o", "json")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["kind"] == "ExplainResult" and doc["first_broken"] is None
    assert (doc["workload"], doc["cluster_queue"], doc["local_queue"], doc["flavors"]) == (
        "ml/job-llm-ft-5b8f2",
        "training",
        "training",
        "a100",
    )
    assert [(r["link"], r["status"]) for r in doc["links"]] == [
        ("queue", "ok"),
        ("conditions", "ok"),
        ("podset main flavor a100", "ok"),
        ("pod ml/job-llm-ft-0", "ok"),
    ]


def test_an_unknown_workload_is_one_line_with_the_nearest_name() -> None:
    run = _explain("workload/ml/job-llm-ft-5b8f3", "--snapshot", LAB)
    assert (run.returncode, run.stdout) == (2, "")
    assert (
        run.stderr == "gpulabel: workload/ml/job-llm-ft-5b8f3: not found (did you mean workload/ml/job-llm-ft-5b8f2?)\n"
    )
    run = _explain("workload/ml/x", "--snapshot", str(ROOT / "examples" / "drifted-lab.yaml"))
    assert run.stderr == "gpulabel: workload/ml/x: not found: the input has no Kueue Workloads\n"
