"""Every health finding says what to do (model/repairs.py): a repair line by Xid (NVIDIA's catalogue, as
docs/runbook.md words it) or by the condition's publisher, ending with the runbook section, in -o wide, explain,
JSON and the report; explain ties a cordon to the driver upgrade or health agent that made it."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from gpulabel.cli.main import main
from gpulabel.model.repairs import RUNBOOK, XID_ACTIONS, xid_of
from tests.objects import as_list
from tests.unit.test_health import condition, node, pod

HEALTH = str(Path(__file__).parents[2] / "examples" / "gpu-health.yaml")
AT = ("--at", "2026-12-01T12:00:00Z")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def repairs_of(tmp_path: Path, *objects: dict[str, Any]) -> dict[str, str]:
    """reason -> the repair line of each health finding of ``check -o json`` on ``objects``."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps(as_list(*objects)))
    doc = json.loads(run("check", "--snapshot", str(path), "-o", "json", *AT)[1])
    out = {}
    for f in doc["findings"]:
        if f["check"] == "health":
            assert f["detail"].endswith(f"; runbook: {RUNBOOK}"), f
            out[f["reason"]] = f["detail"].split("; repair: ", 1)[1].removesuffix(f"; runbook: {RUNBOOK}")
    return out


@pytest.mark.parametrize(
    ("texts", "xid"),
    [
        (("reason=XID79",), 79),
        (("GPUXIDErrors=True", "Xid 48 on GPU 0000:3b:00.0"), 48),
        (("xid-95",), 95),
        (("GpuXidError=True", "SysLogsXIDError"), None),  # condition names, no number
        (("reason=XID1234",), None),
    ],
)
def test_the_xid_is_read_from_a_reason_or_a_message(texts: tuple[str, ...], xid: int | None) -> None:
    assert xid_of(texts) == xid


def test_a_lost_gpu_takes_the_xid_of_the_nodes_condition_and_the_condition_its_own(tmp_path: Path) -> None:
    xid = condition("GPUXIDErrors", "True", reason="XID79", message="GPU has fallen off the bus")
    said = repairs_of(tmp_path, node(allocatable=7, conditions=[xid]), pod("train-0", "Unhealthy"))
    action = XID_ACTIONS[79][1]
    assert said["condition"] == f"Xid 79 (the GPU fell off the bus, its reason): {action}"
    assert said["gpus-lost"].startswith(
        f"Xid 79 (the GPU fell off the bus, from the node's GPUXIDErrors condition): {action}; once the GPU is "
        "healthy, restart the device plugin's pod on the node"
    )


def test_without_an_xid_the_lost_gpu_says_how_to_find_it_and_the_condition_names_its_publisher(tmp_path: Path) -> None:
    said = repairs_of(tmp_path, node(allocatable=7, conditions=[condition("GpuXidError", "True")]))
    assert said["gpus-lost"].startswith("find the Xid (dmesg | grep -i xid on the node) and act as NVIDIA's Xid")
    assert said["condition"].startswith("follow the runbook of NVSentinel (")
    assert "for GpuXidError; find the Xid" in said["condition"]


def test_an_xid_outside_the_table_sends_to_the_catalogue(tmp_path: Path) -> None:
    said = repairs_of(tmp_path, node(conditions=[condition("XIDErrors", "True", reason="XID31")]))
    assert said["condition"] == "Xid 31 (its reason): act as NVIDIA's Xid catalogue says for it"


def test_a_health_taint_names_the_command_that_lifts_it_and_unknowns_say_where_to_look(tmp_path: Path) -> None:
    taint = {"key": "nvidia.com/gpu-xid-error", "value": "true", "effect": "NoSchedule"}
    said = repairs_of(
        tmp_path, node(taints=[taint], conditions=[condition("GpuXidError", "Unknown")]), pod("p", "Unknown")
    )
    assert said["health-taint"].endswith("once the GPU is healthy: kubectl taint node gpu-1 nvidia.com/gpu-xid-error-")
    assert said["condition-unknown"].startswith("the publisher cannot tell: check its agent's pod on the node")
    assert said["device-unknown"] == said["condition-unknown"]


def test_wide_explain_and_the_report_carry_the_repair_of_the_example() -> None:
    wide = run("check", "--snapshot", HEALTH, "-o", "wide", *AT)[1]
    condition_line = next(line for line in wide.splitlines() if " condition GPUXIDErrors=True" in line)
    assert f"; repair: Xid 79 (the GPU fell off the bus, its reason): {XID_ACTIONS[79][1]}" in condition_line
    explain = run("explain", "node/h100-0", "--snapshot", HEALTH, *AT)[1]
    assert sum(f"; runbook: {RUNBOOK}" in line for line in explain.splitlines()) == 2  # gpus-lost, condition
    page = run("report", "--html", "-", "--snapshot", HEALTH, *AT)[1]
    data = json.loads(re.search(r'id="gpulabel-data">(.*?)</script>', page, re.S)[1])  # type: ignore[index]
    details = [r["detail"] for r in data["gpustack"] if r["check"] == "health"]
    assert len(details) == 2 and all("; repair: Xid 79 " in d for d in details)


def test_explain_ties_a_cordon_to_the_driver_upgrade_or_the_health_agent_that_made_it(tmp_path: Path) -> None:
    upgrading = node("gpu-1")
    upgrading["spec"]["unschedulable"] = True
    upgrading["metadata"]["labels"]["nvidia.com/gpu-driver-upgrade-state"] = "drain-required"
    quarantined = node("gpu-2", taints=[{"key": "nvidia.com/gpu-xid-error", "effect": "NoSchedule"}])
    quarantined["spec"]["unschedulable"] = True
    plain = node("gpu-3")
    plain["spec"]["unschedulable"] = True
    path = tmp_path / "s.json"
    path.write_text(json.dumps(as_list(upgrading, quarantined, plain)))

    def cordoned(name: str) -> str:
        out = run("explain", f"node/{name}", "--snapshot", str(path), *AT)[1]
        return next(line.strip() for line in out.splitlines() if " cordoned (" in line)

    assert cordoned("gpu-1") == (
        "warning capacity cordoned (spec.unschedulable is true; cordoned by the GPU Operator's driver upgrade "
        "(nvidia.com/gpu-driver-upgrade-state=drain-required): it uncordons when done)"
    )
    assert cordoned("gpu-2").endswith(
        "cordoned while the health agent says nvidia.com/gpu-xid-error:NoSchedule: repair it as the health link "
        "says, then uncordon)"
    )
    assert cordoned("gpu-3") == "warning capacity cordoned (spec.unschedulable is true)"  # nothing tells who
