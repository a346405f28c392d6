"""isolate planning: only nodes not yet in the wanted state change."""

from __future__ import annotations

from gpulabel.checks.isolate import plan_isolation
from gpulabel.model.cluster import node_from_json, pod_from_json
from tests.objects import node, pod

OPS = "nvidia.com/gpu.deploy.operands"
NODES = {n.name: n for n in map(node_from_json, [node("a"), node("b", {OPS: "false"}), node("c", {OPS: "true"})])}


def test_isolating_sets_the_key_on_nodes_not_yet_isolated_and_lists_leaving_pods() -> None:
    pods = [
        pod_from_json(pod("gpu-operator", "driver-a", "a")),
        pod_from_json(pod("gpu-operator", "old", "a", phase="Succeeded")),
    ]
    changes, unknown = plan_isolation(NODES, ["a", "b", "c", "zz"], undo=False, operand_pods=pods)
    assert [c.change.line() for c in changes] == [f"a {OPS} false", f"c {OPS} false"]
    assert changes[0].leaving == ("gpu-operator/driver-a",)
    assert changes[1].change.previous == "true"
    assert unknown == ["zz"]


def test_undo_removes_the_key_wherever_it_is_set() -> None:
    changes, _ = plan_isolation(NODES, ["a", "b", "c"], undo=True)
    assert [c.change.line() for c in changes] == [f"b {OPS}-", f"c {OPS}-"]


def test_a_node_named_twice_changes_once() -> None:
    changes, _ = plan_isolation(NODES, ["a", "a"], undo=False)
    assert len(changes) == 1


def test_the_gpu_pods_on_a_node_to_isolate_are_listed_with_their_resources() -> None:
    gpu = {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}
    mig = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"nvidia.com/mig-1g.5gb": "1"}}}]}
    node_pods = [
        pod_from_json(pod("ml", "train", "a", spec=gpu)),
        pod_from_json(pod("ml", "infer", "a", phase="Pending", spec=mig)),
        pod_from_json(pod("ml", "done", "a", phase="Succeeded", spec=gpu)),
        pod_from_json(pod("web", "cpu-only", "a")),
    ]
    (change,) = plan_isolation(NODES, ["a"], undo=False, node_pods=node_pods)[0]
    assert change.gpu_pods == (("ml/infer", ("nvidia.com/mig-1g.5gb",)), ("ml/train", ("nvidia.com/gpu",)))
