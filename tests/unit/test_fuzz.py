"""Hostile input: arbitrary JSON where a pod spec, a manifest or a snapshot should be.

Nothing may raise anything but the project's own one-line errors, whatever the shape.
"""

from __future__ import annotations

import json
import tempfile
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulabel.cluster.manifests import workloads_from_bytes
from gpulabel.cluster.snapshot import load_snapshots
from gpulabel.errors import GpulabelError
from gpulabel.k8s.nodeaffinity import compile_pod_spec
from gpulabel.k8s.podvalidation import decode_error, validate_pod_spec
from gpulabel.model.cluster import node_from_json
from tests.objects import node

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20))
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=25,
)
OPERATORS = st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "", "in", "Near"])
expressions = st.fixed_dictionaries(
    {
        "key": st.one_of(st.text(max_size=15), st.sampled_from(["a", "example.com/k", "metadata.name"])),
        "operator": OPERATORS,
    },
    optional={"values": st.lists(st.one_of(st.text(max_size=8), st.integers()), max_size=3)},
)
terms = st.fixed_dictionaries(
    {},
    optional={"matchExpressions": st.lists(expressions, max_size=3), "matchFields": st.lists(expressions, max_size=2)},
)
specs = st.fixed_dictionaries(
    {},
    optional={
        "nodeSelector": st.dictionaries(st.text(max_size=10), st.one_of(st.text(max_size=8), st.integers())),
        "nodeName": st.one_of(st.text(max_size=10), st.integers()),
        "tolerations": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "key": st.text(max_size=8),
                    "operator": st.sampled_from(["Exists", "Equal", "", "Gt"]),
                    "value": st.text(max_size=8),
                    "effect": st.sampled_from(["NoSchedule", "NoExecute", "", "Bogus"]),
                },
            ),
            max_size=3,
        ),
        "affinity": st.fixed_dictionaries(
            {},
            optional={
                "nodeAffinity": st.fixed_dictionaries(
                    {},
                    optional={
                        "requiredDuringSchedulingIgnoredDuringExecution": st.one_of(
                            st.fixed_dictionaries({}, optional={"nodeSelectorTerms": st.lists(terms, max_size=3)}),
                            json_values,
                        )
                    },
                )
            },
        ),
    },
)
NODES = [
    node_from_json(node(n, labels))
    for n, labels in [("a", {"a": "1", "example.com/k": "8"}), ("b", {}), ("c", {"example.com/k": "x"})]
]


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@given(spec=specs)
def test_validation_then_matching_never_raises(spec: dict[str, Any]) -> None:
    if decode_error(spec) is not None:
        return  # the API server would refuse the JSON itself: nothing to match
    validate_pod_spec(spec)
    req = compile_pod_spec(spec)
    for n in NODES:
        req.match(n, full=True)


@settings(max_examples=1500)
@given(spec=json_values)
def test_arbitrary_json_as_a_pod_spec_is_refused_or_validated(spec: Any) -> None:
    if decode_error(spec) is None:  # it decodes: a mapping, or null for an empty spec
        validate_pod_spec(spec or {})


@settings(max_examples=800)
@given(doc=json_values)
def test_arbitrary_json_as_a_manifest_is_a_clear_error_or_workloads(doc: Any) -> None:
    try:
        workloads_from_bytes(json.dumps(doc).encode(), "m.json")
    except GpulabelError as err:
        assert "\n" not in str(err)


def _load(data: bytes) -> None:
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        f.write(data)
        f.flush()
        try:
            load_snapshots([f.name])
        except GpulabelError as err:
            assert "\n" not in str(err)
            assert str(err).startswith(f.name)


@settings(max_examples=800)
@given(doc=json_values)
def test_arbitrary_json_as_a_snapshot_is_a_clear_error_or_a_state(doc: Any) -> None:
    _load(json.dumps(doc).encode())


@settings(max_examples=300)
@given(
    items=st.lists(
        st.dictionaries(
            st.sampled_from(["kind", "metadata", "spec", "status"]),
            st.one_of(json_values, st.just("Node"), st.just("Pod")),
        ),
        max_size=4,
    )
)
def test_lists_of_near_objects_are_a_clear_error_or_a_state(items: list[Any]) -> None:
    _load(json.dumps({"kind": "List", "items": items}).encode())


@settings(max_examples=500)
@given(data=st.binary(max_size=200))
def test_arbitrary_bytes_as_a_snapshot_are_a_clear_error_or_a_state(data: bytes) -> None:
    _load(data)


@settings(max_examples=1000)
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_as_a_feature_file_never_raise_and_give_only_valid_labels(data: bytes) -> None:
    from gpulabel.k8s.labels import is_valid_key, is_valid_value
    from gpulabel.model.featurefile import parse_feature_text

    ff = parse_feature_text(data, "n.env", "n")
    for key, value in ff.desired().items():
        assert is_valid_key(key) and is_valid_value(value)
    assert all("\n" not in str(p) for p in ff.problems)
