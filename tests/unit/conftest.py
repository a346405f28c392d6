"""The fast loop's marker: ``slow`` on the property tests and the large synthetic clusters.

``pytest tests/unit -n 2 -m 'not slow'`` leaves them out (CONTRIBUTING.md, "The fast loop");
``pytest`` without ``-m`` runs them, and so does CI (``scripts/test.sh``). Every Hypothesis test is
slow (hundreds of generated examples each); the others are named in :data:`SLOW`, each with its cost, and
the seeded random tests run their first seeds only (:data:`FAST_SEEDS`).
"""

from __future__ import annotations

import pytest

# test id (path from the repository root :: function) -> why it is slow
SLOW: dict[str, str] = {
    "tests/unit/test_incremental.py::test_incremental_equals_full_after_random_event_sequences": "seeded random "
    "event sequences, every batch compared with a full evaluation",
    "tests/unit/test_synth.py::test_20000_nodes_have_unique_pod_names_and_no_false_missing_operands": "a 20,000-node "
    "synthetic cluster, generated and checked",
    "tests/unit/test_placecmds.py::test_place_groups_thousands_of_nodes_into_a_few_lines": "thousands of nodes placed",
    "tests/unit/test_place_many.py::test_50000_pods_are_placed_in_seconds_in_bounded_memory": "50,000 pods placed "
    "in a gpulabel process, its memory measured",
    "tests/unit/test_hostile_before_after.py::test_50000_pods_are_placed_in_seconds": "50,000 pods placed",
    "tests/unit/test_baseline_stream.py::test_memory_does_not_grow_with_the_baseline": "a baseline of 200,000 "
    "findings written, two gpulabel processes measured",
    "tests/unit/test_baseline_stream.py::test_a_stale_entry_costs_its_finding_not_its_text": "a baseline of 100,000 "
    "findings written, two gpulabel processes measured",
    # not slow itself: it counts what the property test before it saw, so it runs where that one runs
    "tests/unit/test_advice.py::test_the_property_test_saw_fixes_and_refusals": "counts the property test's examples",
}

# seeded random tests (hand-written property tests, one case per seed) -> how many seeds the fast loop runs: the
# first ones; the others are slow, and CI runs every seed
FAST_SEEDS: dict[str, int] = {
    "tests/unit/test_dra_grouping.py::test_grouped_verdicts_equal_node_by_node_verdicts": 10,  # of 60
    "tests/unit/test_dra_grouping.py::test_grouping_holds_with_counters_per_device_nodes_rules_and_capacity": 5,  # 30
}


def _slow(item: pytest.Item) -> bool:
    test = item.nodeid.split("[", 1)[0]
    if getattr(getattr(item, "obj", None), "is_hypothesis_test", False) or test in SLOW:
        return True
    callspec = getattr(item, "callspec", None)
    return test in FAST_SEEDS and callspec is not None and int(callspec.params["seed"]) >= FAST_SEEDS[test]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _slow(item):
            item.add_marker(pytest.mark.slow)
