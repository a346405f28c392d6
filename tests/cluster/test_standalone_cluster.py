"""Clusters without the GPU Operator (issue 22): the NVIDIA device plugin's own DaemonSet, checked per GPU node,
and ``gpulabel snapshot`` capturing what the checks read (the same ``check -o json`` as the live run).

kwok runs no binary: the DaemonSet is the one the device plugin's static manifest and chart render
(``nvidia-device-plugin-daemonset`` in kube-system, its image, its NVIDIA-node affinity); the real
DaemonSet controller makes its pods, kwok marks them Running. A crash is a pod status written here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpulabel_run import gpulabel
from labcluster_support import LabCluster, gpu_node_manifest, node_is_ready, wait_for
from live_snapshot import live_as_on_a_snapshot

GFD = {"nvidia.com/gpu.product": "NVIDIA-L4", "nvidia.com/gpu.count": "1", "nvidia.com/gpu.memory": "23034"}
DS = "nvidia-device-plugin-daemonset"


def device_plugin_daemonset() -> dict[str, Any]:
    """What the NVIDIA device plugin's manifest renders for its DaemonSet (no GPU Operator, no deploy label)."""
    any_nvidia = [
        {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
        for key, value in (
            ("feature.node.kubernetes.io/pci-10de.present", "true"),
            ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),
            ("nvidia.com/gpu.present", "true"),
        )
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": DS, "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"name": "nvidia-device-plugin-ds"}},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {"name": "nvidia-device-plugin-ds"}},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": any_nvidia}
                        }
                    },
                    "containers": [
                        {
                            "name": "nvidia-device-plugin-ctr",
                            "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
                            "env": [{"name": "FAIL_ON_INIT_ERROR", "value": "false"}],
                            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                            "volumeMounts": [{"name": "device-plugin", "mountPath": "/var/lib/kubelet/device-plugins"}],
                        }
                    ],
                    "volumes": [{"name": "device-plugin", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}],
                },
            },
        },
    }


@pytest.fixture
def plugin_nodes(labcluster: LabCluster) -> Iterator[list[str]]:
    names = ["dp-ok", "dp-crash", "dp-tainted"]
    taint = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    for name in names:
        labcluster.apply(gpu_node_manifest(name, GFD, taint if name == "dp-tainted" else None, gpus=1))
    for name in names:
        wait_for(lambda name=name: node_is_ready(labcluster.get("node", name)), timeout=60)
    labcluster.apply(device_plugin_daemonset())
    yield names
    labcluster.kubectl("delete", "daemonset", "-n", "kube-system", DS, "--wait=false", "--ignore-not-found")
    labcluster.kubectl("delete", "node", *names, "--wait=false", "--ignore-not-found")


def about(output: str, nodes: list[str], field: int, first: str = "") -> list[str]:
    """The lines whose word ``field`` is one of ``nodes`` (and whose first word is ``first``, if given)."""
    words = [line.split() for line in output.splitlines()]
    return [" ".join(w) for w in words if len(w) > field and w[field] in nodes and (not first or w[0] == first)]


def plugin_pods(cluster: LabCluster) -> dict[str, dict[str, Any]]:
    pods = cluster.get("pods", "-n", "kube-system", "-l", "name=nvidia-device-plugin-ds")["items"]
    return {p["spec"].get("nodeName", ""): p for p in pods if not p["metadata"].get("deletionTimestamp")}


def running_on(cluster: LabCluster, node: str) -> bool:
    pod = plugin_pods(cluster).get(node)
    return pod is not None and pod["status"].get("phase") == "Running"


def test_the_device_plugin_chart_without_the_operator(labcluster: LabCluster, plugin_nodes: list[str]) -> None:
    wait_for(lambda: running_on(labcluster, "dp-ok") and running_on(labcluster, "dp-crash"), timeout=60)
    assert "dp-tainted" not in plugin_pods(labcluster)
    # a deleted pod comes back at once (the DaemonSet controller): nothing to report on dp-ok afterwards
    old = plugin_pods(labcluster)["dp-ok"]["metadata"]["name"]
    labcluster.kubectl("delete", "pod", "-n", "kube-system", old, "--wait=false")
    wait_for(
        lambda: running_on(labcluster, "dp-ok") and plugin_pods(labcluster)["dp-ok"]["metadata"]["name"] != old,
        timeout=60,
    )
    # the device plugin crash-looping on dp-crash (its status written here: kwok runs nothing)
    pod = plugin_pods(labcluster)["dp-crash"]
    name = pod["metadata"]["name"]
    crash = {
        "conditions": [
            {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
            {"type": "PodScheduled", "status": "True"},
        ],
        "containerStatuses": [
            {
                "name": "nvidia-device-plugin-ctr",
                "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
                "imageID": "",
                "ready": False,
                "restartCount": 4,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 2m40s"}},
            }
        ],
    }
    labcluster.kubectl(
        "patch",
        "pod",
        "-n",
        "kube-system",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": crash}),
    )
    res = gpulabel(labcluster.kubeconfig, "operands", "-o", "wide")
    assert res.returncode == 1, res.stderr
    assert about(res.stdout, plugin_nodes, 1) == [
        f"error dp-crash device-plugin not-ready (pod kube-system/{name} Running, waiting: CrashLoopBackOff, "
        "restarts 4)",
        "error dp-tainted device-plugin missing (kube-system/nvidia-device-plugin-daemonset does not tolerate taint "
        "dedicated=batch:NoSchedule)",
    ]
    doc = json.loads(gpulabel(labcluster.kubeconfig, "operands", "-o", "json").stdout)
    mine = [f for f in doc["findings"] if f["node"] in plugin_nodes]
    assert {(f["node"], f["daemonset"], f["severity"]) for f in mine} == {
        ("dp-crash", f"kube-system/{DS}", "error"),
        ("dp-tainted", f"kube-system/{DS}", "error"),
    }
    check = gpulabel(labcluster.kubeconfig, "check")
    assert about(check.stdout, plugin_nodes, 1, "cause") == [
        f"cause dp-crash operand-pod 1 GPU(s): device-plugin not-ready (pod kube-system/{name} Running, waiting: "
        "CrashLoopBackOff, restarts 4)",
        "cause dp-tainted daemonset 1 GPU(s): device-plugin missing (kube-system/nvidia-device-plugin-daemonset does "
        "not tolerate taint dedicated=batch:NoSchedule)",
    ]

    # a snapshot written by gpulabel snapshot gives the same check -o json as the live run
    path = Path(labcluster.dir) / "captured.json"
    at = ("--at", "2026-12-01T00:00:00Z")
    code, _ = live_as_on_a_snapshot(labcluster.kubeconfig, path, ["check", "-o", "json", *at])
    assert code == 1
    nodes = [o for o in json.loads(path.read_text())["items"] if o["kind"] == "Node"]
    assert nodes and all(o["metadata"].get("managedFields") for o in nodes)  # what stuck detection reads
