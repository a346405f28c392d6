"""A GPU node's NoExecute taint that the chain's pods do not tolerate: one finding, the ``node`` link, its GPUs."""

from __future__ import annotations

from typing import Any

from gpulabel.checks.engine.rootcause import link_of, root_causes
from gpulabel.checks.explain.chain import explain_node_chain
from gpulabel.checks.operands.eviction import noexecute_findings
from gpulabel.checks.registry import BUILTIN, run_check, run_checks
from gpulabel.model.cluster import ClusterState
from tests.objects import daemonset, node, pod

GPU = {
    "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.count": "4",
    "nvidia.com/gpu.product": "NVIDIA-A10",
    "nvidia.com/gpu.memory": "23028",
}
NOEXECUTE = {"key": "dedicated", "value": "training", "effect": "NoExecute"}
NOSCHEDULE = {"key": "dedicated", "value": "training", "effect": "NoSchedule"}
CHAIN = ["driver", "container-toolkit", "device-plugin", "gpu-feature-discovery"]


def gated(op: str, tolerations: list[dict[str, str]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeSelector": {f"nvidia.com/gpu.deploy.{op}": "true"}, "containers": []}
    if tolerations:
        spec["tolerations"] = tolerations
    return daemonset("gpu-operator", f"ds-{op}", f"uid-{op}", spec)


def deploy(**values: str) -> dict[str, str]:
    return {f"nvidia.com/gpu.deploy.{k.replace('_', '-')}": v for k, v in values.items()}


def state_of(*objects: dict[str, Any]) -> ClusterState:
    """The objects, and a pod elsewhere: the operands check reads pods (without any, it is skipped)."""
    return ClusterState.from_objects(("t", o) for o in (*objects, pod("default", "web", "cpu-0")))


def tainted(name: str = "g", taints: list[dict[str, str]] | None = None, **values: str) -> dict[str, Any]:
    labels = {**GPU, **deploy(**(values or dict.fromkeys([c.replace("-", "_") for c in CHAIN], "true")))}
    return node(name, labels, taints=[NOEXECUTE] if taints is None else taints)


def test_a_noexecute_taint_the_chain_does_not_tolerate_is_one_finding_naming_the_taint_and_the_pods() -> None:
    state = state_of(*(gated(op) for op in CHAIN), gated("dcgm"), tainted())
    (f,) = noexecute_findings(state)
    assert f.line() == "g noexecute-taint dedicated=training:NoExecute"
    assert f.detail == (
        "not tolerated by the pods of driver, container-toolkit, device-plugin, gpu-feature-discovery: evicted, "
        "and not recreated here by the DaemonSet controller, so the node's GPUs cannot be used"
    )
    assert link_of(f) == "node"


def test_no_finding_for_a_noschedule_taint_a_tolerated_one_a_cpu_node_or_an_unselected_daemonset() -> None:
    tolerate = [{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}]
    assert noexecute_findings(state_of(*(gated(op) for op in CHAIN), tainted(taints=[NOSCHEDULE]))) == []
    assert noexecute_findings(state_of(*(gated(op, tolerate) for op in CHAIN), tainted())) == []
    assert noexecute_findings(state_of(*(gated(op) for op in CHAIN), node("cpu", {}, taints=[NOEXECUTE]))) == []
    # a pre-installed driver: its DaemonSet does not select the node, whatever the taint
    only_driver = state_of(gated("driver"), tainted(driver="pre-installed"))
    assert noexecute_findings(only_driver) == []
    # only an operand no GPU depends on (dcgm) does not tolerate it: its missing finding says so, not this one
    assert noexecute_findings(state_of(gated("dcgm"), tainted(dcgm="true"))) == []


def test_the_operator_namespace_of_the_config_limits_the_operators_daemonsets() -> None:
    state = state_of(*(gated(op) for op in CHAIN), tainted())
    assert noexecute_findings(state, namespace="elsewhere") == []
    assert len(noexecute_findings(state, namespace="gpu-operator")) == 1


def test_the_operands_check_carries_it_as_an_error_after_the_nodes_missing_operands() -> None:
    state = state_of(*(gated(op) for op in CHAIN), tainted("a"), node("b", {**GPU, **deploy(driver="true")}))
    result = run_check("operands", state, BUILTIN.options())
    lines = [(f.severity, f.line()) for f in result.findings]
    assert lines == [
        ("error", "a driver missing"),
        ("error", "a container-toolkit missing"),
        ("error", "a device-plugin missing"),
        ("error", "a gpu-feature-discovery missing"),
        ("error", "a noexecute-taint dedicated=training:NoExecute"),
        ("error", "b driver missing"),
    ]


def test_the_node_link_is_broken_and_it_is_the_root_cause_with_the_gpus_when_nothing_earlier_is() -> None:
    state = state_of(*(gated(op) for op in CHAIN), tainted())
    findings = run_checks(state, BUILTIN.options()).findings
    (cause,) = root_causes(state.nodes, findings)
    assert (cause.link, cause.gpus, cause.also) == ("daemonset", 4, 4)  # the DaemonSet link comes first
    (n,) = state.nodes
    gpus, links = explain_node_chain(state, n, findings)
    node_link = next(link for link in links if link.name == "node")
    assert (gpus, node_link.status) == (4, "broken")
    assert node_link.evidence == "Ready=True, schedulable, taints dedicated=training:NoExecute"
    assert [f.reason for f in node_link.findings] == ["noexecute-taint"]
    # alone (say the chain's missing findings were silenced), it is the root cause and costs the node's GPUs
    alone = [f for f in findings if f.reason == "noexecute-taint"]
    (cause,) = root_causes(state.nodes, alone)
    assert cause.line() == (
        "cause g node 4 GPU(s): noexecute-taint dedicated=training:NoExecute (not tolerated by the pods of driver, "
        "container-toolkit, device-plugin, gpu-feature-discovery: evicted, and not recreated here by the DaemonSet "
        "controller, so the node's GPUs cannot be used)"
    )
