"""sync on the real control plane: restore drift, own the keys, write nothing when clean."""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gpulabel_run import gpulabel
from labcluster_support import LabCluster, wait_for
from test_deploy_cluster import free_port, ready

from gpulabel.cluster.client import KubeClient

GPU = {
    "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.product": "NVIDIA-A10",
    "nvidia.com/gpu.count": "2",
    "nvidia.com/gpu.memory": "22731",
}


def env_file(directory: Path, node: str, labels: dict[str, str], extra: str = "") -> None:
    text = "".join(f"{k}={v}\n" for k, v in labels.items()) + extra
    (directory / f"{node}.env").write_text(text)


def node_patches(cluster: LabCluster, node: str) -> int:
    return sum(
        1
        for e in cluster.audit_events()
        if e.get("verb") == "patch"
        and (e.get("objectRef") or {}).get("resource") == "nodes"
        and (e.get("objectRef") or {}).get("name") == node
        and e.get("stage") == "ResponseComplete"
    )


def labels_of(cluster: LabCluster, node: str) -> dict[str, str]:
    return dict(cluster.get("node", node)["metadata"].get("labels") or {})


def test_the_lab_case_restores_two_labels_then_does_nothing(
    labcluster: LabCluster, make_node: Any, tmp_path: Path
) -> None:
    name = "sync-lab-node-1"
    make_node(name, GPU)
    env_file(tmp_path, name, GPU)
    labcluster.kubectl("label", "--overwrite", "node", name, "nvidia.com/gpu.count=9")
    labcluster.kubectl("label", "node", name, "nvidia.com/gpu.memory-")

    first = gpulabel(labcluster.kubeconfig, "sync", str(tmp_path))
    assert (first.returncode, first.stderr) == (0, "")
    assert first.stdout == f"{name} nvidia.com/gpu.count 2\n{name} nvidia.com/gpu.memory 22731\n"
    labels = labels_of(labcluster, name)
    assert {k: labels.get(k) for k in GPU} == GPU

    before = node_patches(labcluster, name)
    second = gpulabel(labcluster.kubeconfig, "sync", str(tmp_path), "-o", "json")
    assert second.returncode == 0
    doc = json.loads(second.stdout)
    assert (doc["kind"], doc["findings"]) == ("SyncResult", [])
    assert {r["method"] for r in doc["requests"]} == {"GET"}  # LISTs only, no write
    time.sleep(0.5)  # the audit log is written asynchronously by the server's batch backend
    assert node_patches(labcluster, name) == before


def test_restored_keys_are_owned_by_gpulabel_and_wide_says_who_broke_them(
    labcluster: LabCluster, make_node: Any, tmp_path: Path
) -> None:
    name = "sync-owner"
    make_node(name, GPU)
    env_file(tmp_path, name, GPU)
    labcluster.kubectl("label", "--overwrite", "node", name, "nvidia.com/gpu.count=9")
    res = gpulabel(labcluster.kubeconfig, "sync", str(tmp_path), "-o", "wide")
    assert res.returncode == 0, res.stderr
    (line,) = res.stdout.splitlines()
    assert line.startswith(f"{name} nvidia.com/gpu.count 2 (was 9, set by kubectl-label at 20")
    node = labcluster.get("node", name, "--show-managed-fields")
    applied = [m for m in node["metadata"]["managedFields"] if m["manager"] == "gpulabel"]
    assert [m["operation"] for m in applied] == ["Apply"]
    owned = set(applied[0]["fieldsV1"]["f:metadata"]["f:labels"])
    assert owned == {f"f:{k}" for k in GPU}


def test_dry_run_prints_and_changes_nothing(labcluster: LabCluster, make_node: Any, tmp_path: Path) -> None:
    name = "sync-dry"
    make_node(name, GPU)
    env_file(tmp_path, name, {**GPU, "nvidia.com/gpu.count": "4"})
    res = gpulabel(labcluster.kubeconfig, "sync", str(tmp_path), "--dry-run")
    assert (res.returncode, res.stdout) == (0, f"{name} nvidia.com/gpu.count 4\n")
    assert labels_of(labcluster, name)["nvidia.com/gpu.count"] == "2"


