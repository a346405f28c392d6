"""A Pending spec's row keeps each node's cell as two lists from its fill and the changes over them
(``specrows._Cells``): it must answer as the dictionary of every node's cell would, through nodes put, dropped,
joining under new names and leaving, past the point where the lists are made again. And a row filled at once
(``SpecRow.fill``) must hold what the row put node by node (``SpecRow.put``) holds."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from gpulabel.checks.pending.specrows import SpecRow, _Cells
from gpulabel.checks.placement.fit import NodeIndex, place
from gpulabel.model.cluster import ClusterState
from tests.unit.pending_objects import JSON, node, pod


@pytest.mark.parametrize("seed", range(4))
def test_cells_answer_as_a_dictionary(seed: int) -> None:
    rng = random.Random(seed)
    names = sorted(f"node-{i:05d}" for i in range(rng.randrange(0, 300)))
    want = {n: rng.randrange(5) for n in names}
    cells = _Cells()
    cells.fill(list(names), [want[n] for n in names])
    for step in range(3000):  # more changes than nodes: the lists are made again (more than 1,024 changes)
        name = f"node-{rng.randrange(0, 2000):05d}" if rng.random() < 0.5 else rng.choice(names or ["node-x"])
        if rng.random() < 0.4:
            assert cells.pop(name, None) == want.pop(name, None)
        else:
            cells[name] = want[name] = rng.randrange(5)
        probe = rng.choice([name, f"node-{rng.randrange(0, 2000):05d}"])
        assert cells.get(probe) == want.get(probe), step
        assert (probe in cells) == (probe in want)
        assert len(cells) == len(want)
    assert all(cells[n] == i for n, i in want.items())
    with pytest.raises(KeyError):
        cells["not-a-node"]


def test_a_fill_sets_every_cell() -> None:
    cells = _Cells()
    cells.fill(["a", "b", "c"], [0, 1, 0])
    assert (len(cells), cells["b"], cells.get("d"), "c" in cells) == (3, 1, None, True)


def _state(seed: int) -> Any:
    """A random cluster: pools whose nodes interleave by name (a group's nodes in many runs), taints, cordons,
    nodes without GPUs, bound pods of several priorities (preemption: a node's own part), and Pending pods."""
    rng = random.Random(seed)
    objects: list[JSON] = []
    names = [f"n-{i:03d}" for i in range(rng.randrange(1, 120))]
    for name in names:
        spec: JSON = {}
        if rng.random() < 0.15:
            spec["taints"] = [{"key": "dedicated", "value": rng.choice("xy"), "effect": "NoSchedule"}]
        if rng.random() < 0.1:
            spec["unschedulable"] = True
        labels = {"pool": rng.choice(["a", "b", "c"]), "team": rng.choice(["x", "y"])}
        objects.append(node(name, rng.choice([None, "4", "8", "8", "8"]), labels, spec))
        for k in range(rng.randrange(0, 3)):
            objects.append(pod(f"{name}-run-{k}", rng.randrange(0, 5), name, priority=rng.choice([0, 5, 100])))
    for k in range(12):
        selector = rng.choice([None, {"pool": "a"}, {"team": "y"}, {"pool": "z"}])
        objects.append(pod(f"wait-{k}", rng.randrange(0, 10), priority=rng.choice([0, 10, 1000]), selector=selector))
    return ClusterState.from_objects((f"obj {i}", o) for i, o in enumerate(objects))


def _sums(row: SpecRow, names: list[str]) -> Any:
    """What a row tells and every sum it keeps (cells by their contents: a table's order is its own)."""
    groups = {reason: (g.names, g.scores) for reason, g in row.groups.items()}
    cells = {name: row.table[row.cells[name]] for name in names}
    held = Counter(row.cells[name] for name in names)
    assert row.uses == [held.get(i, 0) for i in range(len(row.uses))]  # each cell's users, counted
    return (groups, row.counts, row.fits, row.resolvable, row.victims, cells, len(row.cells), row.told())


@pytest.mark.parametrize("seed", range(12))
def test_a_filled_row_is_the_row_put_node_by_node(seed: int) -> None:
    """A new spec's row filled at once (by runs of one result, each group's lists built in the nodes' order,
    no sort) must hold what putting each node's cell one by one gives: the same groups' names in order and by
    shortfall, counts, cells and what it tells."""
    state = _state(seed)
    capacities = state.capacities()
    names = [n.name for n in state.nodes]
    index = NodeIndex(state.nodes, capacities)
    for p in state.pods:
        if p.node_name:
            continue
        filled, put = SpecRow(p), SpecRow(p)
        results = place(filled.req, index, full=True, request=filled.request)
        filled.fill(names, results, capacities)
        for n in state.nodes:
            put.put(n.name, put.verdict(n, capacities.get(n.name)), capacities.get(n.name))
        assert _sums(filled, names) == _sums(put, names), p.ref
