"""Kueue's objects on a real API server: Kueue v0.17.0's own CRDs applied (from its module, fetched from the
Go module proxy; nothing is built), objects the server accepts, and ``queues`` reading them with paged LISTs,
as an admin and as the read-only ServiceAccount, live and from a snapshot alike.

Kueue's manager does not run here: the objects (and a Workload's admission) are written as it would write
them. Before the CRDs exist, ``queues`` says skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from gpulabel_run import gpulabel
from labcluster_support import (
    LabCluster,
    account_kubeconfig,
    gpu_node_manifest,
    namespace_usable,
    node_is_ready,
    wait_for,
)

ROOT = Path(__file__).resolve().parents[2]
GROUP = "kueue.x-k8s.io"
PLURALS = ("resourceflavors", "clusterqueues", "localqueues", "topologies", "workloads")
PRODUCT = "nvidia.com/gpu.product"
NS = "kq-ml"
NODES = ("kq-a100-0", "kq-a100-1")


def _kueue_crds() -> list[Path]:
    """Kueue's CRDs of the kinds gpulabel reads, from its module (labcluster/kueue/go.mod pins v0.17.0)."""
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"}
    env["PATH"] = f"/usr/local/go/bin:{env.get('PATH', '')}"
    found = subprocess.run(
        ["go", "mod", "download", "-json", "sigs.k8s.io/kueue"],
        cwd=ROOT / "labcluster" / "kueue",
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    bases = Path(json.loads(found.stdout)["Dir"]) / "config" / "components" / "crd" / "bases"
    return [bases / f"{GROUP}_{p}.yaml" for p in PLURALS]


def _objects() -> list[dict[str, Any]]:
    v = f"{GROUP}/v1beta2"
    flavor = {"apiVersion": v, "kind": "ResourceFlavor", "metadata": {"name": "kq-a100-80gb"},
              "spec": {"nodeLabels": {PRODUCT: "NVIDIA-A100-SXM4-80GB"}}}  # fmt: skip
    quota = [{"name": "nvidia.com/gpu", "nominalQuota": "16"}]
    cq = {
        "apiVersion": v,
        "kind": "ClusterQueue",
        "metadata": {"name": "kq-team"},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "kq-a100-80gb", "resources": quota}]}
            ],
        },
    }
    topology = {"apiVersion": v, "kind": "Topology", "metadata": {"name": "kq-dc"},
                "spec": {"levels": [{"nodeLabel": "kubernetes.io/hostname"}]}}  # fmt: skip
    lqs = [
        {"apiVersion": v, "kind": "LocalQueue", "metadata": {"namespace": NS, "name": f"kq-{i:03d}"},
         "spec": {"clusterQueue": "kq-team"}}
        for i in range(501)  # two pages of gpulabel's 500
    ]  # fmt: skip
    return [flavor, cq, topology, *lqs]


def _readonly_kubeconfig(labcluster: LabCluster, path: Path) -> Path:
    namespace_usable(labcluster, "gpulabel")
    labcluster.kubectl("apply", "-k", str(ROOT / "deploy" / "rbac"))
    return account_kubeconfig(labcluster, "gpulabel-readonly", path)


def test_queues_reads_kueues_objects_the_api_server_accepted(labcluster: LabCluster, tmp_path: Path) -> None:
    kc = labcluster.kubeconfig
    for name in NODES:
        labcluster.apply(gpu_node_manifest(name, {PRODUCT: "NVIDIA-A100-SXM4-40GB"}, gpus=8))
    crds = _kueue_crds()
    try:
        for name in NODES:
            wait_for(lambda n=name: node_is_ready(labcluster.get("node", n)), timeout=60, message=f"node {name}")
        before = gpulabel(kc, "queues", "-o", "json")
        assert before.returncode == 0, before.stderr
        assert json.loads(before.stdout)["skipped"] == "no resourceflavors in the input"

        for crd in crds:  # the workloads CRD is 1.4 MB: too large for client-side apply's annotation
            labcluster.kubectl("apply", "--server-side", "-f", str(crd))
        for plural in PLURALS:
            labcluster.kubectl("wait", "--for=condition=Established", f"crd/{plural}.{GROUP}", "--timeout=60s")
        labcluster.kubectl("create", "namespace", NS, check=False)
        items = json.dumps({"apiVersion": "v1", "kind": "List", "items": _objects()})
        labcluster.kubectl("apply", "--server-side", "-f", "-", input=items)

        live = gpulabel(kc, "queues", "-l", "kubernetes.io/hostname in (kq-a100-0,kq-a100-1)")
        assert live.returncode == 1, live.stderr
        assert live.stdout.splitlines() == [
            f"{PRODUCT} no-node flavor/kq-a100-80gb NVIDIA-A100-SXM4-80GB nearest: NVIDIA-A100-SXM4-40GB (2 node(s))"
        ]
        snapshot = tmp_path / "s.json"
        taken = gpulabel(kc, "snapshot", "-o", str(snapshot))
        assert taken.returncode == 0, taken.stderr
        doc = json.loads(snapshot.read_text())
        assert sum(1 for o in doc["items"] if o["kind"] == "LocalQueue" and o["metadata"]["namespace"] == NS) == 501
        offline = gpulabel(
            kc, "queues", "--snapshot", str(snapshot), "-l", "kubernetes.io/hostname in (kq-a100-0,kq-a100-1)"
        )
        assert (offline.returncode, offline.stdout) == (live.returncode, live.stdout), offline.stderr

        ro = gpulabel(_readonly_kubeconfig(labcluster, tmp_path / "ro.kubeconfig"), "queues", "-o", "json")
        assert ro.returncode == 1, ro.stderr  # read, not refused: the read-only role lists Kueue's kinds
    finally:
        labcluster.kubectl("delete", "namespace", NS, "--wait=false", "--ignore-not-found")
        for crd in crds:
            labcluster.kubectl("delete", "-f", str(crd), "--wait=false", "--ignore-not-found")
        labcluster.kubectl("delete", "node", *NODES, "--wait=false", "--ignore-not-found")
