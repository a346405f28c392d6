"""GPU health against the real API server: what a kubelet, a device plugin and a health agent write.

A kwok node plays the kubelet: its ``status.capacity``/``status.allocatable`` are patched through the
status subresource as the kubelet does when the device plugin takes a device out (capacity 8,
allocatable 7), and a GPU health condition is added there as node-problem-detector does (a
``NodeCondition`` with reason, message and lastTransitionTime). A pod bound to it gets
``allocatedResourcesStatus`` (KEP-4680) through its status subresource, which the API server keeps only
while the ResourceHealthStatus feature gate is on (``dropDisabledPodStatusFields``): the test says which.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from gpulabel_run import gpulabel
from labcluster_support import LabCluster, wait_for
from live_snapshot import live_as_on_a_snapshot

GPU_LABELS = {
    "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.count": "8",
    "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
    "nvidia.com/gpu.memory": "81559",
    "feature.node.kubernetes.io/pci-10de.present": "true",
}
DEVICE = "GPU-3f2c4b7e-93d1-4e0c-8c4b-7a1e2d9f0b11"


def _status_patch(labcluster: LabCluster, kind: str, name: str, patch: dict[str, Any], *ns: str) -> None:
    labcluster.kubectl("patch", kind, *ns, name, "--subresource=status", "--type=strategic", "-p", json.dumps(patch))


def test_a_lost_gpu_a_health_condition_and_an_unhealthy_device_live_and_in_a_snapshot(
    labcluster: LabCluster, make_node: Any, ns: str, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:6]
    name, healthy = f"health-{tag}", f"healthy-{tag}"
    for node in (name, healthy):
        make_node(node, {**GPU_LABELS, "health-test": tag})
        gpus = {"nvidia.com/gpu": "8"}
        _status_patch(labcluster, "node", node, {"status": {"capacity": gpus, "allocatable": gpus}})
    # the device plugin took one device out: the kubelet keeps it in capacity, not in allocatable
    _status_patch(labcluster, "node", name, {"status": {"allocatable": {"nvidia.com/gpu": "7"}}})
    condition = {
        "type": "GPUXIDErrors",
        "status": "True",
        "reason": "XID79",
        "message": "GPU has fallen off the bus",
        "lastHeartbeatTime": "2026-12-01T08:00:00Z",
        "lastTransitionTime": "2026-12-01T08:00:00Z",
    }
    _status_patch(labcluster, "node", name, {"status": {"conditions": [condition]}})
    # the healthy node carries the same condition in its healthy state: silent
    _status_patch(labcluster, "node", healthy, {"status": {"conditions": [{**condition, "status": "False"}]}})

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train-0", "namespace": ns},
        "spec": {
            "nodeName": name,
            "containers": [{"name": "trainer", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
        },
    }
    labcluster.apply(pod)
    wait_for(
        lambda: labcluster.get("pod", "-n", ns, "train-0").get("status", {}).get("containerStatuses"),
        timeout=60,
        message="for kwok to report the pod's containers",
    )
    statuses = labcluster.get("pod", "-n", ns, "train-0")["status"]["containerStatuses"]
    health = [{"name": "nvidia.com/gpu", "resources": [{"resourceID": DEVICE, "health": "Unhealthy"}]}]
    reported = [{**c, "allocatedResourcesStatus": health} for c in statuses]
    _status_patch(labcluster, "pod", "train-0", {"status": {"containerStatuses": reported}}, "-n", ns)
    stored = labcluster.get("pod", "-n", ns, "train-0")["status"]["containerStatuses"]
    kept = any(c.get("allocatedResourcesStatus") for c in stored)

    res = gpulabel(labcluster.kubeconfig, "check", "-o", "wide", "-l", f"health-test={tag}")
    # the findings about the two nodes (a Pending pod of another test on this shared cluster may name them)
    mine = [line for line in res.stdout.splitlines() if line.split(" ", 2)[1:2] in ([name], [healthy])]
    device = f" {DEVICE}" if kept else ""
    lost = [line for line in mine if line.startswith(f"error {name} nvidia.com/gpu gpus-lost 1/8{device} (")]
    assert lost, (kept, mine)
    assert any(line.startswith(f"error {name} condition GPUXIDErrors=True reason=XID79") for line in mine), mine
    assert not [line for line in mine if healthy in line], mine
    if kept:
        assert f"held by {ns}/train-0 container trainer" in lost[0], lost
    else:  # the API server dropped the field (feature gate off): gpulabel says no pod names the device
        assert "no pod reports which device" in lost[0], lost
    causes = [line for line in res.stdout.splitlines() if line.startswith(f"cause {name} ")]
    assert len(causes) == 1 and causes[0].startswith(f"cause {name} health 8 GPU(s): nvidia.com/gpu gpus-lost 1/8"), (
        causes
    )

    gpus = gpulabel(labcluster.kubeconfig, "gpus", "-l", f"health-test={tag}")
    assert gpus.returncode == 0, gpus.stderr
    # the condition makes all of the node's GPUs unhealthy (7 advertised + 1 lost); the healthy node's 8 are free
    total = gpus.stdout.splitlines()[-1]
    assert total.startswith(
        "total nodes=2 gpus=16 mig_devices=- allocatable=15 usable=8 unhealthy=8 unschedulable=0 "
    ), gpus.stdout

    # check live equals check on a snapshot of the same moment, whatever kinds the cluster holds none of (a
    # kind listed empty is an empty typed List in the snapshot: no DaemonSet is made here to keep the two equal)
    path = tmp_path / "health.json"
    at = ("--at", "2026-12-01T12:00:00Z")
    # a snapshot holds no logs or Events: the live run reads none either (the blamed operand pods of other
    # tests' nodes on this shared cluster would add evidence objects to its JSON)
    _, doc = live_as_on_a_snapshot(
        labcluster.kubeconfig, path, ["check", "-o", "json", *at], live_only=["--no-evidence"]
    )
    found = [f for f in doc["findings"] if f["check"] == "health" and f.get("node") == name]
    assert {f["reason"] for f in found} == {"gpus-lost", "condition"}
    said = next(f for f in found if f["reason"] == "condition")
    assert said["args"] == ["GPUXIDErrors=True", "reason=XID79"], said
    said_, repair = said["detail"].split("; repair: ")
    assert said_.endswith("since 2026-12-01T08:00:00Z, for 4h0m (more than 30m)"), said
    assert repair.startswith("Xid 79 (the GPU fell off the bus, its reason): cordon and drain the node"), said
    print(f"allocatedResourcesStatus kept by the API server: {kept}")
