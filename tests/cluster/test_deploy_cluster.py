"""deploy/ on the real control plane: the manifests apply, the controller leads through a
Lease with its ServiceAccount's rights only, restores drift, and hands over when killed."""

from __future__ import annotations

import base64
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from labcluster_support import LabCluster, delete_namespace, namespace_usable, wait_for

from gpulabel.cluster.client import KubeClient

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "base"


@pytest.fixture(scope="module")
def applied(labcluster: LabCluster) -> Iterator[None]:
    # another file on this session's cluster may have deleted namespace gpulabel just before, without waiting
    namespace_usable(labcluster, "gpulabel")
    # a server-side dry run cannot create the namespace its other objects go into: create it first
    labcluster.kubectl("apply", "-f", str(DEPLOY.parent / "rbac" / "namespace.yaml"))
    dry = labcluster.kubectl("apply", "-k", str(DEPLOY), "--dry-run=server")
    assert "deployment.apps/gpulabel-sync created (server dry run)" in dry.stdout
    labcluster.kubectl("apply", "-k", str(DEPLOY))
    # scale the in-cluster Deployment to zero: the tests run the controller locally, and
    # kwok's fake pods must not compete for the Lease (they run nothing, but stay tidy)
    labcluster.kubectl("scale", "deployment/gpulabel-sync", "-n", "gpulabel", "--replicas=0")
    yield
    # leave nothing behind: the CronJob would go on making a pod every 15 minutes on whatever node has
    # room (another file's nodes, whose scheduler messages count it), and the next file on this cluster
    # may make namespace gpulabel again
    labcluster.kubectl("delete", "-k", str(DEPLOY), "--ignore-not-found", "--wait=false")
    delete_namespace(labcluster, "gpulabel")


def sa_files(cluster: LabCluster, account: str, directory: Path) -> Path:
    """What the kubelet mounts for a pod: token, ca.crt, namespace."""
    token = cluster.kubectl("create", "token", account, "-n", "gpulabel", "--duration=1h").stdout.strip()
    admin = yaml.safe_load(cluster.kubeconfig.read_text())
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "token").write_text(token)
    (directory / "ca.crt").write_bytes(base64.b64decode(admin["clusters"][0]["cluster"]["certificate-authority-data"]))
    (directory / "namespace").write_text("gpulabel")
    return directory


def token_kubeconfig(cluster: LabCluster, sa_dir: Path, path: Path) -> Path:
    admin = yaml.safe_load(cluster.kubeconfig.read_text())
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "sa",
        "clusters": admin["clusters"],
        "users": [{"name": "sa", "user": {"token": (sa_dir / "token").read_text()}}],
        "contexts": [{"name": "sa", "context": {"cluster": admin["clusters"][0]["name"], "user": "sa"}}],
    }
    path.write_text(yaml.safe_dump(config))
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_in_cluster_configuration_reaches_the_api_with_the_service_account(
    labcluster: LabCluster, applied: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_node: Any
) -> None:
    make_node("deploy-incluster")
    sa = sa_files(labcluster, "gpulabel-sync", tmp_path / "sa")
    server = yaml.safe_load(labcluster.kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
    host, port = server.removeprefix("https://").rsplit(":", 1)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
    client = KubeClient(service_account_dir=str(sa))
    assert client.endpoint == server
    nodes, _ = client.list("Node")
    assert "deploy-incluster" in {n["metadata"]["name"] for n in nodes}
    status, _ = client.request_raw("GET", "/api/v1/namespaces/gpulabel/secrets")
    assert status == 403  # the sync role reads nodes, not secrets


def metric(port: int, name: str) -> float | None:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
    return None


@pytest.fixture
def controllers(labcluster: LabCluster, applied: None, tmp_path: Path) -> Iterator[Any]:
    procs: list[subprocess.Popen[str]] = []
    sa = sa_files(labcluster, "gpulabel-sync", tmp_path / "sa")
    kubeconfig = token_kubeconfig(labcluster, sa, tmp_path / "sa.kubeconfig")

    def start(identity: str, directory: Path, port: int) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gpulabel",
                "sync",
                str(directory),
                "--watch",
                "--leader-elect",
                "--lease-namespace",
                "gpulabel",
                "--identity",
                identity,
                "--metrics-port",
                str(port),
                "--kubeconfig",
                str(kubeconfig),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        procs.append(proc)
        return proc

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.communicate(timeout=10)


def ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as resp:
            return resp.status == 200
    except OSError:  # 503 (HTTPError) or not listening yet
        return False


def lease_holder(cluster: LabCluster) -> str:
    lease = cluster.get("lease", "gpulabel-sync", "-n", "gpulabel")
    return str(lease["spec"].get("holderIdentity") or "")


def test_the_leader_restores_drift_and_a_standby_takes_over_when_it_dies(
    labcluster: LabCluster, controllers: Any, make_node: Any, tmp_path: Path
) -> None:
    node = "deploy-node"
    make_node(node, {"example.com/gpu": "a"})
    files = tmp_path / "features.d"
    files.mkdir()
    (files / f"{node}.env").write_text("example.com/gpu=a\n")
    port_a, port_b = free_port(), free_port()
    first = controllers("instance-a", files, port_a)
    wait_for(lambda: lease_holder(labcluster) == "instance-a", timeout=30, message="for instance-a to lead")
    second = controllers("instance-b", files, port_b)
    # a standby is ready (it has tried the Lease and found it held) but does not lead
    wait_for(lambda: ready(port_b), timeout=30, message="for instance-b to be a ready standby")
    assert metric(port_b, "gpulabel_leader") == 0.0
    assert lease_holder(labcluster) == "instance-a"
    wait_for(lambda: metric(port_a, "gpulabel_leader") == 1.0, timeout=30)

    labcluster.kubectl("label", "--overwrite", "node", node, "example.com/gpu=drifted")
    wait_for(
        lambda: labcluster.get("node", node)["metadata"]["labels"]["example.com/gpu"] == "a",
        timeout=10,
        message="for the leader to restore drift",
    )
    assert metric(port_a, 'gpulabel_labels_restored_total{key="example.com/gpu",node="deploy-node"}') == 1.0

    first.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    wait_for(lambda: lease_holder(labcluster) == "instance-b", timeout=30, message="for instance-b to take over")
    took_over = time.monotonic() - killed
    print(f"\nstandby took over {took_over:.1f} s after the leader was killed (lease duration 15 s)")
    assert took_over <= 15 + 2 * 2 + 1  # lease duration plus two retry periods
    labcluster.kubectl("label", "--overwrite", "node", node, "example.com/gpu=drifted-again")
    wait_for(
        lambda: labcluster.get("node", node)["metadata"]["labels"]["example.com/gpu"] == "a",
        timeout=10,
        message="for the new leader to restore drift",
    )

    second.send_signal(signal.SIGTERM)
    _, err = second.communicate(timeout=20)
    assert second.returncode == 0, err
    assert "Traceback" not in err
    assert lease_holder(labcluster) == ""  # released on a clean stop
