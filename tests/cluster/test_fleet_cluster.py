"""A fleet on one Prometheus: two labclusters, a monitor on each (the chart's arguments with
``monitor.clusterName`` a and b, its ServiceAccount's token), one real Prometheus scraping both and
evaluating deploy/monitoring/gpulabel-rules.yaml (tools.monitoring.with_for's copy, every ``for:`` 1s).

Both clusters have GPU nodes of the same names. The fleet dashboard's queries return series for both
clusters; one leader per cluster is no GPULabelMonitorNoLeader (the rule sums per cluster); a GPU taken out
(capacity 2, allocatable 1) on a node of one cluster fires GPULabelGPUUnhealthy for that cluster only and
resolves when it is back, first in a, then in b; cluster b's monitor stopped is GPULabelMonitorAbsent for
b only. Then ``report`` and ``check`` over both clusters
(``--context a --context b``) equal each cluster's own report and check.

The second labcluster is this module's own; the first is the session's ``labcluster``. No GPU Operator:
what is tested is the labelling and grouping by cluster, which needs no operand.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helm_support import HelmError, build_helm, objects, template
from labcluster_support import (
    LabCluster,
    LabClusterError,
    build,
    delete_namespace,
    gpu_node_manifest,
    namespace_usable,
    node_is_ready,
    wait_for,
)
from prometheus_support import NOT_BUILT, Prometheus, PrometheusError, built, firing, free_port, start_short_for
from test_deploy_cluster import metric
from tools import monitoring

JOB = "gpulabel-monitor"
NAMESPACE = "gpulabel"
NODES = ["fleet-gpu-0", "fleet-gpu-1"]
GFD = {
    "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.product": "NVIDIA-A10",
    "nvidia.com/gpu.count": "2",
    "nvidia.com/gpu.memory": "23028",
}

if not built() and os.environ.get("GPULABEL_REQUIRE_CLUSTER") == "1":
    pytest.fail(f"{NOT_BUILT} (GPULABEL_REQUIRE_CLUSTER=1)", pytrace=False)
pytestmark = pytest.mark.skipif(not built(), reason=NOT_BUILT)


@pytest.fixture(scope="module")
def second(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabCluster]:
    """A second labcluster, this module's own."""
    try:
        cluster = LabCluster.start(tmp_path_factory.mktemp("fleet-b"), build())
    except LabClusterError as exc:
        pytest.fail(f"a second labcluster is unavailable: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def clusters(labcluster: LabCluster, second: LabCluster) -> Iterator[dict[str, LabCluster]]:
    """Clusters a and b, each with the same two GPU nodes (two GPUs each, GFD's labels), the first cordoned."""
    fleet = {"a": labcluster, "b": second}
    for cluster in fleet.values():
        cluster.apply(*(gpu_node_manifest(n, GFD, gpus=2) for n in NODES))
    for cluster in fleet.values():  # a finding in each cluster (capacity cordoned), its GPUs unschedulable
        cluster.kubectl("cordon", NODES[0])
    for name, cluster in fleet.items():
        for node in NODES:
            wait_for(lambda c=cluster, n=node: node_is_ready(c.get("node", n)), timeout=60, message=f"{name}/{node}")
    yield fleet
    for cluster in fleet.values():
        cluster.kubectl("delete", "node", *NODES, "--wait=false", "--ignore-not-found")


def _chart(cluster_name: str) -> list[dict[str, Any]]:
    return objects(
        template("--set", "monitor.enabled=true", "--set", f"monitor.clusterName={cluster_name}", namespace=NAMESPACE)
    )


Monitors = dict[str, int]  # cluster name -> the metrics port of its monitor
PIDS: dict[str, int] = {}  # cluster name -> its monitor's process id (test_a_stopped_clusters_monitor_...)


@pytest.fixture(scope="module")
def monitors(clusters: dict[str, LabCluster], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Monitors]:
    """On each cluster the chart's monitor RBAC, and ``gpulabel monitor`` with the chart's arguments
    (``monitor.clusterName`` set; the metrics port replaced) and its ServiceAccount's token."""
    try:
        build_helm()
    except HelmError as exc:
        pytest.fail(f"helm is unavailable: {exc}", pytrace=False)
    procs: list[tuple[subprocess.Popen[str], Path]] = []
    ports: Monitors = {}
    applied: list[tuple[LabCluster, list[dict[str, Any]]]] = []
    try:
        for name, cluster in clusters.items():
            docs = _chart(name)
            rbac = [
                d
                for d in docs
                if d["metadata"]["name"].startswith("gpulabel-monitor")
                and d["kind"] in {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
            ]
            (deployment,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == JOB]
            namespace_usable(cluster, NAMESPACE)  # another file on this cluster may have just deleted it
            cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
            cluster.apply(*rbac)
            applied.append((cluster, rbac))
            tmp = tmp_path_factory.mktemp(f"monitor-{name}")
            kc = tmp / "sa.kubeconfig"
            made = subprocess.run(
                [
                    *(sys.executable, "-m", "gpulabel", "kubeconfig", "--kubeconfig", str(cluster.kubeconfig)),
                    *("--service-account", f"{NAMESPACE}/{JOB}", "-o", str(kc)),
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert made.returncode == 0, made.stderr
            args = list(deployment["spec"]["template"]["spec"]["containers"][0]["args"])
            assert args[args.index("--cluster-name") + 1] == name  # the chart's value became the flag
            port = free_port()
            args[args.index("--metrics-port") + 1] = str(port)
            log = tmp / "monitor.log"
            with log.open("w") as out:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "gpulabel", *args, "--identity", f"fleet-{name}", "--kubeconfig", str(kc)],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    text=True,
                    env={**os.environ, "PYTHONUNBUFFERED": "1", "POD_NAMESPACE": NAMESPACE},
                )
            procs.append((proc, log))
            ports[name] = port
            PIDS[name] = proc.pid
        for (proc, log), port in zip(procs, ports.values(), strict=True):
            wait_for(
                lambda p=proc, n=port: p.poll() is None and metric(n, "gpulabel_leader") == 1.0,
                timeout=90,
                message=lambda lg=log: f"for the monitor to lead: {lg.read_text()[-2000:]}",
            )
        yield ports
        for proc, log in procs:
            assert proc.poll() is None, log.read_text()[-4000:]
    finally:
        for proc, _ in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
        for cluster, rbac in applied:
            for d in rbac:
                where = ["-n", d["metadata"]["namespace"]] if "namespace" in d["metadata"] else []
                cluster.kubectl("delete", d["kind"].lower(), d["metadata"]["name"], *where, "--ignore-not-found")
            delete_namespace(cluster, NAMESPACE)


@pytest.fixture(scope="module")
def prometheus(monitors: Monitors, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    """One Prometheus scraping both clusters' monitors as one job (their series tell the clusters apart)."""
    try:
        prom = start_short_for(
            tmp_path_factory.mktemp("prometheus-fleet"), JOB, [f"127.0.0.1:{port}" for port in monitors.values()]
        )
    except PrometheusError as exc:
        pytest.fail(f"prometheus is unavailable: {exc}", pytrace=False)
    try:
        wait_for(
            lambda: len(prom.query(f'up{{job="{JOB}"}} == 1')) == len(monitors),
            timeout=30,
            message="for both monitor targets to be up",
        )
        yield prom
    finally:
        prom.stop()


def _clusters_of(prom: Prometheus, expr: str) -> set[str]:
    return {s["metric"].get("cluster", "") for s in prom.query(expr)}


def _advertise(cluster: LabCluster, node: str, capacity: int) -> None:
    patch = {"status": {"capacity": {"nvidia.com/gpu": str(capacity)}, "allocatable": {"nvidia.com/gpu": "2"}}}
    cluster.kubectl("patch", "node", node, "--subresource=status", "--type=merge", "-p", json.dumps(patch))


def _unhealthy(prom: Prometheus) -> list[tuple[str, str]]:
    """The (cluster, node) of each GPULabelGPUUnhealthy alert, pending or firing."""
    return sorted((a["labels"].get("cluster", ""), a["labels"]["node"]) for a in prom.alerts("GPULabelGPUUnhealthy"))


@pytest.mark.parametrize("broken", ["a", "b"])
def test_a_gpu_lost_in_one_cluster_fires_for_that_cluster_only_and_resolves(
    clusters: dict[str, LabCluster], prometheus: Prometheus, broken: str
) -> None:
    """capacity 3 over allocatable 2 on fleet-gpu-1 of one cluster; the same node of the other is healthy."""
    node = NODES[1]
    _advertise(clusters[broken], node, 3)
    try:
        wait_for(
            lambda: firing(prometheus, "GPULabelGPUUnhealthy"),
            timeout=60,
            message=lambda: f"for GPULabelGPUUnhealthy in {broken}: {prometheus.alerts()}",
        )
        time.sleep(3)  # the other cluster's monitor has evaluated its own picture meanwhile
        assert _unhealthy(prometheus) == [(broken, node)]
    finally:
        _advertise(clusters[broken], node, 2)
    wait_for(
        lambda: not prometheus.alerts("GPULabelGPUUnhealthy"),
        timeout=60,
        message=lambda: f"for GPULabelGPUUnhealthy to resolve: {prometheus.alerts()}",
    )


def test_every_fleet_dashboard_query_has_series_of_both_clusters(prometheus: Prometheus) -> None:
    """After the GPU tests: their node patches are watch events in both clusters (the watch panel's ages)."""
    # the fleet tables, and every query whose outermost aggregation keeps the cluster
    per_cluster = re.compile(r"^(?:time\(\) - )?\w+ by \(cluster\b")
    fleet = [(t, e) for t, e in monitoring.dashboard_queries() if t.startswith("Fleet:") or per_cluster.match(e)]
    assert len({title for title, _ in fleet}) >= 4, fleet
    for title, expr in fleet:
        wait_for(
            lambda e=expr: _clusters_of(prometheus, e) == {"a", "b"},
            timeout=30,
            message=lambda t=title, e=expr: f"for {t!r} ({e}) to have both clusters: {prometheus.query(e)}",
        )
    # the cluster variable's query lists both clusters
    assert _clusters_of(prometheus, f'gpulabel_gpu_nodes{{job="{JOB}"}}') == {"a", "b"}
    gpus = {
        (s["metric"]["cluster"], s["metric"]["state"]): float(s["value"][1])
        for s in prometheus.query(f'max by (cluster, state) (gpulabel_fleet_gpus{{job="{JOB}"}})')
    }
    for name in ("a", "b"):  # two GPU nodes of two GPUs each, the first cordoned
        assert gpus[(name, "usable")] >= 2 and gpus[(name, "unschedulable")] >= 2, gpus
    # one leader in each cluster: two in all, and no GPULabelMonitorNoLeader (the rule sums per cluster)
    assert float(prometheus.query(f'sum(gpulabel_leader{{job="{JOB}"}})')[0]["value"][1]) == 2
    time.sleep(3)  # three evaluations
    assert prometheus.alerts("GPULabelMonitorNoLeader") == []


def test_a_stopped_clusters_monitor_is_absent_for_that_cluster_only(prometheus: Prometheus) -> None:
    """SIGSTOP of cluster b's monitor: its scrapes fail, its series go stale, GPULabelMonitorAbsent fires
    for b (a is still scraped); SIGCONT is the repair."""
    os.kill(PIDS["b"], signal.SIGSTOP)
    try:
        wait_for(
            lambda: firing(prometheus, "GPULabelMonitorAbsent"),
            timeout=15,  # well inside the monitor's Lease: stopped longer, it would lose it and exit
            message=lambda: f"for GPULabelMonitorAbsent of cluster b: {prometheus.alerts()}",
        )
        labels = [a["labels"] for a in prometheus.alerts("GPULabelMonitorAbsent")]
        assert labels == [{"alertname": "GPULabelMonitorAbsent", "cluster": "b", "severity": "critical"}]
    finally:
        os.kill(PIDS["b"], signal.SIGCONT)
    wait_for(
        lambda: not prometheus.alerts("GPULabelMonitorAbsent"),
        timeout=60,
        message=lambda: f"for GPULabelMonitorAbsent to resolve: {prometheus.alerts()}",
    )


@pytest.fixture(scope="module")
def fleet_kubeconfig(clusters: dict[str, LabCluster], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One kubeconfig with a context per cluster, named a and b."""
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "clusters": [], "users": [], "contexts": []}
    for name, cluster in clusters.items():
        config = yaml.safe_load(cluster.kubeconfig.read_text())
        current = next(c for c in config["contexts"] if c["name"] == config["current-context"])["context"]
        (server,) = [c["cluster"] for c in config["clusters"] if c["name"] == current["cluster"]]
        (user,) = [u["user"] for u in config["users"] if u["name"] == current["user"]]
        merged["clusters"].append({"name": name, "cluster": server})
        merged["users"].append({"name": name, "user": user})
        merged["contexts"].append({"name": name, "context": {"cluster": name, "user": name}})
    merged["current-context"] = "a"
    path = tmp_path_factory.mktemp("fleet-kubeconfig") / "kubeconfig"
    path.write_text(yaml.safe_dump(merged))
    path.chmod(0o600)
    return path


def _gpulabel(*argv: str) -> tuple[int, str, str]:
    from gpulabel.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _page_data(page: str) -> dict[str, Any]:
    start = page.index('<script type="application/json" id="gpulabel-data">')
    body = page[start:].split(">", 1)[1].split("</script>", 1)[0]
    doc: dict[str, Any] = json.loads(body)
    return doc


def test_the_fleet_report_and_check_of_both_clusters_are_each_clusters_own(
    clusters: dict[str, LabCluster], fleet_kubeconfig: Path
) -> None:
    kc = ("--kubeconfig", str(fleet_kubeconfig))

    def quiet(doc: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in doc.items() if k != "generated"}

    def agree() -> bool:
        code, page, err = _gpulabel("report", *kc, "--context", "a", "--context", "b", "--html", "-")
        assert (code, err) == (0, ""), err
        fleet = _page_data(page)
        assert [c["name"] for c in fleet["clusters"]] == ["a", "b"]
        singles = {}
        for name in clusters:
            code, single, err = _gpulabel("report", *kc, "--context", name, "--html", "-")
            assert (code, err) == (0, ""), err
            singles[name] = quiet(_page_data(single))
        same = all(quiet(c["doc"]) == singles[c["name"]] for c in fleet["clusters"])
        rows = {r["cluster"]: r for r in fleet["fleet"]}
        return same and all(rows[n]["gpu_nodes"] >= len(NODES) for n in clusters)

    # another reading may land between a change in a cluster (a kwok heartbeat, another test's object): retried
    wait_for(agree, timeout=60, interval=1, message="for the fleet report to equal the single reports")

    def checks_agree() -> bool:
        _, out, _ = _gpulabel("check", *kc, "--context", "a", "--context", "b", "-o", "json")
        doc = json.loads(out)
        assert doc["kind"] == "List" and [i["cluster"] for i in doc["items"]] == ["a", "b"]
        for item in doc["items"]:
            _, single, _ = _gpulabel("check", *kc, "--context", item["cluster"], "-o", "json")
            if {k: v for k, v in item.items() if k != "cluster"} != json.loads(single):
                return False
        return True

    wait_for(checks_agree, timeout=60, interval=1, message="for check over both clusters to equal each one's")
