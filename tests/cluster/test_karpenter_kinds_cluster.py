"""Karpenter's NodePools and NodeClaims, served by their real CRDs (sigs.k8s.io/karpenter v1.14.1), read live
by paged LISTs and captured by ``gpulabel snapshot``: the records read from the file equal those read live.
Then the autoscaler's verdict on those objects, live: ``explain pod/NS/NAME`` (a node coming, no NodePool
will), ``gpus`` (what the NodePool may still add under its limit) and ``check``'s cause line, each equal to its
answer on a snapshot of the same moment.

Where the CRDs are not served (every other test's cluster), nothing is listed: ``test_kinds`` and
``karpenter/test_objects.py`` hold that on the fake API.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpulabel_run import gpulabel
from labcluster_support import LabCluster, delete_namespace, delete_pods_now, namespace_usable, wait_for

from gpulabel.cluster.client import KubeClient
from gpulabel.cluster.live import load_cluster
from gpulabel.cluster.snapshot import load_snapshots
from gpulabel.k8s.karpenter.objects import KARPENTER_KINDS

CRDS = Path(__file__).parent / "data" / "karpenter-crds.yaml"
KARPENTER = "/apis/karpenter.sh/v1"


def nodepool(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "limits": {"nvidia.com/gpu": "16", "cpu": "1000"},
            "template": {
                "metadata": {"labels": {"team": "ml"}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
                    "requirements": [
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                        {"key": "example.com/gpu-name", "operator": "In", "values": ["h100", "a100"], "minValues": 1},
                    ],
                    "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
                    "startupTaints": [{"key": "example.com/warming", "effect": "NoSchedule"}],
                },
            },
        },
    }


def nodeclaim(name: str, pool: str) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": pool}},
        "spec": {
            "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
            "requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": [pool]}],
            "resources": {"requests": {"nvidia.com/gpu": "8"}},
        },
    }


def test_nodepools_and_nodeclaims_live_and_in_a_snapshot(labcluster: LabCluster, tmp_path: Path) -> None:
    labcluster.kubectl("apply", "--server-side", "-f", str(CRDS))
    client = KubeClient(str(labcluster.kubeconfig))
    names = ("kk-gpu", "kk-gpu-x7k2p")
    try:
        wait_for(lambda: client.served_resources("karpenter.sh/v1") >= {"nodepools", "nodeclaims"}, timeout=60)
        labcluster.apply(nodepool(names[0]), nodeclaim(names[1], names[0]))
        status = {
            "status": {
                "conditions": [
                    {
                        "type": "Initialized",
                        "status": "Unknown",
                        "reason": "ResourceNotRegistered",
                        "message": 'Resource "nvidia.com/gpu" was requested but not registered',
                        "lastTransitionTime": "2026-12-04T10:00:05Z",
                    }
                ],
                "nodeName": "kk-node",
                "capacity": {"nvidia.com/gpu": "8"},
            }
        }
        path = f"{KARPENTER}/nodeclaims/{names[1]}/status"
        client.request("PATCH", path, body=json.dumps(status).encode(), content_type="application/merge-patch+json")

        snap = tmp_path / "karpenter.json"
        done = gpulabel(labcluster.kubeconfig, "snapshot", "-o", str(snap))
        assert done.returncode == 0, done.stderr
        items = json.loads(snap.read_text())["items"]
        kinds = {(o["kind"], o["metadata"]["name"]) for o in items if not o["kind"].endswith("List")}
        assert {("NodePool", names[0]), ("NodeClaim", names[1])} <= kinds
        offline = load_snapshots([str(snap)])
        live = load_cluster(client, ["Node", *KARPENTER_KINDS])
        assert live.karpenter == offline.karpenter
        pool = live.karpenter.nodepool(names[0])
        assert pool is not None and pool.limits == {"nvidia.com/gpu": "16", "cpu": "1000"}
        assert [r.min_values for r in pool.requirements] == [None, 1] and pool.startup_taints
        (claim,) = [c for c in live.karpenter.nodeclaims if c.name == names[1]]
        assert (claim.nodepool, claim.node_name, claim.requests) == (names[0], "kk-node", {"nvidia.com/gpu": "8"})
        initialized = claim.condition("Initialized")
        assert initialized is not None and initialized.reason == "ResourceNotRegistered"
    finally:
        labcluster.kubectl("delete", "nodeclaims.karpenter.sh", names[1], "--ignore-not-found", check=False)
        labcluster.kubectl("delete", "nodepools.karpenter.sh", names[0], "--ignore-not-found", check=False)
        labcluster.kubectl("delete", "-f", str(CRDS), "--ignore-not-found", "--wait=true", "--timeout=60s", check=False)


NS = "kk-auto"
CUSTOM = "feature.node.kubernetes.io/custom-gpu-training"


def pending_pod(name: str, selector: dict[str, str]) -> dict[str, Any]:
    """A pod asking for 1 GPU, tolerating the NodePool's taint, selecting what no labcluster node has."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "nodeSelector": selector,
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
            ],
        },
    }


