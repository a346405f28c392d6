"""Every cell of the report's operand grid says what the ``operands`` check says on the same snapshot.

A cell with findings shows the worst of them; a cell without any is ``running`` exactly when a pod of the
operand's DaemonSet runs on the node (``operands`` is silent about a running pod only where it expects
it, and about a missing one only where it does not), ``isolated`` on an isolated node, otherwise
``not-expected``. That is read from the pods, not from the deploy labels the report reads, so a report
that spells an operand's deploy label wrong (the MPS control daemon's is the device plugin's) fails here.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from bench.synth import generate

from gpulabel.app.report import report_doc
from gpulabel.checks.operands.daemonsets import disabled_by_cluster_policy, operand_of_daemonset
from gpulabel.checks.operands.standalone import standalone_kind
from gpulabel.checks.registry import BUILTIN, run_check
from gpulabel.cluster.snapshot import load_snapshots
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState
from gpulabel.model.dradriver import OPERAND as DRA_PLUGIN
from gpulabel.render.report import CELL_STATES

ROOT = Path(__file__).parents[2]
EXAMPLES = sorted(str(p) for p in (ROOT / "examples").glob("*.[jy]*") if p.name != "gpulabel-config.yaml")
MPS_CAPABLE = "nvidia.com/mps.capable"
_ORDER = list(CELL_STATES)
_STATE_OF = {"disabled": "not-expected", "pre-installed": "not-expected"}


def _expected_cells(state: ClusterState, columns: list[str]) -> dict[tuple[str, str], str]:
    """(node, operand) -> the cell's state as the operands check and the pods say it."""
    report = run_check("operands", state, BUILTIN.options())  # the operator's operands, standalone plugins, DRA's
    found: dict[tuple[str, str], list[str]] = {}
    for f in report.findings:
        if f.reason != "isolated":
            found.setdefault((f.node, f.operand), []).append(f.reason)
    operand_by_uid = {ds.uid: op for ds in state.daemonsets if (op := operand_of_daemonset(ds))}
    operand_by_uid |= {ds.uid: DRA_PLUGIN for ds in state.daemonsets if standalone_kind(ds) == DRA_PLUGIN}
    running = {
        (p.node_name, operand_by_uid[uid])
        for p in state.pods
        if p.phase == "Running" and p.node_name
        for kind, uid in p.owners
        if kind == "DaemonSet" and uid in operand_by_uid
    }
    off = disabled_by_cluster_policy(state.cluster_policies)
    out = {}
    for node in state.nodes:
        for op in columns:
            reasons = found.get((node.name, op))
            if reasons:
                worst = min(reasons, key=lambda r: _ORDER.index(r) if r in _ORDER else 99)
                out[node.name, op] = worst if worst in CELL_STATES else _STATE_OF.get(worst, "missing")
            elif node.labels.get(V.DEPLOY_OPERANDS) == "false":
                out[node.name, op] = "isolated"
            elif (node.name, op) in running and op not in off:
                out[node.name, op] = "running"
            else:
                out[node.name, op] = "not-expected"
    return out


def _cells(doc: dict[str, Any]) -> dict[tuple[str, str], str]:
    ops = [c["operand"] for c in doc["columns"]]
    return {
        (row["name"], op): doc["states"][code]
        for row in doc["nodes"]
        for op, code in zip(ops, row["cells"], strict=True)
    }


def _assert_cells_agree(state: ClusterState) -> dict[tuple[str, str], str]:
    doc = report_doc(state)
    got = _cells(doc)
    want = _expected_cells(state, [c["operand"] for c in doc["columns"]])
    wrong = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
    assert not wrong, f"{len(wrong)} cell(s) differ (report, operands): {sorted(wrong.items())[:5]}"
    assert got.keys() == want.keys()
    return got


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: Path(p).name)
def test_every_report_cell_of_an_example_is_what_operands_says(path: str) -> None:
    _assert_cells_agree(load_snapshots([path]))


def _mps_daemonset() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "nvidia-device-plugin-mps-control-daemon", "namespace": "gpu-operator", "uid": "uid-mps"},
        "spec": {
            "template": {
                "spec": {
                    "nodeSelector": {V.DEPLOY_PREFIX + "device-plugin": "true", MPS_CAPABLE: "true"},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [{"name": "mps-control-daemon"}],
                }
            }
        },
        "status": {"desiredNumberScheduled": 0},
    }


def _mps_pod(node: str, i: int, *, ready: bool = True) -> dict[str, Any]:
    flag = "True" if ready else "False"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"nvidia-device-plugin-mps-control-daemon-{i:05d}",
            "namespace": "gpu-operator",
            "uid": f"uid-mps-pod-{i}",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "mps", "uid": "uid-mps"}],
        },
        "spec": {"nodeName": node, "containers": [{"name": "mps-control-daemon"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": flag}]},
    }


def _synth_with_mps() -> tuple[ClusterState, dict[str, str]]:
    """A synthetic cluster whose MPS control daemon runs where it should, and is missing, not ready and unexpected
    on one node each; the names of those nodes by what the cell must say."""
    objects = copy.deepcopy(generate(120, seed=7).objects)
    gpu = [
        o
        for o in objects
        if o["kind"] == "Node" and o["metadata"]["labels"].get(V.DEPLOY_PREFIX + "device-plugin") == "true"
    ]
    capable, plain = gpu[: len(gpu) // 2], gpu[len(gpu) // 2 :]
    for o in capable:
        o["metadata"]["labels"][MPS_CAPABLE] = "true"
    pods = [_mps_pod(o["metadata"]["name"], i) for i, o in enumerate(capable[2:])]
    pods.append(_mps_pod(capable[1]["metadata"]["name"], 9998, ready=False))
    pods.append(_mps_pod(plain[0]["metadata"]["name"], 9999))
    objects += [_mps_daemonset(), *pods]
    marks = {
        capable[0]["metadata"]["name"]: "missing",
        capable[1]["metadata"]["name"]: "not-ready",
        capable[2]["metadata"]["name"]: "running",
        plain[0]["metadata"]["name"]: "unexpected",
        plain[1]["metadata"]["name"]: "not-expected",
    }
    return ClusterState.from_objects(("synth", o) for o in objects), marks


def test_every_report_cell_of_a_synthetic_cluster_with_the_mps_control_daemon_is_what_operands_says() -> None:
    state, marks = _synth_with_mps()
    got = _assert_cells_agree(state)
    assert {name: got[name, "mps-control-daemon"] for name in marks} == marks
    # the case the report once got wrong: deploy.device-plugin=true and mps.capable=true, the daemon running
    assert sum(state == "running" for (_, op), state in got.items() if op == "mps-control-daemon") > 10
