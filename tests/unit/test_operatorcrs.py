"""operatorcrs: the GPU Operator's NVIDIADriver and GPUCluster custom resources, by the operator's own rules.

Objects in the CRDs' shapes (``nvidia.com/v1alpha1``, gpu-operator v26.7.0 ``api/nvidia/v1alpha1``); the
messages are the operator's format strings (``internal/validator/validator.go``, ``internal/nvidiadriver``,
``controllers/gpucluster_controller.go``, ``controllers/clusterpolicy_controller.go``), and the one quoted from a
status is what labcluster's operator (2025-09-17) wrote (``tests/cluster/test_operatorcrs_cluster.py``). The
healthy twins: one default NVIDIADriver, disjoint node pools, a default beside pool drivers, a GPUCluster alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpulabel.checks.audit.rules import audit_node
from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.checks.engine.incremental.evaluator import IncrementalEvaluator
from gpulabel.checks.registry import BUILTIN, run_check
from gpulabel.errors import SnapshotError
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import KIND, ClusterState, node_from_json
from gpulabel.model.deploylabels import DEPLOY_LABELS
from gpulabel.model.nvidiacrs import gpu_cluster_from_json, nvidia_driver_from_json
from tests.objects import GPU_LABELS, node

OWNER = "nvidia.com/gpu-operator.driver.owner"


def gpu(name: str, **labels: str) -> dict[str, Any]:
    return node(name, {**GPU_LABELS, **labels})


def driver(name: str, selector: dict[str, str] | None = None, *, default: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"driverType": "gpu", "default": default}
    if selector is not None:
        spec["nodeSelector"] = selector
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver", "metadata": {"name": name}, "spec": spec}


def with_status(obj: dict[str, Any], state: str, error: tuple[str, str] | None) -> dict[str, Any]:
    status: dict[str, Any] = {"state": state}
    if error:
        status["conditions"] = [
            {"type": "Ready", "status": "False", "reason": "Error"},
            {"type": "Error", "status": "True", "reason": error[0], "message": error[1]},
        ]
    return {**obj, "status": status}


def policy(name: str = "cluster-policy", created: str = "2026-01-01T00:00:00Z", **driver_spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": {"driver": driver_spec},
    }


def gpucluster(name: str = "gpu-cluster") -> dict[str, Any]:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "GPUCluster", "metadata": {"name": name}, "spec": {}}


def run(*objects: dict[str, Any]) -> list[Any]:
    state = ClusterState.from_objects([("test", o) for o in objects], kinds=("NVIDIADriver",))  # its CRD is served
    result = run_check("operatorcrs", state, BUILTIN.options())
    assert not result.skipped, result.skipped
    return list(result.findings)


def lines(*objects: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f.severity, f.line()) for f in run(*objects)]


CRD = policy(useNvidiaDriverCRD=True)


# -- overlaps ----------------------------------------------------------------------------------------------------


def test_two_drivers_selecting_one_node_is_an_error_naming_both_and_the_node() -> None:
    objects = (CRD, gpu("a1", pool="a"), gpu("a2", pool="a"), gpu("b1", pool="b"))
    found = run(*objects, driver("pool-a", {"pool": "a"}), driver("all-gpus"))  # no nodeSelector: every GPU node
    assert [(f.severity, f.line()) for f in found] == [("error", "a1 drivers-overlap 2 node(s) all-gpus pool-a")]
    (f,) = found
    assert f.detail.startswith(
        "NVIDIADrivers all-gpus (no nodeSelector: every nvidia.com/gpu.present=true node) and pool-a (nodeSelector "
        'pool=a) both select node a1 and 1 more: the operator refuses it: "multiple NVIDIADrivers match the same '
        'node a1: [all-gpus pool-a]" (v26.7.0; reason ConflictingNodeSelector, state notReady).'
    )


def test_the_operators_own_condition_is_quoted_and_not_said_twice() -> None:
    """The message labcluster's operator (2025-09-17) wrote on both CRs (validator.go, %q of a Go map)."""
    said = 'conflicting NVIDIADriver NodeSelectors found for resource: pool-a, nodeSelector: map["pool":"a"]'
    a = with_status(driver("pool-a", {"pool": "a"}), "notReady", ("ConflictingNodeSelector", said))
    b = with_status(driver("all-gpus"), "notReady", ("ConflictingNodeSelector", said.replace("pool-a", "all-gpus")))
    found = run(CRD, gpu("a1", pool="a"), a, b)
    assert [f.reason for f in found] == ["drivers-overlap"]
    assert f"the operator says (Error ConflictingNodeSelector): {said.replace('pool-a', 'all-gpus')}" in (
        found[0].detail
    )


