"""A bound pod's change re-judges only the Pending pods whose verdict may flip on its node, and no fewer.

Two GPU nodes and Pending pods that do not fit either: the bound pods' changes move the figures a
verdict is told by (free GPUs on the best node) and the lowest priority preemption reads, without
any pod's fit flipping. The incremental evaluator must still equal the full one after each batch;
planted narrower scopes (no re-judging at all, only pods whose fit flips, priority not read; for the pods
judged on every node, --per-node) and a row not told again (for the pods a kept row tells) must
make that comparison fail here, so this test can fail.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable
from dataclasses import replace

import pytest

from gpulabel.app.checks import check_options
from gpulabel.checks.engine.assessment import Assessment, FullEvaluator
from gpulabel.checks.engine.incremental import IncrementalEvaluator
from gpulabel.checks.pending import check as pending_definition
from gpulabel.checks.pending import scope, specrows
from gpulabel.model.findings import Result
from tests.unit.pending_objects import JSON, node, pod
from tests.unit.test_incremental import START, Pair


def _node(name: str) -> JSON:
    return node(name, "8", {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "8"})


LIST = [
    _node("gpu-a"),
    _node("gpu-b"),
    pod("train-a", 2, "gpu-a"),  # gpu-a: 6 free, the closest node for "big"
    pod("train-b", 4, "gpu-b", priority=100),  # gpu-b: 4 free, nothing preemption could take
    pod("big", 16, priority=10),  # more than any node has: insufficient everywhere, whatever is free
    pod("mid", 8, priority=10),  # fits no node now; preemption could help on gpu-a (a pod of priority 0)
]

# batches of (object, deleted): none of them flips any Pending pod's fit on any node
BATCHES: list[list[tuple[JSON, bool]]] = [
    [(pod("train-a", 1, "gpu-a"), False)],  # 7 free on gpu-a: the figures of big's and mid's details
    [(pod("train-a", 1, "gpu-a"), True), (pod("train-a2", 1, "gpu-a", priority=100), False)],  # no victim left
    [(pod("train-a2", 1, "gpu-a", priority=100), True)],  # gpu-a empty: 8 free, mid fits it
]


def _run(per_node: bool = False) -> str:
    """How the evaluators first differ over the batches ("" if never); ``per_node``: one finding per pod and node
    (the pods are judged on every node, by the scope, not told by a kept row)."""
    opts = replace(check_options(), per_node=per_node)
    return Pair(IncrementalEvaluator(opts), FullEvaluator(opts)).first_difference(LIST, BATCHES)


@pytest.mark.parametrize("per_node", [False, True])
def test_bound_pods_changes_re_judge_what_they_can_change(per_node: bool) -> None:
    assert not _run(per_node)


def _pending(assessment: Assessment) -> Result:
    return next(p for p in assessment.result.parts if p.command == "pending")


def test_the_cluster_shows_what_the_scope_must_catch() -> None:
    """The figures and the preemption tail each change the full result: there is something to catch."""
    opts = check_options()
    oracle = FullEvaluator(opts)
    pair = Pair(IncrementalEvaluator(opts), oracle)
    pair.reset(LIST)
    seen = [_pending(oracle.assess(START))]
    for n, batch in enumerate(BATCHES):
        for obj, deleted in batch:
            pair.apply(obj, deleted)
        seen.append(_pending(oracle.assess(START + 60.0 * (n + 1))))
    assert all(a != b for a, b in itertools.pairwise(seen))
    messages = [[r["predicted_message"] for r in part.sections[0].rows] for part in seen]
    assert messages[1][1] is None and messages[2][1] is not None  # mid: a victim, then none (priority alone)


PLANTED: dict[str, Callable[..., bool]] = {
    "never": lambda pod, old, new, backed: False,
    "fit-only": lambda pod, old, new, backed: (
        old is None or new is None or bool(old.insufficient(pod.requests)) != bool(new.insufficient(pod.requests))
    ),
    "no-priority": lambda pod, old, new, backed: (
        old is None or new is None or old.insufficient(pod.requests) != new.insufficient(pod.requests)
    ),
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_narrower_scope_is_caught(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setattr(scope, "flips", PLANTED[name])
    caught = _run(per_node=True)
    assert "check pending:" in caught, caught


def test_a_row_whose_cells_moved_not_told_again_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pods a kept row tells are told again when the row's cells move (a bound pod's change recomputes its
    node's cell in each row): a keeper that never tells them again is caught here."""
    monkeypatch.setattr(specrows.SpecRows, "settled", lambda self: set())
    caught = _run()
    assert "check pending:" in caught, caught


def test_the_pending_check_asks_the_scope() -> None:
    """The pending check's pieces ask the scope module's ``flips`` when it is called (so the planted ones above
    are the ones run)."""
    assert "scope.flips(" in inspect.getsource(pending_definition)
