"""Cluster Autoscaler's status ConfigMap and pod Events read as it writes them (kubernetes/autoscaler at
cluster-autoscaler-1.36.1; each case names its source)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpulabel.cluster.autoscalerstatus import autoscaler_status
from gpulabel.errors import SnapshotError
from gpulabel.k8s.clusterautoscaler import (
    BACKOFF,
    MAX_SIZE_REACHED,
    NodeCounts,
    NodeGroupStatus,
    NotTriggered,
    ScaleUp,
    Triggered,
    scale_up_event,
)

DATA = Path(__file__).parent / "data"


def configmap(status: str) -> dict[str, object]:
    meta = {"name": "cluster-autoscaler-status", "namespace": "kube-system"}
    meta["annotations"] = {"cluster-autoscaler.kubernetes.io/last-updated": "2023-11-24 04:28:19.546750398 +0000 UTC"}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"status": status}}


def test_the_status_of_status_test_yaml_is_read_field_by_field() -> None:
    """``clusterstate/utils/status_test.yaml`` verbatim: the YAML ``WriteStatusConfigMap`` writes since 1.30."""
    status = autoscaler_status(configmap((DATA / "cluster-autoscaler-status.yaml").read_text()), "cm")
    assert status is not None
    counts = NodeCounts(
        registered=11, ready=4, not_started=3, unready=2, resource_unready=1, being_deleted=1,
        long_unregistered=1, unregistered=2,
    )  # fmt: skip
    assert (status.time, status.autoscaler, status.message) == (
        "2023-11-24 04:28:19.546750398 +0000 UTC",
        "Running",
        "TEST_MSG",
    )
    assert (status.health, status.counts, status.scale_up, status.scale_down) == (
        "Healthy",
        counts,
        "NoActivity",
        "NoCandidates",
    )
    assert status.node_groups == (
        NodeGroupStatus(
            name="sample-node-group",
            health="Healthy",
            counts=counts,
            target=8,
            min_size=2,
            max_size=12,
            scale_up="Backoff",
            backoff_code="QUOTA_EXCEEDED",
            backoff_message="Instance 'sample-node-group-40ce0341-t28s' creation failed: Quota 'CPUS' exceeded. "
            "Limit: 57.0 in region us-central1.",
            scale_down="NoCandidates",
            candidates=2,
        ),
    )
    assert status.group("sample-node-group") is status.node_groups[0] and status.group("other") is None


# TestWriteStatusConfigMap's expected data.status (status_test.go): an empty status, unquoted time, null times
EMPTY = (
    "clusterWide:\n  health:\n    lastProbeTime: null\n    lastTransitionTime: null\n    nodeCounts:\n"
    "      longUnregistered: 0\n      registered:\n        notStarted: 0\n        ready: 0\n        suspended: 0\n"
    "        total: 0\n        unready:\n          resourceUnready: 0\n          total: 0\n      unregistered: 0\n"
    "  scaleDown:\n    lastProbeTime: null\n    lastTransitionTime: null\n  scaleUp:\n    lastProbeTime: null\n"
    "    lastTransitionTime: null\nmessage: TEST_MSG\ntime: 2023-12-21 00:00:00 +0000 UTC\n"
)


def test_an_empty_status_has_zero_counts_and_no_node_groups() -> None:
    status = autoscaler_status(configmap(EMPTY), "cm")
    assert status is not None
    assert (status.time, status.message, status.autoscaler, status.health) == (
        "2023-12-21 00:00:00 +0000 UTC",
        "TEST_MSG",
        "",
        "",
    )
    assert status.counts == NodeCounts() and status.node_groups == ()


def test_the_text_form_before_1_30_is_not_read_as_fields() -> None:
    """cluster-autoscaler-1.29.0 ``status.go``: ``Cluster-autoscaler status at %s:\\n%v`` of
    ``GetReadableString`` (``clusterstate/api/utils.go``), which YAML would read as a mapping."""
    text = (
        "Cluster-autoscaler status at 2024-01-10 09:00:00.1 +0000 UTC:\nCluster-wide:\n"
        "  Health:      Healthy (ready=3 unready=0 notStarted=0 longNotStarted=0 registered=3 longUnregistered=0)\n"
    )
    assert autoscaler_status(configmap(text), "cm") is None
    assert autoscaler_status({"kind": "ConfigMap", "data": {}}, "cm") is None
    assert autoscaler_status(configmap("- a list"), "cm") is None


def test_a_field_of_the_wrong_type_is_named() -> None:
    text = (DATA / "cluster-autoscaler-status.yaml").read_text().replace("maxSize: 12", "maxSize: twelve")
    with pytest.raises(SnapshotError) as err:
        autoscaler_status(configmap(text), "kube-system/cluster-autoscaler-status")
    assert str(err.value) == "kube-system/cluster-autoscaler-status: nodeGroups[0].health.maxSize is not an integer"


@pytest.mark.parametrize(
    ("reason", "message", "expected"),
    [
        # eventing_scale_up_processor.go: "pod triggered scale-up: %v" of []ScaleUpInfo; the FAQ's GCE group URL
        (
            "TriggeredScaleUp",
            "pod triggered scale-up: [{https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-b/"
            "instanceGroups/gpu-pool-grp 0->1 (max: 4)}]",
            Triggered(
                (
                    ScaleUp(
                        "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-b/instanceGroups/gpu-pool-grp",
                        0,
                        1,
                        4,
                    ),
                )
            ),
        ),
        (
            "TriggeredScaleUp",
            "pod triggered scale-up: [{eks-gpu-a 1->3 (max: 10)} {eks-gpu-b 0->1 (max: 2)}]",
            Triggered((ScaleUp("eks-gpu-a", 1, 3, 10), ScaleUp("eks-gpu-b", 0, 1, 2))),
        ),
        # ReasonsMessage: "<count> <reason>" joined by ", " in map order; reasons from skippedreasons.go and the
        # scheduler's filters
        (
            "NotTriggerScaleUp",
            "pod didn't trigger scale-up: 2 node(s) didn't match Pod's node affinity/selector, 1 max node group "
            "size reached, 1 in backoff after failed scale-up",
            NotTriggered(
                (
                    (BACKOFF, 1),
                    ("max node group size reached", 1),
                    ("node(s) didn't match Pod's node affinity/selector", 2),
                )
            ),
        ),
        (
            "NotTriggerScaleUp",
            "pod didn't trigger scale-up: 3 Insufficient nvidia.com/gpu",
            NotTriggered((("Insufficient nvidia.com/gpu", 3),)),
        ),
        # NewMaxResourceLimitReached: a reason with ", " of its own inside
        (
            "NotTriggerScaleUp",
            'pod didn\'t trigger scale-up: 1 exceeded quota: "gpu-quota", resources: cpu, nvidia.com/gpu, 2 '
            "not ready for scale-up",
            NotTriggered(
                (('exceeded quota: "gpu-quota", resources: cpu, nvidia.com/gpu', 1), ("not ready for scale-up", 2))
            ),
        ),
        (
            "NotTriggerScaleUp",
            "pod didn't trigger scale-up: max total nodes in cluster reached",
            NotTriggered((), True),
        ),
        # no node group considered: ReasonsMessage is empty
        ("NotTriggerScaleUp", "pod didn't trigger scale-up: ", NotTriggered(())),
        # the scheduler's own Event, and Karpenter's: not Cluster Autoscaler's
        ("FailedScheduling", "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.", None),
        ("Nominated", "Pod should schedule on: nodeclaim/gpu-x7k2p", None),
    ],
)
def test_the_pod_events_of_cluster_autoscaler(
    reason: str, message: str, expected: Triggered | NotTriggered | None
) -> None:
    assert scale_up_event(reason, message) == expected


def test_the_reasons_are_counted_by_name() -> None:
    event = scale_up_event("NotTriggerScaleUp", "pod didn't trigger scale-up: 1 max node group size reached")
    assert isinstance(event, NotTriggered) and event.count(MAX_SIZE_REACHED) == 1 and event.count(BACKOFF) == 0
