"""operands on a snapshot of the real GPU Operator (examples/gpu-operator-cluster.yaml, see its header)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from gpulabel.checks.operands.daemonsets import disabled_by_cluster_policy
from gpulabel.checks.operands.rules import check_operands
from gpulabel.cluster.snapshot import iter_objects, read_documents
from gpulabel.model.cluster import ClusterState
from gpulabel.model.operands import CATALOGUE, OPERATOR_VERSION, PolicyView

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gpu-operator-cluster.yaml"


def objects() -> list[dict[str, Any]]:
    docs = read_documents(EXAMPLE.read_bytes(), str(EXAMPLE))
    return [obj for doc in docs for _, obj in iter_objects(doc, str(EXAMPLE))]


def lines(objs: list[dict[str, Any]]) -> list[str]:
    state = ClusterState.from_objects(("t", o) for o in objs)
    return [f.line() for f in check_operands(state).findings]


EXPECTED = [
    *(
        f"lab-gpu-tainted {op} missing"
        for op in [
            "driver",
            "container-toolkit",
            "device-plugin",
            "gpu-feature-discovery",
            "dcgm",
            "dcgm-exporter",
            "operator-validator",
        ]
    ),
    "s1-gpu-a dcgm-exporter not-ready",
    "s6-mig device-plugin paused",
    "s6-mig gpu-feature-discovery paused",
    "s6-mig dcgm-exporter paused",
]


def test_the_real_operator_snapshot() -> None:
    assert lines(objects()) == EXPECTED


def test_a_renamed_daemonset_is_still_found_by_the_deploy_label_its_template_requires() -> None:
    objs = objects()
    for obj in objs:
        if obj["kind"] == "DaemonSet":
            obj["metadata"]["name"] = "renamed-" + obj["metadata"]["name"]  # pods keep their owner uid
    assert lines(objs) == EXPECTED


def test_without_the_mps_daemonset_nothing_changes_for_the_device_plugin() -> None:
    objs = [
        o
        for o in objects()
        if not (o["kind"] == "DaemonSet" and o["metadata"]["name"] == "nvidia-device-plugin-mps-control-daemon")
    ]
    assert lines(objs) == EXPECTED


def test_the_device_plugin_daemonset_gone_leaves_the_device_plugin_missing_not_the_mps_daemon_standing_in() -> None:
    objs = [
        copy.deepcopy(o)
        for o in objects()
        if not (o["kind"] == "DaemonSet" and o["metadata"]["name"] == "nvidia-device-plugin-daemonset")
    ]
    found = lines(objs)
    assert "s1-gpu-a device-plugin missing" in found


def test_the_catalogue_names_the_operator_version_it_was_checked_against() -> None:
    assert OPERATOR_VERSION == "v0.0.0-20250917190837-d73a0086a6ba"
    assert CATALOGUE["mps-control-daemon"].requires == {"nvidia.com/mps.capable": "true"}


def test_cluster_policy_defaults_follow_the_operator() -> None:
    # the module's sample policy as stored: nodeStatusExporter off, ccManager absent (off), sandbox off
    policy = next(o for o in objects() if o["kind"] == "ClusterPolicy")
    off = disabled_by_cluster_policy([policy])
    assert {"node-status-exporter", "cc-manager", "kata-manager", "sandbox-validator", "vfio-manager"} <= off
    assert not off & {"driver", "container-toolkit", "device-plugin", "mps-control-daemon", "operator-validator"}
    sandbox = copy.deepcopy(policy)
    sandbox["spec"]["sandboxWorkloads"]["enabled"] = True
    view = PolicyView([sandbox])
    assert view.enabled(CATALOGUE["vfio-manager"]) and not view.enabled(CATALOGUE["cc-manager"])
    assert view.workload({"nvidia.com/gpu.workload.config": "vm-vgpu"}) == "vm-vgpu"
    assert view.workload({"nvidia.com/gpu.workload.config": "bogus"}) == "container"
    assert PolicyView([policy]).workload({"nvidia.com/gpu.workload.config": "vm-vgpu"}) == "container"
    assert disabled_by_cluster_policy([]) == set()


def test_the_report_grid_shows_paused_cells_and_no_column_for_isolation() -> None:
    from gpulabel.app.report import report_doc
    from gpulabel.cluster.snapshot import load_snapshots

    doc = report_doc(load_snapshots([str(EXAMPLE)]))
    ops = [c["operand"] for c in doc["columns"]]
    assert "operands" not in ops and "mps-control-daemon" in ops
    grid = {
        (row["name"], op): doc["states"][code]
        for row in doc["nodes"]
        for op, code in zip(ops, row["cells"], strict=True)
    }
    assert grid[("s6-mig", "device-plugin")] == "paused"
    assert grid[("s6-mig", "mig-manager")] == "running"
    assert grid[("s1-gpu-a", "dcgm-exporter")] == "not-ready"
