"""The ``queues`` check: Kueue's ResourceFlavors against the nodes that exist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpulabel.app.checks import check_options
from gpulabel.checks.queues.rules import flavor_nodes
from gpulabel.checks.registry import run_check, run_checks
from gpulabel.cluster.snapshot import load_snapshots
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Finding
from gpulabel.model.kueue import resourceflavor_from_json
from tests import kueueobjects as K

ROOT = Path(__file__).resolve().parents[2]
A100_40 = "NVIDIA-A100-SXM4-40GB"
A100_80 = "NVIDIA-A100-SXM4-80GB"
PRODUCT = "nvidia.com/gpu.product"


def _findings(*objects: dict[str, Any]) -> list[Finding]:
    state = ClusterState.from_objects(("t", o) for o in objects)
    result = run_check("queues", state, check_options())
    assert not result.skipped, result.skipped
    return list(result.findings)


def _one(*objects: dict[str, Any]) -> Finding:
    (found,) = _findings(*objects)
    return found


def test_a_flavor_for_the_80gb_product_on_40gb_nodes_names_the_label_and_the_nearest_value() -> None:
    f = _one(
        K.gpu_node("a", A100_40),
        K.gpu_node("b", A100_40),
        K.gpu_node("h", "NVIDIA-H100-80GB-HBM3"),
        K.flavor("a100-80", {PRODUCT: A100_80}),
        K.cluster_queue("team", {"a100-80": {"nvidia.com/gpu": 16}}),
    )
    assert (f.reason, f.severity, f.key, f.value) == ("no-node", "error", PRODUCT, A100_80)
    assert f.args == ("flavor/a100-80", A100_80, f"nearest: {A100_40} (2 node(s))")
    assert "team: 16 nvidia.com/gpu" in f.detail


def test_a_label_key_no_node_has_names_the_nearest_key() -> None:
    f = _one(K.gpu_node("a", A100_40), K.flavor("f", {"nvidia.com/gpu.prodcut": A100_40}))
    assert f.args[2] == f"no node has the key; nearest key: {PRODUCT}"


def test_labels_that_each_match_but_not_together_say_which_filter_left_the_nodes_out() -> None:
    f = _one(
        K.gpu_node("a", A100_40, labels={"pool": "x"}),
        K.gpu_node("b", A100_80, labels={"pool": "y"}),
        K.flavor("f", {PRODUCT: A100_80, "pool": "x"}),
    )
    assert f.reason == "no-node" and f.key == ""
    assert f.args == ("flavor/f", f"node-selector {PRODUCT}={A100_80} on 1 node(s), node-selector pool=x on 1 node(s)")


TAINT = {"key": "dedicated", "value": "train", "effect": "NoSchedule"}


def test_a_node_taint_the_flavor_does_not_name_leaves_the_node_out() -> None:
    f = _one(K.gpu_node("a", A100_40, taints=[TAINT]), K.flavor("f", {PRODUCT: A100_40}))
    assert f.reason == "no-node" and "untolerated-taint dedicated=train:NoSchedule on 1 node(s)" in f.args[1]


def test_a_taint_in_the_flavors_node_taints_or_tolerations_or_on_the_gpu_resource_is_tolerated() -> None:
    """Kueue admits to a flavor only workloads that tolerate its nodeTaints (flavorassigner.go
    checkFlavorForPodSets) and injects its tolerations (podset.go FromAssignment)."""
    gpu_taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    nodes = [K.gpu_node("a", A100_40, taints=[TAINT, gpu_taint])]
    flavors = [
        K.flavor("by-taint", {PRODUCT: A100_40}, taints=[TAINT]),
        K.flavor("by-toleration", {PRODUCT: A100_40}, tolerations=[{"key": "dedicated", "operator": "Exists"}]),
    ]
    assert _findings(*nodes, *flavors) == []
    soft = K.flavor("soft", {PRODUCT: A100_40}, taints=[{**TAINT, "effect": "PreferNoSchedule"}])
    assert [f.reason for f in _findings(*nodes, soft)] == ["no-node"]  # a PreferNoSchedule taint tolerates nothing


def test_a_cordoned_node_is_not_selected() -> None:
    node = K.gpu_node("a", A100_40)
    node["spec"]["unschedulable"] = True
    f = _one(node, K.flavor("f", {PRODUCT: A100_40}))
    assert f.args[1] == "unschedulable on 1 node(s)"


def test_a_flavor_with_gpu_quota_on_cpu_nodes_is_an_error_and_without_it_nothing() -> None:
    cpu = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "c", "labels": {"pool": "cpu"}},
           "status": {"allocatable": {"cpu": "8", "pods": "110"}}}  # fmt: skip
    flavor = K.flavor("cpu", {"pool": "cpu"})
    f = _one(cpu, flavor, K.cluster_queue("q", {"cpu": {"nvidia.com/gpu": 4, "cpu": 8}}))
    assert (f.reason, f.severity, f.args) == ("no-gpu-node", "error", ("flavor/cpu", "1 node(s), 0 GPUs"))
    assert _findings(cpu, flavor, K.cluster_queue("q", {"cpu": {"cpu": 8}})) == []


def test_a_quota_above_the_flavors_gpus_is_a_warning_with_both_numbers_and_one_that_fits_is_not() -> None:
    nodes = [K.gpu_node("a", A100_40), K.gpu_node("b", A100_40, gpus=4)]
    flavor = K.flavor("a100", {PRODUCT: A100_40})
    f = _one(*nodes, flavor, K.cluster_queue("team", {"a100": {"nvidia.com/gpu": 13}}, cohort="org"))
    assert (f.reason, f.severity) == ("over-quota", "warning")
    assert f.args == ("flavor/a100", "clusterqueue/team", "nvidia.com/gpu", "quota=13", "allocatable=12")
    assert "in cohort org" in f.detail
    assert _findings(*nodes, flavor, K.cluster_queue("team", {"a100": {"nvidia.com/gpu": 12}})) == []


def test_quotas_of_several_queues_that_each_fit_but_together_do_not_are_one_warning_with_the_sum() -> None:
    # what the differential against the real Kueue showed: Kueue admits up to the sum of the queues' quotas
    nodes = [K.gpu_node("a", A100_40), K.gpu_node("b", A100_40, gpus=4)]
    flavor = K.flavor("a100", {PRODUCT: A100_40})
    queues = [K.cluster_queue(n, {"a100": {"nvidia.com/gpu": 8}}) for n in ("team-b", "team-a")]
    f = _one(*nodes, flavor, *queues)
    assert (f.reason, f.severity) == ("over-quota", "warning")
    assert f.args == ("flavor/a100", "clusterqueue/team-a,clusterqueue/team-b", "nvidia.com/gpu", "quota=16",
                      "allocatable=12")  # fmt: skip
    assert "each quota fits, but Kueue admits up to their sum" in f.detail
    assert _findings(*nodes, flavor, K.cluster_queue("team-a", {"a100": {"nvidia.com/gpu": 4}}), queues[0]) == []


def test_a_topology_level_no_selected_node_carries_is_an_error() -> None:
    rack = "cloud.provider.com/rack"
    nodes = [K.gpu_node("a", A100_40, labels={rack: "r1"}), K.gpu_node("h", "NVIDIA-H100-80GB-HBM3")]
    topo = K.topology("dc", [rack, "kubernetes.io/hostname"])
    f = _one(*nodes, topo, K.flavor("h100", {PRODUCT: "NVIDIA-H100-80GB-HBM3"}, topology="dc"))
    assert (f.reason, f.severity, f.key, f.args) == ("topology-label", "error", rack, ("flavor/h100", "topology/dc"))
    assert _findings(*nodes, topo, K.flavor("a100", {PRODUCT: A100_40}, topology="dc")) == []
    g = _one(*nodes, topo, K.flavor("a100", {PRODUCT: A100_40}, topology="other"))
    assert (g.reason, g.args) == ("no-topology", ("flavor/a100", "topology/other"))


def test_a_cluster_queue_naming_a_missing_flavor_is_an_error() -> None:
    f = _one(K.gpu_node("a", A100_40), K.flavor("a100", {}), K.cluster_queue("q", {"a100": {}, "gone": {}}))
    assert (f.reason, f.args) == ("no-flavor", ("clusterqueue/q", "flavor/gone"))


def test_without_flavors_the_check_is_skipped() -> None:
    state = ClusterState.from_objects([("t", K.gpu_node("a", A100_40))])
    assert run_check("queues", state, check_options()).skipped == "no resourceflavors in the input"


def test_a_workloads_own_tolerations_replace_those_of_the_node_taints() -> None:
    """Judged for one workload, its tolerations count, not the flavor's nodeTaints."""
    state = ClusterState.from_objects([("t", K.gpu_node("a", A100_40, taints=[TAINT]))])
    rf = resourceflavor_from_json(K.flavor("f", {PRODUCT: A100_40}, taints=[TAINT]))
    assert [n.name for n in flavor_nodes(rf, state.nodes).nodes] == ["a"]
    assert flavor_nodes(rf, state.nodes, tolerations=()).nodes == ()


