"""``queues`` with Karpenter NodePools: a flavor whose nodes an autoscaler makes on demand.

Karpenter's rules are those of :mod:`gpulabel.k8s.karpenter.scheduling` (sigs.k8s.io/karpenter v1.14.1): a
dynamic, Ready NodePool makes a node for a pod whose nodeSelector (the flavor's labels, Kueue
``podset.go`` ``FromAssignment``) its template carries; a key GFD writes only after boot is on no provider's
list of keys known before launch, so a template without it never takes the pod.
"""

from __future__ import annotations

from typing import Any

from gpulabel.app.checks import check_options
from gpulabel.checks.registry import run_check
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Finding
from tests import kueueobjects as K
from tests.unit.karpenter.objects import nodepool

A100_40 = "NVIDIA-A100-SXM4-40GB"
A100_80 = "NVIDIA-A100-SXM4-80GB"
PRODUCT = "nvidia.com/gpu.product"


def _findings(*objects: dict[str, Any]) -> list[Finding]:
    state = ClusterState.from_objects(("t", o) for o in objects)
    result = run_check("queues", state, check_options())
    assert not result.skipped, result.skipped
    return list(result.findings)


def _no_node_flavor(pool: dict[str, Any] | None) -> list[Finding]:
    """Two 40GB nodes, the 80GB flavor with 16 GPUs of quota, an admitted Workload whose pod is Pending."""
    return _findings(
        K.gpu_node("a", A100_40),
        K.gpu_node("b", A100_40),
        K.flavor("a100-80", {PRODUCT: A100_80}),
        K.cluster_queue("team", {"a100-80": {"nvidia.com/gpu": 16}}),
        K.workload("ml", "job-a", "q", gpus=8, owner_uid="u1", admitted_to=("team", "a100-80")),
        K.job_pod("ml", "job-a-0", "u1", {PRODUCT: A100_80}, gpus=8),
        *([pool] if pool else []),
    )


def test_a_flavor_a_nodepools_template_carries_is_made_on_demand_not_an_error() -> None:
    found = _no_node_flavor(nodepool("gpu-80", labels={PRODUCT: A100_80}))
    assert [(f.reason, f.severity) for f in found] == [("on-demand", "info")]  # nor admitted-pending for the pod
    (f,) = found
    assert f.args == ("flavor/a100-80", "nodepool/gpu-80")
    assert "NodePool(s) gpu-80 carry its labels" in f.detail and "no limit on GPUs" in f.detail


def test_a_template_requirement_in_the_flavors_value_takes_it_too() -> None:
    pool = nodepool("gpu", requirements=[{"key": PRODUCT, "operator": "In", "values": [A100_40, A100_80]}])
    assert [f.reason for f in _no_node_flavor(pool)] == ["on-demand"]
    pool = nodepool("gpu", requirements=[{"key": PRODUCT, "operator": "In", "values": [A100_40]}])
    assert sorted(f.reason for f in _no_node_flavor(pool)) == ["admitted-pending", "no-node"]


def test_a_label_gfd_writes_after_boot_on_a_template_without_it_stays_an_error_naming_the_fix() -> None:
    found = _no_node_flavor(nodepool("gpu", labels={"team": "ml"}))
    assert sorted(f.reason for f in found) == ["admitted-pending", "no-node"]
    f = next(f for f in found if f.reason == "no-node")
    assert f.severity == "error"
    assert f'NodePool gpu: incompatible requirements, label "{PRODUCT}" does not have known values' in f.detail
    assert f"add {PRODUCT}: {A100_80} to the NodePool's spec.template.metadata.labels" in f.detail


def test_without_a_nodepool_the_error_says_none_makes_such_nodes() -> None:
    f = next(f for f in _no_node_flavor(None) if f.reason == "no-node")
    assert "no Karpenter NodePool (dynamic, Ready) is in the input" in f.detail


def test_a_nodepool_not_ready_or_with_its_nodes_limit_used_up_makes_nothing() -> None:
    pool = nodepool("gpu-80", labels={PRODUCT: A100_80})
    pool["status"]["conditions"][0]["status"] = "False"
    assert sorted(f.reason for f in _no_node_flavor(pool)) == ["admitted-pending", "no-node"]
    full = nodepool("gpu-80", labels={PRODUCT: A100_80}, limits={"nodes": "2"}, resources={"nodes": "2"})
    found = _no_node_flavor(full)
    assert sorted(f.reason for f in found) == ["admitted-pending", "no-node"]
    assert "their limits leave no room" in next(f for f in found if f.reason == "no-node").detail


def _over(limits: dict[str, str] | None) -> list[Finding]:
    """One 40GB node of 8 GPUs, a quota of 24, a NodePool making 40GB nodes with ``limits``."""
    return _findings(
        K.gpu_node("a", A100_40, labels={"pool": "a100"}),
        K.flavor("a100", {PRODUCT: A100_40}),
        K.cluster_queue("team", {"a100": {"nvidia.com/gpu": 24}}),
        nodepool("a100", labels={PRODUCT: A100_40}, limits=limits, resources={"nvidia.com/gpu": "8", "nodes": "1"}),
    )


def test_a_quota_the_nodepools_limits_can_cover_is_info_and_one_they_cannot_a_warning_with_their_room() -> None:
    (f,) = _over(None)
    assert (f.reason, f.severity) == ("on-demand", "info") and "enough for the other 16" in f.detail
    (f,) = _over({"nvidia.com/gpu": "24"})
    assert f.reason == "on-demand" and "room for 16 more GPU(s)" in f.detail
    (f,) = _over({"nvidia.com/gpu": "16"})
    assert (f.reason, f.severity) == ("over-quota", "warning")
    assert f.args[-2:] == ("quota=24", "allocatable=8")
    assert "admitted past 16 sit Pending (NodePool(s) a100 add at most 8 more under their limits)" in f.detail


def test_the_karpenter_example_has_each_case() -> None:
    from pathlib import Path

    from gpulabel.cluster.snapshot import load_snapshots

    example = Path(__file__).resolve().parents[2] / "examples" / "kueue-karpenter.yaml"
    found = run_check("queues", load_snapshots([str(example)]), check_options()).findings
    assert sorted((f.reason, f.args[0]) for f in found) == [
        ("no-node", "flavor/l40s"),
        ("on-demand", "flavor/a100"),
        ("on-demand", "flavor/h100"),
    ]  # and no admitted-pending: NodePool h100 makes a node for the admitted pod
    (l40s,) = [f for f in found if f.reason == "no-node"]
    assert "NodePool gpu-general: incompatible requirements" in l40s.detail
