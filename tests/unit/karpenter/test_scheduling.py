"""Karpenter's choice of NodePool for a pod, against the expectations of Karpenter's own provisioning tests.

Each case names the ``It`` it is taken from: ``S:`` sigs.k8s.io/karpenter v1.14.1
``pkg/controllers/provisioning/scheduling/suite_test.go``, ``P:`` ``pkg/controllers/provisioning/suite_test.go``.
``ExpectScheduled`` there is a NodePool here; ``ExpectNotScheduled`` is none. The suite's NodePool
(``BeforeEach``) requires ``karpenter.sh/capacity-type In [spot on-demand reserved]``. Where a test relies on the
fake cloud provider's instance types (zones ``test-zone-1..3``, ``pkg/cloudprovider/fake/instancetype.go``),
the NodePool here carries the requirement those offerings amount to (``ZONES``): gpulabel does not model
instance types, so a zone no offering has is written as one the NodePool does not allow.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpulabel.k8s.karpenter.objects import NodePool, nodepool_from_json
from gpulabel.k8s.karpenter.providers import CORE
from gpulabel.k8s.karpenter.scheduling import (
    DRA_IGNORED,
    decide,
    limit_error,
    order_by_weight,
    pod_terms,
    refused,
    relaxed,
    untolerated,
)
from gpulabel.k8s.taints import Taint, Toleration
from tests.unit.karpenter.objects import nodepool

ZONE = "topology.kubernetes.io/zone"
ITYPE = "node.kubernetes.io/instance-type"
CAPACITY = {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand", "reserved"]}
ZONES = {"key": ZONE, "operator": "In", "values": ["test-zone-1", "test-zone-2", "test-zone-3"]}
ITYPES = {"key": ITYPE, "operator": "In", "values": ["default-instance-type", "small-instance-type"]}


def pool(name: str = "default", *reqs: dict[str, Any], **kw: Any) -> NodePool:
    return nodepool_from_json(nodepool(name, requirements=[CAPACITY, *reqs], **kw))


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)} if values else {"key": key, "operator": op}


def pod(
    selector: dict[str, str] | None = None,
    required: list[list[dict[str, Any]]] | None = None,
    preferred: list[tuple[int, list[dict[str, Any]]]] | None = None,
    tolerations: list[dict[str, str]] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A pod spec as ``test.UnschedulablePod(PodOptions{...})`` makes it."""
    out: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}], **spec}
    if selector:
        out["nodeSelector"] = selector
    affinity: dict[str, Any] = {}
    if required is not None:
        terms = [{"matchExpressions": t} for t in required]
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if preferred:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "preference": {"matchExpressions": e}} for w, e in preferred
        ]
    if affinity:
        out["affinity"] = {"nodeAffinity": affinity}
    if tolerations:
        out["tolerations"] = tolerations
    return out


NR = "test-key"
IN_TEST = expr(NR, "In", "test-value")
LABELLED = pool(labels={NR: "test-value"})
DECLARED = pool("default", IN_TEST)

