"""Karpenter's NodePools and NodeClaims, served by their real CRDs (sigs.k8s.io/karpenter v1.14.1), read live
by paged LISTs and captured by ``gpulabel snapshot``: the records read from the file equal those read live.

Where the CRDs are not served (every other test's cluster), nothing is listed: ``test_kinds`` and
``karpenter/test_objects.py`` hold that on the fake API.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpulabel_run import gpulabel
from labcluster_support import LabCluster, wait_for

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
