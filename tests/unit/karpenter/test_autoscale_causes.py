"""``check``'s cause lines name a Pending pod no autoscaler will serve (``rootcause.pod_causes``), after the
nodes' causes; a pod a node is coming for, or one a NodePool can serve, is no cause; without NodePools the
causes are what they were. The monitor's incremental judgment (``KeptJudgment``) says the same as ``judged``."""

from __future__ import annotations

from gpulabel.app.checks import check_options
from gpulabel.checks.engine.definition import run_checks
from gpulabel.checks.engine.judging import Accepted, KeptJudgment, judged
from gpulabel.checks.engine.rootcause import pod_causes
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Finding
from tests.unit.karpenter.objects import nodeclaim, nodepool
from tests.unit.karpenter.test_autoscale_verdict import CUSTOM, GPU_TAINT, gpu_pod, state
from tests.unit.pending_objects import JSON, node

GFD = {
    "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
    "nvidia.com/gpu.count": "8",
    "nvidia.com/gpu.memory": "40960",
}


def _causes(s: ClusterState) -> tuple[list[str], list[dict[str, object]]]:
    result, _ = judged(run_checks(s, check_options()), s, Accepted())
    section = next(sec for sec in result.sections if sec.name == "causes")
    return list(section.text), [dict(r) for r in section.rows]


def _cluster(*extra: JSON, pools: bool = True) -> ClusterState:
    full = node("gpu-1", "8", GFD)
    objects: list[JSON] = [full, gpu_pod("held"), *extra]
    objects[1]["spec"]["nodeName"] = "gpu-1"  # all 8 GPUs of the one node taken
    objects[1]["status"] = {"phase": "Running"}
    if pools:
        objects += [nodepool("gpu-a", labels={"gpu": "a100"}, taints=[GPU_TAINT])]
        objects += [nodepool("gpu-b", taints=[GPU_TAINT])]
    return state(*objects)


def test_a_pod_no_nodepool_serves_is_a_cause_with_the_reason_and_fix() -> None:
    text, rows = _causes(_cluster(gpu_pod("train", selector={CUSTOM: "true"})))
    assert len(text) == 1
    assert text[0].startswith(f"cause pod/ml/train autoscaler: no-autoscaler unknown-key {CUSTOM} (")
    assert "does not have known values" in text[0] and "; fix: " in text[0] and "NodePools: gpu-a, gpu-b" in text[0]
    assert rows[0]["pod"] == "ml/train" and rows[0]["node"] is None and rows[0]["reason"] == "no-autoscaler"


def test_a_pod_a_nodepool_can_serve_or_a_node_is_coming_for_is_no_cause() -> None:
    assert _causes(_cluster(gpu_pod("train", selector={"gpu": "a100"}))) == ([], [])
    claim = nodeclaim("gpu-b-x1", "gpu-b", initialized="Unknown", reason="NotLaunched")
    assert _causes(_cluster(gpu_pod("train"), claim)) == ([], [])


def test_twin_without_nodepools_the_causes_are_unchanged() -> None:
    # the same pod without NodePools: pending's warning, no autoscaler verdict, no cause line; a node's cause
    # is as it was
    assert _causes(_cluster(gpu_pod("train", selector={CUSTOM: "true"}), pools=False)) == ([], [])
    broken = node("gpu-2", "8", GFD, {"unschedulable": True})
    alone = _causes(_cluster(broken, pools=False))
    assert len(alone[0]) == 1
    assert _causes(_cluster(broken, gpu_pod("train", selector={CUSTOM: "true"}), pools=False)) == alone


def test_a_downgraded_or_baseline_finding_is_no_cause() -> None:
    f = Finding("pending", "no-autoscaler", pod="ml/a", detail="x")
    assert [c.pod for c in pod_causes([f])] == ["ml/a"]
    assert pod_causes([Finding("pending", "no-autoscaler", pod="ml/a", severity="info")]) == []
    assert pod_causes([Finding("pending", "node-coming", pod="ml/a")]) == []


def test_node_causes_first_then_pods_by_name() -> None:
    broken = node("gpu-2", "8", GFD, {"unschedulable": True})
    s = _cluster(gpu_pod("zeta", selector={CUSTOM: "true"}), gpu_pod("alpha", selector={CUSTOM: "1"}), broken)
    text, _ = _causes(s)
    assert text[0].startswith("cause gpu-2 node ")
    assert [t.split()[1] for t in text[1:]] == ["pod/ml/alpha", "pod/ml/zeta"]


def test_the_monitors_kept_judgment_says_the_same() -> None:
    s = _cluster(gpu_pod("train", selector={CUSTOM: "true"}))
    opts = check_options()
    want, _ = judged(run_checks(s, opts), s, Accepted())
    kept = KeptJudgment(Accepted())
    nodes = {n.name: n for n in s.nodes}
    got, _ = kept.judged(run_checks(s, opts).parts, nodes, nodes)
    assert got.sections == want.sections[:1]
    again, _ = kept.judged(run_checks(s, opts).parts, nodes, ())  # nothing changed: the same section
    assert again.sections == want.sections[:1]
