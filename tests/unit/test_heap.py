"""controller/heap.py: what ``Heap.keep`` freezes, and when it settles instead."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from gpulabel.controller import heap


@pytest.fixture
def collector() -> Iterator[None]:
    """The collector as it was after the test: nothing left frozen, the thresholds back."""
    threshold = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_keep_freezes_what_the_evaluation_kept_and_a_collection_then_walks_none_of_it(collector: None) -> None:
    kept = heap.Heap()
    kept.settle()
    before = gc.get_freeze_count()
    assert kept.settled == before
    made = [_Cycle() for _ in range(50)]  # an event's kept objects
    kept.keep()
    assert gc.get_count()[0] == 0  # the young generation emptied: nothing of the event waits there
    assert gc.get_freeze_count() >= before + 50
    del made
    assert gc.collect(0) == 0  # frozen: the young collection does not find the cycles let go
    kept.settle()  # the next settle does
    assert gc.get_freeze_count() <= before + 5


def test_keep_settles_once_the_frozen_objects_outgrow_the_last_settle(
    collector: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = heap.Heap()
    kept.settle()
    settled = gc.get_freeze_count()
    monkeypatch.setattr(heap, "SLACK", 100)
    monkeypatch.setattr(heap, "COUNT_EVERY", 3)
    garbage = [_Cycle() for _ in range(settled + 200)]  # more than GROWTH x what was settled, plus SLACK
    del garbage  # cycles: only a full collection frees them
    kept.keep()
    kept.keep()
    assert gc.get_freeze_count() > 2 * settled + 100  # not counted yet: frozen
    kept.keep()  # the third: counted, past the bound
    assert gc.get_freeze_count() <= settled + 50  # settled: the cycles collected, not frozen
    assert (kept.settled, kept.calls) == (gc.get_freeze_count(), 0)
