"""The kept judgment's regrouping by node (``judging._regroup``) equals ``node_findings`` of the new findings.

Random old and new tuples of findings drawn from one pool (the same objects, as keepers keep them): findings
come, go, are replaced, the same object twice, the whole tuple reordered. After ``_regroup`` the kept grouping
must be ``node_findings(new)`` and the nodes it says moved exactly those whose findings differ.
"""

from __future__ import annotations

import random

from gpulabel.checks.engine.judging import _regroup
from gpulabel.checks.engine.rootcause import node_findings
from gpulabel.model.findings import Finding

POOL = [
    Finding("operands", "not-ready", node=f"n{i % 7}", pod="" if i % 3 else "ns/p", baseline=i % 11 == 0)
    for i in range(40)
]


def _changed(rng: random.Random, old: tuple[Finding, ...]) -> tuple[Finding, ...]:
    new = list(old)
    for _ in range(rng.randint(0, 3)):
        op = rng.random()
        if op < 0.3 and new:
            new.pop(rng.randrange(len(new)))
        elif op < 0.6:
            new.insert(rng.randint(0, len(new)), rng.choice(POOL))
        elif new:
            new[rng.randrange(len(new))] = rng.choice(POOL)
    if rng.random() < 0.2:
        rng.shuffle(new)
    return tuple(new)


def test_regrouping_equals_grouping_again() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        old = tuple(rng.sample(POOL, rng.randint(0, 12)))
        new = _changed(rng, old)
        before = node_findings(f for f in old if not f.baseline)
        kept = {n: list(fs) for n, fs in before.items()}
        moved = _regroup(kept, old, new)
        want = node_findings(f for f in new if not f.baseline)
        assert kept == want, (old, new)
        assert moved == {n for n in before.keys() | want.keys() if before.get(n) != want.get(n)}, (old, new)