def test_an_overlap_on_a_node_without_gpus_counts_as_the_operator_lists_every_node() -> None:
    assert lines(node("cpu-1", {"zone": "z"}), driver("x", {"zone": "z"}), driver("y", {})) == [
        ("error", "cpu-1 drivers-overlap 1 node(s) x y")
    ]


def test_healthy_twins_one_default_driver_disjoint_pools_and_a_default_beside_them_raise_nothing() -> None:
    nodes = (gpu("a1", pool="a"), gpu("b1", pool="b"), node("cpu-1"))
    assert run(CRD, *nodes, driver("default", default=True)) == []
    assert run(CRD, *nodes, driver("pool-a", {"pool": "a"}), driver("pool-b", {"pool": "b"})) == []
    # the default is the fallback of nodes no other driver selects, not an overlap (v26.7.0 validator.go)
    assert run(CRD, *nodes, driver("pool-a", {"pool": "a"}), driver("default", default=True)) == []


def test_two_defaults_and_a_reserved_selector_label_are_refused_as_the_operator_says() -> None:
    found = run(CRD, gpu("g"), driver("d1", default=True), driver("d2", default=True))
    assert [(f.severity, f.line()) for f in found] == [("error", "multiple-default-drivers d1 d2")]
    assert "'multiple default NVIDIADrivers found: [d1 d2]' (ReconcileFailed)" in found[0].detail
    (f,) = run(CRD, gpu("g", pool="a"), driver("x", {OWNER: "y"}), driver("d", default=True))
    assert f.line() == f"{OWNER} reserved-selector-label x"
    assert f'\'NVIDIADriver "x" nodeSelector cannot use reserved label "{OWNER}"\'' in f.detail


# -- routing: nodes no driver selects, the owner label -------------------------------------------------------------


def test_a_gpu_node_no_driver_selects_is_an_error_where_the_cluster_policy_delegates_the_driver() -> None:
    objects = (gpu("a1", pool="a"), gpu("b1", pool="b"), node("cpu-1"), driver("pool-a", {"pool": "a"}))
    assert lines(CRD, *objects) == [("error", "b1 driver node-without-driver")]
    (f,) = run(CRD, *objects)
    assert f.detail.startswith(
        "ClusterPolicy driver.useNvidiaDriverCRD is true, so its own driver DaemonSet is off, and no NVIDIADriver "
        "selects node b1 (NVIDIADrivers: pool-a) nor is one the default"
    )
    # twins: the ClusterPolicy runs its own driver; a default driver catches b1; the driver is on the host
    assert run(policy(), *objects) == []
    assert run(CRD, *objects, driver("default", default=True)) == []
    assert run(policy(useNvidiaDriverCRD=True, enabled=False), *objects) == []
    assert run(CRD, gpu("b1", pool="b", **{V.DEPLOY_PREFIX + "driver": "false"}), *objects[2:]) == []


def test_a_gpucluster_delegates_the_driver_once_nvidiadrivers_exist() -> None:
    assert lines(gpucluster(), gpu("b1", pool="b"), driver("pool-a", {"pool": "a"})) == [
        ("error", "b1 driver node-without-driver")
    ]
    assert run(gpucluster(), gpu("b1")) == []  # no NVIDIADriver at all: a host driver, nothing to judge


