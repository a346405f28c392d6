"""A node changed in place re-judges only the Pending pods whose verdict on it may differ, and no fewer.

Four nodes (two GPU nodes with GPUs, a GPU node without any advertised, a CPU node) and Pending pods:
the nodes' changes (a taint, allocatable grown, ``gpu.present`` turned off, an unrelated label, a
cordon) move a verdict's reason, the figures a grouped finding is told by (without its fit flipping),
and which pods count as GPU pods (without the pod's verdict on that node changing). The incremental
evaluator must equal the full one after each batch; planted narrower columns (nothing re-judged,
only a fit flip, only a reason change, GPU-pod membership not read) must make that comparison fail
here, so this test can fail. An unrelated label re-judges no pod at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from gpulabel.app.checks import check_options
from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.checks.engine.incremental import IncrementalEvaluator
from gpulabel.checks.pending import columns
from tests.unit.pending_objects import JSON, node, pod
from tests.unit.test_incremental import START, Pair, _differs


def _node(name: str, gpus: str | None, present: str = "true", **extra: Any) -> JSON:
    labels = {"nvidia.com/gpu.present": present, "pool": "train", "team": "a"} if present else {"role": "cpu"}
    return node(name, gpus, labels | extra.pop("labels", {}), extra.pop("spec", {}))


LIST = [
    _node("gpu-a", "8"),
    _node("gpu-b", "8"),
    _node("gpu-c", None),  # labelled a GPU node, advertises no GPU
    _node("cpu-1", None, present=""),
    pod("train-a", 2, "gpu-a"),  # gpu-a: 6 free
    pod("train-b", 4, "gpu-b"),  # gpu-b: 4 free
    pod("big", 16, priority=10),  # more than any node has
    pod("mid", 8, priority=10),  # fits no node now
    pod("sel", 0, selector={"pool": "train"}),  # a GPU pod only while "pool" is a key of GPU nodes alone
]

TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
# batches of changed nodes, each changed in place
BATCHES: list[list[JSON]] = [
    [_node("gpu-b", "8", spec={"taints": [TAINT]})],  # every pod's reason on gpu-b: the taint first
    [_node("gpu-a", "12")],  # big: still insufficient, gpu-a now the closest (its figures); mid fits gpu-a
    [_node("gpu-c", None, present="false")],  # gpu-c no GPU node: "pool" no longer GPU-only, sel not listed
    [_node("gpu-a", "12", labels={"team": "x"})],  # a label value no pod reads: nothing to re-judge
    [_node("gpu-b", "8", spec={"taints": [TAINT], "unschedulable": True})],  # cordoned as well
    [_node("gpu-b", "8", labels={"team": "x"}, spec={"taints": [TAINT], "unschedulable": True})],  # nothing
]


def _run(per_node: bool = True) -> tuple[str, list[set[Any] | None], list[set[Any]]]:
    """How the evaluators first differ ("" if never), what the columns re-judged at each batch, and the pods
    told again from their kept rows at each batch. ``per_node``: one finding per pod and node (every pod judged
    on every node, through the columns); without it every pod here is told by its spec's kept row."""
    opts = replace(check_options(), per_node=per_node)
    ev = IncrementalEvaluator(opts)
    pair = Pair(ev, FullEvaluator(opts))
    seen: list[set[Any] | None] = []
    retold: list[set[Any]] = []
    flipped = columns.Columns.flipped

    def spy(self: columns.Columns, *args: Any) -> set[Any] | None:
        out = flipped(self, *args)
        if self._old:
            seen.append(None if out is None else {k[1] for k in out})
        return out

    columns.Columns.flipped = spy  # type: ignore[method-assign]
    try:
        pair.reset(LIST)
        got, want = pair.assess(START)
        if why := _differs(got, want):
            return f"after the LIST: {why}", seen, retold
        keeper = ev._keepers["pending"]
        for n, batch in enumerate(BATCHES):
            for obj in batch:
                pair.apply(obj, False)
            pieces = {k: t.piece for k, t in keeper.told_of.items()}  # type: ignore[attr-defined]
            got, want = pair.assess(START + 60.0 * (n + 1))
            if why := _differs(got, want):
                return f"batch {n}: {why}", seen, retold
            now = keeper.told_of  # type: ignore[attr-defined]
            retold.append({k[1] for k in pieces.keys() & now.keys() if now[k].piece is not pieces[k]})
    finally:
        columns.Columns.flipped = flipped  # type: ignore[method-assign]
    return "", seen, retold


def test_a_nodes_change_re_judges_its_column() -> None:
    why, seen, _ = _run()
    assert not why, why
    # taint: every Pending pod's verdict on gpu-b; allocatable: big's figures, mid's fit (sel fits gpu-a
    # either way); gpu.present: everything (GPU pods change); an unrelated label: none; the cordon: all three
    assert seen == [{"big", "mid", "sel"}, {"big", "mid"}, None, set(), {"big", "mid", "sel"}, set()]


def test_pods_told_by_a_row_are_told_again_from_it() -> None:
    """Without --per-node the same pods' pieces are told again, from their rows' cells of the changed node; the
    columns judge no pod a row tells (the GPU-pod test stays theirs: gpu.present re-judges every pod, and sel,
    no GPU pod after it, is judged by its column and not listed)."""
    why, seen, retold = _run(per_node=False)
    assert not why, why
    assert seen == [set(), set(), None, set(), {"sel"}, set()]
    # gpu.present: every pod judged again, big's and mid's rows' told the same: their pieces kept
    assert retold == [{"big", "mid", "sel"}, {"big", "mid"}, set(), set(), {"big", "mid"}, set()]


def _never(self: columns.Columns, *args: Any) -> set[Any] | None:
    self._old = {}
    return set()


PLANTED: dict[str, tuple[str, Callable[..., Any]]] = {
    "never": ("Columns.flipped", _never),
    "fit-only": ("node_verdict", lambda req, node, cap, pod: _verdict(req, node, cap, pod, lambda r: r.fits)),
    "reason-only": ("node_verdict", lambda req, node, cap, pod: _verdict(req, node, cap, pod, lambda r: r.reason)),
    "no-gpu-pods": ("_gpu_view", lambda node: ()),
}

_node_verdict = columns.node_verdict


def _verdict(req: Any, node: Any, cap: Any, pod: Any, seen: Callable[[Any], Any]) -> Any:
    result, preempt = _node_verdict(req, node, cap, pod)
    return seen(result), preempt


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_narrower_column_is_caught(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    where, planted = PLANTED[name]
    if where == "Columns.flipped":
        monkeypatch.setattr(columns.Columns, "flipped", planted)
    else:
        monkeypatch.setattr(columns, where, planted)
    why, _, _ = _run()
    assert "check pending:" in why, why


def test_pendings_keeper_asks_the_columns() -> None:
    from gpulabel.checks.registry import BUILTIN

    pending = BUILTIN.named("pending")
    assert isinstance(pending.keeper().columns, columns.Columns)  # type: ignore[attr-defined]