def test_the_example_has_the_80gb_case_and_its_twin_has_nothing_above_info() -> None:
    lab = load_snapshots([str(ROOT / "examples" / "kueue-lab.yaml")])
    reasons = sorted(f.reason for f in run_check("queues", lab, check_options()).findings)
    assert reasons == ["admitted-pending", "no-node", "over-quota", "topology-label"]
    twin = load_snapshots([str(ROOT / "examples" / "kueue-twin.yaml")])
    result = run_checks(twin, check_options())
    assert result.severities() == {"error": 0, "warning": 0, "info": 0}
    queues = next(p for p in result.parts if p.command == "queues")
    assert not queues.skipped and [dict(r) for r in queues.sections[0].rows] == [
        {"flavor": "a100", "nodes": 2, "gpus": 16, "quota": 16, "clusterqueues": ("training",)},
        {"flavor": "h100", "nodes": 1, "gpus": 8, "quota": 8, "clusterqueues": ("training",)},
    ]


@pytest.mark.parametrize(("example", "code"), [("kueue-lab.yaml", 1), ("kueue-twin.yaml", 0)])
def test_the_queues_command_exits_by_what_it_found(example: str, code: int) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "gpulabel", "queues", "--snapshot", str(ROOT / "examples" / example)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == code, run.stderr


