"""``gpulabel monitor`` on a real API server at scale: detection latency, API load, memory, CPU per event.

Starts labcluster, creates N nodes from bench/synth.py and the operand DaemonSets (as
bench/cluster_bench.py does: the real DaemonSet controller and scheduler create the operand
pods, kwok runs them) plus synth's training pods on a sample of GPU nodes (bound by
``nodeName``; the hazards check reads them), then runs ``gpulabel monitor --dump FILE`` as its
own process and measures:

- startup: from the process start to its first published picture;
- steady state over ``--steady`` seconds with no change made by the bench: the monitor's API
  requests by verb from labcluster's audit log (lists and watches are audited; the monitor is
  told apart by its user agent and the window), the bytes it read (``/proc/PID/io`` rchar),
  its CPU, and the same for one ``gpulabel check`` run (what the CronJob does each run: its
  LISTs from the audit log, its bytes as the LIST pages it reads);
- detection latency over ``--changes`` changes, one at a time: a GFD label removed (and put
  back), a device-plugin pod deleted (the DaemonSet controller makes another), a ``NoExecute``
  taint added (the taint manager evicts the operand pods: its reaction is in the figure) and
  removed (the DaemonSet controller puts them back): from just before the write is sent to the
  moment the findings change. The measurement point is pluggable (``--point``): ``findings``,
  the monitor's stderr line for the change (``appeared``/``resolved``, written right after the
  evaluation); ``event``, the first events.k8s.io Event about the node or pod (once the
  monitor writes Events);
- RSS (current and peak) and CPU per watch event (the monitor's CPU over the latency phase
  divided by the events a watcher of the same kinds received meanwhile).

    .venv/bin/python -m bench.monitor_bench --nodes 5000 [--changes 210] [--steady 600] [--evaluator full]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "cluster"))

from gpulabel_run import monitor_argv  # noqa: E402
from labcluster_support import LabCluster, build, wait_for  # noqa: E402

from bench.cluster_bench import populate  # noqa: E402
from bench.synth import generate  # noqa: E402
from gpulabel.cluster.client import KubeClient  # noqa: E402
from gpulabel.cluster.watch import watch_events  # noqa: E402
from gpulabel.errors import ClusterError  # noqa: E402

PY = sys.executable
NS = "gpu-operator"
TICKS = os.sysconf("SC_CLK_TCK")


# -- the monitor process ---------------------------------------------------------------------------


class Monitor:
    """``gpulabel monitor`` as a process; every stderr line with the wall time it arrived."""

    def __init__(self, kubeconfig: Path, dump: Path, extra: list[str], env: dict[str, str] | None = None) -> None:
        self.started = time.time()
        self.proc = subprocess.Popen(
            monitor_argv(kubeconfig, dump, *extra),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: list[tuple[float, str]] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self.lock:
                self.lines.append((time.time(), line.rstrip("\n")))

    def since(self, at: float) -> list[tuple[float, str]]:
        with self.lock:
            return [(t, line) for t, line in self.lines if t >= at]

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime

    def rss_mb(self) -> tuple[float, float]:
        """Current and peak RSS in MB."""
        status = dict(
            line.split(":", 1) for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines() if ":" in line
        )
        return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024

    def read_bytes(self) -> int:
        io = dict(line.split(": ") for line in Path(f"/proc/{self.proc.pid}/io").read_text().splitlines())
        return int(io["rchar"])

    def stop(self) -> int:
        self.proc.terminate()
        return self.proc.wait(timeout=60)


# -- what a change is, and when it was seen ---------------------------------------------------------


def findings_point(monitor: Monitor) -> Callable[[float, set[str]], float | None]:
    """The first ``appeared``/``resolved`` line at or after ``at`` naming one of ``subjects``."""

    def seen(at: float, subjects: set[str]) -> float | None:
        for t, line in monitor.since(at):
            words = line.split()
            if len(words) > 1 and words[1] in ("appeared", "resolved") and subjects & set(words):
                return t
        return None

    return seen


class EventPoint:
    """The first events.k8s.io/v1 Event from gpulabel regarding one of the subjects (by object name)."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self.seen: list[tuple[float, str]] = []
        self.lock = threading.Lock()
        path = "/apis/events.k8s.io/v1/events"
        _, version = client.list_objects(path, lambda item: None, limit=1)
        threading.Thread(target=self._watch, args=(path, version), daemon=True).start()

    def _watch(self, path: str, version: str) -> None:
        while True:
            try:
                for event in watch_events(self.client, path, version):
                    obj = event.get("object") or {}
                    version = (obj.get("metadata") or {}).get("resourceVersion") or version
                    if event.get("type") in ("ADDED", "MODIFIED") and obj.get("reportingController") == "gpulabel":
                        with self.lock:
                            self.seen.append((time.time(), str((obj.get("regarding") or {}).get("name"))))
            except ClusterError:
                time.sleep(0.5)

    def __call__(self, at: float, subjects: set[str]) -> float | None:
        names = {s.rsplit("/", 1)[-1] for s in subjects}
        with self.lock:
            return next((t for t, name in self.seen if t >= at and name in names), None)


