"""bench/autoscale_bench.py runs, and the pods it times get every kind of verdict (the cost it measures is really
paid: pods a NodePool serves, pods one is launching a node for, pods none serves by an unknown key or a value)."""

from __future__ import annotations

import re

import pytest
from bench import autoscale_bench


def test_the_bench_runs_gives_every_kind_of_verdict_and_prints_the_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert autoscale_bench.main(["--nodes", "60", "--nodepools", "10", "--pending", "40", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    verdicts = re.search(r"verdicts \{'no-autoscaler': (\d+), 'node-coming': (\d+), 'nodepool-can': (\d+)\}", out)
    assert verdicts is not None and all(int(n) > 0 for n in verdicts.groups()), out
    assert "2 NodeClaims in flight" in out
    assert "ratio:" in out and "(goal < 1.20x); load average" in out


def test_the_mix_of_asks() -> None:
    products = ["a", "b"]
    asks = [autoscale_bench.ask(i, products) for i in range(8)]
    assert asks[0] == {autoscale_bench.TEMPLATE_GPU: "a"} and asks[4] == {autoscale_bench.TEMPLATE_GPU: "b"}
    assert set(asks[1]) == {"nvidia.com/gpu.product"}
    assert set(asks[2]) == {"feature.node.kubernetes.io/custom-gpu-training"}
    assert asks[3] == {autoscale_bench.TEMPLATE_GPU: "NVIDIA-A100-SXM4-80GB"}
