"""The admission check: GPU pods the kubelet rejected at admission, grouped per node.

Every status the pods here carry is one the kubelet writes when it rejects a pod (Kubernetes v1.37.2,
``pkg/kubelet/kubelet.go`` ``rejectPod``: phase ``Failed``, the admit result's reason, and ``Pod was rejected: ``
before its message); the messages are the kubelet's own strings, each row naming the file that makes it
(read in ``/root/go/pkg/mod/k8s.io/kubernetes@v1.37.2``). A healthy twin holds the same nodes and pods
admitted (Running, Succeeded) or failed for reasons that are not GPU admission, and raises nothing.
"""

from __future__ import annotations

import io
from typing import Any

import pytest

from gpulabel.checks.admission.rules import KUBELET_LINES, REPEATED, matched
from gpulabel.checks.engine.rootcause import root_causes
from gpulabel.checks.registry import BUILTIN, run_check, run_checks
from gpulabel.cli.main import main
from gpulabel.model.cluster import ClusterState
from tests.objects import as_list
from tests.unit.test_health import LABELS as GPU_LABELS  # an H100 node the operator labelled

# (reason, message after "Pod was rejected: ", the file of k8s.io/kubernetes v1.37.2 that writes it)
KUBELET = {
    "unavailable": (
        "UnexpectedAdmissionError",
        "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 1, "
        "Available: 0, which is unexpected",
        "pkg/kubelet/cm/devicemanager/manager.go devicesToAllocate; cm/admission/errors.go",
    ),
    "unregistered": (
        "UnexpectedAdmissionError",
        "Allocate failed due to cannot allocate unregistered device nvidia.com/gpu, which is unexpected",
        "pkg/kubelet/cm/devicemanager/manager.go devicesToAllocate; cm/admission/errors.go",
    ),
    "unhealthy": (
        "UnexpectedAdmissionError",
        "Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu, "
        "which is unexpected",
        "pkg/kubelet/cm/devicemanager/manager.go devicesToAllocate; cm/admission/errors.go",
    ),
    "no-longer-healthy": (
        "UnexpectedAdmissionError",
        "Allocate failed due to previously allocated devices are no longer healthy; cannot allocate unhealthy "
        "devices nvidia.com/gpu, which is unexpected",
        "pkg/kubelet/cm/devicemanager/manager.go devicesToAllocate; cm/admission/errors.go",
    ),
    "less": (
        "UnexpectedAdmissionError",
        "Allocate failed due to unexpectedly allocated less resources than required. Requested: 2, Got: 1, "
        "which is unexpected",
        "pkg/kubelet/cm/devicemanager/manager.go devicesToAllocate; cm/admission/errors.go",
    ),
    "plugin-resources": (
        "UnexpectedAdmissionError",
        "Update plugin resources failed due to device plugin not registered, which is unexpected.",
        "pkg/kubelet/lifecycle/predicate.go Admit",
    ),
    "topology": (
        "TopologyAffinityError",
        "Resources cannot be allocated with Topology locality",
        "pkg/kubelet/cm/topologymanager/topology_manager.go TopologyAffinityError.Error",
    ),
    "pod-scope": (
        "TopologyAffinityError",
        "Pod Scope Resources cannot be allocated with Topology locality",
        "pkg/kubelet/cm/topologymanager/topology_manager.go PodLevelTopologyAffinityError.Error",
    ),
    "out-of": (
        "OutOfnvidia.com/gpu",
        "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 0, capacity: 0",
        "pkg/kubelet/lifecycle/predicate.go InsufficientResourceError.Error, reason InsufficientResourcePrefix",
    ),
}


def node(name: str = "gpu-1", allocatable: int = 8, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {**GPU_LABELS, **(labels or {})}},
        "spec": {},
        "status": {
            "capacity": {"cpu": "96", "pods": "110", "nvidia.com/gpu": "8"},
            "allocatable": {"cpu": "95", "pods": "110", "nvidia.com/gpu": str(allocatable)},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(
    name: str,
    case: str | None = None,
    node_name: str = "gpu-1",
    resource: str = "nvidia.com/gpu",
    phase: str = "Failed",
    namespace: str = "ml",
) -> dict[str, Any]:
    """A GPU pod bound to ``node_name``; with ``case``, rejected by the kubelet with that row of KUBELET."""
    status: dict[str, Any] = {"phase": phase}
    if case is not None:
        reason, message, _ = KUBELET[case]
        status.update(reason=reason, message=f"Pod was rejected: {message}")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "nodeName": node_name,
            "containers": [{"name": "c", "resources": {"limits": {resource: "1"}, "requests": {resource: "1"}}}],
        },
        "status": status,
    }


def state(*objects: dict[str, Any]) -> ClusterState:
    return ClusterState.from_objects([("test", o) for o in objects])