class EventCounter:
    """Counts the watch events of the monitor's busy kinds (nodes, pods, DaemonSets) as a second watcher."""

    def __init__(self, client: KubeClient) -> None:
        self.count = 0
        self.lock = threading.Lock()
        for kind in ("Node", "Pod", "DaemonSet"):
            path = client.kind_path(kind)
            _, version = client.list_objects(path, lambda item: None, limit=1)
            threading.Thread(target=self._watch, args=(client, path, version), daemon=True).start()

    def _watch(self, client: KubeClient, path: str, version: str) -> None:
        while True:
            try:
                for event in watch_events(client, path, version):
                    version = ((event.get("object") or {}).get("metadata") or {}).get("resourceVersion") or version
                    if event.get("type") != "BOOKMARK":
                        with self.lock:
                            self.count += 1
            except ClusterError:
                time.sleep(0.5)


def training_pods(cluster: LabCluster, client: KubeClient, nodes: int, seed: int, limit: int) -> dict[str, str]:
    """Create synth's running training pods on ``limit`` GPU nodes; returns node -> pod (namespace/name)."""
    pods = [o for o in generate(nodes, seed=seed).objects if o["kind"] == "Pod" and o["metadata"]["namespace"] != NS]
    placed: dict[str, str] = {}
    namespaces: set[str] = set()
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if not node or node in placed or len(placed) >= limit:
            continue
        ns = p["metadata"]["namespace"]
        if ns not in namespaces:
            cluster.kubectl("create", "namespace", ns, check=False)
            namespaces.add(ns)
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": p["metadata"]["name"], "namespace": ns}}
        body["spec"] = p["spec"]
        client.request(
            "POST", f"/api/v1/namespaces/{ns}/pods", body=json.dumps(body).encode(), content_type="application/json"
        )
        placed[node] = f"{ns}/{p['metadata']['name']}"
    return placed


def identities(dump: Path) -> set[tuple[str, ...]]:
    """The monitor's current findings, each by its identity."""
    from gpulabel.checks.verdict import identity_of_json

    return {identity_of_json(f) for f in json.loads(dump.read_bytes())["findings"]}


