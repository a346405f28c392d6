"""sync planning: which keys change, what is applied, and what is never touched."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gpulabel.checks.labels.sync import owned_keys, plan_node
from gpulabel.model.cluster import node_from_json
from tests.objects import node


def applied_by_gpulabel(*keys: str) -> dict[str, Any]:
    return {
        "manager": "gpulabel",
        "operation": "Apply",
        "time": "2026-11-01T00:00:00Z",
        "fieldsV1": {"f:metadata": {"f:labels": {f"f:{k}": {} for k in keys}}},
    }


def labelled_by(manager: str, *keys: str) -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": "Update",
        "time": "2026-11-28T10:00:00Z",
        "fieldsV1": {"f:metadata": {"f:labels": {f"f:{k}": {} for k in keys}}},
    }


def test_nothing_to_do_when_labels_match() -> None:
    n = node_from_json(node("n", {"a": "1", "b": "2"}))
    plan = plan_node(n, {"a": "1"})
    assert not plan.needs_write and plan.changes == []


def test_a_changed_and_a_missing_key_are_restored_with_who_changed_them() -> None:
    n = node_from_json(
        node(
            "lab-node-1",
            {"nvidia.com/gpu.count": "9", "other": "x"},
            managed_fields=[labelled_by("kubectl-label", "nvidia.com/gpu.count")],
        )
    )
    plan = plan_node(n, {"nvidia.com/gpu.count": "2", "nvidia.com/gpu.present": "true"})
    assert [c.line() for c in plan.changes] == [
        "lab-node-1 nvidia.com/gpu.count 2",
        "lab-node-1 nvidia.com/gpu.present true",
    ]
    assert plan.changes[0].explanation() == "was 9, set by kubectl-label at 2026-11-28T10:00:00Z"
    assert plan.changes[1].explanation() == "was absent"
    assert plan.apply_labels == {"nvidia.com/gpu.count": "2", "nvidia.com/gpu.present": "true"}


def test_without_prune_owned_keys_that_left_the_file_are_kept_at_their_value() -> None:
    n = node_from_json(node("n", {"a": "1", "old": "7"}, managed_fields=[applied_by_gpulabel("a", "old")]))
    plan = plan_node(n, {"a": "2"})
    assert [c.line() for c in plan.changes] == ["n a 2"]
    assert plan.apply_labels == {"a": "2", "old": "7"}


def test_prune_removes_owned_keys_that_left_the_file_and_only_those() -> None:
    n = node_from_json(
        node(
            "n",
            {"a": "1", "old": "7", "theirs": "9"},
            managed_fields=[applied_by_gpulabel("a", "old"), labelled_by("nfd-master", "theirs")],
        )
    )
    plan = plan_node(n, {"a": "1"}, prune=True)
    assert [c.line() for c in plan.changes] == ["n old-"]
    assert plan.apply_labels == {"a": "1"}


def test_owned_keys_count_only_gpulabels_apply_entries() -> None:
    n = node_from_json(
        node(
            "n",
            {},
            managed_fields=[applied_by_gpulabel("a"), labelled_by("gpulabel", "b"), labelled_by("kubectl-label", "c")],
        )
    )
    assert owned_keys(n) == {"a"}


KEYS = st.sampled_from([f"example.com/k{i}" for i in range(8)])
VALUES = st.sampled_from(["", "1", "2", "x"])


@settings(max_examples=500)
@given(
    existing=st.dictionaries(KEYS, VALUES),
    owned=st.sets(KEYS),
    desired=st.dictionaries(KEYS, VALUES),
    prune=st.booleans(),
)
def test_sync_never_changes_a_key_outside_the_file_or_not_its_own(
    existing: dict[str, str], owned: set[str], desired: dict[str, str], prune: bool
) -> None:
    n = node_from_json(node("n", existing, managed_fields=[applied_by_gpulabel(*owned)] if owned else None))
    plan = plan_node(n, desired, prune)
    for change in plan.changes:
        if change.value is None:
            assert prune and change.key in owned and change.key not in desired
        else:
            assert change.key in desired and desired[change.key] == change.value
    # what the apply keeps: every desired key, and (without prune) every owned key still on the node
    after = {k: v for k, v in existing.items() if k not in owned or k in plan.apply_labels}
    after.update(plan.apply_labels)
    for key in existing:
        if key not in desired and (key not in owned or not prune):
            assert after.get(key) == existing[key]
    for key, value in desired.items():
        assert after[key] == value


class RecordingWriter:
    """The API as a sync pass sees it: records each apply and answers with the labels applied."""

    target = "cluster"

    def __init__(self, kept: dict[str, str] | None = None) -> None:
        self.applied: list[tuple[str, dict[str, str]]] = []
        self.kept = kept or {}  # what the server keeps instead (an admission webhook, say)

    def apply(self, node: str, labels: dict[str, str], manager: str) -> dict[str, str]:
        assert manager == "gpulabel"
        self.applied.append((node, dict(labels)))
        return {**labels, **self.kept}

    def remove(self, node: str, keys: list[str], manager: str) -> None:
        raise AssertionError("sync never removes by merge patch")


def _pass(tmp_path: Any, writer: Any) -> Any:
    from gpulabel.controller.reconcile import PassResult, load_files, run_pass

    (tmp_path / "a.env").write_text("x=1\ny=2\n")
    (tmp_path / "b.env").write_text("x=1\n")
    (tmp_path / "gone.env").write_text("x=1\n")
    x = "feature.node.kubernetes.io/x"
    nodes = {n: node_from_json(node(n, labels)) for n, labels in (("a", {x: "0"}), ("b", {x: "1"}))}
    files, problems = load_files(str(tmp_path))
    total = PassResult(problems=list(problems))

    def emit(result: PassResult, into: PassResult) -> None:
        into.changes.extend(result.changes)
        into.problems.extend(result.problems)

    return run_pass(files, nodes, False, writer, emit, total)


def test_the_offline_plan_is_the_pass_a_live_sync_makes(tmp_path: Any) -> None:
    """One pass, two writers: the plan (nothing contacted) and the API; the same changes and problems."""
    from gpulabel.cluster.writes import PlanWriter

    api = RecordingWriter()
    live = _pass(tmp_path, api)
    plan = _pass(tmp_path, PlanWriter("cluster"))
    f = "feature.node.kubernetes.io/"
    assert [c.line() for c in live.changes] == [c.line() for c in plan.changes] == [f"a {f}x 1", f"a {f}y 2"]
    assert [str(p) for p in live.problems] == [str(p) for p in plan.problems]
    assert [p.message for p in plan.problems] == ["node gone not found in the cluster; nothing applied"]
    assert api.applied == [("a", {f"{f}x": "1", f"{f}y": "2"})]  # b is already right: no write


def test_a_value_the_server_keeps_is_a_problem_only_a_real_write_can_report(tmp_path: Any) -> None:
    live = _pass(tmp_path, RecordingWriter(kept={"feature.node.kubernetes.io/y": "3"}))
    assert str(live.problems[0]) == "node a: the API server kept other values for feature.node.kubernetes.io/y"
