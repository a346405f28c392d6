"""k8s.resources: quantities, a pod's requests as the scheduler sums them, NodeResourcesFit, the message."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from gpulabel.checks.pending.rules import pending_pods
from gpulabel.checks.placement.fit import predict
from gpulabel.k8s.resources import (
    NodeCapacity,
    QuantityError,
    apply_request_defaults,
    format_amount,
    node_amounts,
    parse_quantity,
    pod_requests,
    scheduler_amounts,
)
from gpulabel.model.cluster import ClusterState, node_from_json, pod_from_json


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1500m", Fraction(3, 2)),
        ("1Gi", 2**30),
        ("0.5", Fraction(1, 2)),
        (".5", Fraction(1, 2)),
        ("1.", 1),
        ("+1", 1),
        ("1e3", 1000),
        ("1E", 10**18),
        ("100Ki", 102400),
        ("0.0000000001", Fraction(1, 10**9)),  # finer than 1n rounds up
        ("0", 0),
        (".", 0),  # the scanner is more permissive than its error's regular expression (measured on the API server)
        ("Gi", 0),
    ],
    ids=lambda v: str(v),
)
def test_a_quantity_parses_to_its_exact_value(text: str, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    "text",
    ["", "1x", "1 ", "1e", "0x10", "1Gi1", "9" * 5000],  # the last: gpulabel's own limit (4,000 digits)
    ids=lambda t: repr(t) if len(t) < 20 else f"{len(t)} digits",
)
def test_a_quantity_that_go_refuses_is_refused(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def c(name: str, requests: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, **extra}
    if requests is not None:
        out["resources"] = {"requests": requests}
    return out


CASES: list[tuple[str, dict[str, Any], dict[str, int]]] = [
    (
        "containers are summed",
        {"containers": [c("a", {"cpu": "500m", "memory": "1Gi"}), c("b", {"cpu": "250m", "nvidia.com/gpu": "1"})]},
        {"cpu": 750, "memory": 2**30, "nvidia.com/gpu": 1},
    ),
    (
        "an init container bigger than the containers sets the request",
        {"containers": [c("a", {"cpu": "1"})], "initContainers": [c("i", {"cpu": "2", "memory": "1Mi"})]},
        {"cpu": 2000, "memory": 2**20},
    ),
    (
        "a sidecar adds to the containers and to every later init container",
        {
            "containers": [c("a", {"cpu": "1"})],
            "initContainers": [
                c("side", {"cpu": "500m"}, restartPolicy="Always"),
                c("init", {"cpu": "1200m"}),
            ],
        },
        # containers 1 + sidecar 0.5 = 1.5; init peak = 1.2 + 0.5 = 1.7 wins
        {"cpu": 1700},
    ),
    (
        "a sidecar after an init container does not count for that init container",
        {
            "containers": [c("a", {"cpu": "1"})],
            "initContainers": [c("init", {"cpu": "1200m"}), c("side", {"cpu": "500m"}, restartPolicy="Always")],
        },
        {"cpu": 1500},
    ),
    (
        "overhead is added",
        {"containers": [c("a", {"cpu": "100m"})], "overhead": {"cpu": "250m", "memory": "120Mi"}},
        {"cpu": 350, "memory": 120 * 2**20},
    ),
    (
        "pod-level requests replace the containers' cpu and memory but not the GPUs",
        {
            "containers": [c("a", {"cpu": "100m", "nvidia.com/gpu": "2"})],
            "resources": {"requests": {"cpu": "3", "memory": "1Gi"}},
        },
        {"cpu": 3000, "memory": 2**30, "nvidia.com/gpu": 2},
    ),
    (
        "fractions round up as Value() does after summing",
        {"containers": [c("a", {"memory": "0.5"}), c("b", {"memory": "0.4"}), c("d", {"cpu": "1u"})]},
        {"memory": 1, "cpu": 1},
    ),
    ("a pod that requests nothing requests nothing", {"containers": [c("a")]}, {}),
]


@pytest.mark.parametrize(("spec", "want"), [(s, w) for _, s, w in CASES], ids=[n for n, _, _ in CASES])
def test_pod_requests(spec: dict[str, Any], want: dict[str, int]) -> None:
    assert scheduler_amounts(pod_requests(spec)) == want


def test_limits_become_requests_where_the_api_would_default_them() -> None:
    spec = {"containers": [{"name": "a", "resources": {"limits": {"nvidia.com/gpu": "1", "cpu": "2"}}}]}
    assert scheduler_amounts(pod_requests(apply_request_defaults(spec))) == {"nvidia.com/gpu": 1, "cpu": 2000}
    assert scheduler_amounts(pod_requests(spec)) == {}


def test_a_bound_pod_counts_a_larger_allocation_from_its_status() -> None:
    spec = {"containers": [c("a", {"cpu": "1"})]}
    status = {"containerStatuses": [{"name": "a", "allocatedResources": {"cpu": "2"}}]}
    assert scheduler_amounts(pod_requests(spec, status, bound=True)) == {"cpu": 2000}
    assert scheduler_amounts(pod_requests(spec, status, bound=False)) == {"cpu": 1000}


def test_a_bad_quantity_names_its_field() -> None:
    with pytest.raises(QuantityError, match=r"spec.containers\[0\].resources.requests.cpu: Invalid value: 'two'"):
        pod_requests({"containers": [c("a", {"cpu": "two"})]})


def test_format_amount_reads_like_a_quantity() -> None:
    assert [format_amount("cpu", 1500), format_amount("cpu", 2000), format_amount("memory", 16 * 2**30)] == [
        "1500m",
        "2",
        "16Gi",
    ]
    assert format_amount("nvidia.com/gpu", 3) == "3"


FIT: list[tuple[str, dict[str, int], dict[str, int], int, list[str]]] = [
    ("a pod that fits exactly fits", {"nvidia.com/gpu": 4}, {"nvidia.com/gpu": 4}, 0, []),
    ("one GPU too many is insufficient", {"nvidia.com/gpu": 4}, {"nvidia.com/gpu": 5}, 0, ["nvidia.com/gpu"]),
    (
        "a resource the node lacks entirely is insufficient",
        {},
        {"nvidia.com/mig-1g.5gb": 1},
        0,
        ["nvidia.com/mig-1g.5gb"],
    ),
    ("a full node refuses even an empty pod", {"pods": 2}, {}, 2, ["pods"]),
    ("a zero request never fails", {}, {"nvidia.com/gpu": 0}, 0, []),
    ("every lacking resource is reported", {"cpu": 100, "memory": 1}, {"cpu": 200, "memory": 2}, 0, ["cpu", "memory"]),
]


@pytest.mark.parametrize(("alloc", "want", "pods", "lacking"), [f[1:] for f in FIT], ids=[f[0] for f in FIT])
def test_node_resources_fit(alloc: dict[str, int], want: dict[str, int], pods: int, lacking: list[str]) -> None:
    alloc = {"pods": 110, **alloc}
    cap = NodeCapacity.of(alloc, [{}] * pods)
    assert [i.resource for i in cap.insufficient(want)] == lacking


def test_allocatable_is_read_in_the_schedulers_units() -> None:
    assert node_amounts({"cpu": "7910m", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "8"}) == {
        "cpu": 7910,
        "memory": 64 * 2**30,
        "pods": 110,
        "nvidia.com/gpu": 8,
    }


def node(name: str, gpus: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}},
    }


def pod(name: str, gpus: int, node_name: str = "", phase: str = "Running") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}
    spec["containers"][0]["resources"]["requests"] = {"nvidia.com/gpu": str(gpus)}
    if node_name:
        spec["nodeName"] = node_name
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "ml"}, "spec": spec, "status": {"phase": phase}}


def test_pending_names_the_lacking_gpu_and_predicts_the_schedulers_message() -> None:
    objs = [
        node("n1", 4),
        node("n2", 2),
        node("cpu", 0),
        pod("a", 3, "n1"),
        pod("b", 2, "n2"),
        pod("p", 2, phase="Pending"),
    ]
    state = ClusterState.from_objects([("t", o) for o in objs])
    (pending,) = pending_pods(state)
    assert [r.reason for r in pending.results] == ["insufficient nvidia.com/gpu"] * 3
    assert pending.results[1].failures[0].why == "requested 2, free 1 (allocatable 4, requested by its pods 3)"
    assert pending.predicted == (
        "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: "
        "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
    )


def test_a_finished_pod_frees_its_gpus() -> None:
    objs = [node("n1", 4), pod("done", 4, "n1", phase="Succeeded")]
    state = ClusterState.from_objects([("t", o) for o in objs])
    p = pod_from_json(pod("p", 4, phase="Pending"))
    assert predict(
        {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "4"}}}]}, state.nodes, state.pods
    ).feasible == ("n1",)
    assert p.requests == {"nvidia.com/gpu": 4}


def test_affinity_comes_before_resources_in_the_message() -> None:
    nodes = [node_from_json(node("n1", 1, {"pool": "a"})), node_from_json(node("n2", 8))]
    spec = {
        "nodeSelector": {"pool": "a"},
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}}}],
    }
    got = predict(spec, nodes, [])
    assert got.feasible == ()
    assert got.message == (
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_more_gpus_than_the_node_has_is_not_helped_by_preemption() -> None:
    got = predict(
        {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "9"}}}]},
        [node_from_json(node("n1", 8))],
        [],
    )
    assert got.message == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_a_node_without_allocatable_is_not_resource_checked() -> None:
    bare = node_from_json({"kind": "Node", "metadata": {"name": "bare"}})
    assert bare.amounts is None
    got = predict({"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "9"}}}]}, [bare], [])
    assert got.feasible == ("bare",)
