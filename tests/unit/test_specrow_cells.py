"""A Pending spec's row keeps each node's cell as two lists from its fill and the changes over them
(``specrows._Cells``): it must answer as the dictionary of every node's cell would, through nodes put, dropped,
joining under new names and leaving, past the point where the lists are made again."""

from __future__ import annotations

import random

import pytest

from gpulabel.checks.pending.specrows import _Cells


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
