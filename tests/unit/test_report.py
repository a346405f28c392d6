"""report --html: the page's data, its counts against the other commands, escaping, no outside assets."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from bench.synth import generate

from gpulabel.app.report import report_doc, report_html
from gpulabel.checks.registry import BUILTIN, run_checks
from gpulabel.cli.main import main
from gpulabel.cluster.snapshot import load_snapshots
from gpulabel.model.cluster import ClusterState
from gpulabel.render.report import render_html
from tests.objects import daemonset, gpu_node, node, pod, required, term

ROOT = Path(__file__).parents[2]
DRIFTED = str(ROOT / "examples" / "drifted-lab.yaml")
HOSTILE_POD = "</script><img src=x onerror=alert(1)>"
HOSTILE_VALUE = "<img src=x onerror=alert(2)>"
HOSTILE_NODE = 'gpu-x"><svg onload=alert(3)>'
DATA = re.compile(r'<script type="application/json" id="gpulabel-data">(.*?)</script>', re.S)


def page_data(page: str) -> dict[str, Any]:
    """The JSON block the page's script reads."""
    found = DATA.findall(page)
    assert len(found) == 1
    doc: dict[str, Any] = json.loads(found[0])
    return doc


def cells(doc: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(node, operand) -> state name, as the grid shows it."""
    ops = [c["operand"] for c in doc["columns"]]
    return {
        (row["name"], op): doc["states"][code]
        for row in doc["nodes"]
        for op, code in zip(ops, row["cells"], strict=True)
    }


def causes(doc: dict[str, Any]) -> dict[tuple[str, str], str]:
    ops = [c["operand"] for c in doc["columns"]]
    return {(row["name"], ops[int(c)]): text for row in doc["nodes"] for c, text in row.get("causes", {}).items()}


@pytest.fixture(scope="module")
def drifted() -> dict[str, Any]:
    return page_data(report_html(load_snapshots([DRIFTED])))


@pytest.mark.parametrize(
    ("node_name", "operand", "state"),
    [
        ("lab-node-0", "driver", "running"),
        ("lab-node-0", "container-toolkit", "not-ready"),
        ("lab-node-0", "device-plugin", "out-of-order"),
        ("lab-node-0", "operator-validator", "out-of-order"),
        ("lab-node-1", "dcgm-exporter", "running"),
        ("lab-node-2", "driver", "not-expected"),
        ("lab-node-3", "driver", "missing"),
        ("lab-node-3", "operator-validator", "missing"),
    ],
)
def test_the_drifted_lab_grid_shows_each_operand_state(
    drifted: dict[str, Any], node_name: str, operand: str, state: str
) -> None:
    assert cells(drifted)[(node_name, operand)] == state


def test_the_grid_has_one_row_per_node_and_a_column_per_operand_daemonset(drifted: dict[str, Any]) -> None:
    assert [row["name"] for row in drifted["nodes"]] == ["lab-node-0", "lab-node-1", "lab-node-2", "lab-node-3"]
    assert [c["operand"] for c in drifted["columns"]] == [
        "driver",
        "container-toolkit",
        "device-plugin",
        "gpu-feature-discovery",
        "dcgm-exporter",
        "operator-validator",
    ]


@pytest.mark.parametrize(
    ("node_name", "operand", "cause"),
    [
        ("lab-node-3", "driver", "missing: gpu-operator/nvidia-driver-daemonset does not tolerate taint dedicated"),
        ("lab-node-0", "container-toolkit", "not-ready: pod gpu-operator/nvidia-container-toolkit-daemonset-x7k2p"),
        ("lab-node-0", "device-plugin", "out-of-order: device-plugin is running but container-toolkit is not"),
    ],
)
def test_a_problem_cell_carries_its_cause_for_the_hover_text(
    drifted: dict[str, Any], node_name: str, operand: str, cause: str
) -> None:
    assert causes(drifted)[(node_name, operand)].startswith(cause)


def test_the_summary_counts_are_what_check_counts(drifted: dict[str, Any]) -> None:
    state = load_snapshots([DRIFTED])
    expected = run_checks(state, BUILTIN.options()).parts
    got = {check: (s["findings"], s["reasons"]) for check, s in drifted["summary"].items()}
    assert got == {p.command: (len(p.findings), _reasons(p.findings)) for p in expected}
    assert drifted["summary"]["pending"]["pods"] == 1


def _reasons(findings: list[Any]) -> dict[str, int]:
    from gpulabel.model.findings import summarize

    return summarize(findings)


def test_a_synthetic_clusters_pending_verdicts_add_up_to_every_node_once() -> None:
    synth = generate(300, seed=7, problem_rate=0.02)
    state = ClusterState.from_objects(("synth", o) for o in synth.objects)
    doc = report_doc(state)
    expected = {p.command: p.findings for p in run_checks(state, BUILTIN.options()).parts}
    assert doc["summary"]["pending"]["findings"] == len(expected["pending"])
    assert doc["summary"]["pending"]["reasons"] == _reasons(expected["pending"])
    pods = [ref for entry in doc["pending"] for ref in entry["pods"]]
    assert sorted(pods) == sorted(synth.problems["pending"])
    for entry in doc["pending"]:
        assert sum(group["nodes"] for group in entry["groups"]) == len(state.nodes)


def test_audit_hazard_and_pending_rows_name_their_nodes_and_pods(drifted: dict[str, Any]) -> None:
    names = [row["name"] for row in drifted["nodes"]]
    audit = {(names[r["node"]], r["key"], r["reason"]) for r in drifted["audit"]}
    assert ("lab-node-1", "nvidia.com/gpu.count", "not-a-number") in audit
    assert len(audit) == 5
    assert [(h["pod"], names[h["node"]]) for h in drifted["hazards"]] == [("ml/train-a", "lab-node-1")]
    (entry,) = drifted["pending"]
    assert entry["pods"] == ["ml/train-b"]
    assert entry["message"].startswith("0/4 nodes are available")
    assert {n for group in entry["groups"] for n in group["sample"]} == set(names)


GATED = {"nodeSelector": {"nvidia.com/gpu.deploy.driver": "true"}, "containers": []}
DRIVER = daemonset("gpu-operator", "driver", "uid-driver", GATED)


def _driver_pod(node_name: str) -> dict[str, Any]:
    return pod("gpu-operator", f"driver-{node_name}", node_name, owner_uid="uid-driver")


@pytest.mark.parametrize(
    ("objects", "state", "cause"),
    [
        ([node("n", {"nvidia.com/gpu.deploy.driver": "true"}), DRIVER, _driver_pod("n")], "running", None),
        ([node("n", {"nvidia.com/gpu.deploy.operands": "false"}), DRIVER], "isolated", None),
        (
            [node("n", {"nvidia.com/gpu.deploy.operands": "false"}), DRIVER, _driver_pod("n")],
            "unexpected",
            "unexpected: pod gpu-operator/driver-n running; node isolated",
        ),
        (
            [node("n", {"nvidia.com/gpu.deploy.driver": "false"}), DRIVER],
            "not-expected",
            "not expected: nvidia.com/gpu.deploy.driver=false",
        ),
        (
            [node("n", {"nvidia.com/gpu.deploy.driver": "false"}), DRIVER, _driver_pod("elsewhere")],
            "not-expected",
            "disabled: nvidia.com/gpu.deploy.driver=false: switched off on this node on purpose",
        ),
        (
            [node("n", {"nvidia.com/gpu.deploy.driver": "pre-installed"}), DRIVER, _driver_pod("elsewhere")],
            "not-expected",
            "pre-installed: nvidia.com/gpu.deploy.driver=pre-installed: provided on the host",
        ),
        ([node("n", {}), DRIVER], "not-expected", None),
        (
            [
                node("n", {"nvidia.com/gpu.deploy.driver": "true"}),
                DRIVER,
                {"kind": "ClusterPolicy", "metadata": {"name": "p"}, "spec": {"driver": {"enabled": False}}},
            ],
            "not-expected",
            None,
        ),
    ],
    ids=[
        "an expected operand without findings is running",
        "an isolated node expects nothing",
        "a pod on an isolated node is unexpected",
        "a deploy label false says why the operand is not expected",
        "with the operands check run (pods in the input), false is its info finding, disabled, not missing",
        "and pre-installed likewise",
        "no deploy label needs no explanation beyond the default",
        "an operand switched off by the ClusterPolicy is not expected",
    ],
)
def test_a_cell_state_follows_the_operands_check(objects: list[dict[str, Any]], state: str, cause: str | None) -> None:
    doc = report_doc(ClusterState.from_objects(("t", o) for o in objects))
    assert cells(doc)[("n", "driver")] == state
    got = causes(doc).get(("n", "driver"))
    assert got == cause if cause is None else (got or "").startswith(cause)


def test_an_operand_switched_off_cluster_wide_is_marked_on_its_column() -> None:
    policy = {"kind": "ClusterPolicy", "metadata": {"name": "p"}, "spec": {"driver": {"enabled": False}}}
    doc = report_doc(ClusterState.from_objects(("t", o) for o in [node("n", {}), DRIVER, policy]))
    assert doc["columns"] == [{"operand": "driver", "disabled": True}]


def hostile_objects() -> list[dict[str, Any]]:
    """User data that looks like markup: a pod name, a label value and a node name (a snapshot may hold any)."""
    affinity = required(term({"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-H100"]}))
    return [
        gpu_node("gpu-a", **{"nvidia.com/gpu.product": HOSTILE_VALUE}),
        node(HOSTILE_NODE, {"nvidia.com/gpu.present": "true"}),
        pod("ml", HOSTILE_POD, phase="Pending", spec=affinity),
    ]


def hostile_state() -> ClusterState:
    return ClusterState.from_objects((("t", o) for o in hostile_objects()), source="<b>snap</b>.json")


def test_markup_in_user_data_never_reaches_the_page_as_markup() -> None:
    page = report_html(hostile_state())
    head, rest = page.split('<script type="application/json" id="gpulabel-data">')
    data, tail = rest.split("</script>", 1)
    assert "<" not in data and ">" not in data  # nothing in the data block can end it or open a tag
    outside = head + tail
    for needle in ("<img", "<svg", "<b>snap", "alert("):
        assert needle not in outside, needle
    assert page.count("<script") == 2  # the data block and the page's own script
    assert "&lt;b&gt;snap&lt;/b&gt;.json" in head


def test_markup_in_user_data_survives_as_text_in_the_data() -> None:
    doc = page_data(report_html(hostile_state()))
    assert [p for entry in doc["pending"] for p in entry["pods"]] == [f"ml/{HOSTILE_POD}"]
    assert HOSTILE_VALUE in doc["models"]
    assert HOSTILE_NODE in [row["name"] for row in doc["nodes"]]
    assert doc["source"] == "<b>snap</b>.json"


def test_the_page_loads_nothing_from_outside(drifted: dict[str, Any]) -> None:
    page = report_html(load_snapshots([DRIFTED]))
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"\s(src|href)=\"(?!#)", page), "only in-page anchors may be linked"
    assert "@import" not in page and "url(" not in page


def test_the_content_security_policy_allows_exactly_the_pages_own_script_and_style() -> None:
    page = report_html(load_snapshots([DRIFTED]))
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert csp is not None
    policy = csp.group(1).replace("&#x27;", "'")
    assert policy.startswith("default-src 'none';")
    script = re.findall(r"<script>(.*?)</script>", page, re.S)
    style = re.findall(r"<style>(.*?)</style>", page, re.S)
    assert len(script) == 1 and len(style) == 1

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert f"script-src {digest(script[0])};" in policy
    assert f"style-src {digest(style[0])};" in policy


def test_the_same_state_gives_the_same_page() -> None:
    state = load_snapshots([DRIFTED])
    assert report_html(state, generated="t") == report_html(state, generated="t")
    assert render_html(report_doc(state)) == report_html(state)


# -- the command -------------------------------------------------------------------


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_report_writes_the_page_and_exits_zero_despite_findings(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    code, out, err = run("report", "--snapshot", DRIFTED, "--html", str(target))
    assert (code, err) == (0, "")
    assert out == (
        f"{target}: 4 nodes, audit=5 operands=11 pending=3 hazards=1 capacity=0 mig=0 sharing=0 upgrade=0 "
        "nfd=skipped health=0 managed=0 queues=skipped admission=0 stack=skipped runtime=0 unrequested=0 cudaskew=0 "
        "operatorcrs=skipped\n"
    )
    assert page_data(target.read_text())["summary"]["audit"]["findings"] == 5
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left behind


def test_report_json_output_gives_the_file_and_the_summary(tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    code, out, _ = run("report", "--snapshot", DRIFTED, "--html", str(target), "-o", "json")
    doc = json.loads(out)
    assert code == 0
    assert (doc["file"], doc["bytes"], doc["nodes"]) == (str(target), target.stat().st_size, 4)
    assert doc["kind"] == "ReportResult"
    assert {c["check"]: c["findings"] for c in doc["checks"]} == {
        "audit": 5,
        "operands": 11,
        "pending": 3,
        "hazards": 1,
        "capacity": 0,
        "mig": 0,
        "sharing": 0,
        "upgrade": 0,
        "nfd": 0,
        "health": 0,
        "managed": 0,
        "queues": 0,
        "admission": 0,
        "stack": 0,
        "runtime": 0,
        "unrequested": 0,
        "cudaskew": 0,
        "operatorcrs": 0,
    }


def test_report_to_stdout_writes_only_the_page() -> None:
    code, out, _ = run("report", "--snapshot", DRIFTED, "--html", "-")
    assert code == 0
    assert out.startswith("<!DOCTYPE html>") and out.endswith("</html>\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--html", "/nonexistent-dir/r.html"], "gpulabel: /nonexistent-dir/r.html: cannot write: No such file"),
        (["--html", "{tmp}"], "gpulabel: {tmp}: cannot write: Is a directory"),
        (["--html", "{tmp}/r.html", "--disabled", "nope"], "gpulabel: --disabled: unknown operand 'nope'"),
        (["--html", "{tmp}/r.html", "--snapshot", "/nonexistent.json"], "gpulabel: /nonexistent.json: No such file"),
    ],
    ids=["a missing directory", "a directory as the file", "an unknown operand", "a missing snapshot"],
)
def test_report_errors_are_one_line_and_exit_two(tmp_path: Path, argv: list[str], message: str) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = run("report", "--snapshot", DRIFTED, *argv)
    assert code == 2 and out == ""
    assert err.startswith(message.replace("{tmp}", str(tmp_path))) and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