def test_a_stale_owner_label_is_a_warning_only_where_the_operator_writes_owners() -> None:
    objects = (CRD, driver("pool-a", {"pool": "a"}), driver("default", default=True))
    assert lines(*objects, gpu("a1", pool="a", **{OWNER: "default"}), gpu("b1", **{OWNER: "default"})) == [
        ("warning", f"a1 {OWNER} owner-label-stale")
    ]
    assert run(*objects, gpu("a1", pool="a", **{OWNER: "pool-a"}), gpu("b1", **{OWNER: "default"})) == []
    assert run(*objects, gpu("a1", pool="a"), gpu("b1")) == []  # an operator older than v26.7.0 writes none


# -- status ------------------------------------------------------------------------------------------------------


def test_a_driver_not_ready_says_the_operators_reason_and_message() -> None:
    bad = with_status(driver("d", default=True), "notReady", ("DriverNotReady", "Waiting for driver pod to be ready"))
    (f,) = run(CRD, gpu("g"), bad)
    assert (f.severity, f.line()) == ("warning", "driver-not-ready d DriverNotReady")
    assert f.detail == "NVIDIADriver d is notReady: Error DriverNotReady: Waiting for driver pod to be ready"
    done = "All resources have been successfully reconciled"
    ready = {**driver("d", default=True), "status": {"state": "ready", "conditions": [
        {"type": "Ready", "status": "True", "reason": "Reconciled", "message": done},
        {"type": "Error", "status": "False", "reason": "Ready"},
    ]}}  # fmt: skip
    assert run(CRD, gpu("g"), ready) == []


# -- GPUCluster --------------------------------------------------------------------------------------------------


def test_a_gpucluster_beside_a_clusterpolicy_is_refused_naming_the_oldest_policy() -> None:
    refused = with_status(gpucluster(), "notReady", ("PrerequisiteNotMet", "..."))
    older = policy("old", "2025-01-01T00:00:00Z")
    found = run(refused, policy("new", "2026-02-01T00:00:00Z"), older, gpu("g"))
    assert [(f.severity, f.line()) for f in found] == [("error", "gpucluster-beside-clusterpolicy gpu-cluster old")]
    assert '"conflicting GPUCluster resource "gpu-cluster" detected; ClusterPolicy and GPUCluster cannot co-exist"' in (
        found[0].detail
    )
    assert '"A ClusterPolicy CR "old" exists; a ClusterPolicy CR and GPUCluster CR may not exist at the same time"' in (
        found[0].detail
    )
    assert run(gpucluster(), gpu("g")) == []  # alone: nothing
    waiting = with_status(gpucluster(), "notReady", ("OperandNotReady", "Waiting for operand pods to be ready"))
    assert lines(waiting, gpu("g")) == [("warning", "gpucluster-not-ready gpu-cluster OperandNotReady")]


def test_gpucluster_nodes_carry_no_gfd_labels_and_audit_does_not_call_that_missing() -> None:
    dra_node = {k: v for k, v in GPU_LABELS.items() if not k.startswith("nvidia.com/gpu.") or k == V.GPU_PRESENT}
    dra_node.update({V.DEPLOY_PREFIX + k: "true" for k in ("driver", "dra-driver", "dra-validator", "dcgm-dra")})
    assert audit_node(node_from_json(node("dra", dra_node))) == []
    # the twin: a ClusterPolicy node without them is still audited as before
    cp_node = {**dra_node, V.DEPLOY_PREFIX + "gpu-feature-discovery": "true"}
    assert [f.line() for f in audit_node(node_from_json(node("cp", cp_node)))] == [
        "cp nvidia.com/gpu.product missing",
        "cp nvidia.com/gpu.count missing",
        "cp nvidia.com/gpu.memory missing",
    ]


