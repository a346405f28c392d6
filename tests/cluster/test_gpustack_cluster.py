"""capacity, mig, upgrade and gpus on a live API server: allocatable from node status, label ages from managedFields.

kwok keeps the ``status.allocatable`` a Node is created with, so nodes here
advertise what a device plugin would; labels written with ``kubectl label``
get their managedFields time from the API server, which is what ``--stuck-after``
measures.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from gpulabel_run import gpulabel, lines_about
from labcluster_support import LabCluster, node_is_ready, wait_for

GPU = {
    "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.product": "NVIDIA-A10",
    "nvidia.com/gpu.count": "4",
    "nvidia.com/gpu.memory": "23028",
    "nvidia.com/gpu.replicas": "1",
    "nvidia.com/gpu.sharing-strategy": "none",
    "nvidia.com/gpu.deploy.device-plugin": "true",
}


def gpu_node(name: str, labels: dict[str, str], gpus: str) -> dict[str, Any]:
    alloc = {"cpu": "32", "memory": "128Gi", "pods": "110", "nvidia.com/gpu": gpus}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def test_live_capacity_upgrade_and_inventory(labcluster: LabCluster, ns: str) -> None:
    tag = uuid.uuid4().hex[:5]
    ok, empty, stuck = f"gs-{tag}-ok", f"gs-{tag}-empty", f"gs-{tag}-stuck"
    pool = {"example.com/gstest": tag}
    labcluster.apply(
        gpu_node(ok, {**GPU, **pool}, "4"),
        gpu_node(empty, {**GPU, **pool}, "0"),
        gpu_node(stuck, {**GPU, **pool, "nvidia.com/gpu.deploy.dcgm": "True"}, "4"),
    )
    names = [ok, empty, stuck]
    try:
        wait_for(
            lambda: all(node_is_ready(labcluster.get("node", n)) for n in names), timeout=60, message="nodes Ready"
        )
        labcluster.kubectl("label", "node", stuck, "nvidia.com/gpu-driver-upgrade-state=drain-required")
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "uses-3", "namespace": ns},
            "spec": {
                "nodeName": ok,
                "containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "3"}}}],
            },
        }
        labcluster.kubectl("apply", "-f", "-", input=json.dumps(pod))

        capacity = gpulabel(labcluster.kubeconfig, "capacity")
        assert capacity.returncode == 1, capacity.stderr
        assert lines_about(capacity.stdout, *names) == [f"{empty} nvidia.com/gpu no-allocatable"]

        upgrade = gpulabel(labcluster.kubeconfig, "upgrade")
        assert lines_about(upgrade.stdout, *names) == [f"{stuck} nvidia.com/gpu.deploy.dcgm bad-value"]
        time.sleep(2)  # the state's managedFields time is now at least a second old
        upgrade = gpulabel(labcluster.kubeconfig, "upgrade", "--stuck-after", "1s", "-o", "wide")
        # each wide line leads with its severity
        found = lines_about("\n".join(line.partition(" ")[2] for line in upgrade.stdout.splitlines()), *names)
        assert found[0].startswith(f"{stuck} nvidia.com/gpu-driver-upgrade-state stuck (drain-required for 0m")
        assert len(found) == 2

        inventory = gpulabel(labcluster.kubeconfig, "gpus", "--by", "example.com/gstest")
        assert (
            f"example.com/gstest={tag} product=NVIDIA-A10 nodes=3 gpus=12 mig_devices=- allocatable=8 usable=8 "
            "unhealthy=0 unschedulable=0 requested=3 free=5"
        ) in inventory.stdout.splitlines()
    finally:
        labcluster.kubectl("delete", "node", *names, "--wait=false", "--ignore-not-found")
