"""The per-pod autoscaler verdict (``checks.pending.autoscale.autoscaler_verdict``): on its way, a NodePool can
make a node, or no autoscaler will (with Karpenter's reason and a fix), on NodePools and NodeClaims in the shape
of Karpenter v1.14.1's CRDs."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import yaml

from gpulabel.checks.pending.autoscale import autoscaler_verdict, nodepool_used
from gpulabel.cli.main import main
from gpulabel.k8s.karpenter.events import pod_event
from gpulabel.model.cluster import ClusterState
from tests.unit.karpenter.objects import nodeclaim, nodepool
from tests.unit.pending_objects import node, pod

JSON = dict[str, Any]
GPU_TAINT = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
TOLERATE = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
CUSTOM = "feature.node.kubernetes.io/custom-gpu-training"


def state(*objects: JSON) -> ClusterState:
    return ClusterState.from_objects((f"obj{i}", o) for i, o in enumerate(objects))


def gpu_pod(name: str = "train", selector: JSON | None = None, tolerate: bool = True) -> JSON:
    out = pod(name, 8, selector=selector)
    if tolerate:
        out["spec"]["tolerations"] = TOLERATE
    return out


def pools(**kw: Any) -> list[JSON]:
    return [nodepool("gpu-a", labels={"gpu": "a100"}, taints=[GPU_TAINT], **kw), nodepool("gpu-b", taints=[GPU_TAINT])]


def verdict(*objects: JSON, events: tuple[Any, ...] = ()) -> Any:
    s = state(*objects)
    return autoscaler_verdict(s, next(p for p in s.pods if p.name == "train"), events)


def test_no_nodepools_no_verdict() -> None:
    assert verdict(node("n1", "8", {}), gpu_pod()) is None


def test_a_nodepool_can_make_a_node() -> None:
    v = verdict(*pools(), gpu_pod(selector={"gpu": "a100"}))
    assert (v.kind, v.nodepool, v.provider) == ("can", "gpu-a", "kwok")


def test_in_flight_nodeclaim_of_the_chosen_pool_is_on_its_way() -> None:
    v = verdict(*pools(), gpu_pod(), nodeclaim("gpu-b-x1", "gpu-b", initialized="Unknown", reason="NotLaunched"))
    assert (v.kind, v.nodepool, v.nodeclaim, v.nominated) == ("coming", "gpu-b", "gpu-b-x1", False)
    assert v.since == "2026-12-04T10:00:00Z"


def test_an_initialized_nodeclaim_is_not_on_its_way() -> None:
    v = verdict(*pools(), gpu_pod(), nodeclaim("gpu-b-x1", "gpu-b", node="n9"))
    assert v.kind == "can"


def test_nominated_event_names_the_nodeclaim() -> None:
    event = pod_event("karpenter", "Nominated", "Pod should schedule on: nodeclaim/gpu-a-z7")
    claim = nodeclaim("gpu-a-z7", "gpu-a", initialized="Unknown", reason="NotLaunched")
    v = verdict(*pools(), gpu_pod(), claim, events=(event,))
    assert (v.kind, v.nodeclaim, v.nominated) == ("coming", "gpu-a-z7", True)


def test_seeds_step7_training_pod_is_no_autoscaler_will_with_the_fix() -> None:
    v = verdict(*pools(), gpu_pod(selector={CUSTOM: "true"}))
    assert v.kind == "none"
    assert v.unknown_keys == (CUSTOM,)
    assert f'label "{CUSTOM}" does not have known values' in v.message
    assert "spec.template.metadata.labels (NodePools: gpu-a, gpu-b)" in v.fix


def test_aws_fix_names_its_template_time_gpu_labels() -> None:
    aws = [
        {
            **p,
            "spec": {
                **p["spec"],
                "template": {
                    **p["spec"]["template"],
                    "spec": {
                        **p["spec"]["template"]["spec"],
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    },
                },
            },
        }
        for p in pools()
    ]
    v = verdict(*aws, gpu_pod(selector={"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}))
    assert (v.kind, v.provider) == ("none", "aws")
    assert "karpenter.k8s.aws/instance-gpu-name" in v.fix
    ok = verdict(*aws, gpu_pod(selector={"karpenter.k8s.aws/instance-gpu-name": "a100"}))
    assert ok.kind == "can"


def test_untolerated_template_taint() -> None:
    v = verdict(*pools(), gpu_pod(tolerate=False))
    assert v.kind == "none"
    assert "did not tolerate taint (taint=nvidia.com/gpu:NoSchedule)" in v.message
    assert v.fix.startswith("tolerate the NodePool's template taint")


def test_nodes_limit_reached_counts_the_pools_nodes() -> None:
    objs = [nodepool("gpu-a", taints=[GPU_TAINT], limits={"nodes": "1"})]
    full = node("n1", "8", {"karpenter.sh/nodepool": "gpu-a"})
    s = state(*objs, full)
    assert nodepool_used(s.karpenter.nodepools, s.nodes) == {"gpu-a": {"nodes": "1"}}
    v = verdict(*objs, full, gpu_pod())
    assert v.kind == "none"
    assert "node limits have been exhausted for nodepool (NodePool=gpu-a)" in v.message
    assert v.fix.startswith("raise the NodePool's spec.limits")


def test_dra_claims_are_ignored() -> None:
    p = gpu_pod()
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    v = verdict(*pools(), p)
    assert v.kind == "none" and "Dynamic Resource Allocation" in v.message and "ResourceClaims" in v.fix


def test_restricted_label() -> None:
    v = verdict(*pools(), gpu_pod(selector={"kubernetes.io/hostname": "n1"}))
    assert v.kind == "none" and "using label kubernetes.io/hostname is not allowed" in v.message


EXAMPLE = Path(__file__).parents[3] / "examples" / "autoscaled.yaml"


# the example's NodeClaim of gpu-a100 is 5 minutes old then (its NodeClaim of gpu-l4 45 minutes, stuck)
AT = "2026-12-04T10:05:00Z"
STUCK = ("gpu-l4-m2c9d", "ip-10-0-3-52.ec2.internal")  # tests/unit/karpenter/test_nodeclaim_lifecycle.py


def _check(items: list[JSON], tmp_path: Path) -> tuple[int, str]:
    snapshot = tmp_path / "snap.yaml"
    snapshot.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    out = io.StringIO()
    return main(["check", "--snapshot", str(snapshot), "-o", "wide", "--at", AT], out, io.StringIO()), out.getvalue()


def test_check_exits_0_while_a_nodeclaim_is_launching_for_every_pending_gpu_pod(tmp_path: Path) -> None:
    items = [
        i for i in yaml.safe_load(EXAMPLE.read_text())["items"] if i["metadata"]["name"] not in ("step7-train", *STUCK)
    ]
    rc, out = _check(items, tmp_path)
    assert rc == 0, out
    assert "info ml/train-1 node-coming nodeclaim/gpu-a100-7xk2p nodepool/gpu-a100" in out
    assert "error=0" in out


def test_check_exits_1_for_the_seeds_step7_pod_naming_the_nodepools_and_the_fix(tmp_path: Path) -> None:
    rc, out = _check(yaml.safe_load(EXAMPLE.read_text())["items"], tmp_path)
    assert rc == 1
    line = next(x for x in out.splitlines() if "no-autoscaler" in x and x.startswith("error"))
    assert line.startswith(f"error ml/step7-train no-autoscaler unknown-key {CUSTOM} (Failed to schedule pod, ")
    assert "karpenter.k8s.aws/instance-gpu-name" in line
    assert f"declare {CUSTOM} in a NodePool's spec.template.metadata.labels (NodePools: gpu-a100, gpu-l4)" in line


def test_without_nodepools_pending_is_unchanged(tmp_path: Path) -> None:
    items = [
        i
        for i in yaml.safe_load(EXAMPLE.read_text())["items"]
        if not i["apiVersion"].startswith("karpenter") and i["metadata"]["name"] not in STUCK
    ]
    rc, out = _check(items, tmp_path)
    assert rc == 0, out
    assert "node-coming" not in out and "no-autoscaler" not in out
    assert "warning ml/step7-train node-selector" in out