def test_audit_strict_flags_a_deploy_label_no_release_knows_with_the_nearest_one() -> None:
    labels = {**GPU_LABELS, V.DEPLOY_PREFIX + "devce-plugin": "true", V.DEPLOY_PREFIX + "dcgm-exporter-dra": "true"}
    (f,) = audit_node(node_from_json(node("n", labels)), strict=True)
    assert f.line() == "n nvidia.com/gpu.deploy.devce-plugin unknown-deploy-label"
    assert f.detail.endswith("did you mean nvidia.com/gpu.deploy.device-plugin?")
    assert audit_node(node_from_json(node("n", labels))) == []  # without --strict: nothing
    every = {**GPU_LABELS, **{d.key: "true" for d in DEPLOY_LABELS}}
    assert audit_node(node_from_json(node("n", every)), strict=True) == []


def test_without_the_nvidiadriver_kind_the_check_says_it_was_skipped() -> None:
    state = ClusterState.from_objects([("test", gpu("g")), ("test", gpucluster())])
    assert run_check("operatorcrs", state, BUILTIN.options()).skipped == "no nvidiadrivers in the input"


def test_the_owner_label_is_the_operators_in_sources() -> None:
    assert V.owner_of(OWNER) == "gpu-operator"


def test_the_monitor_agrees_as_drivers_come_and_go() -> None:
    def record(obj: dict[str, Any]) -> Any:
        return KIND[obj["kind"]].reader()(obj, "test")

    steps: list[tuple[str, str, dict[str, Any] | None]] = [
        ("ClusterPolicy", "cluster-policy", CRD),
        ("Node", "a1", gpu("a1", pool="a")),
        ("NVIDIADriver", "pool-a", driver("pool-a", {"pool": "a"})),
        ("NVIDIADriver", "all", driver("all")),  # overlaps pool-a on a1
        ("NVIDIADriver", "all", driver("all", {"pool": "b"})),  # disjoint again
        ("Node", "b1", gpu("b1")),  # selected by none: no driver
        ("NVIDIADriver", "pool-a", None),
    ]
    seen = []
    for ev in (FullEvaluator(BUILTIN.options()), IncrementalEvaluator(BUILTIN.options())):
        for kind in ("Node", "ClusterPolicy", "NVIDIADriver", "GPUCluster"):
            ev.reset(kind, [])
        out = []
        for kind, name, obj in steps:
            ev.apply(kind, ("", name), None if obj is None else record(obj))
            out.append([f.line() for f in ev.assess(0.0).findings if f.check == "operatorcrs"])
        seen.append(out)
    assert seen[0] == seen[1]
    assert seen[0] == [
        [],
        ["a1 driver node-without-driver"],
        [],
        ["a1 drivers-overlap 1 node(s) all pool-a"],
        [],
        ["b1 driver node-without-driver"],
        ["a1 driver node-without-driver", "b1 driver node-without-driver"],
    ]


def test_the_readers_name_a_field_of_the_wrong_type() -> None:
    bad = {**driver("x"), "spec": {"nodeSelector": ["pool=a"]}}
    with pytest.raises(SnapshotError, match=r"nvidiadriver x\): spec.nodeSelector is .*not a mapping"):
        nvidia_driver_from_json(bad, "s.json")
    with pytest.raises(SnapshotError, match=r"spec\.default is"):
        nvidia_driver_from_json({**driver("x"), "spec": {"default": "true"}}, "s.json")
    with pytest.raises(SnapshotError, match=r"status.conditions\[0\].reason is"):
        gpu_cluster_from_json({**gpucluster(), "status": {"conditions": [{"type": "Error", "reason": 3}]}}, "s.json")
    record = nvidia_driver_from_json(driver("x"), "s.json")  # no nodeSelector: GetNodeSelector's gpu.present=true
    assert (record.node_selector, dict(record.selector)) == (None, {"nvidia.com/gpu.present": "true"})
