"""Every health finding says what to do (model/repairs.py): a repair line by Xid (NVIDIA's catalogue, as
docs/runbook.md words it) or by the condition's publisher, ending with the runbook section, in -o wide, explain,
JSON and the report; explain ties a cordon to the driver upgrade or health agent that made it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gpulabel.cli.main import main
from gpulabel.model.repairs import xid_of
from tests.objects import as_list
from tests.unit.test_health import node

HEALTH = str(Path(__file__).parents[2] / "examples" / "gpu-health.yaml")
AT = ("--at", "2026-12-01T12:00:00Z")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


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
