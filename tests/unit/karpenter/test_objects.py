"""Karpenter's NodePools and NodeClaims read into records: from a snapshot, from a live LIST, wrong types named."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from gpulabel.cluster.live import load_cluster
from gpulabel.cluster.snapshot import load_snapshots
from gpulabel.errors import SnapshotError
from gpulabel.k8s.karpenter.objects import (
    Condition,
    KarpenterState,
    Requirement,
    nodeclaim_from_json,
    nodepool_from_json,
)
from gpulabel.k8s.taints import Taint
from tests.fakeapi import FakeApi, FakeClock, fake_client
from tests.unit.karpenter.objects import nodeclaim, nodepool

GPU_POOL = nodepool(
    "gpu",
    requirements=[
        {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["a100", "h100"]},
        {"key": "node.kubernetes.io/instance-type", "operator": "Exists", "minValues": 2},
    ],
    labels={"team": "ml"},
    taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
    startup_taints=[{"key": "node.example.com/warming", "effect": "NoSchedule"}],
    limits={"nvidia.com/gpu": "16", "cpu": 1000},
    resources={"nvidia.com/gpu": "8", "cpu": "32"},
)


def test_a_nodepool_keeps_its_template_limits_and_status() -> None:
    pool = nodepool_from_json(GPU_POOL, "f.json")
    assert pool.name == "gpu" and pool.labels == {"team": "ml"}
    assert pool.requirements == (
        Requirement("karpenter.k8s.aws/instance-gpu-name", "In", ("a100", "h100")),
        Requirement("node.kubernetes.io/instance-type", "Exists", (), 2),
    )
    assert pool.taints == (Taint("nvidia.com/gpu", "true", "NoSchedule"),)
    assert pool.startup_taints == (Taint("node.example.com/warming", "", "NoSchedule"),)
    assert pool.limits == {"nvidia.com/gpu": "16", "cpu": "1000"}
    assert pool.resources == {"nvidia.com/gpu": "8", "cpu": "32"}
    assert pool.node_class == ("karpenter.kwok.sh", "KWOKNodeClass", "default")
    assert pool.nodes == 0 and pool.weight is None
    assert pool.conditions == (Condition("Ready", "True", "Ready", "", "2026-12-04T10:00:00Z"),)


def test_a_nodeclaim_keeps_its_pool_node_resources_and_conditions() -> None:
    claim = nodeclaim_from_json(nodeclaim("gpu-x7k2p", "gpu", "", "Unknown", "ResourceNotRegistered"))
    assert (claim.name, claim.nodepool, claim.node_name, claim.provider_id) == ("gpu-x7k2p", "gpu", "", "")
    assert claim.requests == {"cpu": "1", "nvidia.com/gpu": "8", "pods": "2"}
    assert claim.allocatable["nvidia.com/gpu"] == "0" and claim.capacity["nvidia.com/gpu"] == "8"
    initialized = claim.condition("Initialized")
    assert initialized is not None and (initialized.status, initialized.reason) == ("Unknown", "ResourceNotRegistered")
    assert initialized.message == 'Resource "nvidia.com/gpu" was requested but not registered'
    assert claim.taints == (Taint("nvidia.com/gpu", "", "NoSchedule"),) and claim.created == "2026-12-04T10:00:00Z"
    ready = nodeclaim_from_json(nodeclaim("gpu-b", "gpu", "gpu-b"))
    assert (ready.node_name, ready.provider_id) == ("gpu-b", "kwok://gpu-b")
    assert ready.condition("Drifted") is None


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("spec", "template", "spec", "requirements"), {"key": "x"}, "spec.template.spec.requirements is not a list"),
        (("spec", "limits"), {"nvidia.com/gpu": True}, "spec.limits.nvidia.com/gpu is not a quantity"),
        (("spec", "weight"), "10", "spec.weight is not an integer"),
        (("status", "conditions"), [{"type": 3}], "status.conditions[0].type is not a string"),
    ],
)
def test_a_field_of_the_wrong_type_is_named(path: tuple[str, ...], value: object, message: str) -> None:
    obj = orjson.loads(orjson.dumps(GPU_POOL))
    at = obj
    for part in path[:-1]:
        at = at[part]
    at[path[-1]] = value
    with pytest.raises(SnapshotError) as err:
        nodepool_from_json(obj, "f.json: items[3]")
    assert str(err.value) == f"f.json: items[3] (nodepool gpu): {message}"


def test_a_snapshot_and_a_live_list_give_the_same_state(tmp_path: Path) -> None:
    items = [GPU_POOL, nodepool("cpu"), nodeclaim("gpu-b", "gpu", "gpu-b"), nodeclaim("gpu-a", "gpu")]
    path = tmp_path / "s.json"
    path.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    offline = load_snapshots([str(path)])
    api = FakeApi()
    for obj in items:
        api.put(obj)
    live = load_cluster(fake_client(tmp_path, api, FakeClock()), ["NodePool", "NodeClaim"])
    assert live.karpenter == offline.karpenter
    assert [p.name for p in live.karpenter.nodepools] == ["cpu", "gpu"]  # by name
    assert [c.name for c in live.karpenter.nodeclaims] == ["gpu-a", "gpu-b"]
    assert {"NodePool", "NodeClaim"} <= live.kinds and {"NodePool", "NodeClaim"} <= offline.kinds
    assert isinstance(live.karpenter, KarpenterState) and live.karpenter.nodepool("gpu") is not None


def test_where_karpenter_is_not_served_nothing_is_listed(tmp_path: Path) -> None:
    api = FakeApi()
    state = load_cluster(fake_client(tmp_path, api, FakeClock()), ["Node", "NodePool", "NodeClaim"])
    assert state.karpenter == KarpenterState() and state.kinds == {"Node"}
    assert [p for _, p, _ in api.requests if "karpenter" in p] == ["/apis/karpenter.sh/v1"]  # discovery only
