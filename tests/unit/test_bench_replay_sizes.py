"""bench/replay_sizes.py runs: two sizes' workers answer every event in turn, and the report says the ratio."""

from __future__ import annotations

import re

import pytest
from bench import replay_sizes


def test_two_small_sizes_in_lockstep(capsys: pytest.CaptureFixture[str]) -> None:
    assert replay_sizes.main(["--nodes", "120", "--nodes", "60", "--events", "25"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^\| 60 \| [\d.]+ \| [\d.]+ \| [\d.]+ \|$", out, re.M), out
    assert re.search(r"^\| 120 \| [\d.]+ \| [\d.]+ \| [\d.]+ \|$", out, re.M), out
    assert re.search(r"^p99 at 120 / p99 at 60: [\d.]+x$", out, re.M), out
    assert "events timed: 25 at 60, 25 at 120" in out, out
    assert re.search(r"^  [\w-]+: [\d.]+ \(\d+\) / [\d.]+ \(\d+\) ms, [\d.]+x$", out, re.M), out


def test_it_wants_two_sizes() -> None:
    with pytest.raises(SystemExit):
        replay_sizes.main(["--nodes", "60", "--events", "5"])
