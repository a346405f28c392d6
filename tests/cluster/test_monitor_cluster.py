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
one led). Two replicas with metrics and Events: a persistent finding's series at every scrape
across a SIGTERM and a SIGKILL handover, Prometheus keeping its pending alert's activeAt, a repair
made while no replica led resolved by the new leader, open Warnings keeping their counts; and 20
healthy GPU nodes joining a settled cluster write no Warning and no API error, while a NoExecute
taint afterwards is a Warning within its grace and a second.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from datetime import datetime
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

    def __init__(self, kubeconfig: Path, tmp: Path, name: str, *extra: str, port: int = 0) -> None:
        self.dump = tmp / f"{name}.json"
        self.log = tmp / f"{name}.log"
        self.port = port
        self.proc = subprocess.Popen(
            [*monitor_argv(kubeconfig, self.dump, *extra), *(["--metrics-port", str(port)] if port else [])],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("w"),
            env={**os.environ, "POD_NAME": name},  # the Events' reportingInstance
        )

    def metrics(self) -> str | None:
        """Its /metrics (``port``), or None when it does not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=0.4) as resp:
                return str(resp.read().decode())
        except OSError:
            return None

    def leads(self) -> bool:
        return "\ngpulabel_leader 1.0" in (self.metrics() or "")

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
        wait_for(lambda: b.document() is not None, timeout=30)  # a standby exports its findings too
        a.stop(signal.SIGKILL)  # the leader dies without releasing the Lease
        node = gpu_nodes[1]
        gpu_operator.kubectl("label", "node", node, "nvidia.com/gpu.count-")  # while no one leads
        found = agree(b, gpu_operator.kubeconfig, timeout=120)  # b saw it as a standby
        wait_for(lambda: lease_holder(gpu_operator, namespace) == "b", timeout=60)  # the Lease expires (15 s)
        assert any(f.get("node") == node and f.get("key") == "nvidia.com/gpu.count" for f in found[0])
        assert "leader: holding lease gpulabel-monitor as b" in b.stderr()
        assert b.stop() == 0, b.stderr()[-3000:]
        assert lease_holder(gpu_operator, namespace) == ""  # SIGTERM released it
    finally:
        a.stop(signal.SIGKILL)
        if b is not None:
            b.stop(signal.SIGKILL)
        gpu_operator.kubectl("delete", "namespace", namespace, "--wait=false")


# -- two replicas: handovers, Events, a join ---------------------------------------------------------


def gpulabel_events(cluster: LabCluster, node: str) -> list[dict[str, Any]]:
    """gpulabel's Events about ``node`` (events.k8s.io/v1, namespace default)."""
    items = cluster.get("events.events.k8s.io", "-n", "default")["items"]
    return [
        e
        for e in items
        if e.get("reportingController") == "gpulabel" and (e.get("regarding") or {}).get("name") == node
    ]


def event(cluster: LabCluster, node: str, reason: str) -> dict[str, Any] | None:
    found = [e for e in gpulabel_events(cluster, node) if e["reason"] == reason]
    return found[0] if found else None


def count(e: dict[str, Any] | None) -> int:
    return 0 if e is None else int((e.get("series") or {}).get("count") or 1)


def problem_lines(text: str | None, node: str) -> list[str]:
    return [
        line
        for line in (text or "").splitlines()
        if line.startswith("gpulabel_problem{") and f'node="{node}"' in line and 'reason="cordoned"' in line
    ]


