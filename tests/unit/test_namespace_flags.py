"""``-n`` means the same on a snapshot as on a cluster: it selects the pods a command reports, never what is read."""

from __future__ import annotations

import io
import json
from pathlib import Path

from gpulabel.cli.main import main
from tests.objects import gpu_node, pod

GPU = {
    "containers": [
        {
            "name": "c",
            "image": "i",
            "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
        }
    ]
}


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _snapshot(tmp_path: Path) -> str:
    node = gpu_node("g")
    node["status"]["allocatable"] = {"nvidia.com/gpu": "4", "cpu": "8", "memory": "32Gi", "pods": "110"}
    objects = [node, pod("ml", "a", "g", spec=GPU), pod("web", "b", "g", spec=GPU)]
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    return str(path)


def _requested(argv: list[str]) -> int:
    code, out, err = run(*argv, "-o", "json")
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    return int(row["requested"])


def test_gpus_counts_the_requests_of_the_namespace_given(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path)
    assert _requested(["gpus", "--snapshot", snap]) == 2
    assert _requested(["gpus", "-n", "ml", "--snapshot", snap]) == 1
    assert _requested(["-n", "ml", "gpus", "--snapshot", snap]) == 1
    assert _requested(["gpus", "-A", "--snapshot", snap]) == 2


def test_check_with_a_namespace_still_reads_every_operand(tmp_path: Path) -> None:
    """Operands live in their own namespace: -n selects the pods reported, not the DaemonSets read."""
    lab = str(Path(__file__).resolve().parents[2] / "examples" / "drifted-lab.yaml")
    everything = json.loads(run("check", "--snapshot", lab, "-o", "json")[1])["summary"]["checks"]
    scoped = json.loads(run("check", "-n", "nope", "--snapshot", lab, "-o", "json")[1])["summary"]["checks"]
    assert scoped["operands"] == everything["operands"] and scoped["audit"] == everything["audit"]
    assert scoped["hazards"]["findings"] == 0 < everything["hazards"]["findings"]
