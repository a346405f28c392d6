"""The incremental evaluator agrees with a full run on a 500-node cluster whose random objects are mutated.

A property test over the generator of tests/unit/test_incremental.py: Hypothesis draws the seed of a
sequence (its options, its events: nodes, pods, DaemonSets, the ClusterPolicy, DRA and NFD objects
changed, deleted and brought back, relists, time passing), run on one 500-node bench.synth cluster
with problems of every kind; after every batch the IncrementalEvaluator and the FullEvaluator must
answer the same Assessment. Hypothesis shrinks a failing seed to the smallest it finds and prints it.
"""

from __future__ import annotations

from bench import synth
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulabel.checks.engine.incremental import IncrementalEvaluator
from tests.unit.test_incremental import _sequences

BASE = {"synth-500": synth.objects(500, seed=11, problem_rate=0.03, workloads_per_gpu_node=0.3)}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_incremental_equals_full_on_500_nodes_after_random_mutations(seed: int) -> None:
    failure = next(_sequences(IncrementalEvaluator, 1, seed=seed, bases=BASE), "")
    assert not failure, failure


def test_the_500_node_cluster_has_problems_for_every_check_to_find() -> None:
    kinds = {o["kind"] for o in BASE["synth-500"]}
    assert sum(o["kind"] == "Node" for o in BASE["synth-500"]) == 500
    assert {"Node", "Pod", "DaemonSet", "ClusterPolicy"} <= kinds
