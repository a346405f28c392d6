"""Karpenter's instance-type filter and the kwok provider's instance types (sigs.k8s.io/karpenter v1.14.1
``kwok/cloudprovider/helpers.go``, ``pkg/controllers/provisioning/scheduling/nodeclaim.go``), on the instance-types
file the labcluster differential runs Karpenter with (``labcluster/karpenter/gpu_instance_types.json``). Each case
here is one the real Karpenter answered on labcluster (tests/cluster/test_karpenter_differential_cluster.py)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

from gpulabel.k8s.karpenter.instancetypes import filter_error, kwok_instance_types, kwok_provider, pod_requests
from gpulabel.k8s.karpenter.objects import nodepool_from_json
from gpulabel.k8s.karpenter.requirements import Requirements, requirement
from gpulabel.k8s.karpenter.scheduling import UNKNOWN_INSTANCE_TYPES, decide, pod_terms, refused
from tests.unit.karpenter.objects import nodepool

TYPES = kwok_instance_types((Path(__file__).parents[3] / "labcluster/karpenter/gpu_instance_types.json").read_text())
KWOK = kwok_provider(TYPES, ("example.com/gpu-name",))
NAME = "example.com/gpu-name"


def gpu_pod(gpus: int = 1, **spec: Any) -> dict[str, Any]:
    return {
        "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": str(gpus), "cpu": "100m"}}}],
        **spec,
    }


def required(*terms: list[tuple[str, str, list[str]]]) -> dict[str, Any]:
    exprs = [{"matchExpressions": [{"key": k, "operator": op, "values": v} for k, op, v in t]} for t in terms]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": exprs}}}


GENERAL = nodepool_from_json(nodepool("general", labels={"example.com/rack": "r1"}))


def test_the_file_reads_as_kwok_reads_it() -> None:
    by_name = {t.name: t for t in TYPES}
    a100 = by_name["g-a100-8x"]
    assert a100.capacity["nvidia.com/gpu"] == 8 and a100.capacity["pods"] == 110
    assert a100.allocatable["cpu"] == 96 - Fraction(1, 10)  # kube-reserved 100m
    assert a100.requirements["karpenter.kwok.sh/instance-family"].values == {"g"}
    assert a100.requirements["topology.kubernetes.io/zone"].values == {"test-zone-a"}
    assert {NAME, "example.com/gpu-count", "karpenter.sh/capacity-type"} <= KWOK.well_known


def test_a_first_term_no_instance_type_serves_is_relaxed_away() -> None:
    """``gpu-name NotIn`` every name an offering has: a well-known key passes the template, but no instance type
    with a GPU is left (the cpu-only type fits no GPU request), so Karpenter relaxes to term 1."""
    names = ["t4", "l4", "a10g", "a100", "h100"]
    pod = pod_terms(gpu_pod(affinity=required([(NAME, "NotIn", names)], [("example.com/rack", "In", ["r1"])])))
    assert decide(pod, [GENERAL], KWOK).nodepool == "general"  # without instance types: term 0 taken as is
    verdict = decide(pod, [GENERAL], KWOK, instance_types=TYPES)
    assert (verdict.nodepool, verdict.relaxed, verdict.unknown) == ("general", 1, "")
    alone = pod_terms(gpu_pod(affinity=required([(NAME, "NotIn", names)])))
    failed = decide(alone, [GENERAL], KWOK, instance_types=TYPES)
    assert failed.nodepool is None
    assert failed.message.startswith("Failed to schedule pod, no instance type")


def test_more_gpus_than_any_instance_type_has() -> None:
    verdict = decide(pod_terms(gpu_pod(16)), [GENERAL], KWOK, instance_types=TYPES)
    assert verdict.nodepool is None and "no instance type has enough resources" in verdict.message
    assert decide(pod_terms(gpu_pod(8)), [GENERAL], KWOK, instance_types=TYPES).nodepool == "general"


def test_without_instance_types_the_verdict_says_what_it_did_not_judge() -> None:
    assert decide(pod_terms(gpu_pod(16)), [GENERAL], KWOK).unknown == UNKNOWN_INSTANCE_TYPES


def test_limits_filter_instance_types_by_capacity() -> None:
    small = nodepool_from_json(nodepool("small", limits={"cpu": "1"}))
    verdict = decide(pod_terms(gpu_pod()), [small], KWOK, instance_types=TYPES)
    assert (
        verdict.message
        == "Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=small)"
    )


def test_a_nodepool_no_instance_type_serves_takes_no_pod() -> None:
    """``NewScheduler`` drops it; with none left:
    ``nodepool requirements filtered out all available instance types``."""
    nope = [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p-b200-8x"]}]
    none = nodepool_from_json(nodepool("none", nope))
    verdict = decide(pod_terms(gpu_pod()), [none], KWOK, instance_types=TYPES)
    assert verdict.message == "Failed to schedule pod, nodepool requirements filtered out all available instance types"
    assert decide(pod_terms(gpu_pod()), [none, GENERAL], KWOK, instance_types=TYPES).nodepool == "general"


def test_gt_zero_is_a_valid_bound() -> None:
    """``ValidateRequirement``: a single integer >= 0; ``Gt 0`` was refused here before, Karpenter takes it."""
    pod = pod_terms(gpu_pod(affinity=required([("example.com/gpu-count", "Gt", ["0"])])))
    assert refused(pod, KWOK) is None
    assert refused(pod_terms(gpu_pod(affinity=required([("example.com/gpu-count", "Lt", ["-1"])]))), KWOK)


def test_requests_and_the_filter_error_words() -> None:
    spec = {
        "containers": [{"resources": {"requests": {"cpu": "1"}}}, {"resources": {"requests": {"cpu": "500m"}}}],
        "initContainers": [{"resources": {"requests": {"cpu": "2"}}}],
    }
    assert pod_requests(spec) == {"cpu": Fraction(2), "pods": Fraction(1)}
    nope = Requirements([requirement("node.kubernetes.io/instance-type", "In", ("p-b200-8x",))])
    kept, why = filter_error(TYPES, nope, {"nvidia.com/gpu": Fraction(16)}, KWOK.well_known)
    assert not kept and why is not None
    assert why.startswith("no instance type met the scheduling requirements or had enough resources,")
    # a GPU name no offering has: the cpu-only type's offerings do not name one (undefined, well-known: allowed),
    # so it meets the requirements and has an offering; what fails is the GPU request (compatible, fits)
    b200 = Requirements([requirement(NAME, "In", ("b200",))])
    _, why = filter_error(TYPES, b200, {"nvidia.com/gpu": Fraction(1)}, KWOK.well_known)
    assert why is not None and why.startswith("no instance type has enough resources,")
