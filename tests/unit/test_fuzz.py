"""Hostile input: arbitrary JSON where a pod spec, a manifest or a snapshot should be.

Nothing may raise anything but the project's own one-line errors, whatever the shape.

``GPULABEL_FUZZ_EXAMPLES`` sets the examples per test (default 300, fast enough for
every run); ``GPULABEL_FUZZ_EXAMPLES=10000`` is the thorough run.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gpulabel.cluster.manifests import workloads_from_bytes
from gpulabel.cluster.snapshot import load_snapshots
from gpulabel.errors import GpulabelError
from gpulabel.k8s.nodeaffinity import compile_pod_spec
from gpulabel.k8s.podvalidation import _POD_SPEC, decode_error, validate_pod_spec
from gpulabel.model.cluster import node_from_json
from tests.objects import node

N = int(os.environ.get("GPULABEL_FUZZ_EXAMPLES", "300"))
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


@settings(max_examples=N, suppress_health_check=[HealthCheck.too_slow])
@given(spec=specs)
def test_validation_then_matching_never_raises(spec: dict[str, Any]) -> None:
    if decode_error(spec) is not None:
        return  # the API server would refuse the JSON itself: nothing to match
    validate_pod_spec(spec)
    req = compile_pod_spec(spec)
    for n in NODES:
        req.match(n, full=True)


@settings(max_examples=N, suppress_health_check=[HealthCheck.too_slow])
@given(spec=st.one_of(specs, st.dictionaries(st.sampled_from(["affinity", "tolerations", "nodeName"]), json_values)))
def test_the_fast_type_check_never_passes_a_spec_the_decoder_refuses(spec: dict[str, Any]) -> None:
    from gpulabel.k8s.podvalidation import _decode, _well_typed

    if _well_typed(spec):
        assert _decode(spec, "PodSpec", _POD_SPEC, "spec") is None
    assert decode_error(spec) == _decode(spec, "PodSpec", _POD_SPEC, "spec")


@settings(max_examples=N, suppress_health_check=[HealthCheck.too_slow])
@given(spec=json_values)
def test_arbitrary_json_as_a_pod_spec_is_refused_or_validated(spec: Any) -> None:
    if decode_error(spec) is None:  # it decodes: a mapping, or null for an empty spec
        validate_pod_spec(spec or {})


@settings(max_examples=N, suppress_health_check=[HealthCheck.too_slow])
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


@settings(max_examples=N, suppress_health_check=[HealthCheck.too_slow])
@given(doc=json_values)
def test_arbitrary_json_as_a_snapshot_is_a_clear_error_or_a_state(doc: Any) -> None:
    _load(json.dumps(doc).encode())


@settings(max_examples=N, suppress_health_check=[HealthCheck.too_slow])
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


@settings(max_examples=N, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=200))
def test_arbitrary_bytes_as_a_snapshot_are_a_clear_error_or_a_state(data: bytes) -> None:
    _load(data)


@settings(max_examples=N, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_as_a_feature_file_never_raise_and_give_only_valid_labels(data: bytes) -> None:
    from gpulabel.k8s.labels import is_valid_key, is_valid_value
    from gpulabel.model.featurefile import parse_feature_text

    ff = parse_feature_text(data, "n.env", "n")
    for key, value in ff.desired().items():
        assert is_valid_key(key) and is_valid_value(value)
    assert all("\n" not in str(p) for p in ff.problems)


# -- near-objects: well-typed most of the time, hostile in one place or another ------------


def maybe(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually a value of the API's type, sometimes anything at all."""
    return st.one_of(good, good, good, json_values)


