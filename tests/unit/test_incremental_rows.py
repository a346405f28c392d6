"""Pending's kept rows and hazards' kept fits: a node's change computes that node's cell of each kept spec, no more.

Six nodes, three distinct Pending specs (one with two replicas) and a running pod whose node no
longer matches (its hazard counts the other nodes that would take it). Each batch changes one thing
and says how many cells it may compute: a taint or a bound pod's change one cell per kept spec (and
one verdict per kept hazard requirement), a node joining one per spec, a node leaving none, a
replica none, a new distinct spec one row (a cell per node). The incremental evaluator must equal
the full one after every batch, and the counters (``SpecRows.cells``, ``KeptFits.cells``) must move
by exactly those figures: a keeper that rebuilt a whole row on a node's change (planted below) fails
here, and so do planted narrower updates (a cell compared by its fit alone, a capacity not passed
to the cell, the preemption victims not counted, a node that stops fitting left in a hazard's count, the
pods of a requirement whose count moved not re-judged), by the comparison with the full evaluator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gpulabel.app.checks import check_options
from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.checks.engine.incremental import IncrementalEvaluator
from gpulabel.checks.hazards import check as hazards
from gpulabel.checks.pending import check as pending_check
from gpulabel.checks.pending import specrows
from gpulabel.checks.placement import fit as placement
from tests.unit.pending_objects import JSON, node, pod
from tests.unit.test_incremental import START, Pair, _differs

TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}


def _node(name: str, team: str = "a", **spec: Any) -> JSON:
    return node(name, "8", {"nvidia.com/gpu.present": "true", "pool": "train", "team": team}, spec)


def _held() -> JSON:
    """Bound to gpu-c, selecting team x: gpu-c is team a now (a hazard); gpu-d and gpu-e would take it."""
    return pod("held", 1, "gpu-c", selector={"pool": "train", "team": "x"})


NODES = ["gpu-a", "gpu-b", "gpu-c", "gpu-d", "gpu-e", "gpu-f"]
LIST = [
    _node("gpu-a"),
    _node("gpu-b"),
    _node("gpu-c"),
    _node("gpu-d", team="x"),
    _node("gpu-e", team="x"),
    _node("gpu-f", team="y"),
    pod("train-a", 2, "gpu-a"),  # gpu-a: 6 free, a victim of priority 0
    pod("train-b", 4, "gpu-b", priority=100),  # gpu-b: 4 free, nothing to preempt
    _held(),
    pod("big", 16, priority=10),  # insufficient everywhere
    pod("big-2", 16, priority=10),  # a replica: big's row
    pod("sel", 1, selector={"pool": "other"}),  # no node has pool=other
    # fits no node of team a now; preemption could help on gpu-a and gpu-c (pods of priority 0): no message
    pod("mid", 8, priority=10, selector={"team": "a"}),
]
ROWS = 3  # big, sel, mid
FITS = 1  # held's requirements

# (what happens, the batch, pending's cells it may compute, hazards' verdicts it may compute)
BATCHES: list[tuple[str, list[tuple[JSON, bool]], int, int]] = [
    ("a taint on one node", [(_node("gpu-d", team="x", taints=[TAINT]), False)], ROWS, FITS),
    ("a cordon on one node", [(_node("gpu-e", team="x", unschedulable=True), False)], ROWS, FITS),
    ("a node joins", [(_node("gpu-g", team="x"), False)], ROWS, FITS),
    ("a node leaves", [(_node("gpu-g", team="x"), True)], 0, 0),
    ("a bound pod leaves its node", [(pod("train-a", 2, "gpu-a"), True)], ROWS, 0),
    ("a bound pod of priority 0 comes back", [(pod("train-a", 1, "gpu-a"), False)], ROWS, 0),
    ("a replica of a kept spec", [(pod("big-3", 16, priority=10), False)], 0, 0),
    ("a new distinct spec: one row", [(pod("odd", 3, priority=5), False)], len(NODES), 0),
    ("the taint lifted", [(_node("gpu-d", team="x"), False)], ROWS + 1, FITS),
]


def _keepers(ev: IncrementalEvaluator) -> tuple[Any, Any]:
    keepers = ev._keepers  # the evaluator's keepers, by check name
    return keepers["pending"].rows, keepers["hazards"].fits  # type: ignore[attr-defined]


def _run() -> tuple[str, list[tuple[int, int]]]:
    """How the evaluators first differ ("" if never), and the cells each batch computed (pending, hazards)."""
    opts = check_options()
    ev = IncrementalEvaluator(opts)
    pair = Pair(ev, FullEvaluator(opts))
    pair.reset(LIST)
    if why := _differs(*pair.assess(START)):
        return f"after the LIST: {why}", []
    rows, fits = _keepers(ev)
    assert len(rows.rows) == ROWS and len(fits.fitting) == FITS
    assert all(len(r.cells) == len(NODES) for r in rows.rows.values())
    computed = []
    for n, (what, batch, _, _) in enumerate(BATCHES):
        before = (rows.cells, fits.cells)
        for obj, deleted in batch:
            pair.apply(obj, deleted)
        if why := _differs(*pair.assess(START + 60.0 * (n + 1))):
            return f"{what}: {why}", computed
        rows, fits = _keepers(ev)
        computed.append((rows.cells - before[0], fits.cells - before[1]))
    return "", computed


def test_a_nodes_change_computes_its_cell_of_each_kept_spec() -> None:
    why, computed = _run()
    assert not why, why
    assert computed == [(cells, fits) for _, _, cells, fits in BATCHES]


def test_rows_follow_the_nodes_and_the_pending_pods() -> None:
    opts = check_options()
    ev = IncrementalEvaluator(opts)
    pair = Pair(ev, FullEvaluator(opts))
    pair.reset(LIST)
    pair.assess(START)
    pair.apply(_node("gpu-g"), False)
    pair.assess(START + 60)
    rows, _ = _keepers(ev)
    assert {len(r.cells) for r in rows.rows.values()} == {len(NODES) + 1}
    pair.apply(_node("gpu-g"), True)
    pair.apply(pod("sel", 1, selector={"pool": "other"}), True)  # sel's spec: no Pending pod left
    assert not _differs(*pair.assess(START + 120))
    rows, _ = _keepers(ev)
    assert len(rows.rows) == ROWS - 1
    assert {len(r.cells) for r in rows.rows.values()} == {len(NODES)}


_result = pending_check._Pieces.result


def _rebuilt(self: Any, fleet: Any, opts: Any) -> Any:
    """A keeper that makes every row again over every node when a node (or what is free on one) changes, and
    judges every Pending pod from them: right, but wider."""
    if self.capacities_dirty:
        self.rows.rows.clear()
        self.rows.clear()
        self.everything = True
    return _result(self, fleet, opts)


def test_a_row_rebuilt_on_a_nodes_change_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pending_check._Pieces, "result", _rebuilt)
    why, computed = _run()
    assert not why, why  # right, but wider
    assert computed != [(cells, fits) for _, _, cells, fits in BATCHES]
    assert computed[0][0] == ROWS * len(NODES)


_put = specrows.SpecRow.put
_told = specrows.SpecRow.told


def _fit_only(self: specrows.SpecRow, name: str, result: Any, cap: Any) -> bool:
    old = self.cells.get(name)
    if old is not None and self.table[old][0].fits == result.fits:
        return False
    return _put(self, name, result, cap)


def _no_capacity(self: specrows.SpecRows, name: str, node: Any, cap: Any) -> None:
    for row in self.rows.values():
        if node is None:
            row.drop(name)
        else:
            row.put(name, row.verdict(node, None), None)


def _no_victims(self: specrows.SpecRow) -> Any:
    victims, self.victims = self.victims, 0
    try:
        return _told(self)
    finally:
        self.victims = victims


def _only_added(self: hazards.KeptFits, name: str, node: Any) -> set[Any]:
    moved = set()
    for req, names in self.fitting.items():
        if node is not None and name not in names and placement.fits_node(req, node):
            names.append(name)
            names.sort()
            moved.add(req)
    return moved


_fits_node = hazards.KeptFits.node


def _none_moved(self: hazards.KeptFits, name: str, node: Any) -> set[Any]:
    _fits_node(self, name, node)
    return set()


PLANTED: dict[str, tuple[Any, str, Callable[..., Any], str]] = {
    "fit-only": (specrows.SpecRow, "put", _fit_only, "pending"),
    "no-capacity": (specrows.SpecRows, "node", _no_capacity, "pending"),
    "no-victims": (specrows.SpecRow, "told", _no_victims, "pending"),
    "fits-never-removed": (hazards.KeptFits, "node", _only_added, "hazards"),
    "fits-moved-not-told": (hazards.KeptFits, "node", _none_moved, "hazards"),
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_narrower_cell_update_is_caught(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    owner, attr, planted, check = PLANTED[name]
    monkeypatch.setattr(owner, attr, planted)
    why, _ = _run()
    assert f"check {check}:" in why, why


def test_a_pending_pod_whose_row_told_the_same_keeps_its_piece() -> None:
    """A label no Pending pod selects, on one node: every Pending pod is re-judged on that node's column, each
    row's told findings and message are equal to before, so each pod keeps its piece (the same objects);
    a taint changes every row's message, so each pod's piece is made again."""
    opts = check_options()
    ev = IncrementalEvaluator(opts)
    pair = Pair(ev, FullEvaluator(opts))
    pair.reset(LIST)
    pair.assess(START)
    keeper: Any = ev._keepers["pending"]
    pieces = dict(keeper.found)
    relabelled = _node("gpu-f", team="y")
    relabelled["metadata"]["labels"]["rack"] = "r7"
    pair.apply(relabelled, False)
    assert not _differs(*pair.assess(START + 60))
    assert pieces and all(keeper.found[k] is p for k, p in pieces.items())
    pair.apply(_node("gpu-f", team="y", taints=[TAINT]), False)
    assert not _differs(*pair.assess(START + 120))
    assert all(keeper.found[k] is not p for k, p in pieces.items())


def test_pods_of_two_requirements_recounted_by_one_change_each_read_their_own() -> None:
    """hazards' recount asks each requirement's kept list once per batch (``_recount``): two running pods whose
    requirements differ (pool and team, team alone) and whose lists one node's change moves (gpu-f joins team
    x) must each read their own count (3 and 4), as the full evaluator counts them."""
    listed = [
        *(o for o in LIST if o["kind"] == "Node"),
        _node("gpu-h", team="x") | {"metadata": {"name": "gpu-h", "labels": {"team": "x", "pool": "other"}}},
        _held(),
        pod("held-2", 1, "gpu-c", selector={"team": "x"}),
    ]
    opts = check_options()
    ev = IncrementalEvaluator(opts)
    pair = Pair(ev, FullEvaluator(opts))
    pair.reset(listed)
    assert not _differs(*pair.assess(START))
    pair.apply(_node("gpu-f", team="x"), False)
    got, want = pair.assess(START + 60)
    assert not _differs(got, want), _differs(got, want)
    counts = {f.pod: f.fits_elsewhere for f in got.result.findings if f.check == "hazards"}
    assert counts == {"ml/held": 3, "ml/held-2": 4}, counts