def test_prune_removes_only_what_gpulabel_applied(labcluster: LabCluster, make_node: Any, tmp_path: Path) -> None:
    name = "sync-prune"
    make_node(name, {"example.com/theirs": "1"})
    env_file(tmp_path, name, {"example.com/a": "1", "example.com/b": "2"})
    assert gpulabel(labcluster.kubeconfig, "sync", str(tmp_path)).returncode == 0
    env_file(tmp_path, name, {"example.com/a": "1"})
    kept = gpulabel(labcluster.kubeconfig, "sync", str(tmp_path))
    assert (kept.returncode, kept.stdout) == (0, "")
    assert labels_of(labcluster, name)["example.com/b"] == "2"  # no --prune: left alone
    pruned = gpulabel(labcluster.kubeconfig, "sync", str(tmp_path), "--prune")
    assert (pruned.returncode, pruned.stdout) == (0, f"{name} example.com/b-\n")
    labels = labels_of(labcluster, name)
    assert "example.com/b" not in labels
    assert labels["example.com/a"] == "1" and labels["example.com/theirs"] == "1"


def test_bad_entries_are_reported_and_the_rest_is_reconciled(
    labcluster: LabCluster, make_node: Any, tmp_path: Path
) -> None:
    good, other = "sync-bad-good", "sync-bad-other"
    make_node(good, {"example.com/a": "0"})
    make_node(other, {"example.com/z": "0"})
    env_file(tmp_path, good, {"example.com/a": "1"}, "nvidia.com/gpu.product=NVIDIA A100-SXM4-40GB\na/b/c=1\n")
    env_file(tmp_path, other, {"example.com/z": "1"})
    env_file(tmp_path, "sync-no-such-node", {"example.com/a": "1"})
    (tmp_path / "sync-binary.env").write_bytes(b"example.com/a=1\n\x00\x01")
    res = gpulabel(labcluster.kubeconfig, "sync", str(tmp_path))
    assert res.returncode == 1
    assert sorted(res.stdout.splitlines()) == [f"{good} example.com/a 1", f"{other} example.com/z 1"]
    errors = res.stderr.splitlines()
    assert any(
        e.startswith(f"gpulabel: {tmp_path / (good + '.env')}:2: invalid label nvidia.com/gpu.product") for e in errors
    )
    assert any(f"{good}.env:3: invalid label a/b/c=1" in e for e in errors)
    assert any("node sync-no-such-node not found" in e for e in errors)
    assert any("sync-binary.env: binary data" in e for e in errors)
    assert "Traceback" not in res.stderr
    assert "nvidia.com/gpu.product" not in labels_of(labcluster, good)


def test_watch_restores_each_hand_edit_within_a_second(labcluster: LabCluster, make_node: Any, tmp_path: Path) -> None:
    name = "sync-watch"
    make_node(name, GPU)
    env_file(tmp_path, name, GPU)
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gpulabel",
            "sync",
            str(tmp_path),
            "--watch",
            "--kubeconfig",
            str(labcluster.kubeconfig),
            "--metrics-port",
            str(port),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    client = KubeClient(str(labcluster.kubeconfig))
    path = client.node_path(name)
    latencies: list[float] = []
    try:
        # /readyz: the nodes listed and the first pass made, so the watch starts from that list and hears
        # every edit below (the latency bound is the edits', not the process's start on a busy machine)
        wait_for(lambda: ready(port) or proc.poll() is not None, timeout=60, message="for sync --watch's /readyz")
        assert proc.poll() is None, "sync --watch exited before it was ready"
        for i in range(20):
            client.request(
                "PATCH",
                path,
                body=json.dumps({"metadata": {"labels": {"nvidia.com/gpu.count": str(100 + i)}}}).encode(),
                content_type="application/merge-patch+json",
            )
            edited = time.monotonic()
            while True:
                got = client.request("GET", path)["metadata"]["labels"].get("nvidia.com/gpu.count")
                if got == "2":
                    latencies.append(time.monotonic() - edited)
                    break
                assert time.monotonic() - edited < 5, f"edit {i} not restored after 5 s"
                time.sleep(0.02)
        # the directory is watched too: a new value in the file is applied
        env_file(tmp_path, name, {**GPU, "nvidia.com/gpu.count": "3"})
        deadline = time.monotonic() + 5
        while labels_of(labcluster, name).get("nvidia.com/gpu.count") != "3":
            assert time.monotonic() < deadline, "file edit not applied"
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=15)
    p50 = statistics.median(latencies)
    p99 = sorted(latencies)[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(
        f"\nsync --watch restore latency over {len(latencies)} edits: p50={p50 * 1000:.0f} ms p99={p99 * 1000:.0f} ms"
    )
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert max(latencies) < 1.0, latencies
    assert out.count(f"{name} nvidia.com/gpu.count 2") == 20
