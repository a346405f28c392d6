"""``pending`` live counts what running pods hold, as a snapshot of the same moment and the scheduler do.

Two 8-GPU nodes each run a pod that requests 8 GPUs; a third pod asks for 8. The scheduler says
``Insufficient nvidia.com/gpu`` on both nodes. Live ``pending`` once listed only Pending pods
(``status.phase=Pending``), found both nodes empty and said the pod fits them (info) while
``pending --snapshot`` said what the scheduler says. Then every read-only command, live and on a snapshot
of the same moment (:mod:`live_snapshot`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpulabel_run import gpulabel
from labcluster_support import LabCluster, delete_pods_now, node_is_ready, wait_for
from live_snapshot import live_equals_snapshot

OWN = "example.com/livesnap"  # the nodes' label and taint: only this test's pods go there


def gpu_node(name: str, run: str) -> dict[str, Any]:
    amounts = {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "8"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, OWN: run}},
        "spec": {"taints": [{"key": OWN, "value": run, "effect": "NoSchedule"}]},
        "status": {"allocatable": amounts, "capacity": amounts},
    }


def gpu_pod(name: str, run: str, node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "example.com/train:1", "resources": {"limits": {"nvidia.com/gpu": "8"}}}],
        "tolerations": [{"key": OWN, "operator": "Equal", "value": run, "effect": "NoSchedule"}],
    }
    spec |= {"nodeName": node} if node else {"nodeSelector": {OWN: run}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def scheduled(labcluster: LabCluster, ns: str, name: str) -> str | None:
    """The PodScheduled message once the scheduler has said Unschedulable."""
    pod = labcluster.get("pod", name, "-n", ns)
    for c in pod.get("status", {}).get("conditions", []):
        if c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable":
            return str(c["message"])
    return None


def test_pending_live_counts_running_pods_as_the_snapshot_and_the_scheduler_do(
    labcluster: LabCluster, ns: str, tmp_path: Path
) -> None:
    nodes = [f"{ns}-n0", f"{ns}-n1"]
    labcluster.apply(*(gpu_node(n, ns) for n in nodes))
    try:
        wait_for(lambda: all(node_is_ready(labcluster.get("node", n)) for n in nodes), timeout=90)
        items = [gpu_pod(f"run-{i}", ns, n) for i, n in enumerate(nodes)]
        labcluster.kubectl(
            "apply", "-n", ns, "-f", "-", input=json.dumps({"kind": "List", "apiVersion": "v1", "items": items})
        )
        wait_for(
            lambda: all(
                labcluster.get("pod", f"run-{i}", "-n", ns)["status"].get("phase") == "Running" for i in (0, 1)
            ),
            timeout=90,
        )
        labcluster.apply({**gpu_pod("want", ns), "metadata": {"name": "want", "namespace": ns}})
        message = wait_for(lambda: scheduled(labcluster, ns, "want"), timeout=60)
        assert "2 Insufficient nvidia.com/gpu" in message, message

        live = gpulabel(labcluster.kubeconfig, "pending", "-n", ns, "-o", "json")
        path = tmp_path / "moment.json"
        assert gpulabel(labcluster.kubeconfig, "snapshot", "-o", str(path)).returncode == 0
        offline = gpulabel(labcluster.kubeconfig, "pending", "-n", ns, "-o", "json", "--snapshot", str(path))
        assert (live.returncode, json.loads(live.stdout)) == (offline.returncode, json.loads(offline.stdout))
        doc = json.loads(live.stdout)
        lines = [(f["pod"], f["reason"], f.get("count"), f["args"]) for f in doc["findings"]]
        assert lines == [(f"{ns}/want", "insufficient", 2, ["nvidia.com/gpu"])], lines
        row = next(p for p in doc["pods"] if p["pod"] == f"{ns}/want")
        assert row["predicted_message"] == row["scheduler_message"] == message

        manifest = tmp_path / "want.json"
        manifest.write_text(json.dumps({**gpu_pod("want", ns), "metadata": {"name": "want2", "namespace": ns}}))
        seen = live_equals_snapshot(
            labcluster.kubeconfig, tmp_path, namespace=ns, node=nodes[0], manifest=str(manifest), expression="true"
        )
        print(f"\nlive = snapshot: {seen}")
    finally:
        delete_pods_now(labcluster, ns)
        labcluster.kubectl("delete", "node", *nodes, "--wait=false", "--ignore-not-found")
