"""Input that selects nothing is never "OK" with exit 0: one stderr line naming the flag, exit 2 (app/selected.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gpulabel.app.selected import nothing_selected
from gpulabel.app.session import Source
from gpulabel.cli.main import main
from gpulabel.model.cluster import ClusterState

LAB = "examples/lab-cluster.yaml"
DRIFTED = "examples/drifted-lab.yaml"
POD = """apiVersion: v1
kind: Pod
metadata: {name: train-0, namespace: ml}
spec: {containers: [{name: c, image: busybox}]}
"""


def run(*argv: str) -> tuple[int, str, list[str]]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue().splitlines()


# every command that reports on the selected nodes; each ran "OK" (or "no GPU nodes") with exit 0 before
NODE_COMMANDS = [
    ["check"],
    ["audit"],
    ["operands"],
    ["pending"],
    ["hazards"],
    ["capacity"],
    ["mig"],
    ["sharing"],
    ["upgrade"],
    ["gpus"],
    ["report", "--html", "-"],
    ["rules"],
]


@pytest.mark.parametrize("command", NODE_COMMANDS, ids=lambda c: c[0])
def test_a_selector_that_selects_no_node_is_one_line_naming_it_and_exit_2(command: list[str]) -> None:
    code, _, err = run(*command, "--snapshot", LAB, "-l", "nvidia.com/gpu.product=NVIDIA-B300")
    assert code == 2
    assert err == [
        f"gpulabel: -l nvidia.com/gpu.product=NVIDIA-B300: selects no node of --snapshot {LAB}; nothing was checked"
    ]


@pytest.mark.parametrize("command", NODE_COMMANDS, ids=lambda c: c[0])
def test_the_same_selector_that_selects_a_node_is_not_refused(command: list[str]) -> None:
    code, _, err = run(*command, "--snapshot", LAB, "-l", "nvidia.com/gpu.present=true")
    assert code in (0, 1) and not any("nothing was checked" in line for line in err), err


def test_check_prints_its_result_before_the_refusal_so_a_script_still_gets_its_envelope() -> None:
    code, out, err = run("check", "--snapshot", LAB, "-l", "pool=none", "-o", "json")
    assert code == 2 and len(err) == 1
    doc = json.loads(out)
    assert doc["kind"] == "CheckResult" and doc["findings"] == []


@pytest.mark.parametrize(
    ("text", "held"),
    [(POD, "1 Pod"), ("apiVersion: v1\nkind: List\nitems: []\n", "no object gpulabel reads")],
    ids=["a Pod manifest", "an empty List"],
)
def test_a_snapshot_without_a_node_is_named_with_what_it_holds(tmp_path: Path, text: str, held: str) -> None:
    path = tmp_path / "input.yaml"
    path.write_text(text)
    code, out, err = run("check", "--snapshot", str(path))
    assert code == 2
    assert err == [f"gpulabel: --snapshot {path}: holds no Node ({held}); nothing was checked"]
    assert "total: 0 finding(s)" in out  # the skipped checks are still said


def test_a_namespace_without_pods_is_named_with_the_nearest_spelling() -> None:
    code, _, err = run("check", "--snapshot", DRIFTED, "-n", "gpu-operater")
    assert code == 2
    assert err == [
        "gpulabel: -n gpu-operater: no pod in this namespace, so none was checked (did you mean -n gpu-operator?)"
    ]


def test_a_namespace_nothing_like_any_lists_where_the_pods_are() -> None:
    code, _, err = run("hazards", "--snapshot", LAB, "-n", "zzz")
    assert code == 2
    assert err == ["gpulabel: -n zzz: no pod in this namespace, so none was checked (pods are in gpu-operator, ml)"]


def test_a_namespace_with_pods_is_checked_as_before() -> None:
    code, out, err = run("check", "--snapshot", DRIFTED, "-n", "gpu-operator")
    assert code == 1 and err == []
    assert out.splitlines()[-1].startswith("total: ")


def test_a_fleet_member_that_selects_nothing_is_named_and_fails_the_run(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD)
    code, _, err = run("check", "--cluster", f"a={pod}", "--cluster", f"b={LAB}")
    assert code == 2
    assert err == [f"gpulabel: cluster a: --snapshot {pod}: holds no Node (1 Pod); nothing was checked"]


def test_live_an_empty_cluster_and_a_selector_are_named_without_a_snapshot() -> None:
    empty = ClusterState(kinds=frozenset({"Node", "Pod"}))
    assert (
        nothing_selected(Source(context="lab"), empty) == "the cluster (context lab) has no Node; nothing was checked"
    )
    assert (
        nothing_selected(Source(selector="a=b"), empty) == "-l a=b: selects no node in the cluster; nothing was checked"
    )


def test_a_fleet_report_member_that_selects_nothing_is_named_and_fails_the_run(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD)
    code, page, err = run("report", "--html", "-", "--cluster", f"a={pod}", "--cluster", f"b={LAB}")
    assert code == 2 and "<html" in page  # the page is still written: cluster b's report is in it
    assert err == [f"gpulabel: cluster a: --snapshot {pod}: holds no Node (1 Pod); nothing was checked"]


def test_place_and_diff_over_no_node_are_refused_too(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD)
    code, _, err = run("place", str(pod), "--snapshot", LAB, "-l", "pool=none")
    assert (code, err) == (2, [f"gpulabel: -l pool=none: selects no node of --snapshot {LAB}; nothing was checked"])
    code, _, err = run("diff", LAB, DRIFTED, "-l", "pool=none")
    assert (code, err) == (2, [f"gpulabel: -l pool=none: selects no node of {LAB} and {DRIFTED}; nothing was compared"])
    code, _, err = run("diff", str(pod), str(pod))
    assert (code, err) == (2, [f"gpulabel: {pod} and {pod} hold no Node; nothing was compared"])
    assert run("diff", LAB, DRIFTED, "-l", "nvidia.com/gpu.present=true")[0] == 1  # a selector that selects: compared