def detect(
    client: KubeClient,
    seen: Callable[[float, set[str]], float | None],
    dump: Path,
    training: dict[str, str],
    changes: int,
    seed: int,
    timeout: float = 30.0,
) -> dict[str, list[float]]:
    """Make ``changes`` changes one at a time; each one's detection latency (seconds) by kind of change.

    Each change (and its undoing) is made on a GPU node running a training pod, once the findings
    are back to what they were before the first change.
    """
    rng = random.Random(seed)
    baseline = identities(dump)
    gpu_nodes, _ = client.list("Node", label_selector="nvidia.com/gpu.deploy.device-plugin=true")
    spare = sorted({n["metadata"]["name"] for n in gpu_nodes} - set(training))  # no training pod to lose
    out: dict[str, list[float]] = {}
    missed: dict[str, int] = {}
    unsettled = 0

    def timed(what: str, subjects: set[str], write: Callable[[], Any]) -> None:
        at = time.time()
        write()
        deadline = time.monotonic() + timeout
        while (t := seen(at, subjects)) is None and time.monotonic() < deadline:
            time.sleep(0.002)
        if t is None:
            missed[what] = missed.get(what, 0) + 1
        else:
            out.setdefault(what, []).append(t - at)

    def patch(node: str, body: dict[str, Any]) -> Callable[[], Any]:
        data = json.dumps(body).encode()
        return lambda: client.request(
            "PATCH", client.node_path(node), body=data, content_type="application/merge-patch+json"
        )

    made = turn = 0
    while made < changes:
        turn += 1
        node = rng.choice(sorted(training))
        obj = client.request("GET", client.node_path(node))
        kind = ("label", "pod", "taint")[turn % 3]
        if kind == "label":
            product = obj["metadata"]["labels"].get("nvidia.com/gpu.product")
            if product is None:
                continue
            timed("label removed", {node}, patch(node, {"metadata": {"labels": {"nvidia.com/gpu.product": None}}}))
            timed("label restored", {node}, patch(node, {"metadata": {"labels": {"nvidia.com/gpu.product": product}}}))
            made += 2
        elif kind == "pod":
            pods, _ = client.list("Pod", namespace=NS, field_selector=f"spec.nodeName={node}")
            plugin = [p for p in pods if p["metadata"]["name"].startswith("nvidia-device-plugin-daemonset")]
            if not plugin:
                continue
            name = plugin[0]["metadata"]["name"]
            path = f"/api/v1/namespaces/{NS}/pods/{name}"
            timed("pod deleted", {node, f"{NS}/{name}"}, lambda path=path: client.request("DELETE", path))
            made += 1
        else:  # NoExecute: the taint manager evicts the operand pods, and the DaemonSets stop placing them
            node = rng.choice(spare)
            taints = client.request("GET", client.node_path(node))["spec"].get("taints") or []
            broken = [*taints, {"key": "example.com/broken", "effect": "NoExecute"}]
            timed("taint added", {node}, patch(node, {"spec": {"taints": broken}}))
            timed("taint removed", {node}, patch(node, {"spec": {"taints": taints}}))
            made += 2
        # the next change starts from a quiet cluster: what this one set off is over
        try:
            wait_for(lambda b=baseline: identities(dump) == b, timeout=60, interval=0.05, message="for the findings")
        except AssertionError:
            unsettled += 1
            baseline = identities(dump)
    if missed or unsettled:
        print(f"no change in the findings within {timeout:g} s: {missed}; unsettled {unsettled}", file=sys.stderr)
    out["missed"] = [float(sum(missed.values())), float(unsettled)]
    return out


# -- API load --------------------------------------------------------------------------------------


def audit_counts(cluster: LabCluster, start: float, end: float, agent: str) -> dict[str, int]:
    """Requests by verb (lists and watches) the user agent ``agent`` made between ``start`` and ``end``."""
    from datetime import datetime

    seen: dict[str, set[str]] = {}
    for e in cluster.audit_events():
        when = datetime.fromisoformat(e["requestReceivedTimestamp"].replace("Z", "+00:00")).timestamp()
        if start <= when < end and str(e.get("userAgent", "")).startswith(agent):
            seen.setdefault(e["verb"], set()).add(e["auditID"])
    return {verb: len(ids) for verb, ids in sorted(seen.items())}


