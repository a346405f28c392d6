"""``gpus``' ``nodepools`` section: the GPUs each Karpenter NodePool may still add under its limits, counted as
Karpenter v1.14.1 counts them (``scheduler.go`` ``updateRemainingResources``, ``statenode.go`` ``Capacity``,
``cluster.go`` ``UpdateNodeClaim``); what gpulabel cannot know is said, never guessed."""

from __future__ import annotations

import io
from typing import Any

from gpulabel.checks.health.inventory import inventory_result
from gpulabel.checks.pending.poolroom import nodepool_rooms
from gpulabel.cli.main import main
from tests.unit.karpenter.objects import nodeclaim, nodepool
from tests.unit.karpenter.test_autoscale_verdict import state
from tests.unit.pending_objects import JSON, node

GPU_NODE = {"nvidia.com/gpu.present": "true"}


def _pool_node(name: str, pool: str, gpus: str | None = "8", initialized: bool = True) -> JSON:
    labels = {**GPU_NODE, "karpenter.sh/nodepool": pool}
    if initialized:
        labels["karpenter.sh/initialized"] = "true"
    return node(name, gpus, labels)


def _rooms(*objects: JSON) -> dict[str, Any]:
    return {r.nodepool: r for r in nodepool_rooms(state(*objects))}


def test_limit_less_the_nodes_and_launched_nodeclaims() -> None:
    rooms = _rooms(
        nodepool("gpu-a", limits={"nvidia.com/gpu": "32"}, resources={"nvidia.com/gpu": "16"}),
        _pool_node("a-1", "gpu-a"),
        _pool_node("a-2", "gpu-a"),
        nodeclaim("gpu-a-x1", "gpu-a", node="a-3", initialized="Unknown"),  # launched, its Node not yet seen
        nodeclaim("gpu-a-x2", "gpu-a", initialized="Unknown", reason="NotLaunched"),  # no providerID: not counted
        _pool_node("b-1", "other"),  # another pool's node
    )
    a = rooms["gpu-a"]
    assert (a.limit, a.used, a.status, a.launching, a.may_add, a.room) == (32, 24, 16, 1, 8, "limit")
    assert "1 NodeClaim(s) not yet launched" in a.why
    assert a.line() == (f"nodepool=gpu-a gpu_limit=32 used=24 status=16 launching=1 may_add=8 ({a.why})")


def test_a_node_not_initialized_counts_its_nodeclaims_capacity() -> None:
    # statenode.go Capacity: a zero on a node not yet initialized is taken from its NodeClaim
    rooms = _rooms(
        nodepool("gpu-a", limits={"nvidia.com/gpu": "8"}),
        _pool_node("a-1", "gpu-a", gpus=None, initialized=False),
        nodeclaim("gpu-a-x1", "gpu-a", node="a-1", initialized="False"),
    )
    assert (rooms["gpu-a"].used, rooms["gpu-a"].may_add) == (8, 0)


def test_over_the_limit_adds_nothing() -> None:
    rooms = _rooms(nodepool("gpu-a", limits={"nvidia.com/gpu": "4"}), _pool_node("a-1", "gpu-a"))
    assert (rooms["gpu-a"].used, rooms["gpu-a"].may_add) == (8, 0)


def test_no_gpu_limit_is_unbounded_or_unknown_never_a_guess() -> None:
    rooms = _rooms(nodepool("free"), nodepool("cpu-bound", limits={"cpu": "100"}))
    assert (rooms["free"].may_add, rooms["free"].room) == (None, "unbounded")
    assert "may_add=unbounded" in rooms["free"].line()
    assert (rooms["cpu-bound"].may_add, rooms["cpu-bound"].room) == (None, "unknown")
    assert "its cpu limit bounds its GPUs through instance types not known" in rooms["cpu-bound"].why


def test_a_nodepool_karpenter_makes_no_node_from_adds_none() -> None:
    static = nodepool("static", limits={"nvidia.com/gpu": "32"})
    static["spec"]["replicas"] = 2
    unready = nodepool("unready")
    unready["status"]["conditions"][0]["status"] = "False"
    rooms = _rooms(static, unready)
    assert (rooms["static"].may_add, rooms["static"].room) == (0, "no pods")
    assert "static" in rooms["static"].why and "not Ready" in rooms["unready"].why


def test_twin_without_nodepools_gpus_is_unchanged() -> None:
    objects = [_pool_node("a-1", "gpu-a"), nodeclaim("gpu-a-x1", "gpu-a", node="a-2")]
    without = inventory_result(state(*objects))
    assert [s.name for s in without.sections] == ["inventory", "totals"]
    withpool = inventory_result(state(*objects, nodepool("gpu-a")))
    assert withpool.sections[:2] == without.sections
    assert [s.name for s in withpool.sections] == ["inventory", "totals", "nodepools"]


def test_gpus_command_on_the_example() -> None:
    out = io.StringIO()
    assert main(["gpus", "--snapshot", "examples/autoscaled.yaml"], out, io.StringIO()) == 0
    lines = out.getvalue().splitlines()
    assert lines[-2:] == [
        "nodepool=gpu-a100 gpu_limit=32 used=8 status=8 launching=1 may_add=24 (less the GPUs of 1 NodeClaim(s) "
        "not yet launched: not known until they are)",
        "nodepool=gpu-l4 gpu_limit=none used=1 status=- launching=0 may_add=unbounded (no spec.limits: Karpenter "
        "sets no bound on its nvidia.com/gpu)",
    ]