def _status(client: KubeClient, path: str, status: dict[str, Any]) -> None:
    body = json.dumps({"status": status}).encode()
    client.request("PATCH", f"{path}/status", body=body, content_type="application/merge-patch+json")


def _scheduled_false(cluster: LabCluster, name: str) -> bool:
    pod = cluster.get("pod", "-n", NS, name)
    return any(
        c.get("type") == "PodScheduled" and c.get("status") == "False" for c in pod["status"].get("conditions", ())
    )


def test_the_autoscalers_verdict_live_equals_the_snapshot(labcluster: LabCluster, tmp_path: Path) -> None:
    """The NodePool is Ready with a GPU limit of 16; its NodeClaim is launched (providerID, 8 GPUs of capacity),
    its node not registered yet. ``h100`` (the pool's own requirement) is coming on that NodeClaim; ``step7``
    selects a label no NodePool template knows: no NodePool will make a node for it."""
    labcluster.kubectl("apply", "--server-side", "-f", str(CRDS))
    client = KubeClient(str(labcluster.kubeconfig))
    pool, claim = "kk-auto", "kk-auto-q9z4m"
    namespace_usable(labcluster, NS)
    try:
        wait_for(lambda: client.served_resources("karpenter.sh/v1") >= {"nodepools", "nodeclaims"}, timeout=60)
        labcluster.kubectl("create", "namespace", NS)
        labcluster.apply(nodepool(pool), nodeclaim(claim, pool))
        ready = {
            "type": "Ready",
            "status": "True",
            "reason": "Ready",
            "message": "",
            "lastTransitionTime": "2026-12-04T10:00:00Z",
        }
        _status(client, f"{KARPENTER}/nodepools/{pool}", {"conditions": [ready], "resources": {"nvidia.com/gpu": "8"}})
        launched = {
            "conditions": [
                {
                    "type": "Launched",
                    "status": "True",
                    "reason": "Launched",
                    "message": "",
                    "lastTransitionTime": "2026-12-04T10:00:01Z",
                },
                {
                    "type": "Initialized",
                    "status": "Unknown",
                    "reason": "NotInitialized",
                    "message": "",
                    "lastTransitionTime": "2026-12-04T10:00:01Z",
                },
            ],
            "providerID": "kwok://kk-auto-node",
            "capacity": {"nvidia.com/gpu": "8"},
        }
        _status(client, f"{KARPENTER}/nodeclaims/{claim}", launched)
        labcluster.apply(pending_pod("h100", {"example.com/gpu-name": "h100"}), pending_pod("step7", {CUSTOM: "true"}))
        wait_for(lambda: _scheduled_false(labcluster, "h100") and _scheduled_false(labcluster, "step7"), timeout=60)

        snap = tmp_path / "autoscaled.json"
        done = gpulabel(labcluster.kubeconfig, "snapshot", "-o", str(snap))
        assert done.returncode == 0, done.stderr

        def both(*argv: str, keep: str = "") -> list[str]:
            """The lines (starting with ``keep``) of ``gpulabel ARGV`` live and on the snapshot: the same."""
            live = gpulabel(labcluster.kubeconfig, *argv)
            offline = subprocess.run(
                [sys.executable, "-m", "gpulabel", *argv, "--snapshot", str(snap)],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            lines = [[line for line in p.stdout.splitlines() if line.startswith(keep)] for p in (live, offline)]
            assert (live.returncode, lines[0]) == (offline.returncode, lines[1]), (argv, live.stderr, offline.stderr)
            return lines[0]

        coming = both("explain", f"pod/{NS}/h100")
        assert coming[0] == f"pod/{NS}/h100: Pending; no step broken", coming
        assert f"waiting autoscaler: a node is on its way (nodeclaim/{claim} nodepool/{pool})" in coming
        none = both("explain", f"pod/{NS}/step7")
        assert f"broken  autoscaler: no Karpenter NodePool will make a node for it (NodePools: {pool})" in none, none
        assert any(f"error pending no-autoscaler unknown-key {CUSTOM}" in line for line in none)

        rooms = both("gpus", keep="nodepool=")
        assert rooms == [f"nodepool={pool} gpu_limit=16 used=8 status=8 launching=0 may_add=8"], rooms

        # the session's cluster holds other files' Pending pods (a DRA claim's, which Karpenter ignores): this
        # namespace's own cause lines
        causes = both("check", keep=f"cause pod/{NS}/")
        assert len(causes) == 1 and causes[0].startswith(f"cause pod/{NS}/step7 autoscaler: no-autoscaler "), causes
    finally:
        delete_pods_now(labcluster, NS)
        delete_namespace(labcluster, NS)
        labcluster.kubectl("delete", "nodeclaims.karpenter.sh", claim, "--ignore-not-found", check=False)
        labcluster.kubectl("delete", "nodepools.karpenter.sh", pool, "--ignore-not-found", check=False)
        labcluster.kubectl("delete", "-f", str(CRDS), "--ignore-not-found", "--wait=true", "--timeout=60s", check=False)


def _event(name: str, pod: dict[str, Any], reason: str, message: str, kind: str, component: str) -> dict[str, Any]:
    """A core/v1 Event about ``pod``, stamped now, as client-go's recorder writes it."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    meta = pod["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": meta["namespace"]},
        "involvedObject": {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"],
                           "apiVersion": "v1"},
        "type": kind,
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }  # fmt: skip


def test_cluster_autoscalers_events_and_status_live_and_in_a_snapshot(labcluster: LabCluster, tmp_path: Path) -> None:
    """The real API server answers the field selectors the autoscalers' rows LIST by (one reason each, the Warning
    row without Karpenter's, the status ConfigMap by name): live ``pending`` reads Cluster Autoscaler's
    ``NotTriggerScaleUp`` (cluster-autoscaler-1.36.1 ``eventing_scale_up_processor.go``) and its status, says no
    autoscaler will and why; ``snapshot`` captures them (not the Normal Event nobody reads, not another ConfigMap),
    and ``pending --snapshot`` of it says the same."""
    ns = "kca"
    labcluster.kubectl("create", "namespace", ns, check=False)
    try:
        want = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train", "namespace": ns},
                "spec": {"containers": [{"name": "c", "image": "registry.invalid/train",
                                         "resources": {"limits": {"nvidia.com/gpu": "64"}}}]}}  # fmt: skip
        labcluster.apply(want)

        def unschedulable() -> dict[str, Any] | None:
            got: dict[str, Any] = labcluster.get("pod", "-n", ns, "train")
            conds = {c["type"]: c for c in got.get("status", {}).get("conditions") or ()}
            return got if conds.get("PodScheduled", {}).get("reason") == "Unschedulable" else None

        pod = wait_for(unschedulable, timeout=60, message="for the scheduler to find no node for the pod")
        status = (
            "time: 2026-12-04 10:19:50.1 +0000 UTC\nautoscalerStatus: Running\nclusterWide:\n  health:\n"
            "    status: Healthy\nnodeGroups:\n- name: gpu-pool\n  health:\n    status: Healthy\n"
            "    cloudProviderTarget: 4\n    minSize: 0\n    maxSize: 4\n  scaleUp:\n    status: NoActivity\n"
        )
        cms = [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cluster-autoscaler-status",
             "namespace": ns}, "data": {"status": status}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other", "namespace": ns}, "data": {}},
        ]  # fmt: skip
        not_triggered = "pod didn't trigger scale-up: 1 max node group size reached"
        labcluster.apply(
            *cms,
            _event("train.ca1", pod, "NotTriggerScaleUp", not_triggered, "Normal", "cluster-autoscaler"),
            _event("train.s1", pod, "Started", "Started container c", "Normal", "kubelet"),
            _event("train.k1", pod, "FailedScheduling", "Failed to schedule pod, x", "Warning", "karpenter"),
        )
        live = gpulabel(labcluster.kubeconfig, "pending", "-n", ns)
        line = f"{ns}/train no-autoscaler cluster-autoscaler 1 max node group size reached"
        # the session's cluster has no Node (a cluster scaled to zero): exit 2 says so, the verdict is still given
        assert line in live.stdout.splitlines(), live.stdout + live.stderr
        wide = gpulabel(labcluster.kubeconfig, "pending", "-n", ns, "-o", "wide").stdout
        assert "gpu-pool 4/4 nodes" in wide and "raise the node group's maximum size" in wide, wide
        snap = tmp_path / "ca.json"
        done = gpulabel(labcluster.kubeconfig, "snapshot", "-o", str(snap))
        assert done.returncode == 0, done.stderr
        held = {(o["kind"], o["metadata"]["name"]) for o in json.loads(snap.read_text())["items"] if "metadata" in o}
        assert {("Event", "train.ca1"), ("Event", "train.k1"), ("ConfigMap", "cluster-autoscaler-status")} <= held
        assert not {("Event", "train.s1"), ("ConfigMap", "other")} & held
        offline = gpulabel(labcluster.kubeconfig, "pending", "-n", ns, "--snapshot", str(snap))
        assert (offline.returncode, offline.stdout) == (live.returncode, live.stdout)
    finally:
        labcluster.kubectl("delete", "namespace", ns, "--wait=false", check=False)
