"""A new check is one definition: ``check`` and both of the monitor's evaluators run it, and agree.

The checks of tests/unit/toy_checks.py are in no registry of gpulabel's: a Registry of their own is passed
in (``CheckOptions.registry``). The incremental evaluator has never heard of them; it runs them from their
definitions alone, over the random event sequences of tests/unit/test_incremental.py, and must answer
what the full evaluator answers after every batch. A planted wrong keeper (a pod's change missed) must be
caught, so the agreement can fail.
"""

from __future__ import annotations

from dataclasses import replace

from gpulabel.app.checks import check_options
from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.checks.engine.definition import Registry
from gpulabel.checks.engine.incremental import IncrementalEvaluator
from gpulabel.checks.registry import BUILTIN, run_checks
from tests.unit.test_incremental import BASES, START, Pair, _sequences
from tests.unit.toy_checks import CROWDED, PRODUCT, crowded_keeper

TOYS = Registry((PRODUCT, CROWDED))


def test_check_runs_a_definition_it_was_given() -> None:
    pair = Pair(FullEvaluator(check_options()), FullEvaluator(check_options()))
    pair.reset(BASES["lab-cluster.yaml"])
    state = pair.oracle.state()
    result = run_checks(state, replace(check_options(), registry=BUILTIN.with_check(PRODUCT).with_check(CROWDED)))
    parts = {p.command: p for p in result.parts}
    assert list(parts)[-2:] == ["product", "crowded"]
    gpu = [n.name for n in state.nodes if "nvidia.com/gpu.product" in n.labels]
    assert [f.node for f in parts["product"].findings] == gpu and gpu
    # graded by its own table; the context (no ClusterPolicy in this cluster) read
    assert {(f.reason, f.severity) for f in parts["product"].findings} == {("product-unmanaged", "warning")}
    assert parts["crowded"].findings and {f.severity for f in parts["crowded"].findings} == {"warning"}


def test_full_and_incremental_agree_on_a_check_they_never_heard_of() -> None:
    failures = list(_sequences(IncrementalEvaluator, 300, seed=7, registry=TOYS))
    assert not failures, f"{len(failures)} of 300 sequences disagree; first: {failures[0]}"
    opts = replace(check_options(), registry=TOYS)
    pair = Pair(IncrementalEvaluator(opts), FullEvaluator(opts))
    pair.reset(BASES["lab-cluster.yaml"])
    got, want = pair.assess(START)
    assert got.result == want.result
    assert {p.command for p in got.result.parts if p.findings} == {"product", "crowded"}


def test_a_wrong_keeper_is_caught() -> None:
    wrong = Registry((PRODUCT, replace(CROWDED, pieces=crowded_keeper(True))))
    caught = next(_sequences(IncrementalEvaluator, 300, seed=7, registry=wrong), "")
    assert "check crowded:" in caught, caught
