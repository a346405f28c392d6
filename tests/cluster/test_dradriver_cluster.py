"""NVIDIA's DRA driver's kubelet plugin as an operand, against the real DaemonSet controller (issue 32, item 4).

The DaemonSet is the one the driver's chart renders (``tests/dradriver_chart.py``: names, selector label, the
``gpus`` and ``compute-domains`` containers, the node affinity of v25.12.0 and of the renamed chart); kwok runs
no binary and marks the pods the controller makes Running. Three GPU nodes: one NFD labelled the way the GPU
Operator configures it (``pci-10de``), one the way NFD labels by default (``pci-0302_10de``), one of those with
the operator's ``nvidia.com/gpu.present``. gpulabel, asked before the DaemonSet's pods exist and after, says on
which nodes the plugin is expected; the controller's pods must be on exactly those, and the node it leaves out
is the ``nfd-label-mismatch`` root cause. The renamed chart's DaemonSet then takes that node too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from gpulabel_run import gpulabel
from labcluster_support import LabCluster, delete_namespace, gpu_node_manifest, node_is_ready, wait_for
from tests.dradriver_chart import NS, kubelet_plugin

PCI = "feature.node.kubernetes.io/pci-10de.present"
PCI_0302 = "feature.node.kubernetes.io/pci-0302_10de.present"
GFD = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "2"}
NODES = {
    "dra-vendor": (True, {}),
    "dra-class": (False, {PCI_0302: "true"}),
    "dra-present": (False, {PCI_0302: "true", "nvidia.com/gpu.present": "true"}),
}


def _namespace_and_account(chart: str) -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": f"{chart}-service-account-kubeletplugin", "namespace": NS},
        },
    ]


@pytest.fixture
def dra_nodes(labcluster: LabCluster) -> Iterator[list[str]]:
    for name, (vendor_label, labels) in NODES.items():
        labcluster.apply(gpu_node_manifest(name, {**GFD, **labels}, gpu=vendor_label))
    for name in NODES:
        wait_for(lambda name=name: node_is_ready(labcluster.get("node", name)), timeout=60)
    labcluster.apply(
        *_namespace_and_account("nvidia-dra-driver-gpu"), *_namespace_and_account("dra-driver-nvidia-gpu")[1:]
    )
    yield list(NODES)
    # gone before the next file: its DaemonSet, still there while the namespace terminates, expects the
    # plugin on every GPU node that file makes (test_health_cluster met it on 2 workers)
    delete_namespace(labcluster, NS)
    labcluster.kubectl("delete", "node", *NODES, "--wait=false", "--ignore-not-found")


def plugin_pods(cluster: LabCluster, chart: str) -> dict[str, dict[str, Any]]:
    pods = cluster.get("pods", "-n", NS, "-l", f"{chart}-component=kubelet-plugin")["items"]
    return {p["spec"].get("nodeName", ""): p for p in pods if not p["metadata"].get("deletionTimestamp")}


def ready_on(cluster: LabCluster, chart: str, nodes: list[str]) -> bool:
    pods = plugin_pods(cluster, chart)
    return all(n in pods and pods[n]["status"].get("phase") == "Running" for n in nodes)


def plugin_findings(cluster: LabCluster, nodes: list[str]) -> dict[str, tuple[str, str]]:
    res = gpulabel(cluster.kubeconfig, "operands", "-o", "json")
    assert res.returncode in (0, 1), res.stderr
    doc = json.loads(res.stdout)
    return {
        f["node"]: (f["reason"], f["severity"])
        for f in doc["findings"]
        if f["node"] in nodes and f.get("operand") == "dra-kubelet-plugin"
    }


def test_the_dra_kubelet_plugin_lands_where_gpulabel_expects_it(labcluster: LabCluster, dra_nodes: list[str]) -> None:
    old, new = kubelet_plugin(), kubelet_plugin(fixed=True)
    # asked before the DaemonSet has any pod: every node it takes is `missing` its pod, the one it does not
    # take is the NFD mismatch
    labcluster.apply(old)
    before = plugin_findings(labcluster, dra_nodes)
    assert before.get("dra-class") == ("nfd-label-mismatch", "error"), before
    expected = {n for n in dra_nodes if before.get(n, ("",))[0] != "nfd-label-mismatch"}
    assert expected == {"dra-vendor", "dra-present"}
    # the controller's decision: pods on exactly the nodes gpulabel expects, none on the mismatched one
    wait_for(lambda: ready_on(labcluster, "nvidia-dra-driver-gpu", sorted(expected)), timeout=90)
    placed = set(plugin_pods(labcluster, "nvidia-dra-driver-gpu")) & set(dra_nodes)
    assert placed == expected
    after = plugin_findings(labcluster, dra_nodes)
    assert after == {"dra-class": ("nfd-label-mismatch", "error")}
    check = gpulabel(labcluster.kubeconfig, "check")
    causes = [line for line in check.stdout.splitlines() if line.startswith("cause dra-class ")]
    assert causes == [
        "cause dra-class daemonset 2 GPU(s): dra-kubelet-plugin nfd-label-mismatch "
        f"{PCI_0302} (nvidia-dra-driver-gpu/nvidia-dra-driver-gpu-kubelet-plugin does not select this node: "
        f"NFD labelled it {PCI_0302}=true, its node affinity asks {PCI} (no kubelet plugin, no ResourceSlices: "
        "the node's GPUs cannot be allocated through DRA; add a term for "
        f"{PCI_0302} or label the node nvidia.com/gpu.present=true))"
    ], check.stdout

    # the renamed chart's affinity names pci-0302_10de: its controller takes every GPU node, gpulabel agrees
    labcluster.kubectl("delete", "daemonset", "-n", NS, old["metadata"]["name"], "--wait=true")
    labcluster.apply(new)
    wait_for(lambda: ready_on(labcluster, "dra-driver-nvidia-gpu", dra_nodes), timeout=90)
    assert set(plugin_pods(labcluster, "dra-driver-nvidia-gpu")) & set(dra_nodes) == set(dra_nodes)
    assert plugin_findings(labcluster, dra_nodes) == {}
