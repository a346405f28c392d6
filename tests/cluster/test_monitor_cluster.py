"""``gpulabel monitor`` against labcluster with the real GPU Operator: it always agrees with ``check``.

The monitor runs as its own process (``--dump FILE``: its current findings,
rewritten atomically after every evaluation). After each random sequence of
changes (a GFD or deploy label removed, a device-plugin pod deleted, a taint,
a cordon, a GPU node added) the test waits until the cluster is quiet (two
``check -o json`` runs in a row agree) and then the monitor's findings and
root causes must equal ``check``'s. Then: the API server restarted while the
monitor's connection is held down by the fault proxy (the watch cannot resume:
it relists, and the change made meanwhile is found), and a leader failover
between two monitors (the standby's warm caches hold the change made while no
one led).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from faultproxy import FaultProxy
from gpulabel_run import gpulabel, monitor_argv
from labcluster_support import GPU_OPERATOR_NAMESPACE as NS
from labcluster_support import LabCluster, restart_apiserver, wait_for

GFD = {"nvidia.com/gpu.product": "NVIDIA-A10", "nvidia.com/gpu.count": "1", "nvidia.com/gpu.memory": "23028"}
CORE_SETS = {"nvidia-device-plugin-daemonset", "nvidia-container-toolkit-daemonset", "nvidia-driver-daemonset"}


class MonitorProcess:
    """``gpulabel monitor --dump FILE`` in its own process; its stderr in a file."""

    def __init__(self, kubeconfig: Path, tmp: Path, name: str, *extra: str) -> None:
        self.dump = tmp / f"{name}.json"
        self.log = tmp / f"{name}.log"
        self.proc = subprocess.Popen(
            monitor_argv(kubeconfig, self.dump, *extra),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("w"),
        )

    def document(self) -> dict[str, Any] | None:
        try:
            return dict(json.loads(self.dump.read_bytes()))
        except FileNotFoundError:
            return None

    def stderr(self) -> str:
        return self.log.read_text()

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=30)


def picture(doc: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """What must agree: every finding and every root cause."""
    return doc["findings"], doc.get("causes", [])


def check_picture(kubeconfig: Path) -> tuple[list[Any], list[Any]]:
    res = gpulabel(kubeconfig, "check", "-o", "json")
    assert res.returncode in (0, 1), res.stderr
    return picture(json.loads(res.stdout))


def agree(monitor: MonitorProcess, kubeconfig: Path, timeout: float = 90) -> tuple[list[Any], list[Any]]:
    """Wait until the cluster is quiet and the monitor's picture equals ``check``'s; return it.

    Quiet: two ``check`` runs in a row answer the same (the operator and the DaemonSet
    controller have finished reacting); the monitor's picture read between them must be that one.
    """
    last: dict[str, Any] = {}

    def agreed() -> bool:
        before = check_picture(kubeconfig)
        doc = monitor.document()
        after = check_picture(kubeconfig)
        last.update(check=after, monitor=None if doc is None else picture(doc))
        return before == after and doc is not None and picture(doc) == after

    try:
        wait_for(agreed, timeout=timeout, interval=0.3)
    except AssertionError:
        assert last.get("monitor") == last.get("check"), monitor.stderr()[-3000:]
        raise
    assert monitor.proc.poll() is None, monitor.stderr()[-3000:]
    return last["check"]  # type: ignore[no-any-return]


def operand_pods(cluster: LabCluster, node: str) -> dict[str, dict[str, Any]]:
    pods = cluster.get("pods", "-n", NS, "--field-selector", f"spec.nodeName={node}")["items"]
    return {p["metadata"]["ownerReferences"][0]["name"]: p for p in pods}


def operands_running(cluster: LabCluster, node: str) -> bool:
    pods = operand_pods(cluster, node)
    return {ds for ds, p in pods.items() if p["status"].get("phase") == "Running"} >= CORE_SETS


@pytest.fixture
def gpu_nodes(gpu_operator: LabCluster, make_gpu_node: Any, request: pytest.FixtureRequest) -> list[str]:
    """Three GPU nodes with GFD's labels and one GPU each, their operands running, and a CPU node."""
    tag = hashlib.sha256(request.node.name.encode()).hexdigest()[:5]  # each test (and seed) its own nodes
    names = [f"mon-{tag}-{i}" for i in range(3)]
    for name in names:
        make_gpu_node(name, GFD, gpus=1)
    make_gpu_node(f"mon-{tag}-cpu", gpu=False)
    for name in names:
        wait_for(lambda name=name: operands_running(gpu_operator, name), timeout=120, message=f"operands on {name}")
    return names


@pytest.fixture
def monitor(gpu_operator: LabCluster, tmp_path: Path) -> Iterator[MonitorProcess]:
    m = MonitorProcess(gpu_operator.kubeconfig, tmp_path, "monitor")
    yield m
    assert m.stop() == 0, m.stderr()[-3000:]