def list_bytes(client: KubeClient, kinds: list[str]) -> int:
    """The bytes of the LIST pages ``check`` reads (its kinds, pages of 500)."""
    total = 0
    for kind in kinds:
        token = ""
        while True:
            query = [("limit", "500"), *([("continue", token)] if token else [])]
            status, data = client.request_raw("GET", client.kind_path(kind), query=query)
            if status >= 400:
                break
            total += len(data)
            token = (json.loads(data).get("metadata") or {}).get("continue") or ""
            if not token:
                break
    return total


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def measure(
    cluster: LabCluster,
    client: KubeClient,
    counter: EventCounter,
    training: dict[str, str],
    evaluator: str,
    args: argparse.Namespace,
    env: dict[str, str] | None,
) -> dict[str, Any]:
    """One monitor process: startup, the steady state, detection latency, RSS, CPU."""
    agent = "OpenAPI-Generator"  # the kubernetes client's user agent: the monitor's (the bench's own is another)
    dump = cluster.dir / f"findings-{evaluator}.json"
    monitor = Monitor(cluster.kubeconfig, dump, ["--evaluator", evaluator], env)
    out: dict[str, Any] = {"evaluator": evaluator}
    wait_for(dump.exists, timeout=900, interval=0.05, message="for the monitor's first picture")
    out["startup_seconds"] = time.time() - monitor.started
    out["rss_mb_after_start"] = monitor.rss_mb()
    first = [line for _, line in monitor.since(0) if "evaluation)" in line]
    out["scope"] = first[0].split(": ", 1)[-1] if first else ""
    time.sleep(5)  # the first picture's log lines are out
    # steady state: nothing changed by us
    start, cpu0, bytes0 = time.time(), monitor.cpu_seconds(), monitor.read_bytes()
    out["startup_requests"] = audit_counts(cluster, monitor.started, start, agent)
    out["startup_cpu_seconds"] = cpu0
    time.sleep(args.steady if evaluator == args.evaluator[0] else args.steady_again)
    end = time.time()
    time.sleep(2)  # the audit log is written as requests complete
    out["steady"] = {
        "seconds": end - start,
        "requests": audit_counts(cluster, start, end, agent),
        "bytes_read": monitor.read_bytes() - bytes0,
        "cpu_seconds": monitor.cpu_seconds() - cpu0,
        "rss_mb": monitor.rss_mb(),
    }
    point: Callable[[float, set[str]], float | None] = (
        findings_point(monitor) if args.point == "findings" else EventPoint(client)
    )
    cpu1, events1 = monitor.cpu_seconds(), counter.count
    started = time.time()
    out["latency"] = detect(client, point, dump, training, args.changes, args.seed)
    out["latency_phase"] = {
        "seconds": time.time() - started,
        "cpu_seconds": monitor.cpu_seconds() - cpu1,
        "watch_events": counter.count - events1,
    }
    out["rss_mb_end"] = monitor.rss_mb()
    out["monitor_exit"] = monitor.stop()
    out["monitor_log"] = [line for _, line in monitor.since(0) if "appeared" not in line and "resolved" not in line]
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from gpulabel.app.monitor import monitored_kinds
    from gpulabel.cluster.live import served_kinds

    binary = build()
    directory = Path(tempfile.mkdtemp(prefix=f"monbench-{args.nodes}-"))
    cluster = LabCluster.start(directory, binary)
    results: dict[str, Any] = {"nodes": args.nodes, "point": args.point, "monitors": []}
    try:
        _, results["operand_pods"] = populate(cluster, args.nodes, args.seed, allocatable=True)
        client = KubeClient(str(cluster.kubeconfig))
        client._api.user_agent = "gpulabel-monitor-bench"  # the bench's own requests are not the monitor's
        training = training_pods(cluster, client, args.nodes, args.seed, args.training)
        # the CronJob's check, once
        before = time.time()
        proc = subprocess.run(
            [PY, "-m", "gpulabel", "check", "--kubeconfig", str(cluster.kubeconfig)], capture_output=True
        )
        after = time.time()
        time.sleep(2)
        results["check_run"] = {
            "exit": proc.returncode,
            "seconds": after - before,
            "requests": audit_counts(cluster, before, after + 0.5, "OpenAPI-Generator"),
            "bytes_read": list_bytes(client, served_kinds(client, monitored_kinds())),
        }
        counter = EventCounter(client)
        for evaluator in args.evaluator:
            results["monitors"].append(measure(cluster, client, counter, training, evaluator, args, None))
            print(report_monitor(results["monitors"][-1]), file=sys.stderr, flush=True)
    finally:
        cluster.stop()
    return results


