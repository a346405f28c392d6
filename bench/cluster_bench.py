"""gpulabel against a real API server at scale, with baselines timed in the same run.

Starts labcluster, creates N nodes from bench/synth.py (realistic GPU labels,
some drift) and the operand DaemonSets (the real DaemonSet controller and
scheduler then create about three operand pods per GPU node, which kwok runs),
and times each gpulabel command against the baselines people use:

- ``audit`` and ``operands`` vs ``kubectl get nodes -o json`` (the floor: fetching the nodes once);
- ``check`` vs ``kubectl get nodes,pods,daemonsets -A -o json`` (fetching what it reads, once);
- ``audit`` per node vs a per-node ``kubectl get node X -o json | jq`` shell loop (on a sample);
- ``audit`` and ``operands`` vs the official Python client's ``list_node()`` /
  ``list_pod_for_all_namespaces()`` with its models (what scripts built on it pay);
- ``sync`` without drift (0 writes) and with one drifted label among N nodes (exactly 1 write);
- the peak RSS of each process.

Every figure is a whole process, best of ``--runs``; ratios are what travel between machines.

    .venv/bin/python -m bench.cluster_bench --nodes 1000 [--nodes 5000] [--runs 3] [--shell-sample 200]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "cluster"))

from labcluster_support import LabCluster, build, wait_for  # noqa: E402

from bench.synth import generate  # noqa: E402
from gpulabel.cluster.client import KubeClient  # noqa: E402

PY = sys.executable
TIME = "/usr/bin/time"


def timed(argv: list[str], runs: int, env: dict[str, str] | None = None, shell: bool = False) -> tuple[float, int]:
    """Best wall time of ``runs`` and the largest peak RSS (KiB) seen, via /usr/bin/time."""
    best, peak = float("inf"), 0
    for _ in range(runs):
        with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
            cmd = [TIME, "-f", "%e %M", "-o", tf.name, *(["bash", "-c"] if shell else []), *argv]
            start = time.perf_counter()
            proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
            elapsed = time.perf_counter() - start
            if proc.returncode not in (0, 1):
                raise SystemExit(f"bench: {' '.join(argv)[:200]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
            fields = tf.read().split()
        best = min(best, elapsed)
        peak = max(peak, int(fields[-1]))
    return best, peak


def populate(cluster: LabCluster, nodes: int, seed: int, allocatable: bool = False) -> tuple[list[dict[str, Any]], int]:
    """Create the synthetic nodes and the operand DaemonSets; wait for their pods to run.

    ``allocatable``: the nodes carry synth's capacity and allocatable (``nvidia.com/gpu`` too, as
    the device plugin would advertise it; kwok keeps what a Node is created with)."""
    synth = generate(nodes, seed=seed)
    objs = synth.objects
    client = KubeClient(str(cluster.kubeconfig))
    node_objs = [o for o in objs if o["kind"] == "Node"]
    started = time.perf_counter()

    def create(node: dict[str, Any]) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {k: v for k, v in node["metadata"].items() if k in ("name", "labels", "annotations")},
            "spec": node.get("spec") or {},
        }
        if allocatable:
            body["status"] = {k: node["status"][k] for k in ("capacity", "allocatable")}
        client.request("POST", "/api/v1/nodes", body=json.dumps(body).encode(), content_type="application/json")

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(create, node_objs))
    print(f"created {len(node_objs)} nodes in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    dss = [o for o in objs if o["kind"] == "DaemonSet"]
    cluster.kubectl("create", "namespace", "gpu-operator")
    for ds in dss:
        ds = json.loads(json.dumps(ds))
        ds["metadata"] = {k: v for k, v in ds["metadata"].items() if k in ("name", "namespace", "labels")}
        ds.pop("status", None)
        cluster.apply(ds)
    expected = 0
    for ds in dss:
        ((key, value),) = ds["spec"]["template"]["spec"]["nodeSelector"].items()
        expected += sum(
            1
            for n in node_objs
            if n["metadata"]["labels"].get(key) == value
            and not any(t.get("key") == "dedicated" for t in (n.get("spec") or {}).get("taints") or [])
        )
    started = time.perf_counter()

    def running() -> int:
        items, _ = client.list("Pod", namespace="gpu-operator", field_selector="status.phase=Running")
        return len(items)

    wait_for(
        lambda: running() >= expected * 0.98, timeout=1800, interval=5, message=f"for ~{expected} operand pods to run"
    )
    print(f"{running()} operand pods running after {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return node_objs, running()


def official_client(cluster: LabCluster, what: str) -> list[str]:
    code = (
        "from kubernetes import client, config\n"
        f"config.load_kube_config({str(cluster.kubeconfig)!r})\n"
        "v1 = client.CoreV1Api()\n"
        + (
            "items = v1.list_node().items\n"
            if what == "nodes"
            else "items = v1.list_pod_for_all_namespaces().items + v1.list_node().items\n"
        )
        + "print(len(items))\n"
    )
    return [PY, "-c", code]


def _writes(doc: dict[str, Any]) -> int:
    """Write requests in a ``sync -o json`` envelope (its ``requests`` rows: method and count)."""
    return sum(int(r["count"]) for r in doc["requests"] if r["method"] != "GET")


def run(nodes: int, runs: int, shell_sample: int, seed: int) -> dict[str, Any]:
    binary = build()
    directory = Path(tempfile.mkdtemp(prefix=f"bench-{nodes}-"))
    cluster = LabCluster.start(directory, binary)
    results: dict[str, Any] = {"nodes": nodes}
    try:
        node_objs, pods = populate(cluster, nodes, seed)
        results["operand_pods"] = pods
        kc = ["--kubeconfig", str(cluster.kubeconfig)]
        kubectl = [str(binary), "kubectl", "--kubeconfig", str(cluster.kubeconfig)]
        gl = [PY, "-m", "gpulabel"]
        t = {}
        t["floor"] = timed([*kubectl, "get", "nodes", "-o", "json"], runs)
        t["floor_all"] = timed([*kubectl, "get", "nodes,pods,daemonsets", "-A", "-o", "json"], runs)
        t["audit"] = timed([*gl, "audit", *kc], runs)
        t["operands"] = timed([*gl, "operands", *kc], runs)
        t["check"] = timed([*gl, "check", *kc], runs)
        t["client_nodes"] = timed(official_client(cluster, "nodes"), runs)
        t["client_pods"] = timed(official_client(cluster, "pods"), 1)
        sample = [n["metadata"]["name"] for n in node_objs[:shell_sample]]
        loop = (
            "for n in "
            + " ".join(sample)
            + "; do "
            + " ".join(kubectl)
            + " get node $n -o json | jq -r '.metadata.labels[\"nvidia.com/gpu.count\"]'"
            + " >/dev/null; done"
        )
        t["shell_loop"] = timed([loop], 1, shell=True)
        # sync: files equal to the nodes (no drift), then one drifted label
        files = Path(tempfile.mkdtemp(prefix="bench-sync-"))
        for n in node_objs:
            labels = n["metadata"]["labels"]
            keep = {k: v for k, v in labels.items() if k.startswith("nvidia.com/gpu.") and "deploy" not in k}
            (files / f"{n['metadata']['name']}.env").write_text("".join(f"{k}={v}\n" for k, v in keep.items()))
        t["sync_clean"] = timed([*gl, "sync", str(files), *kc], runs)
        clean = subprocess.run([*gl, "sync", str(files), "-o", "json", *kc], capture_output=True, text=True)
        results["sync_clean_writes"] = _writes(json.loads(clean.stdout))
        victim = next(n["metadata"]["name"] for n in node_objs if "nvidia.com/gpu.count" in n["metadata"]["labels"])
        cluster.kubectl("label", "--overwrite", "node", victim, "nvidia.com/gpu.count=99")
        drift = subprocess.run([*gl, "sync", str(files), "-o", "json", *kc], capture_output=True, text=True)
        doc = json.loads(drift.stdout)
        results["sync_drift_writes"] = _writes(doc)
        results["sync_drift_changes"] = len(doc["findings"])  # one finding per restored or pruned label
        shutil.rmtree(files)
        results["seconds_and_peak_kib"] = t
        floor = t["floor"][0]
        results["ratios"] = {
            "audit / kubectl get nodes": t["audit"][0] / floor,
            "operands / kubectl get nodes": t["operands"][0] / floor,
            "check / kubectl get nodes": t["check"][0] / floor,
            "check / kubectl get nodes,pods,daemonsets -A": t["check"][0] / t["floor_all"][0],
            "official client list_node / audit": t["client_nodes"][0] / t["audit"][0],
            "official client pods+nodes / operands": t["client_pods"][0] / t["operands"][0],
            "shell loop per node / audit per node": (t["shell_loop"][0] / len(sample)) / (t["audit"][0] / nodes),
            "sync (no drift) / kubectl get nodes": t["sync_clean"][0] / floor,
        }
    finally:
        cluster.stop()
        shutil.rmtree(directory, ignore_errors=True)
    return results


def report(results: dict[str, Any]) -> str:
    n = results["nodes"]
    lines = [f"## {n} nodes, {results['operand_pods']} operand pods"]
    lines.append(f"{'command':34} {'best s':>8} {'peak MB':>8}")
    for name, (secs, kib) in results["seconds_and_peak_kib"].items():
        lines.append(f"{name:34} {secs:8.2f} {kib / 1024:8.0f}")
    for name, ratio in results["ratios"].items():
        lines.append(f"{name:44} {ratio:8.2f}x")
    lines.append(
        f"sync writes without drift: {results['sync_clean_writes']}; "
        f"with one drifted label: {results['sync_drift_writes']} ({results['sync_drift_changes']} change)"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, action="append", help="cluster size (repeatable; default 1000)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shell-sample", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=str(REPO / "bench" / "out"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    for n in args.nodes or [1000]:
        results = run(n, args.runs, min(args.shell_sample, n), args.seed)
        (out / f"cluster-{n}.json").write_text(json.dumps(results, indent=2))
        print(report(results), flush=True)


if __name__ == "__main__":
    main()
