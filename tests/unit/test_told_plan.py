"""``specrows.told_to`` by a plan made once per graded findings a row's pods were told from (``told_plan``,
``told_by``: what pending's ``_retell`` shares across a spec's pods) gives what telling each pod on its own
gives: the same findings, and the same objects where a pod keeps its own (the kept judgment's diff reads
identity). Random graded tuples from one pool, the row's own pod among the refs."""

from __future__ import annotations

import random

from gpulabel.checks.pending.specrows import told_by, told_plan, told_to
from gpulabel.model.findings import Finding

POOL = [Finding("pending", f"r{i % 5}", pod="ns/own", count=i, severity="warning") for i in range(12)]


def _told_alone(
    graded: tuple[Finding, ...], ref: str, before: tuple[tuple[Finding, ...], tuple[Finding, ...]] | None
) -> tuple[Finding, ...]:
    """What ``told_to`` gave before the plans: each pod on its own."""
    mine = dict(zip(map(id, before[0]), before[1], strict=True)) if before else {}
    return tuple(mine.get(id(f)) or (f if f.pod == ref else f.about(ref)) for f in graded)


def test_told_by_a_shared_plan_is_told_alone() -> None:
    rng = random.Random(5)
    for _ in range(2000):
        was = tuple(rng.sample(POOL, rng.randint(0, 6)))
        now = tuple(rng.sample(POOL, rng.randint(0, 6)))
        plan = told_plan(now, was)
        for ref in ("ns/own", "ns/a", "ns/b"):
            mine = _told_alone(was, ref, None)
            want = _told_alone(now, ref, (was, mine))
            kept = {id(f) for f in (*mine, *now)}  # a pod's own finding kept, or the row's own pod's
            for got in (told_by(plan, ref, mine), told_to(now, ref, (was, mine))):
                assert got == want
                assert all(g is w for g, w in zip(got, want, strict=True) if id(w) in kept), (ref, was, now)
                assert all(id(g) not in kept for g, w in zip(got, want, strict=True) if id(w) not in kept)
        assert told_to(now, "ns/a") == _told_alone(now, "ns/a", None)
