"""Kueue's objects as kinds: read from snapshots and paged LISTs, at v1beta2 or where only v1beta1 is served."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpulabel.cluster.live import load_cluster
from gpulabel.errors import SnapshotError
from gpulabel.k8s.taints import Taint, Toleration
from gpulabel.model.cluster import KIND, ClusterState
from gpulabel.model.kueue import (
    KUEUE_KINDS,
    clusterqueue_from_json,
    resourceflavor_from_json,
    workload_from_json,
)
from tests import kueueobjects as K
from tests.fakeapi import FakeApi, FakeClock, fake_client

NOEXEC = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def test_a_flavor_reads_its_labels_taints_tolerations_and_topology() -> None:
    obj = K.flavor(
        "a100-80",
        {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
        taints=[{"key": "dedicated", "value": "train", "effect": "NoSchedule"}],
        tolerations=[NOEXEC],
        topology="dc",
    )
    rf = resourceflavor_from_json(obj)
    assert rf.node_labels == {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    assert rf.node_taints == (Taint("dedicated", "train", "NoSchedule"),)
    assert rf.tolerations == (Toleration("nvidia.com/gpu", "Exists", "", "NoSchedule"),)
    assert rf.topology == "dc"


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1"])
def test_a_cluster_queue_reads_alike_at_both_versions(version: str) -> None:
    """v1beta2's spec.cohortName is v1beta1's spec.cohort (Kueue v0.17.0 apis/kueue/*/clusterqueue_types.go)."""
    obj = K.cluster_queue(
        "team", {"a100": {"nvidia.com/gpu": 16, "cpu": "100"}}, cohort="org", version=version,
        usage={"a100": {"nvidia.com/gpu": "4"}},
    )  # fmt: skip
    cq = clusterqueue_from_json(obj)
    assert cq.cohort == "org"
    assert [(f, q.resource, q.nominal, q.units) for f, q in cq.quotas()] == [
        ("a100", "cpu", "100", 100),
        ("a100", "nvidia.com/gpu", "16", 16),
    ]
    assert cq.usage == {("a100", "nvidia.com/gpu"): 4}


def test_a_workload_reads_its_pod_sets_admission_and_conditions() -> None:
    obj = K.workload("ml", "job-a", "team-q", gpus=4, count=2, tolerations=[NOEXEC], admitted_to=("team", "a100"))
    wl = workload_from_json(obj)
    assert wl.ref == "ml/job-a" and wl.queue == "team-q" and wl.admitted and wl.condition("QuotaReserved")
    (ps,) = wl.pod_sets
    assert (ps.name, ps.count, ps.requests["nvidia.com/gpu"]) == ("main", 2, 4)
    assert ps.requirements.tolerations == (Toleration("nvidia.com/gpu", "Exists", "", "NoSchedule"),)
    assert wl.cluster_queue == "team"
    assert [(a.name, dict(a.flavors), a.count) for a in wl.assignments] == [("main", {"nvidia.com/gpu": "a100"}, 2)]
    pending = workload_from_json(K.workload("ml", "job-b", "team-q"))
    assert not pending.admitted and pending.assignments == () and pending.cluster_queue == ""


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (K.flavor("f", {"k": 1}), "spec.nodeLabels[k] is the number 1, not a string"),  # type: ignore[dict-item]
        ({**K.cluster_queue("q", {"f": {"nvidia.com/gpu": "x"}})}, "nominalQuota"),
        ({**K.workload("ml", "w", "q"), "status": {"conditions": "Admitted"}}, "status.conditions is the string"),
    ],
)
def test_a_field_of_the_wrong_type_is_one_error_naming_it(obj: dict[str, object], message: str) -> None:
    with pytest.raises(SnapshotError, match=message.replace("[", r"\[").replace("]", r"\]")):
        ClusterState.from_objects([("s.json: items[0]", obj)])


def _objects() -> list[dict[str, object]]:
    return [
        K.flavor("a100", {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}),
        K.cluster_queue("team", {"a100": {"nvidia.com/gpu": 8}}),
        K.local_queue("ml", "team-q", "team"),
        K.topology("dc", ["cloud.provider.com/rack", "kubernetes.io/hostname"]),
        K.workload("ml", "job-a", "team-q"),
    ]


def test_a_snapshot_holds_each_kind_in_the_state() -> None:
    state = ClusterState.from_objects(("t", o) for o in _objects())
    assert state.kinds == set(KUEUE_KINDS)
    q = state.kueue
    assert list(q.flavors) == ["a100"] and list(q.cluster_queues) == ["team"]
    assert q.local_queues["ml/team-q"].cluster_queue == "team"
    assert q.topologies["dc"].levels == ("cloud.provider.com/rack", "kubernetes.io/hostname")
    assert list(q.workloads) == ["ml/job-a"]


def test_live_kueue_kinds_are_paged_lists_at_v1beta2(tmp_path: Path) -> None:
    api = FakeApi()
    for o in _objects():
        api.put(o)
    for i in range(501):  # two pages of the client's 500
        api.put(K.local_queue("ml", f"q{i:03d}", "team"))
    client = fake_client(tmp_path, api, FakeClock())
    state = load_cluster(client, KUEUE_KINDS)
    assert state.kinds == set(KUEUE_KINDS) and len(state.kueue.local_queues) == 502
    pages = api.queries("GET", "/apis/kueue.x-k8s.io/v1beta2/localqueues")
    assert [q.get("continue", "") for q in pages] == ["", "500"]


def test_where_only_v1beta1_is_served_the_kinds_are_listed_there(tmp_path: Path) -> None:
    """Kueue before v0.15 served only v1beta1: the LIST goes there, and its cohort field is read."""
    api = FakeApi()
    cq = K.cluster_queue("team", {"a100": {"nvidia.com/gpu": 8}}, cohort="org", version="v1beta1")
    api.objects["/apis/kueue.x-k8s.io/v1beta1/clusterqueues"] = {"/team": cq}
    client = fake_client(tmp_path, api, FakeClock())
    state = load_cluster(client, ["ClusterQueue", "ResourceFlavor"])
    assert state.kinds == {"ClusterQueue"}  # no flavor served at either version: not in the input
    assert state.kueue.cluster_queues["team"].cohort == "org"
    assert client.kind_path("ClusterQueue") == "/apis/kueue.x-k8s.io/v1beta1/clusterqueues"
    assert [p for m, p, _ in api.requests if "v1beta" in p] == [
        "/apis/kueue.x-k8s.io/v1beta2",
        "/apis/kueue.x-k8s.io/v1beta1",
        "/apis/kueue.x-k8s.io/v1beta1/clusterqueues",
    ]


def test_a_namespaced_kueue_path_puts_the_namespace_after_the_version(tmp_path: Path) -> None:
    client = fake_client(tmp_path, FakeApi(), FakeClock())
    assert client.kind_path("Workload", "ml") == "/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/workloads"
    assert client.kind_path("Pod", "ml") == "/api/v1/namespaces/ml/pods"
    assert client.kind_path("ResourceClaim", "ml") == "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims"
    assert KIND["Workload"].versions == ("v1beta2", "v1beta1")