def found(*objects: dict[str, Any]) -> list[tuple[str, str, str, str, tuple[str, ...]]]:
    result = run_check("admission", state(*objects), BUILTIN.options())
    return [(f.severity, f.node, f.reason, f.operand, f.args) for f in result.findings]


@pytest.mark.parametrize("case", sorted(KUBELET))
def test_every_kubelet_message_is_a_line_of_the_table(case: str) -> None:
    _, message, source = KUBELET[case]
    hit = matched(message)
    assert hit is not None, f"{case}: {message!r} ({source}) matches no line"
    assert hit[0].source.split()[0] in source


def test_every_line_of_the_table_matches_a_kubelet_message() -> None:
    messages = [m for _, m, _ in KUBELET.values()]
    unmatched = [line.pattern.pattern for line in KUBELET_LINES if not any(line.pattern.search(m) for m in messages)]
    assert unmatched == []


def test_rejections_are_one_finding_per_node_and_reason_graded_by_count() -> None:
    pods = [pod(f"train-{i}", "unavailable") for i in range(REPEATED)]
    assert found(node(), *pods, pod("infer-0", "topology")) == [
        ("warning", "gpu-1", "rejected", "", ("TopologyAffinityError", "nvidia.com/gpu")),
        ("error", "gpu-1", "rejected-repeatedly", "", ("UnexpectedAdmissionError", "nvidia.com/gpu")),
    ]
    fewer = found(node(), *pods[: REPEATED - 1])
    assert fewer == [("warning", "gpu-1", "rejected", "", ("UnexpectedAdmissionError", "nvidia.com/gpu"))]


def test_the_detail_names_the_pods_the_kubelet_message_and_what_it_means() -> None:
    pods = [pod(f"train-{i}", "unavailable") for i in range(5)]
    (f,) = run_check("admission", state(node(), *pods), BUILTIN.options()).findings
    _, message, _ = KUBELET["unavailable"]
    assert f.detail.startswith(
        "5 GPU pod(s) Failed at admission (ml/train-0, ml/train-1, ml/train-2 and 2 more); "
        f"the kubelet: Pod was rejected: {message}: the kubelet's device manager had fewer healthy free devices"
    )
    assert "status.allocatable has nvidia.com/gpu=8 now: the node names no cause" in f.detail


def test_the_device_plugin_not_registered_is_joined_to_the_chain() -> None:
    pods = [pod(f"train-{i}", "unregistered") for i in range(4)]
    s = state(node(allocatable=0), *pods)
    result = run_checks(s, BUILTIN.options())
    (f,) = [f for f in result.findings if f.check == "admission"]
    assert (f.severity, f.reason, f.operand) == ("error", "rejected-repeatedly", "device-plugin")
    assert "status.allocatable has no nvidia.com/gpu now (capacity 8): the device plugin is not registered" in f.detail
    (cause,) = root_causes(s.nodes, result.findings)
    assert cause.link == "allocatable"  # capacity's no-allocatable is the same link, one more finding on the node
    assert cause.also == 1


def test_mig_being_reconfigured_is_joined_to_the_mig_link() -> None:
    mig = {"nvidia.com/mig.config.state": "pending", "nvidia.com/mig.strategy": "mixed"}
    pods = [pod(f"infer-{i}", "out-of", resource="nvidia.com/mig-1g.10gb") for i in range(2)]
    for p in pods:
        p["status"]["message"] = p["status"]["message"].replace("nvidia.com/gpu", "nvidia.com/mig-1g.10gb")
        p["status"]["reason"] = "OutOfnvidia.com/mig-1g.10gb"
    s = state(node(labels=mig), *pods)
    result = run_checks(s, BUILTIN.options())
    (f,) = [f for f in result.findings if f.check == "admission"]
    assert (f.reason, f.operand, f.args) == (
        "rejected",
        "mig-manager",
        ("OutOfnvidia.com/mig-1g.10gb", "nvidia.com/mig-1g.10gb"),
    )
    assert "MIG is being reconfigured (nvidia.com/mig.config.state=pending)" in f.detail
    causes = root_causes(s.nodes, result.findings)
    assert [(c.link, c.finding.check) for c in causes] == [("mig", "admission")]