def _admitted(product: str, *, pod_node: str = "", tolerations: list[dict[str, Any]] | None = None) -> list[Finding]:
    """Two A100-40GB nodes; Workload ml/job-a admitted to a flavor asking for ``product``, its pod Pending."""
    return _findings(
        K.gpu_node("a", A100_40),
        K.gpu_node("b", A100_40, taints=[TAINT]),
        K.flavor("a100", {PRODUCT: product}),
        K.cluster_queue("team", {"a100": {"nvidia.com/gpu": 8}}),
        K.workload("ml", "job-a", "team-q", owner_uid="u1", admitted_to=("team", "a100"), tolerations=tolerations),
        K.job_pod("ml", "job-a-0", "u1", {PRODUCT: product}, node=pod_node),
        K.job_pod("ml", "other-0", "u2", {PRODUCT: product}),  # a pod of no Workload: pending's, not ours
    )


def test_a_pending_pod_of_an_admitted_workload_is_joined_to_its_flavors_label() -> None:
    found = [f for f in _admitted(A100_80) if f.reason == "admitted-pending"]
    (f,) = found
    assert (f.pod, f.severity, f.key, f.value) == ("ml/job-a-0", "error", PRODUCT, A100_80)
    assert f.args == ("workload/job-a", "flavor/a100", A100_80, f"nearest: {A100_40} (2 node(s))")
    assert "admitted by ClusterQueue team (Workload job-a) to flavor a100, whose label" in f.detail


def test_a_pod_whose_flavor_selects_nodes_or_that_is_bound_is_left_to_pending() -> None:
    assert [f.reason for f in _admitted(A100_40)] == []
    assert [f.reason for f in _admitted(A100_80, pod_node="a")] == ["no-node"]


def test_the_workloads_own_tolerations_decide_which_nodes_its_flavor_selects() -> None:
    """Node a is cordoned and b tainted: only a workload tolerating b's taint has a node."""

    def admitted(tolerations: list[dict[str, Any]] | None) -> list[str]:
        a = K.gpu_node("a", A100_40)
        a["spec"]["unschedulable"] = True
        return [
            f.args[2]
            for f in _findings(
                a,
                K.gpu_node("b", A100_40, taints=[TAINT]),
                K.flavor("a100", {PRODUCT: A100_40}, taints=[TAINT]),
                K.workload("ml", "w", "q", owner_uid="u1", admitted_to=("team", "a100"), tolerations=tolerations),
                K.job_pod("ml", "w-0", "u1", {PRODUCT: A100_40}),
            )
            if f.reason == "admitted-pending"
        ]

    assert admitted([{"key": "dedicated", "operator": "Exists"}]) == []
    assert admitted(None) == ["unschedulable on 1 node(s), untolerated-taint dedicated=train:NoSchedule on 1 node(s)"]