CASES: list[tuple[str, list[NodePool], dict[str, Any], str | None]] = [
    # "Custom Constraints" / "NodePool with Labels"
    ("S:should schedule unconstrained pods that don't have matching node selectors", [LABELLED], pod(), "default"),
    ("S:should not schedule pods that have conflicting node selectors", [LABELLED], pod({NR: "different-value"}), None),
    ("S:should not schedule pods that have node selectors with undefined key", [pool()], pod({NR: "test-value"}), None),
    (
        "S:should schedule pods that have matching requirements",
        [LABELLED],
        pod(required=[[expr(NR, "In", "test-value", "another-value")]]),
        "default",
    ),
    (
        "S:should not schedule pods that have conflicting requirements",
        [LABELLED],
        pod(required=[[expr(NR, "In", "another-value")]]),
        None,
    ),
    # "Well Known Labels"
    ("S:should use NodePool constraints", [pool("default", expr(ZONE, "In", "test-zone-2"))], pod(), "default"),
    (
        "S:should use node selectors",
        [pool("default", expr(ZONE, "In", "test-zone-1", "test-zone-2"))],
        pod({ZONE: "test-zone-2"}),
        "default",
    ),
    (
        "S:should not schedule nodes with a hostname selector",
        [pool()],
        pod({"kubernetes.io/hostname": "red-node"}),
        None,
    ),
    (
        "S:should not schedule the pod if nodeselector unknown",
        [pool("default", expr(ZONE, "In", "test-zone-1"))],
        pod({ZONE: "unknown"}),
        None,
    ),
    (
        "S:should not schedule if node selector outside of NodePool constraints",
        [pool("default", expr(ZONE, "In", "test-zone-1"))],
        pod({ZONE: "test-zone-2"}),
        None,
    ),
    (
        "S:should schedule compatible requirements with Operator=In",
        [pool("default", ZONES)],
        pod(required=[[expr(ZONE, "In", "test-zone-3")]]),
        "default",
    ),
    (
        "S:should not schedule incompatible preferences and requirements with Operator=In",
        [pool("default", ZONES)],
        pod(required=[[expr(ZONE, "In", "unknown")]]),
        None,
    ),
    (
        "S:should not schedule incompatible preferences and requirements with Operator=NotIn",
        [pool("default", ZONES)],
        pod(required=[[expr(ZONE, "NotIn", "test-zone-1", "test-zone-2", "test-zone-3")]]),
        None,
    ),
    (
        "S:should schedule incompatible preferences and requirements with Operator=In",
        [pool("default", ZONES)],
        pod(
            required=[[expr(ZONE, "In", "test-zone-1", "test-zone-2", "test-zone-3", "unknown")]],
            preferred=[(1, [expr(ZONE, "In", "unknown")])],
        ),
        "default",
    ),
    # "Constraints Validation"
    (
        "S:should not schedule pods that have node selectors with restricted labels",
        [pool()],
        pod(required=[[expr("kubernetes.io/hostname", "In", "test")]]),
        None,
    ),
    (
        "S:should not schedule pods that have node selectors with restricted domains",
        [pool()],
        pod(required=[[expr("karpenter.sh/test", "In", "test")]]),
        None,
    ),
    (
        "S:should schedule pods that have node selectors with label in the kubernetes domains",
        [pool("default", expr("kubernetes.io/test", "In", "test-value"), expr("k8s.io/test", "In", "test-value"))],
        pod(),
        "default",
    ),
    (
        "S:should schedule pods that have node selectors with label in wellknown label list",
        [pool()],
        pod({"karpenter.sh/capacity-type": "spot"}),
        "default",
    ),
    # "Scheduling Logic"
    (
        "S:should not schedule pods with nodePool which is not ready",
        [nodepool_from_json({**nodepool("default"), "status": {}})],
        pod(),
        None,
    ),
    (
        "S:should not schedule pods that have node selectors with In operator and undefined key",
        [pool()],
        pod(required=[[IN_TEST]]),
        None,
    ),
    (
        "S:should schedule pods that have node selectors with NotIn operator and undefined key",
        [pool()],
        pod(required=[[expr(NR, "NotIn", "test-value")]]),
        "default",
    ),
    (
        "S:should not schedule pods that have node selectors with Exists operator and undefined key",
        [pool()],
        pod(required=[[expr(NR, "Exists")]]),
        None,
    ),
    (
        "S:should schedule pods that with DoesNotExists operator and undefined key",
        [pool()],
        pod(required=[[expr(NR, "DoesNotExist")]]),
        "default",
    ),
    (
        "S:should schedule unconstrained pods that don't have matching node selectors (requirements)",
        [DECLARED],
        pod(),
        "default",
    ),
    (
        "S:should schedule pods that have node selectors with matching value and In operator",
        [DECLARED],
        pod(required=[[IN_TEST]]),
        "default",
    ),
    (
        "S:should not schedule pods that have node selectors with matching value and NotIn operator",
        [DECLARED],
        pod(required=[[expr(NR, "NotIn", "test-value")]]),
        None,
    ),
    (
        "S:should schedule the pod with Exists operator and defined key",
        [DECLARED],
        pod(required=[[expr(NR, "Exists")]]),
        "default",
    ),
    (
        "S:should not schedule the pod with DoesNotExists operator and defined key",
        [DECLARED],
        pod(required=[[expr(NR, "DoesNotExist")]]),
        None,
    ),
    (
        "S:should not schedule pods that have node selectors with different value and In operator",
        [DECLARED],
        pod(required=[[expr(NR, "In", "another-value")]]),
        None,
    ),
    (
        "S:should schedule pods that have node selectors with different value and NotIn operator",
        [DECLARED],
        pod(required=[[expr(NR, "NotIn", "another-value")]]),
        "default",
    ),
    (
        "S:Exists operator should not overwrite the existing value",
        [pool("default", ZONES)],
        pod(required=[[expr(ZONE, "In", "non-existent-zone"), expr(ZONE, "Exists")]]),
        None,
    ),
    # "Required" / "Preferred" node affinity, relaxation
    (
        "S:should not relax the final term",
        [pool("default", expr(ZONE, "In", "test-zone-1"), expr(ITYPE, "In", "default-instance-type"))],
        pod(required=[[expr(ZONE, "In", "invalid")]]),
        None,
    ),
    (
        "S:should relax multiple terms",
        [pool("default", ZONES)],
        pod(
            required=[
                [expr(ZONE, "In", "invalid")],
                [expr(ZONE, "In", "invalid")],
                [expr(ZONE, "In", "test-zone-1")],
                [expr(ZONE, "In", "test-zone-2")],
            ]
        ),
        "default",
    ),
    (
        "S:should relax all terms",
        [pool("default", ZONES, ITYPES)],
        pod(preferred=[(1, [expr(ZONE, "In", "invalid")]), (1, [expr(ITYPE, "In", "invalid")])]),
        "default",
    ),
    (
        "S:should schedule even if preference is conflicting with requirement",
        [pool("default", ZONES)],
        pod(required=[[expr(ZONE, "In", "test-zone-3")]], preferred=[(1, [expr(ZONE, "NotIn", "test-zone-3")])]),
        "default",
    ),
    (
        "S:should schedule even if preference requirements are conflicting",
        [pool("default", ZONES)],
        pod(preferred=[(1, [expr(ZONE, "In", "invalid"), expr(ZONE, "NotIn", "invalid")])]),
        "default",
    ),
    # taints (P:): every effect, PreferNoSchedule only after relaxing
    *(
        (
            f"P:should schedule pods that tolerate taints ({i})",
            [pool(taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}])],
            pod(tolerations=[t]),
            "default",
        )
        for i, t in enumerate(
            [
                {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "nvidia.com/gpu", "operator": "Exists"},
                {"operator": "Exists"},
            ]
        )
    ),
    (
        "P:should not match NodePool with PreferNoSchedule taint when other NodePool match",
        [pool("b-tainted", taints=[{"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}]), pool("a-plain")],
        pod(),
        "a-plain",
    ),
    (
        "P:should tolerate PreferNoSchedule taint only after trying to relax Affinity terms",
        [pool(taints=[{"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}])],
        pod(preferred=[(1, [expr(ZONE, "In", "invalid")]), (1, [expr(ITYPE, "In", "invalid")])]),
        "default",
    ),
    (
        "P:should assume pod will schedule to a tainted node with a custom startup taint",
        [pool(startup_taints=[{"key": "foo.com/taint", "value": "tainted", "effect": "NoSchedule"}])],
        pod(),
        "default",
    ),
    # "Weighted NodePools"
    (
        "P:should schedule to the nodepool with the highest priority always",
        [
            pool("np-a"),
            nodepool_from_json({**nodepool("np-b"), "spec": {**nodepool("np-b")["spec"], "weight": 20}}),
            nodepool_from_json({**nodepool("np-c"), "spec": {**nodepool("np-c")["spec"], "weight": 100}}),
        ],
        pod(),
        "np-c",
    ),
    (
        "P:should schedule to explicitly selected nodepool even if other nodePools are higher priority",
        [pool("np-a"), nodepool_from_json({**nodepool("np-c"), "spec": {**nodepool("np-c")["spec"], "weight": 100}})],
        pod({"karpenter.sh/nodepool": "np-a"}),
        "np-a",
    ),
    (
        "P:should not create NodeClaims for StaticNodePool",
        [nodepool_from_json({**nodepool("static"), "spec": {**nodepool("static")["spec"], "replicas": 2}})],
        pod(),
        None,
    ),
]


@pytest.mark.parametrize(("name", "pools", "spec", "expected"), CASES, ids=[c[0] for c in CASES])
def test_karpenters_own_expectations(
    name: str, pools: list[NodePool], spec: dict[str, Any], expected: str | None
) -> None:
    verdict = decide(pod_terms(spec), pools, CORE)
    assert verdict.nodepool == expected, verdict.message
    assert (verdict.message == "") is (expected is not None)


def test_the_messages_karpenter_writes() -> None:
    """FailedScheduling's text: ``Failed to schedule pod, `` and each NodePool's error joined by ``"; "``."""
    gpu = pool("gpu", taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}])
    cpu = pool("cpu")
    training = pod({"feature.node.kubernetes.io/custom-gpu-training": "true"})
    assert decide(pod_terms(training), [gpu, cpu], CORE).message == (
        "Failed to schedule pod, did not tolerate taint (taint=nvidia.com/gpu=true:NoSchedule); incompatible "
        'requirements, label "feature.node.kubernetes.io/custom-gpu-training" does not have known values'
    )
    tolerating = pod(
        {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}],
    )
    verdict = decide(pod_terms(tolerating), [gpu], CORE)
    assert verdict.message == (
        'Failed to schedule pod, incompatible requirements, label "nvidia.com/gpu.product" does not have known values'
    )
    assert verdict.event
    typo = decide(pod_terms(pod({"zone": "a"})), [cpu], CORE)
    assert typo.message.endswith('label "zone" does not have known values (typo of "topology.kubernetes.io/zone"?)')


def test_pods_karpenter_will_not_consider() -> None:
    assert refused(pod_terms(pod(resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "t"}])), CORE) == (
        DRA_IGNORED,
        True,
    )
    # validateKarpenterManagedLabelCanExist: no Event
    away = refused(pod_terms(pod(required=[[expr("karpenter.sh/nodepool", "DoesNotExist")]])), CORE)
    assert away == (
        "configured to not run on a Karpenter provisioned node (requirement=karpenter.sh/nodepool DoesNotExist)",
        False,
    )
    hostname = refused(pod_terms(pod({"kubernetes.io/hostname": "n1"})), CORE)
    assert hostname is not None and hostname[0].startswith("using label kubernetes.io/hostname is not allowed")
    # every required term is validated, not only the first
    second = refused(pod_terms(pod(required=[[IN_TEST], [expr("karpenter.sh/registered", "In", "true")]])), CORE)
    assert second is not None and "using label karpenter.sh/registered is not allowed" in second[0]
    capacity = refused(pod_terms(pod({"karpenter.sh/capacity-type": "cheap"})), CORE)
    assert capacity == (
        "no valid values found in [cheap] for karpenter.sh/capacity-type, expected one of: "
        "map[on-demand:{} reserved:{} spot:{}], got: [cheap]",
        True,
    )
    negative = refused(pod_terms(pod(required=[[expr("gpus", "Gt", "-1")]])), CORE)
    assert negative == ("key gpus with operator Gt must have a single positive integer value", True)
    assert refused(pod_terms(pod(required=[[IN_TEST]])), CORE) is None


def test_limits() -> None:
    """P: "should not schedule when limits are exceeded" (a NodeClaim of 100 CPUs against a limit of 20: every
    instance type exceeds what is left), "... (node)" (two nodes of a limit of two)."""
    limited = pool(limits={"cpu": "20"})
    assert limit_error(limited, {"cpu": "100"}, [{"cpu": "4"}]) == (
        "all available instance types exceed limits for nodepool (NodePool=default)"
    )
    assert limit_error(limited, {"cpu": "100"}, None) is None  # the instance types are not known: not judged
    assert limit_error(limited, {"cpu": "12"}, [{"cpu": "4"}, {"cpu": "16"}]) is None
    nodes = pool(limits={"nodes": "2"})
    assert limit_error(nodes, {"nodes": "2"}, None) == "node limits have been exhausted for nodepool (NodePool=default)"
    gpus = pool(limits={"nvidia.com/gpu": "16"})
    assert limit_error(gpus, {"nvidia.com/gpu": "8"}, [{"nvidia.com/gpu": "8"}]) is None
    assert limit_error(gpus, {"nvidia.com/gpu": "9"}, [{"nvidia.com/gpu": "8"}]) is not None
    verdict = decide(pod_terms(pod()), [nodes], CORE, used={"default": {"nodes": "2"}})
    assert verdict.message == "Failed to schedule pod, node limits have been exhausted for nodepool (NodePool=default)"


def test_relaxation_order_and_weights() -> None:
    spec = pod(
        required=[[IN_TEST], [expr(NR, "In", "b")]],
        preferred=[(10, [expr(ZONE, "In", "z1")]), (50, [expr(ZONE, "In", "z2")])],
    )
    steps = list(relaxed(pod_terms(spec), tolerate_prefer_no_schedule=True))
    assert [(len(s.required or ()), [w for w, _ in s.preferred], len(s.tolerations)) for s in steps] == [
        (2, [10, 50], 0),
        (1, [10, 50], 0),
        (1, [10], 0),
        (1, [], 0),
        (1, [], 1),
    ]
    # nodepoolutils.OrderByWeight: heaviest first, equal weights by name descending
    heavy = nodepool_from_json({**nodepool("a"), "spec": {**nodepool("a")["spec"], "weight": 5}})
    assert [p.name for p in order_by_weight([pool("b"), pool("c"), heavy, pool("d")])] == ["a", "d", "c", "b"]


def test_only_the_first_required_term_is_asked_and_the_others_come_by_relaxation() -> None:
    """S: "should relax multiple terms" expects the node in test-zone-1: the third term, after two relaxations
    (not the fourth, not the terms together)."""
    terms = [[expr(ZONE, "In", "invalid")], [expr(ZONE, "In", "invalid")], [expr(ZONE, "In", "test-zone-1")]]
    spec = pod(required=[*terms, [expr(ZONE, "In", "test-zone-2")]])
    verdict = decide(pod_terms(spec), [pool("default", ZONES)], CORE)
    assert (verdict.nodepool, verdict.relaxed) == ("default", 2)
    # the first term fits on its own; a later one that contradicts it is never asked
    either = pod(required=[[IN_TEST], [expr(NR, "In", "another-value")]])
    assert decide(pod_terms(either), [DECLARED], CORE) == decide(pod_terms(pod(required=[[IN_TEST]])), [DECLARED], CORE)
    assert decide(pod_terms(either), [DECLARED], CORE).relaxed == 0


def test_comparison_tolerations_count_for_karpenter() -> None:
    """``Taints.Tolerates`` calls ``ToleratesTaint(..., true)``: a ``Gt``/``Lt`` toleration compares values as
    decimal integers there, where kube-scheduler's default (comparison operators off) never matches it."""
    taint = Taint("example.com/gpu-generation", "9", "NoSchedule")
    gt8, lt9 = Toleration("example.com/gpu-generation", "Gt", "8"), Toleration("example.com/gpu-generation", "Lt", "9")
    assert untolerated([taint], [gt8]) == () and untolerated([taint], [lt9]) == (taint,)
    assert not gt8.tolerates(taint)  # the scheduler's default
    assert untolerated([Taint("k", "09", "NoSchedule")], [Toleration("k", "Gt", "8")])  # "09" is not decimal
    tainted = pool(taints=[{"key": "example.com/gpu-generation", "value": "9", "effect": "NoSchedule"}])
    spec = pod(tolerations=[{"key": "example.com/gpu-generation", "operator": "Gt", "value": "8"}])
    assert decide(pod_terms(spec), [tainted], CORE).nodepool == "default"