class Scraper:
    """Scrapes every replica every 0.5 s (as Prometheus would) and keeps, per round, whether any answered
    with ``node``'s cordoned series."""

    def __init__(self, replicas: list[MonitorProcess], node: str) -> None:
        self.replicas, self.node = replicas, node
        self.rounds: list[tuple[float, bool]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.wait(0.5):
            seen = any(problem_lines(r.metrics(), self.node) for r in list(self.replicas))
            self.rounds.append((time.monotonic(), seen))

    def close(self) -> list[tuple[float, bool]]:
        self.stop.set()
        self.thread.join(timeout=5)
        return self.rounds


def test_two_replicas_hand_over_without_a_gap_and_the_new_leader_resolves_what_was_repaired(
    gpu_operator: LabCluster, gpu_nodes: list[str], tmp_path: Path
) -> None:
    from prometheus_support import NOT_BUILT, Prometheus, built, free_port
    from tools import monitoring

    if not built():
        if os.environ.get("GPULABEL_REQUIRE_CLUSTER") == "1":
            pytest.fail(f"{NOT_BUILT} (GPULABEL_REQUIRE_CLUSTER=1)", pytrace=False)
        pytest.skip(NOT_BUILT)
    cluster, kubeconfig = gpu_operator, gpu_operator.kubeconfig
    persistent, repaired = gpu_nodes[0], gpu_nodes[1]
    namespace = f"mon-ha-{os.getpid()}"
    cluster.kubectl("create", "namespace", namespace)
    cluster.kubectl("cordon", persistent, repaired)
    elect = ("--leader-elect", "--lease-namespace", namespace)
    ports = [free_port(), free_port()]
    a = MonitorProcess(kubeconfig, tmp_path, "a", *elect, "--identity", "a", port=ports[0])
    replicas = [a]
    prom = None
    try:
        wait_for(a.leads, timeout=60, message=lambda: f"for a to lead: {a.stderr()[-2000:]}")
        b = MonitorProcess(kubeconfig, tmp_path, "b", *elect, "--identity", "b", port=ports[1])
        replicas.append(b)
        wait_for(lambda: problem_lines(b.metrics(), persistent), timeout=60, message="for the standby's series")
        prom = Prometheus.start(
            tmp_path / "prom", "gpulabel-monitor", [f"127.0.0.1:{p}" for p in ports], monitoring.RULES
        )
        # both cordons held past their grace (5 s): one Warning each, from the leader
        for node in (persistent, repaired):
            wait_for(lambda n=node: count(event(cluster, n, "CapacityCordoned")) == 1, timeout=30, message=f"{node}")

        def pending() -> list[dict[str, Any]]:
            assert prom is not None
            return [a for a in prom.alerts("GPULabelGPUNodeCordoned", "pending") if a["labels"]["node"] == persistent]

        (alert,) = wait_for(pending, timeout=30, message="for GPULabelGPUNodeCordoned to be pending")
        active_at = alert["activeAt"]
        scraper = Scraper(replicas, persistent)
        started = time.monotonic()
        a.stop(signal.SIGTERM)  # a clean handover: the Lease released
        wait_for(b.leads, timeout=30, message=lambda: f"for b to lead: {b.stderr()[-2000:]}")
        clean = time.monotonic() - started
        a2 = MonitorProcess(kubeconfig, tmp_path, "a2", *elect, "--identity", "a2", port=ports[0])
        replicas[0] = a2
        wait_for(lambda: problem_lines(a2.metrics(), persistent), timeout=60, message="for a2's series")
        # ... and until Prometheus has scraped them: a leader killed before that would leave no replica's
        # series in Prometheus for an evaluation (b's go stale at its first failed scrape), a gap that no
        # monitor can close; a real rollout waits for readiness the same way.
        scraped = f'gpulabel_problem{{instance="127.0.0.1:{ports[0]}", node="{persistent}", reason="cordoned"}}'
        wait_for(lambda: prom is not None and prom.query(scraped), timeout=30, message="for Prometheus to scrape a2")
        b.stop(signal.SIGKILL)  # the leader dies holding the Lease ...
        killed = time.monotonic()
        cluster.kubectl("uncordon", repaired)  # ... and a node is repaired while no one leads
        wait_for(a2.leads, timeout=60, message=lambda: f"for a2 to lead: {a2.stderr()[-2000:]}")
        took_over = time.monotonic() - killed
        resolved = wait_for(
            lambda: event(cluster, repaired, "CapacityCordonedResolved"), timeout=30, message="for the Normal"
        )
        rounds = scraper.close()
        assert resolved["type"] == "Normal" and resolved["reportingInstance"] == "a2"
        assert (
            count(event(cluster, persistent, "CapacityCordoned")) == 1
        )  # still open: neither re-posted nor re-counted
        assert count(event(cluster, repaired, "CapacityCordoned")) == 1
        gaps = [at - started for at, seen in rounds if not seen]
        print(f"\nSIGTERM handover {clean:.1f} s, SIGKILL {took_over:.1f} s; {len(rounds)} scrapes, gaps at {gaps}")
        assert len(rounds) >= 20 and not gaps
        (after,) = pending()
        assert after["activeAt"] == active_at  # Prometheus' pending alert kept its start across both handovers
        assert "adopted" in a2.stderr()
        assert a2.stop() == 0, a2.stderr()[-3000:]
    finally:
        for r in replicas:
            r.stop(signal.SIGKILL)
        if prom is not None:
            prom.stop()
        cluster.kubectl("uncordon", persistent, repaired)
        cluster.kubectl("delete", "namespace", namespace, "--wait=false")


def api_errors(text: str | None) -> float:
    return sum(
        float(x.rsplit(" ", 1)[1]) for x in (text or "").splitlines() if x.startswith("gpulabel_api_errors_total")
    )


def test_healthy_gpu_nodes_joining_write_no_warning_and_a_taint_after_is_one_within_its_grace(
    gpu_operator: LabCluster, gpu_nodes: list[str], tmp_path: Path
) -> None:
    from labcluster_support import gpu_node_manifest
    from prometheus_support import free_port

    cluster = gpu_operator
    m = MonitorProcess(cluster.kubeconfig, tmp_path, "join", port=free_port())
    joined = [f"{gpu_nodes[0].rsplit('-', 1)[0]}-j{i:02d}" for i in range(20)]
    try:
        agree(m, cluster.kubeconfig)  # settled
        errors = api_errors(m.metrics())
        started = time.time()
        cluster.apply(*(gpu_node_manifest(n, GFD, gpus=1) for n in joined))

        def settled() -> bool:
            doc = m.document() or {}
            about = [f for f in doc.get("findings", []) if f.get("node") in joined and f.get("severity") != "info"]
            return not about and all(operands_running(cluster, n) for n in joined[:3])

        wait_for(settled, timeout=180, interval=1, message=lambda: f"for the new nodes to settle: {m.stderr()[-2000:]}")
        settle = time.time() - started
        time.sleep(6)  # past the shortest grace (5 s): a Warning still due would be written now
        warnings = [e for n in joined for e in gpulabel_events(cluster, n) if e["type"] == "Warning"]
        print(f"\n20 nodes settled in {settle:.1f} s; Warnings about them: {[e['reason'] for e in warnings]}")
        assert warnings == []
        assert api_errors(m.metrics()) == errors
        node = joined[0]
        tainted = time.time()
        cluster.kubectl("taint", "node", node, "dedicated=join:NoExecute")
        warning = wait_for(
            lambda: event(cluster, node, "OperandNoexecuteTaint"), timeout=30, message="for the taint's Warning"
        )
        written = datetime.fromisoformat(warning["eventTime"].replace("Z", "+00:00")).timestamp()
        print(f"NoExecute taint -> Warning written after {written - tainted:.2f} s (grace 5 s)")
        assert written - tainted <= 5 + 1
        assert m.stop() == 0, m.stderr()[-3000:]
    finally:
        m.stop(signal.SIGKILL)
        cluster.kubectl("delete", "node", *joined, "--wait=false", "--ignore-not-found")
