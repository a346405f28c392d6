"""``explain pod/NS/NAME``: the pod, where it fits, and (with Karpenter NodePools, for a pod that fits no node)
the autoscaler's verdict in ``pending``'s words: a node on its way, the NodePool that would make one, or why
none will with the fix. Without NodePools there is no autoscaler step."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from gpulabel.app.checks import ExplainOptions
from gpulabel.cli.main import main
from gpulabel.errors import InputError
from tests.unit.karpenter.objects import nodeclaim, nodepool
from tests.unit.karpenter.test_autoscale_verdict import CUSTOM, GPU_TAINT, gpu_pod
from tests.unit.pending_objects import JSON, node

EXAMPLE = "examples/autoscaled.yaml"
AT = "2026-12-04T10:05:00Z"  # the example's NodeClaims within their grace


def explain(target: str, snapshot: str, *flags: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["explain", target, "--snapshot", snapshot, *flags], out, err)
    return code, out.getvalue(), err.getvalue()


def test_the_step7_pod_no_nodepool_serves_is_broken_at_the_autoscaler_with_the_fix() -> None:
    code, out, _ = explain("pod/ml/step7-train", EXAMPLE, "--at", AT)
    lines = out.splitlines()
    assert code == 1
    assert lines[0] == "pod/ml/step7-train: Pending; first broken step: nodes"
    assert lines[1] == "waiting pod: Pending, not bound to a node; requests nvidia.com/gpu 1"
    assert lines[2].startswith("broken  nodes: fits none of 2 node(s); gpulabel predicts: 0/2 nodes are available")
    assert lines[4] == "broken  autoscaler: no Karpenter NodePool will make a node for it (NodePools: gpu-a100, gpu-l4)"
    assert lines[5].startswith(f"          error pending no-autoscaler unknown-key {CUSTOM} (Failed to schedule pod, ")
    assert f"or declare {CUSTOM} in a NodePool's spec.template.metadata.labels" in lines[5]


def test_a_pod_a_node_is_coming_for_waits_and_nothing_is_broken() -> None:
    code, out, _ = explain("pod/ml/train-1", EXAMPLE, "-o", "json", "--at", AT)
    doc = json.loads(out)
    assert code == 0
    assert (doc["autoscaler"], doc["first_broken"]) == ("coming", None)
    steps = {row["link"]: row for row in doc["links"]}
    assert steps["nodes"]["status"] == "waiting"
    auto = steps["autoscaler"]
    assert (auto["status"], auto["verdict"], auto["nodepool"], auto["nodeclaim"]) == (
        "waiting",
        "coming",
        "gpu-a100",
        "gpu-a100-7xk2p",
    )
    # the same words as pending's finding for the pod: one source
    code, pending, _ = explain_pending()
    finding = next(f for f in json.loads(pending)["findings"] if f["reason"] == "node-coming")
    assert auto["detail"] == finding["detail"]


def explain_pending() -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["pending", "--snapshot", EXAMPLE, "-o", "json", "--at", AT], out, err)
    return code, out.getvalue(), err.getvalue()


def test_a_bound_pod_points_at_its_node() -> None:
    code, out, _ = explain("pod/ml/train-0", EXAMPLE)
    assert code == 0
    assert out.splitlines()[-1] == (
        "ok      nodes: runs on ip-10-0-1-17.ec2.internal: explain node/ip-10-0-1-17.ec2.internal walks its chain"
    )


def _snapshot(tmp_path: Path, *objects: JSON) -> str:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(objects)}))
    return str(path)


def test_a_nodepool_that_can_serve_is_ok_and_the_nodes_step_waits(tmp_path: Path) -> None:
    pools = [nodepool("gpu-a", labels={"gpu": "a100"}, taints=[GPU_TAINT]), nodepool("gpu-b", taints=[GPU_TAINT])]
    snap = _snapshot(tmp_path, node("cpu-1", None, {}), *pools, gpu_pod("train", selector={"gpu": "a100"}))
    code, out, _ = explain("pod/ml/train", snap)
    lines = out.splitlines()
    assert lines[0] == "pod/ml/train: Pending; no step broken"
    assert lines[2].startswith("waiting nodes: fits none of 1 node(s)")
    assert "ok      autoscaler: Karpenter would make a node from NodePool gpu-a" in lines
    assert code == 0


def test_twin_without_nodepools_no_autoscaler_step(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, node("cpu-1", None, {}), gpu_pod("train", selector={CUSTOM: "true"}))
    code, out, _ = explain("pod/ml/train", snap)
    assert code == 0  # no no-autoscaler error without NodePools: its node-selector warning is below --fail-level
    assert [line.split(":")[0].split()[-1] for line in out.splitlines()[1:] if not line.startswith(" ")] == [
        "pod",
        "nodes",
    ]
    assert "autoscaler" not in out and "broken  nodes: fits none of 1 node(s)" in out
    # a NodeClaim without NodePools changes nothing either
    claim = nodeclaim("gpu-b-x1", "gpu-b", initialized="Unknown", reason="NotLaunched")
    again = _snapshot(tmp_path, node("cpu-1", None, {}), gpu_pod("train", selector={CUSTOM: "true"}), claim)
    assert explain("pod/ml/train", again)[1] == out


def test_an_unknown_pod_is_one_line_with_the_nearest_name() -> None:
    code, out, err = explain("pod/ml/train-2", EXAMPLE)
    assert (code, out) == (2, "")
    assert "pod/ml/train-2: not found (did you mean pod/ml/train-" in err


@pytest.mark.parametrize("target", ["pod/ml", "pod/ml/", "pod/ml/a/b", "pods//a"])
def test_a_pod_target_needs_a_namespace_and_a_name(target: str) -> None:
    with pytest.raises(InputError, match="give pod/NAMESPACE/NAME"):
        ExplainOptions.of(target)
    assert ExplainOptions.of("po/ml/a").pod == "ml/a"


def test_a_finished_pod_is_not_read_as_live_lists_none(tmp_path: Path) -> None:
    done = gpu_pod("train")
    done["status"] = {"phase": "Succeeded"}
    code, out, err = explain("pod/ml/train", _snapshot(tmp_path, node("cpu-1", None, {}), done))
    assert (code, out) == (2, "")
    assert "pod/ml/train: not found (a finished pod is not read)" in err
