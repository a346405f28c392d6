"""Karpenter's pod Events read back (sigs.k8s.io/karpenter v1.14.1 ``scheduling/events.go``); the messages are
those Karpenter wrote on labcluster (the smoke run of labcluster/karpenter) or built from ``decide``'s, which
says them word for word."""

from __future__ import annotations

from gpulabel.k8s.karpenter.events import FailedToSchedule, Nominated, pod_event
from gpulabel.k8s.karpenter.providers import CORE
from gpulabel.k8s.karpenter.scheduling import DRA_IGNORED, decide, pod_terms
from tests.unit.karpenter.test_scheduling import pool


def test_nominated() -> None:
    assert pod_event("karpenter", "Nominated", "Pod should schedule on: nodeclaim/smoke-ncjq4") == Nominated(
        "smoke-ncjq4", ""
    )
    both = "Pod should schedule on: nodeclaim/gpu-x7k2p, node/gpu-x7k2p-node"
    assert pod_event("karpenter", "Nominated", both) == Nominated("gpu-x7k2p", "gpu-x7k2p-node")
    assert pod_event("karpenter", "Nominated", "Pod should schedule on: node/n1") == Nominated("", "n1")


def test_failed_to_schedule_as_labcluster_saw_it() -> None:
    said = (
        'Failed to schedule pod, incompatible requirements, label "nvidia.com/gpu.product" does not have known values'
    )
    event = pod_event("karpenter", "FailedScheduling", said)
    assert isinstance(event, FailedToSchedule)
    assert event.unknown_keys == ("nvidia.com/gpu.product",) and not event.taints and not event.limited
    # the scheduler's FailedScheduling is not Karpenter's
    assert pod_event("default-scheduler", "FailedScheduling", said) is None
    assert pod_event("karpenter", "Scheduled", said) is None


def test_every_nodepools_reason_is_read_out_of_decides_message() -> None:
    gpu = pool("gpu", taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}])
    spot = pool(
        "spot", taints=[{"key": "a", "effect": "NoSchedule"}, {"key": "b", "value": "1", "effect": "NoExecute"}]
    )
    full = pool("full", limits={"nodes": "1"})
    plain = pool("plain")
    spec = {"nodeSelector": {"feature.node.kubernetes.io/custom-gpu-training": "true"}}
    verdict = decide(pod_terms(spec), [gpu, spot, full, plain], CORE, used={"full": {"nodes": "1"}})
    event = pod_event("karpenter", "FailedScheduling", verdict.message)
    assert isinstance(event, FailedToSchedule)
    # NodePools of one weight in descending name order: spot, plain, gpu, full
    assert event.taints == ("a:NoSchedule", "b=1:NoExecute", "nvidia.com/gpu=true:NoSchedule")
    assert event.limited == ("full",)
    assert event.unknown_keys == ("feature.node.kubernetes.io/custom-gpu-training",)
    dra = decide(pod_terms({"resourceClaims": [{"name": "g", "resourceClaimName": "c"}]}), [plain], CORE)
    claims = pod_event("karpenter", "FailedScheduling", dra.message)
    assert isinstance(claims, FailedToSchedule) and claims.dra and claims.text == DRA_IGNORED
