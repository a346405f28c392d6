"""NVIDIA's DRA driver's kubelet plugin as an operand (``checks/operands/dradriver.py``): which GPU nodes its DaemonSet
takes, its pods there, the NFD label mismatch as a root cause (the labcluster twin: test_dradriver_cluster.py)."""

from __future__ import annotations

from typing import Any

from gpulabel.checks.engine.rootcause import link_of, root_causes
from gpulabel.checks.operands.dradriver import dra_plugin_daemonsets, dra_plugin_findings
from gpulabel.checks.operands.standalone import gpu_node, standalone_kind
from gpulabel.checks.registry import BUILTIN, run_check
from gpulabel.model.cluster import ClusterState
from gpulabel.model.dradriver import plugin_containers
from tests.dradriver_chart import kubelet_plugin
from tests.objects import node, pod

PCI = "feature.node.kubernetes.io/pci-10de.present"
PCI_0302 = "feature.node.kubernetes.io/pci-0302_10de.present"
GFD = {"nvidia.com/gpu.count": "2", "nvidia.com/gpu.product": "NVIDIA-H100"}


def plugin(fixed: bool = False, gpus: bool = True, uid: str = "uid-dra") -> dict[str, Any]:
    ds = kubelet_plugin(fixed, gpus)
    ds["metadata"]["uid"] = uid
    return ds


def plugin_pod(node_name: str, uid: str = "uid-dra", **kw: Any) -> dict[str, Any]:
    return pod("nvidia-dra-driver-gpu", f"kp-{node_name}", node_name, owner_uid=uid, **kw)


def state(*objects: dict[str, Any]) -> ClusterState:
    return ClusterState.from_objects(("t", o) for o in objects)


def lines(*objects: dict[str, Any]) -> list[str]:
    return [
        f"{f.node} {f.operand} {f.reason} {' '.join(f.args)}".strip()
        for f in dra_plugin_findings(state(*objects), gpu_node)
    ]


def test_the_chart_daemonset_is_recognised_by_what_it_runs_and_only_with_the_gpus_plugin() -> None:
    ds = plugin()
    spec = ds["spec"]["template"]["spec"]
    assert plugin_containers("x", spec) == ("compute-domain-kubelet-plugin", "gpu-kubelet-plugin")
    assert [d.name for d in dra_plugin_daemonsets(state(ds))] == ["nvidia-dra-driver-gpu-kubelet-plugin"]
    assert dra_plugin_daemonsets(state(plugin(gpus=False))) == []  # compute domains only: no GPUs published
    # live, the operands check lists the pods of the DaemonSets it recognises (app/checks.py run_operands)
    assert [standalone_kind(d) for d in state(ds, plugin(fixed=True, uid="u2")).daemonsets] == [
        "dra-kubelet-plugin"
    ] * 2
    other = {"containers": [{"name": "c", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}]}
    assert plugin_containers("nvidia-device-plugin-daemonset", other) is None


def test_a_gpu_node_labelled_the_nfd_default_way_is_the_nfd_mismatch_the_fixed_chart_takes_it() -> None:
    objects = [
        node("ok", {PCI: "true", **GFD}),
        node("nfd-default", {PCI_0302: "true", **GFD}),
        node("cpu", {"kubernetes.io/os": "linux"}),
        plugin_pod("ok"),
    ]
    assert lines(plugin(), *objects) == ["nfd-default dra-kubelet-plugin nfd-label-mismatch " + PCI_0302]
    (f,) = dra_plugin_findings(state(plugin(), *objects), gpu_node)
    assert f.daemonset == "nvidia-dra-driver-gpu/nvidia-dra-driver-gpu-kubelet-plugin"
    assert f"its node affinity asks {PCI} (no kubelet plugin" in f.detail
    assert link_of(f) == "daemonset"
    # the renamed chart asks pci-0302_10de too: the node is taken and waits for its pod
    assert lines(plugin(fixed=True), *objects) == ["nfd-default dra-kubelet-plugin missing"]


def test_gpu_present_takes_the_node_whatever_nfd_says_and_a_node_out_for_another_reason_is_missing() -> None:
    present = node("op", {PCI_0302: "true", "nvidia.com/gpu.present": "true"})
    assert lines(plugin(), present, plugin_pod("op")) == []
    # a taint the v25.12.0 chart does not tolerate keeps it out: missing, with the taint, not the mismatch
    taint = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    tainted = node("t", {PCI: "true"}, taints=taint)
    (f,) = dra_plugin_findings(state(plugin(), tainted), gpu_node)
    assert (f.reason, f.detail) == (
        "missing",
        "nvidia-dra-driver-gpu/nvidia-dra-driver-gpu-kubelet-plugin does not tolerate taint "
        "nvidia.com/gpu=present:NoSchedule",
    )
    assert (
        dra_plugin_findings(state(plugin(fixed=True), tainted, plugin_pod("t")), gpu_node) == []
    )  # the new toleration
    # a node the mismatch alone does not explain (tainted too) is missing with the first reason
    both = node("b", {PCI_0302: "true"}, taints=taint)
    assert lines(plugin(), both) == ["b dra-kubelet-plugin missing"]


def test_a_plugin_pod_not_ready_or_absent_on_a_taken_node() -> None:
    objects = [plugin(), node("a", {PCI: "true"}), node("b", {PCI: "true"}), plugin_pod("a", ready=False)]
    assert lines(*objects) == ["a dra-kubelet-plugin not-ready", "b dra-kubelet-plugin missing"]


def test_the_operands_check_and_the_root_cause_count_the_mismatch_on_an_operator_managed_node() -> None:
    managed = {PCI_0302: "true", "nvidia.com/gpu.deploy.driver": "pre-installed", **GFD}
    st = state(plugin(), node("g", managed), pod("default", "web", "g"))
    result = run_check("operands", st, BUILTIN.options())
    found = [(f.node, f.reason, f.severity) for f in result.findings if f.operand == "dra-kubelet-plugin"]
    assert found == [("g", "nfd-label-mismatch", "error")]
    (cause,) = [c for c in root_causes(st.nodes, result.findings) if c.finding.operand == "dra-kubelet-plugin"]
    assert (cause.node, cause.link, cause.gpus) == ("g", "daemonset", 2)


def test_explain_node_names_the_plugin_daemonset_and_the_nfd_label_the_node_has() -> None:
    from gpulabel.checks.explain.chain import explain_node_chain

    st = state(plugin(), node("g", {PCI_0302: "true", **GFD}), node("ok", {PCI: "true", **GFD}), plugin_pod("ok"))
    findings = run_check("operands", st, BUILTIN.options()).findings
    links = {n.name: {link.name: link for link in explain_node_chain(st, n, findings)[1]} for n in st.nodes}
    ds = "nvidia-dra-driver-gpu/nvidia-dra-driver-gpu-kubelet-plugin"
    assert links["g"]["nfd"].evidence == f"{PCI_0302}=true"
    assert links["g"]["daemonset"].status == "broken"
    assert links["g"]["daemonset"].evidence == f"dra-kubelet-plugin {ds} (affinity term[0] {PCI} In [true])"
    assert [f.reason for f in links["g"]["daemonset"].findings] == ["nfd-label-mismatch"]
    assert links["ok"]["daemonset"].evidence == f"dra-kubelet-plugin {ds} (takes it)"
    assert links["ok"]["operand-pod"].evidence == "dra-kubelet-plugin nvidia-dra-driver-gpu/kp-ok Ready"