short = st.text(max_size=12)
label_maps = st.dictionaries(
    st.sampled_from(["nvidia.com/gpu.present", "a", "nvidia.com/gpu.count"]), short, max_size=3
)
field_sets = st.recursive(
    st.just({}),
    lambda c: st.dictionaries(st.sampled_from(["f:metadata", "f:labels", "f:a", "f:spec", "."]), c),
    max_leaves=8,
)
managed_entries = st.fixed_dictionaries(
    {},
    optional={
        "manager": maybe(short),
        "operation": maybe(st.sampled_from(["Apply", "Update"])),
        "time": maybe(st.sampled_from(["2026-11-29T12:00:00Z", "", "x"])),
        "fieldsType": maybe(st.just("FieldsV1")),
        "fieldsV1": maybe(field_sets),
    },
)
taint_items = st.fixed_dictionaries(
    {}, optional={"key": maybe(short), "value": maybe(short), "effect": maybe(st.sampled_from(["NoSchedule", "x"]))}
)
conditions = st.fixed_dictionaries(
    {},
    optional={
        "type": maybe(st.sampled_from(["Ready", "MemoryPressure", "GPUXIDErrors"])),
        "status": maybe(st.sampled_from(["True", "False"])),
        "reason": maybe(st.one_of(short, json_values)),
        "message": maybe(short),
        "lastTransitionTime": maybe(st.sampled_from(["2026-12-01T08:00:00Z", "x"])),
    },
)
quantities = st.dictionaries(
    st.sampled_from(["nvidia.com/gpu", "cpu", "memory", "nvidia.com/mig-1g.5gb"]),
    st.one_of(st.sampled_from(["1", "8", "0", "1Gi", "-1", "x"]), json_values),
    max_size=3,
)
nodes = st.fixed_dictionaries(
    {
        "kind": st.just("Node"),
        "metadata": st.fixed_dictionaries(
            {"name": st.sampled_from(["a", "b", "gpu-1"])},
            optional={
                "labels": maybe(label_maps),
                "annotations": maybe(label_maps),
                "managedFields": maybe(st.lists(maybe(managed_entries), max_size=3)),
            },
        ),
    },
    optional={
        "spec": maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "unschedulable": maybe(st.booleans()),
                    "taints": maybe(st.lists(maybe(taint_items), max_size=3)),
                },
            )
        ),
        "status": maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "allocatable": maybe(quantities),
                    "capacity": maybe(quantities),
                    "conditions": maybe(st.lists(maybe(conditions), max_size=3)),
                },
            )
        ),
    },
)
pods = st.fixed_dictionaries(
    {
        "kind": st.just("Pod"),
        "metadata": st.fixed_dictionaries(
            {"name": st.just("p"), "namespace": maybe(short)},
            optional={
                "ownerReferences": maybe(
                    st.lists(st.fixed_dictionaries({"kind": maybe(short), "uid": maybe(short)}), max_size=2)
                )
            },
        ),
    },
    optional={
        "spec": maybe(specs),
        "status": maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "phase": maybe(st.sampled_from(["Pending", "Running"])),
                    "conditions": maybe(st.lists(maybe(conditions), max_size=2)),
                },
            )
        ),
    },
)
daemonsets = st.fixed_dictionaries(
    {"kind": st.just("DaemonSet"), "metadata": st.fixed_dictionaries({"name": st.just("ds"), "uid": maybe(short)})},
    optional={
        "spec": maybe(
            st.fixed_dictionaries(
                {"template": maybe(st.fixed_dictionaries({"spec": maybe(specs)}))},
                optional={"selector": maybe(st.fixed_dictionaries({}, optional={"matchLabels": maybe(label_maps)}))},
            )
        ),
        "status": maybe(
            st.dictionaries(st.sampled_from(["numberReady", "desiredNumberScheduled"]), maybe(st.integers()))
        ),
    },
)
devices = st.fixed_dictionaries(
    {"name": maybe(short)},
    optional={
        "attributes": maybe(
            st.dictionaries(short, st.dictionaries(st.sampled_from(["string", "int", "version"]), json_values))
        ),
        "capacity": maybe(st.dictionaries(short, st.fixed_dictionaries({"value": maybe(st.just("40Gi"))}))),
    },
)
dra_objects = st.one_of(
    st.fixed_dictionaries(
        {
            "kind": st.just("ResourceSlice"),
            "apiVersion": st.just("resource.k8s.io/v1"),
            "metadata": st.just({"name": "s"}),
        },
        optional={
            "spec": maybe(
                st.fixed_dictionaries(
                    {
                        "driver": maybe(st.just("gpu.nvidia.com")),
                        "nodeName": maybe(short),
                        "pool": maybe(st.fixed_dictionaries({"name": maybe(short)})),
                        "devices": maybe(st.lists(maybe(devices), max_size=3)),
                    }
                )
            )
        },
    ),
    st.fixed_dictionaries(
        {
            "kind": st.sampled_from(["DeviceClass", "ResourceClaim", "ResourceClaimTemplate"]),
            "metadata": st.just({"name": "c"}),
        },
        optional={"spec": json_values},
    ),
)
objects = st.lists(
    st.one_of(
        nodes,
        nodes,
        pods,
        daemonsets,
        dra_objects,
        st.builds(
            lambda: {"kind": "ClusterPolicy", "metadata": {"name": "cp"}, "spec": {"driver": {"enabled": False}}}
        ),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=N, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=objects)
def test_near_objects_with_managed_fields_status_and_dra_load_and_check_without_a_traceback(items: list[Any]) -> None:
    """managedFields, status (allocatable, conditions, taints) and DRA objects: a state, or one line."""
    from gpulabel.app.report import report_html
    from gpulabel.checks.labels.sources import node_sources
    from gpulabel.checks.registry import BUILTIN, run_checks

    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        f.write(json.dumps({"kind": "List", "items": items}).encode())
        f.flush()
        try:
            state = load_snapshots([f.name])
        except GpulabelError as err:
            assert "\n" not in str(err) and str(err).startswith(f.name)
            event("refused with one line")
            return
    event("loaded and checked")
    run_checks(state, BUILTIN.options())
    for n in state.nodes:
        for source in node_sources(n):
            source.line()
    report_html(state, generated="t")
