"""isolate planning: only nodes not yet in the wanted state change."""

from __future__ import annotations

from gpulabel.checks.labels.isolate import plan_isolation
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


class RecordingWriter:
    """The API as isolate sees it: records each write, answers with the labels written."""

    target = "cluster"

    def __init__(self, fail: str = "") -> None:
        self.writes: list[tuple[str, str, tuple[str, ...]]] = []
        self.fail = fail

    def apply(self, node: str, labels: dict[str, str], manager: str) -> dict[str, str]:
        from gpulabel.errors import ClusterError

        if node == self.fail:
            raise ClusterError(f"node {node}", "admission webhook refused it")
        self.writes.append(("apply", node, tuple(labels)))
        return dict(labels)

    def remove(self, node: str, keys: list[str], manager: str) -> None:
        self.writes.append(("remove", node, tuple(keys)))


def _isolate(names: list[str], writer: object, *, dry_run: bool, force: bool = False, undo: bool = False) -> tuple:
    from gpulabel.app.isolate import IsolateOptions, isolate
    from gpulabel.model.cluster import ClusterState

    gpu = {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
    node_pods = [pod_from_json(pod("ml", "train", "a", spec=gpu))]
    state = ClusterState(nodes=tuple(NODES.values()), kinds=frozenset({"Node", "DaemonSet"}))
    opts = IsolateOptions(nodes=tuple(names), undo=undo, dry_run=dry_run, force=force)
    streamed: list[object] = []
    warnings: list[str] = []
    outcome = isolate(state, node_pods, opts, writer, streamed.append, warnings.append)  # type: ignore[arg-type]
    fields = dict(outcome.result.fields)
    fields.pop("dry_run")
    return outcome.code, outcome.result.findings, outcome.result.sections, fields, streamed, warnings


def test_the_dry_run_predicts_exactly_what_the_run_does() -> None:
    """Refusals (a GPU pod on node a), unknown nodes, writes: the same answer, whichever writer (issue 24)."""
    from gpulabel.cluster.writes import PlanWriter

    for names, force, undo in ((["a", "c", "zz"], False, False), (["a", "c"], True, False), (["b", "c"], False, True)):
        real = RecordingWriter()
        run = _isolate(names, real, dry_run=False, force=force, undo=undo)
        planned = _isolate(names, PlanWriter(), dry_run=True, force=force, undo=undo)
        assert run == planned
    code, _, sections, _, _, warnings = _isolate(["a", "c"], RecordingWriter(), dry_run=True)
    assert code == 1 and sections[1].rows == ({"node": "a", "gpu_pods": ("ml/train",)},)
    assert warnings[0].startswith("node a: not isolated: GPU pods running: ml/train (nvidia.com/gpu)")


def test_a_run_writes_only_what_the_plan_says_and_refuses_gpu_nodes() -> None:
    writer = RecordingWriter()
    code, findings, _, _, _, _ = _isolate(["a", "c"], writer, dry_run=False)
    assert writer.writes == [("apply", "c", (OPS,))]
    assert code == 1 and [f.node for f in findings] == ["c"]
    forced = RecordingWriter()
    assert _isolate(["a", "c"], forced, dry_run=False, force=True)[0] == 0
    assert forced.writes == [("apply", "a", (OPS,)), ("apply", "c", (OPS,))]


def test_a_write_the_server_refuses_is_one_warning_and_exit_1() -> None:
    code, findings, _, _, _, warnings = _isolate(["c"], RecordingWriter(fail="c"), dry_run=False)
    assert (code, findings) == (1, ())
    assert warnings == ["node c: not written: node c: admission webhook refused it"]
