"""Malformed DRA objects are one SnapshotError naming the object and field, never a crash."""

from __future__ import annotations

import copy
from typing import Any

from bench import draobjects as dra
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulabel.checks.dra.rules import explain_node
from gpulabel.errors import SnapshotError
from gpulabel.k8s.dra.evaluator import DraEvaluator
from gpulabel.k8s.dra.plugin import DraState
from gpulabel.model.cluster import node_from_json
from tests.objects import node

N1 = node_from_json(node("n1", {"zone": "a"}))

JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2), st.just({})
)
GOOD = [
    dra.resource_slice("n1", [dra.gpu_device("gpu-0", 0, dra.GPUS[0], "550.54.15")], node="n1"),
    dra.GPU_CLASS,
    dra.resource_slice(
        "shared",
        [dra.gpu_device("gpu-0", 0, dra.GPUS[2], "550.54.15")],
        pool="shared",
        node_selector={
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
        },
    ),
    dra.claim(
        "c",
        dra.claim_spec(
            [dra.request("r", dra.exactly("gpu.nvidia.com", "true", count=2))], match_attribute="gpu.nvidia.com/x"
        ),
        allocation=[("r", "gpu.nvidia.com", "n1", "gpu-0")],
    ),
    dra.claim_template("t", dra.claim_spec([dra.request("r", first_available=[("a", dra.exactly("x"))])])),
]


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.extend(_paths(v, (*prefix, i)))
    return out


@settings(max_examples=300)
@given(which=st.integers(0, len(GOOD) - 1), pick=st.integers(0, 10_000), junk=JUNK)
def test_one_corrupted_field_is_an_error_naming_the_object_or_is_accepted(which: int, pick: int, junk: Any) -> None:
    obj = copy.deepcopy(GOOD[which])
    paths = [p for p in _paths(obj) if p and p[0] != "kind"]
    path = paths[pick % len(paths)]
    parent = obj
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = junk
    others = [(f"good{i}", o) for i, o in enumerate(GOOD) if i != which]
    try:
        state = DraState.from_objects([("f.json", obj), *others])
    except SnapshotError as err:
        assert str(err).startswith("f.json")
        return
    # whatever parsed is allocated and explained without crashing
    for claim in state.claims:
        explain_node(DraEvaluator(state), N1, [claim])
        DraEvaluator(state).allocate(N1, [claim])
