"""bench/new_kinds_bench.py runs, and the kinds it adds are read and judged by the checks it times."""

from __future__ import annotations

import pytest
from bench import new_kinds_bench

from gpulabel.checks.registry import BUILTIN, run_checks
from gpulabel.model.cluster import ClusterState


def test_the_bench_runs_and_prints_the_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--nodes", "60", "--nodepools", "3", "--flavors", "8", "--pending", "20", "--rounds", "1"]
    assert new_kinds_bench.main(args) == 0
    out = capsys.readouterr().out
    assert "checks alone:" in out and "(goal <= 1.20x)" in out


def test_the_added_kinds_are_what_the_new_checks_read() -> None:
    objects = new_kinds_bench.extended(60, nodepools=3, flavors=8, pending=20)
    state = ClusterState.from_objects(("t", o) for o in objects)
    assert {"NodePool", "ResourceFlavor", "ClusterQueue"} <= state.kinds
    queues = next(p for p in run_checks(state, BUILTIN.options()).parts if p.command == "queues")
    # every fourth flavor names a product no node has: two of eight select no node
    assert sorted(f.reason for f in queues.findings if f.reason == "no-node") == ["no-node", "no-node"]