def report_monitor(m: dict[str, Any]) -> str:
    lines = [f"{m['evaluator']} evaluator ({m['scope']}):"]
    lines.append(
        f"  startup to the first picture: {m['startup_seconds']:.1f} s, CPU {m['startup_cpu_seconds']:.1f} s, "
        f"requests {m['startup_requests']}"
    )
    lat = m["latency"]
    all_lat = [v for k, vs in lat.items() if k != "missed" for v in vs]
    if all_lat:
        lines.append(
            f"  detection ({len(all_lat)} changes): p50 {statistics.median(all_lat) * 1000:.0f} ms, "
            f"p99 {percentile(all_lat, 99) * 1000:.0f} ms, max {max(all_lat) * 1000:.0f} ms; "
            f"missed {lat['missed'][0]:.0f}, unsettled {lat['missed'][1]:.0f}"
        )
    for kind, vs in lat.items():
        if kind != "missed" and vs:
            p50, p99 = statistics.median(vs) * 1000, percentile(vs, 99) * 1000
            lines.append(f"    {kind}: {len(vs)}, p50 {p50:.0f} ms, p99 {p99:.0f} ms")
    s = m["steady"]
    per_hour = 3600 / s["seconds"]
    hourly = {k: round(v * per_hour) for k, v in s["requests"].items()}
    lines.append(
        f"  steady {s['seconds']:.0f} s: requests {s['requests']} ({hourly} per hour), "
        f"{s['bytes_read'] * per_hour / 1e6:.1f} MB/h read, CPU {s['cpu_seconds']:.1f} s, RSS {s['rss_mb'][0]:.0f} MB"
    )
    p = m["latency_phase"]
    if p["watch_events"]:
        lines.append(
            f"  latency phase {p['seconds']:.0f} s: {p['watch_events']} watch events, CPU {p['cpu_seconds']:.1f} s: "
            f"{p['cpu_seconds'] / p['watch_events'] * 1000:.1f} ms CPU per event"
        )
    lines.append(
        f"  RSS: after start {m['rss_mb_after_start'][0]:.0f} MB, end {m['rss_mb_end'][0]:.0f} MB "
        f"(peak {m['rss_mb_end'][1]:.0f} MB)"
    )
    return "\n".join(lines)


def report(r: dict[str, Any]) -> str:
    c = r["check_run"]
    lines = [
        f"monitor at {r['nodes']} nodes, {r['operand_pods']} operand pods, detection point: {r['point']}",
        f"one check run (the CronJob's): {c['seconds']:.1f} s, requests {c['requests']}, "
        f"{c['bytes_read'] / 1e6:.1f} MB of LIST pages (every 15 min: {4 * sum(c['requests'].values())} "
        f"requests, {4 * c['bytes_read'] / 1e6:.0f} MB per hour)",
    ]
    lines.extend(report_monitor(m) for m in r["monitors"])
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--changes", type=int, default=210)
    parser.add_argument("--steady", type=float, default=600.0, help="seconds of steady state to audit")
    parser.add_argument("--training", type=int, default=300, help="GPU nodes given a running training pod")
    parser.add_argument(
        "--evaluator", choices=("full", "incremental"), action="append", help="one monitor run each (default full)"
    )
    parser.add_argument("--steady-again", type=float, default=120.0, help="steady seconds for the later evaluators")
    parser.add_argument("--point", choices=("findings", "event"), default="findings")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=str(REPO / "bench" / "out"))
    args = parser.parse_args()
    args.evaluator = args.evaluator or ["full"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    results = run(args)
    (out / f"monitor-{args.nodes}.json").write_text(json.dumps(results, indent=2))
    print(report(results), flush=True)


if __name__ == "__main__":
    main()