def changes(cluster: LabCluster, nodes: list[str], make_gpu_node: Any, rng: random.Random) -> list[Callable[[], str]]:
    """The changes the test draws from; each makes one and says what it did."""

    def unlabel(prefix: str) -> Callable[[], str]:
        def do() -> str:
            node = rng.choice(nodes)
            labels = cluster.get("node", node)["metadata"]["labels"]
            keys = sorted(k for k in labels if k.startswith(prefix))
            if not keys:
                return f"{node}: no {prefix}* label left"
            key = rng.choice(keys)
            cluster.kubectl("label", "node", node, f"{key}-")
            return f"{node}: {key} removed"

        return do

    def delete_plugin_pod() -> str:
        node = rng.choice(nodes)
        pod = operand_pods(cluster, node).get("nvidia-device-plugin-daemonset")
        if pod is None:
            return f"{node}: no device-plugin pod"
        cluster.kubectl("delete", "pod", "-n", NS, pod["metadata"]["name"], "--wait=false")
        return f"{node}: device-plugin pod deleted"

    def taint() -> str:
        node = rng.choice(nodes)
        cluster.kubectl("taint", "node", node, f"example.com/broken=t{rng.randrange(100)}:NoSchedule", "--overwrite")
        return f"{node}: tainted"

    def cordon() -> str:
        node = rng.choice(nodes)
        cluster.kubectl("cordon", node)
        return f"{node}: cordoned"

    def add_node() -> str:
        name = f"{nodes[0].rsplit('-', 1)[0]}-x{rng.randrange(10**4)}"
        make_gpu_node(name, gpus=1)  # no GFD labels: GFD does not run on kwok
        nodes.append(name)
        return f"{name}: added"

    return [
        unlabel("nvidia.com/gpu.product"),
        unlabel("nvidia.com/gpu.deploy."),
        delete_plugin_pod,
        taint,
        cordon,
        add_node,
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_after_random_changes_the_monitor_agrees_with_check(
    gpu_operator: LabCluster, gpu_nodes: list[str], make_gpu_node: Any, monitor: MonitorProcess, seed: int
) -> None:
    kubeconfig = gpu_operator.kubeconfig
    start = agree(monitor, kubeconfig)
    rng = random.Random(seed)
    menu = changes(gpu_operator, list(gpu_nodes), make_gpu_node, rng)
    done = [rng.choice(menu)() for _ in range(5)]
    end = agree(monitor, kubeconfig)
    print(f"\nseed {seed}: {done}; findings {len(start[0])} -> {len(end[0])}")
    assert end != start, f"the changes {done} changed no finding: the comparison proves nothing"
    log = monitor.stderr()
    assert "appeared " in log and "Traceback" not in log


def test_a_relist_after_the_api_server_restarts_mid_watch_loses_no_finding(
    gpu_operator: LabCluster, gpu_nodes: list[str], tmp_path: Path
) -> None:
    proxy = FaultProxy(gpu_operator.kubeconfig)
    try:
        m = MonitorProcess(proxy.kubeconfig(tmp_path / "proxy.kubeconfig"), tmp_path, "proxied")
        agree(m, gpu_operator.kubeconfig)
        lists_before = len(proxy.requests(lambda r: r.path == "/api/v1/nodes" and "watch" not in r.query))
        proxy.faults.down = True  # the monitor's watches break and cannot reconnect ...
        restart_apiserver(gpu_operator, down_seconds=2)  # ... while the API server restarts
        wait_for(lambda: gpu_operator.kubectl("get", "--raw", "/readyz", check=False).returncode == 0, timeout=60)
        node = gpu_nodes[0]
        gpu_operator.kubectl("label", "node", node, "nvidia.com/gpu.product-")  # while the monitor is away
        back = time.monotonic()
        proxy.faults.down = False
        found = agree(m, gpu_operator.kubeconfig)
        statuses = [r.status for r in proxy.requests(lambda r: r.at >= back and r.path == "/api/v1/nodes")]
        print(f"\nnode requests once the proxy is back (0: refused while down): {statuses[:8]}")
        assert any(f.get("node") == node and f.get("key") == "nvidia.com/gpu.product" for f in found[0])
        # it relisted: its old resourceVersion could not be resumed on the restarted server
        lists_after = len(proxy.requests(lambda r: r.path == "/api/v1/nodes" and "watch" not in r.query))
        assert lists_after > lists_before
        assert "Node: relisted" in m.stderr()
        assert m.stop() == 0, m.stderr()[-3000:]
    finally:
        proxy.close()


def lease_holder(cluster: LabCluster, namespace: str) -> str:
    lease = cluster.get("lease", "-n", namespace, "gpulabel-monitor")
    return str(lease["spec"].get("holderIdentity") or "")


def test_a_leader_failover_loses_no_finding(gpu_operator: LabCluster, gpu_nodes: list[str], tmp_path: Path) -> None:
    namespace = f"mon-lease-{os.getpid()}"
    gpu_operator.kubectl("create", "namespace", namespace)
    elect = ("--leader-elect", "--lease-namespace", namespace)
    a = MonitorProcess(gpu_operator.kubeconfig, tmp_path, "a", *elect, "--identity", "a")
    b: MonitorProcess | None = None
    try:
        agree(a, gpu_operator.kubeconfig)
        assert lease_holder(gpu_operator, namespace) == "a"
        b = MonitorProcess(gpu_operator.kubeconfig, tmp_path, "b", *elect, "--identity", "b")
        wait_for(lambda: "standby: lease gpulabel-monitor is held by another instance" in b.stderr(), timeout=30)
        assert b.document() is None  # a standby publishes nothing
        a.stop(signal.SIGKILL)  # the leader dies without releasing the Lease
        node = gpu_nodes[1]
        gpu_operator.kubectl("label", "node", node, "nvidia.com/gpu.count-")  # while no one leads
        found = agree(b, gpu_operator.kubeconfig, timeout=120)  # the Lease expires (15 s), b leads
        assert lease_holder(gpu_operator, namespace) == "b"
        assert any(f.get("node") == node and f.get("key") == "nvidia.com/gpu.count" for f in found[0])
        assert "leader: holding lease gpulabel-monitor as b" in b.stderr()
        assert b.stop() == 0, b.stderr()[-3000:]
        assert lease_holder(gpu_operator, namespace) == ""  # SIGTERM released it
    finally:
        a.stop(signal.SIGKILL)
        if b is not None:
            b.stop(signal.SIGKILL)
        gpu_operator.kubectl("delete", "namespace", namespace, "--wait=false")
