"""audit: table-driven over single nodes, then over a whole state."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from gpulabel.checks.audit.rules import audit, audit_node
from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.checks.engine.incremental.evaluator import IncrementalEvaluator
from gpulabel.checks.registry import BUILTIN, CheckOptions, Registry, run_checks
from gpulabel.cli.main import main
from gpulabel.model.cluster import ClusterState, daemonset_from_json, node_from_json, pod_from_json
from tests.objects import GPU_LABELS, as_list, daemonset, node, pod

PRODUCT, COUNT, MEMORY = "nvidia.com/gpu.product", "nvidia.com/gpu.count", "nvidia.com/gpu.memory"
DEPLOY = "nvidia.com/gpu.deploy."
AT = 1.8e9


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


# -- an empty deploy label: one finding, operands' where operands runs ----------------------------------------

DRIVER_DS = daemonset(
    "gpu-operator", "nvidia-driver-daemonset", "uid-driver", {"nodeSelector": {f"{DEPLOY}driver": "true"}}
)


def empty_driver(*more: dict[str, Any]) -> list[dict[str, Any]]:
    return [node("n", {**GPU_LABELS, f"{DEPLOY}driver": ""}), *more]


def said(objects: list[dict[str, Any]]) -> list[tuple[str, str]]:
    state = ClusterState.from_objects(("t", o) for o in objects)
    return [(f.check, f.line()) for f in run_checks(state, BUILTIN.options()).findings if f.reason == "empty-deploy"]


def test_an_empty_deploy_label_is_one_finding_operands_where_operands_runs_else_audits() -> None:
    # pods and DaemonSets in the input: operands runs and says it (the finding that pages); audit does not again
    assert said(empty_driver(DRIVER_DS, pod("default", "x", "n"))) == [("operands", "n driver empty-deploy")]
    # a node read alone, or no pods: operands is skipped, audit says it
    assert said(empty_driver()) == [("audit", "n nvidia.com/gpu.deploy.driver empty-deploy")]
    assert said(empty_driver(DRIVER_DS)) == [("audit", "n nvidia.com/gpu.deploy.driver empty-deploy")]
    # a registry without operands (an extension's): audit says it whatever the input holds
    state = ClusterState.from_objects(("t", o) for o in empty_driver(DRIVER_DS, pod("default", "x", "n")))
    alone = CheckOptions(registry=Registry(tuple(c for c in BUILTIN if c.name != "operands")))
    assert [f.line() for f in run_checks(state, alone).findings] == ["n nvidia.com/gpu.deploy.driver empty-deploy"]


def test_a_deploy_value_the_operator_does_not_know_is_upgrades_where_upgrade_runs_else_audits(tmp_path: Path) -> None:
    """``check --strict`` runs upgrade, whose bad-value says every value audit's --strict bad-deploy-value would
    (one finding for the label, not two); the audit command runs no upgrade and says it itself."""
    snapshot = tmp_path / "s.json"
    snapshot.write_text(json.dumps(as_list(node("n", {**GPU_LABELS, f"{DEPLOY}driver": "ture"}))))
    out = io.StringIO()
    main(["check", "--snapshot", str(snapshot), "--strict", "-o", "json"], out, io.StringIO())
    about = [
        (f["check"], f["reason"])
        for f in json.loads(out.getvalue())["findings"]
        if f.get("key", "") == f"{DEPLOY}driver"
    ]
    assert about == [("upgrade", "bad-value")], about
    out = io.StringIO()
    assert main(["audit", "--snapshot", str(snapshot), "--strict"], out, io.StringIO()) == 0
    assert out.getvalue() == "n nvidia.com/gpu.deploy.driver bad-deploy-value\n", out.getvalue()
    state = ClusterState.from_objects([("t", node("n", {**GPU_LABELS, f"{DEPLOY}driver": "ture"}))])
    assert [f.reason for f in audit(state, strict=True, upgrade_run=True)] == []  # the function, told so
    assert [f.reason for f in audit(state, strict=True)] == ["bad-deploy-value"]


def test_the_audit_command_says_it_on_a_snapshot_with_pods_as_live_where_it_reads_nodes_alone(tmp_path: Path) -> None:
    snapshot = tmp_path / "s.json"
    snapshot.write_text(json.dumps(as_list(*empty_driver(DRIVER_DS, pod("default", "x", "n")))))
    out, err = io.StringIO(), io.StringIO()
    assert main(["audit", "--snapshot", str(snapshot)], out, err) == 0
    assert out.getvalue() == "n nvidia.com/gpu.deploy.driver empty-deploy\n", err.getvalue()
    out = io.StringIO()
    main(["check", "--snapshot", str(snapshot)], out, io.StringIO())
    lines = out.getvalue().splitlines()
    assert "audit: OK" in lines, lines
    operands = next(line for line in lines if line.startswith("operands: "))
    assert operands.startswith("operands: 1 finding(s) empty-deploy=1 ("), operands
    assert "total: 1 finding(s) error=0 warning=1 info=0" in lines, lines
    assert lines[0].startswith('cause n deploy-labels 4 GPU(s): driver empty-deploy (nvidia.com/gpu.deploy.driver="": ')
    assert "more finding(s)" not in lines[0]  # it was "1 more": audit's line about the same label


def test_the_monitor_moves_the_finding_to_operands_when_pods_and_daemonsets_arrive() -> None:
    nodes = [(("", "n"), node_from_json(node("n", {**GPU_LABELS, f"{DEPLOY}driver": ""})))]
    full, incremental = FullEvaluator(BUILTIN.options()), IncrementalEvaluator(BUILTIN.options())
    seen = []
    for ev in (full, incremental):
        ev.reset("Node", nodes)
        before = [(f.check, f.reason) for f in ev.assess(AT).findings]
        ev.reset("DaemonSet", [(("gpu-operator", "d"), daemonset_from_json(DRIVER_DS))])
        ev.reset("Pod", [(("default", "x"), pod_from_json(pod("default", "x", "n")))])
        seen.append((before, [(f.check, f.reason) for f in ev.assess(AT).findings]))
    assert seen[0] == seen[1] == ([("audit", "empty-deploy")], [("operands", "empty-deploy")])
