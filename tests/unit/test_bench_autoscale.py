"""bench/autoscale_bench.py runs, and the pods it times get a verdict (the cost it measures is really paid)."""

from __future__ import annotations

import re

import pytest
from bench import autoscale_bench


def test_the_bench_runs_gives_verdicts_and_prints_the_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert autoscale_bench.main(["--nodes", "60", "--nodepools", "3", "--pending", "30", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"verdicts \{'no-autoscaler': [1-9]\d*\}", out), out
    assert "ratio:" in out and "(goal < 1.20x" in out
