"""place's advice against the real scheduler: apply the proposed label change, and the pod binds to that node.

Three kwok nodes of one run: an A10 with 4 GPUs, an H100 with 8, and a node NFD
found a GPU on that nothing labelled (no GPUs advertised). A pod asks for an A10
and 5 GPUs: no node fits. The proposal must be a node the pod then fits on by
every filter (the H100, relabelled), never the unlabelled node (one label
away, but no GPUs): once the change is applied, kube-scheduler binds the
Pending pod there. A pod asking for 16 GPUs gets no proposal.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from gpulabel_run import gpulabel
from labcluster_support import LabCluster, node_is_ready, wait_for

PRODUCT = "nvidia.com/gpu.product"


def node_object(name: str, run: str, labels: dict[str, str], gpus: str) -> dict[str, Any]:
    alloc = {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": gpus}
    meta = {"name": name, "labels": {"kubernetes.io/hostname": name, "example.com/advtest": run, **labels}}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": {"allocatable": alloc, "capacity": alloc}}


def pod_object(name: str, ns: str, run: str, gpus: int) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": PRODUCT, "operator": "In", "values": ["NVIDIA-A10"]}]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "nodeSelector": {"example.com/advtest": run},
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
            },
            "containers": [
                {"name": "c", "image": "example.com/t:1", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
            ],
        },
    }


def test_the_proposed_label_change_makes_the_scheduler_bind_the_pod_there(
    labcluster: LabCluster, ns: str, tmp_path: Path
) -> None:
    run = uuid.uuid4().hex[:6]
    names = [f"adv-{run}-a10", f"adv-{run}-h100", f"adv-{run}-new"]
    labcluster.apply(
        node_object(names[0], run, {PRODUCT: "NVIDIA-A10", "nvidia.com/gpu.present": "true"}, "4"),
        node_object(names[1], run, {PRODUCT: "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.present": "true"}, "8"),
        node_object(names[2], run, {"feature.node.kubernetes.io/pci-10de.present": "true"}, "0"),
    )
    try:

        def ready() -> bool:
            mine = [n for n in labcluster.get("nodes")["items"] if n["metadata"]["name"] in names]
            return len(mine) == 3 and all(node_is_ready(n) for n in mine)

        wait_for(ready, timeout=90, message="for the nodes to become Ready")
        pod = pod_object("train", ns, run, 5)
        manifest = tmp_path / "train.json"
        manifest.write_text(json.dumps(pod))
        labcluster.apply(pod)
        wait_for(
            lambda: any(
                c.get("reason") == "Unschedulable"
                for c in labcluster.get("pod", "train", "-n", ns)["status"].get("conditions", [])
            ),
            timeout=60,
            message="for the pod to be Unschedulable",
        )
        done = gpulabel(labcluster.kubeconfig, "place", str(manifest), "-l", f"example.com/advtest={run}", "-o", "json")
        assert done.returncode == 1, done.stderr
        (workload,) = json.loads(done.stdout)["workloads"]
        assert workload["closest"] == names[1], workload  # not the unlabelled node: it has no GPUs
        command = workload["command"].split()
        assert command[:3] == ["kubectl", "label", "node"]
        labcluster.kubectl(*command[1:])
        bound = wait_for(
            lambda: labcluster.get("pod", "train", "-n", ns)["spec"].get("nodeName"),
            timeout=60,
            message="for the scheduler to bind the pod after the label change",
        )
        assert bound == names[1]

        big = tmp_path / "big.json"
        big.write_text(json.dumps(pod_object("big", ns, run, 16)))
        done = gpulabel(labcluster.kubeconfig, "place", str(big), "-l", f"example.com/advtest={run}", "-o", "wide")
        assert done.returncode == 1, done.stderr
        assert "closest: none (no single label change makes a node fit" in done.stdout
    finally:
        labcluster.kubectl("delete", "node", *names, "--wait=false", "--ignore-not-found")
