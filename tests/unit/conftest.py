"""The fast loop's marker: ``slow`` on the property tests and the large synthetic clusters.

``pytest tests/unit -n 2 -m 'not slow'`` leaves them out (CONTRIBUTING.md, "The fast loop");
``pytest`` without ``-m`` runs them, and so does CI (``scripts/test.sh``). Every Hypothesis test is
slow (hundreds of generated examples each); the others are named in :data:`SLOW`, each with its cost.
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
    # not slow itself: it counts what the property test before it saw, so it runs where that one runs
    "tests/unit/test_advice.py::test_the_property_test_saw_fixes_and_refusals": "counts the property test's examples",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        function = getattr(item, "obj", None)
        if getattr(function, "is_hypothesis_test", False) or item.nodeid.split("[", 1)[0] in SLOW:
            item.add_marker(pytest.mark.slow)
