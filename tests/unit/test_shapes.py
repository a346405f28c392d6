"""The readers' two ways agree: an object that fits its shape (read without checks) gives the record the
checking reader gives, and one that does not gets the checking reader's record or its one-line error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gpulabel.cluster.snapshot import load_snapshots
from gpulabel.errors import SnapshotError
from gpulabel.model import readers
from gpulabel.model.shapes import NODE_SHAPE, POD_SHAPE, fits
from tests.unit.test_fuzz import N, json_values, label_maps, maybe, nodes, quantities, short, specs

WHERE = "s.json: items[0]"

resources = st.fixed_dictionaries({}, optional={"requests": maybe(quantities), "limits": maybe(quantities)})
containers = st.lists(
    maybe(st.fixed_dictionaries({"name": maybe(short)}, optional={"resources": maybe(resources)})), max_size=2
)
resource_health = st.fixed_dictionaries(
    {},
    optional={
        "resourceID": maybe(st.one_of(short, json_values)),
        "health": maybe(st.sampled_from(["Healthy", "Unhealthy", "Unknown", ""])),
    },
)
statuses = st.lists(
    maybe(
        st.fixed_dictionaries(
            {"name": maybe(short)},
            optional={
                "restartCount": maybe(st.integers(0, 3)),
                "state": maybe(st.fixed_dictionaries({}, optional={"waiting": maybe(st.just({"reason": "X"}))})),
                "allocatedResources": maybe(quantities),
                # KEP-4680 (core/v1 ResourceStatus, ResourceHealth)
                "allocatedResourcesStatus": maybe(
                    st.lists(
                        maybe(
                            st.fixed_dictionaries(
                                {"name": maybe(st.sampled_from(["nvidia.com/gpu", "claim:c/gpu"]))},
                                optional={"resources": maybe(st.lists(maybe(resource_health), max_size=2))},
                            )
                        ),
                        max_size=2,
                    )
                ),
            },
        )
    ),
    max_size=2,
)
pod_conditions = st.fixed_dictionaries(
    {},
    optional={
        "type": maybe(st.sampled_from(["PodScheduled", "Ready", "PodResizePending"])),
        "status": maybe(st.sampled_from(["True", "False"])),
        "reason": maybe(st.sampled_from(["Unschedulable", "Infeasible"])),
        "message": maybe(short),
    },
)
pods = st.fixed_dictionaries(
    {
        "kind": st.just("Pod"),
        "metadata": maybe(
            st.fixed_dictionaries(
                {"name": maybe(st.sampled_from(["p", ""]))},
                optional={
                    "namespace": maybe(short),
                    "labels": maybe(label_maps),
                    "ownerReferences": maybe(
                        st.lists(maybe(st.fixed_dictionaries({"kind": maybe(short), "uid": maybe(short)})), max_size=2)
                    ),
                },
            )
        ),
    },
    optional={
        "spec": maybe(
            st.one_of(
                specs,
                specs.flatmap(
                    lambda s: st.fixed_dictionaries(
                        {"containers": maybe(containers)},
                        optional={
                            "initContainers": maybe(containers),
                            "overhead": maybe(quantities),
                            "priority": maybe(st.integers()),
                            "schedulingGates": json_values,
                        },
                    ).map(lambda more: {**s, **more})
                ),
            )
        ),
        "status": maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "phase": maybe(st.sampled_from(["Pending", "Running", "Failed", ""])),
                    "reason": maybe(st.sampled_from(["UnexpectedAdmissionError", "Evicted", ""])),
                    "message": maybe(st.sampled_from(["Pod was rejected: Resources cannot be allocated", ""])),
                    "conditions": maybe(st.lists(maybe(pod_conditions), max_size=3)),
                    "containerStatuses": maybe(statuses),
                    "resourceClaimStatuses": maybe(st.lists(maybe(st.just({"name": "c"})), max_size=2)),
                },
            )
        ),
    },
)


def _outcome(read: Any, obj: Any) -> Any:
    try:
        return read(obj)
    except SnapshotError as err:
        return f"error: {err}"


@settings(max_examples=N, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=pods)
def test_a_pod_is_read_the_same_whether_it_fits_its_shape_or_not(obj: dict[str, Any]) -> None:
    event("fits" if fits(obj, POD_SHAPE) else "checked")
    got = _outcome(lambda o: readers.pod_from_json(o, WHERE, {}), obj)
    assert got == _outcome(lambda o: readers._checked_pod(o, WHERE, {}), obj)


@settings(max_examples=N, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=nodes)
def test_a_node_is_read_the_same_whether_it_fits_its_shape_or_not(obj: dict[str, Any]) -> None:
    event("fits" if fits(obj, NODE_SHAPE) else "checked")
    got = _outcome(lambda o: readers.node_from_json(o, WHERE, {}), obj)
    assert got == _outcome(lambda o: readers._checked_node(o, WHERE), obj)


def test_the_nodes_of_one_load_share_their_equal_quantities(tmp_path: Path) -> None:
    status = {"allocatable": {"cpu": "8", "nvidia.com/gpu": "4"}, "capacity": {"cpu": "8", "nvidia.com/gpu": "4"}}
    items = [{"kind": "Node", "metadata": {"name": f"n{i}"}, "status": status} for i in range(3)]
    items.append({"kind": "Node", "metadata": {"name": "other"}, "status": {"allocatable": {"cpu": "4"}}})
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"kind": "List", "items": items}))
    n0, n1, n2, other = load_snapshots([str(path)]).nodes
    assert n0.amounts == {"cpu": 8000, "nvidia.com/gpu": 4} and other.amounts == {"cpu": 4000}
    assert n0.amounts is n1.amounts is n2.amounts and n0.capacity is n2.capacity
    assert other.amounts is not n0.amounts and other.capacity == {}


def test_what_the_api_writes_fits_and_a_wrong_type_is_named_by_the_checking_reader() -> None:
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "x"}},
        "spec": {"nodeName": "n1", "nodeSelector": {"a": "b"}, "containers": [{"name": "c"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }
    assert fits(pod, POD_SHAPE)
    assert readers.pod_from_json(pod, WHERE) == readers._checked_pod(pod, WHERE, None)
    bad = {**pod, "metadata": {**pod["metadata"], "labels": {"app": 1}}}
    assert not fits(bad, POD_SHAPE)
    assert _outcome(lambda o: readers.pod_from_json(o, WHERE), bad) == (
        "error: s.json: items[0] (pod p): metadata.labels[app] is the number 1, not a string"
    )
    wrong = {**pod, "spec": {**pod["spec"], "nodeSelector": {"a": True}}}
    assert not fits(wrong, POD_SHAPE)
    assert _outcome(lambda o: readers.pod_from_json(o, WHERE), wrong).startswith("error: s.json: items[0] (pod p): ")


def _real_objects() -> list[dict[str, Any]]:
    """Every Pod and Node of the bundled examples and of a small synthetic cluster (taints, pools, operands)."""
    from bench import synth

    from gpulabel.cluster.snapshot import iter_objects, read_documents

    found = [o for o in synth.objects(300) if o["kind"] in ("Pod", "Node")]
    for path in sorted(Path("examples").glob("*.yaml")) + sorted(Path("examples").glob("*.json")):
        for doc in read_documents(path.read_bytes(), str(path)):
            found += [o for _, o in iter_objects(doc, str(path)) if o.get("kind") in ("Pod", "Node")]
    return found


def test_every_pod_and_node_of_the_examples_and_synth_fits_and_reads_the_same() -> None:
    objs = _real_objects()
    assert sum(o["kind"] == "Node" and bool(o.get("spec", {}).get("taints")) for o in objs) > 10
    for obj in objs:
        if obj["kind"] == "Pod":
            assert fits(obj, POD_SHAPE), obj["metadata"]["name"]
            assert readers.pod_from_json(obj, WHERE, {}) == readers._checked_pod(obj, WHERE, {})
        else:
            assert fits(obj, NODE_SHAPE), obj["metadata"]["name"]
            assert readers.node_from_json(obj, WHERE, {}) == readers._checked_node(obj, WHERE)