def test_the_healthy_twin_raises_nothing() -> None:
    """The same node and pods, admitted (Running, Succeeded, Pending) or failed for what is not GPU admission:
    an eviction, OutOfcpu, a pod asking no GPU rejected on the GPU node, and rejected GPU pods on a node without
    GPUs (not a GPU node)."""
    cpu_pod = pod("web-0", "unavailable")
    cpu_pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    evicted = pod("train-9")
    evicted["status"].update(reason="Evicted", message="The node was low on resource: memory.")
    out_of_cpu = pod("train-8")
    out_of_cpu["status"].update(
        reason="OutOfcpu", message="Pod was rejected: Node didn't have enough resource: cpu, requested: 4000, used: 0"
    )
    plain = node("cpu-1")
    plain["metadata"]["labels"] = {}
    plain["status"]["capacity"] = plain["status"]["allocatable"] = {"cpu": "8", "pods": "110"}
    twin = [
        node(),
        plain,
        *(pod(f"train-{i}", phase="Running") for i in range(4)),
        pod("done-0", phase="Succeeded"),
        cpu_pod,
        evicted,
        out_of_cpu,
        *(pod(f"lost-{i}", "unavailable", node_name="cpu-1") for i in range(4)),
        pod("unbound", "unavailable", node_name=""),
    ]
    assert found(*twin) == []
    assert [f for f in run_checks(state(*twin), BUILTIN.options()).findings if f.check == "admission"] == []


def test_namespace_counts_only_its_pods() -> None:
    pods = [pod(f"train-{i}", "unavailable", namespace="ml" if i else "batch") for i in range(3)]
    s = state(node(), *pods)
    assert [f.reason for f in run_check("admission", s, BUILTIN.options()).findings] == ["rejected-repeatedly"]
    assert [f.reason for f in run_check("admission", s, BUILTIN.options(namespace="ml")).findings] == ["rejected"]


def test_check_prints_it_with_the_node_s_cause(tmp_path: Any) -> None:
    import json

    snapshot = tmp_path / "s.json"
    snapshot.write_text(json.dumps(as_list(node(allocatable=0), *(pod(f"t-{i}", "unregistered") for i in range(3)))))
    out = io.StringIO()
    assert main(["check", "--snapshot", str(snapshot), "-o", "wide"], out, io.StringIO()) == 1
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(
        "cause gpu-1 allocatable 8 GPU(s): device-plugin rejected-repeatedly UnexpectedAdmissionError "
        "nvidia.com/gpu (3 GPU pod(s) Failed at admission (ml/t-0, ml/t-1, ml/t-2); the kubelet: Pod was rejected: "
        "Allocate failed due to cannot allocate unregistered device nvidia.com/gpu, which is unexpected: "
    )
    line = next(x for x in lines if x.startswith("error gpu-1 device-plugin rejected-repeatedly"))
    assert line.startswith(
        "error gpu-1 device-plugin rejected-repeatedly UnexpectedAdmissionError nvidia.com/gpu (3 GPU"
    )
    assert "admission: 1 finding(s) rejected-repeatedly=1" in lines


def test_the_monitor_agrees_as_pods_are_rejected_and_deleted() -> None:
    from gpulabel.checks.engine.assessment import FullEvaluator
    from gpulabel.checks.engine.incremental.evaluator import IncrementalEvaluator
    from gpulabel.model.cluster import KIND

    def record(obj: dict[str, Any]) -> tuple[str, tuple[str, str], Any]:
        kind = KIND[obj["kind"]]
        meta = obj["metadata"]
        return kind.kind, (meta.get("namespace", ""), meta["name"]), kind.reader()(obj, "test")

    steps: list[tuple[str, dict[str, Any] | None, tuple[str, str]]] = [
        ("Node", node(), ("", "gpu-1")),
        ("Pod", pod("t-0", phase="Running"), ("ml", "t-0")),
        ("Pod", pod("t-1", "unregistered"), ("ml", "t-1")),
        ("Pod", pod("t-2", "unregistered"), ("ml", "t-2")),
        ("Pod", pod("t-3", "unregistered"), ("ml", "t-3")),
        ("Node", node(allocatable=0), ("", "gpu-1")),  # the plugin's registration is gone: the cause is known
        ("Pod", None, ("ml", "t-3")),  # deleted: two left
        ("Pod", pod("t-0", "topology"), ("ml", "t-0")),  # a Running pod's record changes to a rejection
        ("Node", None, ("", "gpu-1")),
    ]
    seen = []
    for ev in (FullEvaluator(BUILTIN.options()), IncrementalEvaluator(BUILTIN.options())):
        for kind in ("Node", "Pod"):
            ev.reset(kind, [])
        lines = []
        for kind, obj, key in steps:
            ev.apply(kind, key, None if obj is None else record(obj)[2])
            lines.append([(f.line(), f.severity) for f in ev.assess(0.0).findings if f.check == "admission"])
        seen.append(lines)
    assert seen[0] == seen[1]
    unregistered = "gpu-1 rejected-repeatedly UnexpectedAdmissionError nvidia.com/gpu"
    assert seen[0][4] == [(unregistered, "error")]
    assert seen[0][5] == [("gpu-1 device-plugin " + unregistered.removeprefix("gpu-1 "), "error")]
    assert seen[0][6] == [("gpu-1 device-plugin rejected UnexpectedAdmissionError nvidia.com/gpu", "warning")]
    assert len(seen[0][7]) == 2 and seen[0][8] == []
