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
  evaluation); ``event``, also the first events.k8s.io Event from gpulabel about the node or pod,
  as a watch of Events through the API reads it (its reason kept: the latency minus that reason's
  grace is the monitor's own);
- that its metrics equal ``check`` (the grace delays Warning Events only): once settled after the
  start and again after the changes, two ``check -o json`` runs in a row that agree, the
  monitor's dump read between them equal to them, and its ``/metrics`` (``gpulabel_findings`` by
  check, reason and severity; the ``gpulabel_problem`` series, shown and dropped) equal to what
  those findings give;
- RSS (current and peak) and CPU per watch event (the monitor's CPU over the latency phase
  divided by the events a watcher of the same kinds received meanwhile);
- where a change's time goes, by stage: the bench's own watch receiving the written object (the API
  server's delivery, as the monitor's watch gets it), the monitor's log line (its batch and
  evaluation), the Event's planned time (its ``eventTime`` or ``series.lastObservedTime``: the
  planner's clock, after the evaluation), the Event through the API (the background write, the API
  server, the delivery back); the evaluation duration histogram over the phase; ``uptime``'s load
  averages every 10 s.

``--after-src DIR`` then runs more monitors (``--after-grace``, default ``all=0s``) in the same
cluster with gpulabel from ``DIR`` (``PYTHONPATH``): a fix measured against main's code under the
same cluster, the load of the same hour.

The monitor runs as the chart deploys it: the chart's arguments (``helm template``, its metrics
port replaced by a free one), its RBAC applied, and a token kubeconfig for its ServiceAccount
(``gpulabel kubeconfig --service-account gpulabel/gpulabel-monitor``). One monitor process per
``--evaluator`` and ``--grace``: ``chart`` is the chart's default grace per reason (only the
``NoExecute`` taints are made then: their Warning is due after the 5 s of a fault, a label's after
2 minutes and a deleted operand pod's never, as the DaemonSet controller makes it again within its
minute), anything else is given to ``--event-grace`` (``all=0s``: every Warning at once).

    .venv/bin/python -m bench.monitor_bench --nodes 5000 [--changes 210] [--steady 600] [--evaluator full]
    .venv/bin/python -m bench.monitor_bench --nodes 5000 --point event --evaluator incremental \
        --grace all=0s --grace chart
"""

from __future__ import annotations

import argparse
import bisect
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
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "cluster"))

from helm_support import build_helm, objects, template  # noqa: E402
from labcluster_support import LabCluster, build, wait_for  # noqa: E402

from bench.cluster_bench import populate  # noqa: E402
from bench.synth import generate  # noqa: E402
from gpulabel.cluster.client import KubeClient  # noqa: E402
from gpulabel.cluster.watch import watch_events  # noqa: E402
from gpulabel.errors import ClusterError  # noqa: E402

PY = sys.executable
NS = "gpu-operator"
MONITOR_NS = "gpulabel"  # where the chart puts the monitor's ServiceAccount and Lease
TICKS = os.sysconf("SC_CLK_TCK")
# notified whenever the monitor writes a line or an Event arrives: the bench waits on it instead of polling (a
# poll every few ms scanning every line so far took a share of the CPU the monitor measured needs)
NEWS = threading.Condition()


def _notify() -> None:
    with NEWS:
        NEWS.notify_all()


def wait_news(probe: Callable[[], Any], timeout: float) -> Any:
    """``probe()`` once it is not None (checked again at each line or Event), or None after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    with NEWS:
        while (found := probe()) is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            NEWS.wait(min(left, 0.5))
        return found


# -- the monitor process ---------------------------------------------------------------------------


class Monitor:
    """``gpulabel monitor`` as a process; every stderr line with the wall time it arrived."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None, port: int = 0) -> None:
        self.started = time.time()
        self.port = port
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: list[tuple[float, str]] = []
        self.times: list[float] = []  # each line's time, for bisect
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=30) as resp:
            return str(resp.read().decode())

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self.lock:
                now = time.time()
                self.lines.append((now, line.rstrip("\n")))
                self.times.append(now)
            _notify()

    def since(self, at: float) -> list[tuple[float, str]]:
        with self.lock:
            return self.lines[bisect.bisect_left(self.times, at) :]

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


def current_version(client: KubeClient, path: str) -> str:
    """The resourceVersion a watch of ``path`` starts from: one LIST page of one object (not the whole list)."""
    status, data = client.request_raw("GET", path, query=[("limit", "1")])
    if status >= 400:
        raise ClusterError(client.endpoint, f"LIST {path}: {status}")
    return str((json.loads(data).get("metadata") or {}).get("resourceVersion") or "")


def findings_point(monitor: Monitor) -> Callable[[float, set[str]], float | None]:
    """The first ``appeared``/``resolved`` line at or after ``at`` naming one of ``subjects``."""

    def seen(at: float, subjects: set[str]) -> float | None:
        for t, line in monitor.since(at):
            words = line.split()[:4]  # [time] gpulabel: appeared|resolved severity ...
            if {"appeared", "resolved"} & set(words) and subjects & set(line.split()):
                return t
        return None

    return seen


class EventPoint:
    """The first events.k8s.io/v1 Event from gpulabel regarding one of the subjects (by object name), as a
    watch of Events through the API receives it: when it arrived, its type and reason."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self.seen: list[tuple[float, str, str, str]] = []  # arrived, object name, type, reason
        self.planned: dict[int, float] = {}  # index in seen -> when the monitor planned it (its MicroTime)
        self.times: list[float] = []  # each arrival, for bisect
        self.lock = threading.Lock()
        path = "/apis/events.k8s.io/v1/events"
        threading.Thread(target=self._watch, args=(path, current_version(client, path)), daemon=True).start()

    def _watch(self, path: str, version: str) -> None:
        while True:
            try:
                for event in watch_events(self.client, path, version):
                    obj = event.get("object") or {}
                    version = (obj.get("metadata") or {}).get("resourceVersion") or version
                    if event.get("type") in ("ADDED", "MODIFIED") and obj.get("reportingController") == "gpulabel":
                        name = str((obj.get("regarding") or {}).get("name"))
                        planned = _planned(obj)
                        now = time.time()
                        with self.lock:
                            if planned is not None:
                                self.planned[len(self.seen)] = planned
                            self.seen.append((now, name, str(obj.get("type")), str(obj.get("reason"))))
                            self.times.append(now)
                        _notify()
            except ClusterError:
                time.sleep(0.5)

    def first(self, at: float, subjects: set[str], reason: str = "") -> tuple[float, str, str, float | None] | None:
        """(arrival time, type, reason, planned) of the first Event at or after ``at`` about one of ``subjects``
        (of ``reason``, if given: a taint's Warning, not the Warning about the pods it evicted). ``planned``:
        when the monitor's planner made it (the Event's eventTime, or its series' lastObservedTime for a
        repeat; the same machine's clock)."""
        names = {s.rsplit("/", 1)[-1] for s in subjects}
        with self.lock:
            start = bisect.bisect_left(self.times, at)
            return next(
                (
                    (t, ty, r, self.planned.get(i))
                    for i, (t, name, ty, r) in enumerate(self.seen[start:], start)
                    if name in names and r == (reason or r)
                ),
                None,
            )

    def __call__(self, at: float, subjects: set[str]) -> float | None:
        found = self.first(at, subjects)
        return None if found is None else found[0]


def _planned(event: dict[str, Any]) -> float | None:
    """The latest of an Event's eventTime and series.lastObservedTime (MicroTime, UTC) as Unix time."""
    from datetime import datetime

    times = [event.get("eventTime"), (event.get("series") or {}).get("lastObservedTime")]
    out = [datetime.fromisoformat(str(t).replace("Z", "+00:00")).timestamp() for t in times if t]
    return max(out, default=None)


def graces(values: list[str]) -> dict[str, float]:
    """Seconds of grace by Event reason under ``--event-grace values`` (every reason gpulabel has)."""
    from types import SimpleNamespace

    from gpulabel.app.monitor import parse_graces
    from gpulabel.checks.reasons import catalogue
    from gpulabel.controller.events import event_reason

    grace = parse_graces(values)
    out: dict[str, float] = {}
    for row in catalogue():
        for check in row.commands:
            finding = cast(Any, SimpleNamespace(check=check, reason=row.reason))  # what event_reason reads
            out.setdefault(event_reason(finding), grace.seconds(check, row.reason))
    return out


class EventCounter:
    """Counts the watch events of the monitor's busy kinds (nodes, pods, DaemonSets) as a second watcher."""

    def __init__(self, client: KubeClient) -> None:
        self.count = 0
        self.lock = threading.Lock()
        self.tracked: dict[str, list[float]] = {}  # object name -> arrival times of its watch events
        for kind in ("Node", "Pod", "DaemonSet"):
            path = client.kind_path(kind)
            threading.Thread(
                target=self._watch, args=(client, path, current_version(client, path)), daemon=True
            ).start()

    def _watch(self, client: KubeClient, path: str, version: str) -> None:
        while True:
            try:
                for event in watch_events(client, path, version):
                    meta = (event.get("object") or {}).get("metadata") or {}
                    version = meta.get("resourceVersion") or version
                    if event.get("type") != "BOOKMARK":
                        arrived = time.time()
                        with self.lock:
                            self.count += 1
                            if (times := self.tracked.get(str(meta.get("name")))) is not None:
                                times.append(arrived)
            except ClusterError:
                time.sleep(0.5)

    def track(self, subjects: set[str]) -> None:
        """Keep the arrival times of the watch events of ``subjects`` (names, or namespace/name) from now."""
        with self.lock:
            self.tracked = {s.rsplit("/", 1)[-1]: [] for s in subjects}

    def arrived(self, at: float) -> float | None:
        """When this watcher first received an event of a tracked object at or after ``at``."""
        with self.lock:
            return min((t for times in self.tracked.values() for t in times if t >= at), default=None)


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
    from gpulabel.checks.engine.verdict import identity_of_json

    return {identity_of_json(f) for f in json.loads(dump.read_bytes())["findings"]}


Latency = dict[str, Any]  # one change: "findings" and "event" seconds (None: not seen), the Event's "reason", "grace"


def detect(
    client: KubeClient,
    seen: Callable[[float, set[str]], float | None],
    events: EventPoint | None,
    grace: dict[str, float],
    dump: Path,
    training: dict[str, str],
    changes: int,
    kinds: tuple[str, ...],
    seed: int,
    counter: EventCounter | None = None,
    timeout: float = 30.0,
) -> dict[str, Any]:
    """Make ``changes`` changes one at a time (of ``kinds``: label, pod, taint); each one's latencies by kind of
    change: to the monitor's line for it (``seen``) and, with ``events``, to its first Event through the API.

    Each change (and its undoing) is made on a GPU node running a training pod (a taint on one without),
    once the findings are back to what they were before the first change. An Event is waited for
    ``timeout`` plus the longest grace of an Event reason.
    """
    rng = random.Random(seed)
    baseline = identities(dump)
    gpu_nodes, _ = client.list("Node", label_selector="nvidia.com/gpu.deploy.device-plugin=true")
    spare = sorted({n["metadata"]["name"] for n in gpu_nodes} - set(training))  # no training pod to lose
    out: dict[str, list[Latency]] = {}
    missed: dict[str, int] = {}
    unsettled = 0
    event_timeout = timeout + max(grace.values(), default=0.0)

    # the Event each change is made to raise (its check and reason: audit missing, operands missing and
    # noexecute-taint), or to resolve
    expect = {
        "label removed": "AuditMissing",
        "label restored": "AuditMissingResolved",
        "pod deleted": "OperandMissing",
        "taint added": "OperandNoexecuteTaint",
        "taint removed": "OperandNoexecuteTaintResolved",
    }

    def timed(what: str, subjects: set[str], write: Callable[[], Any]) -> None:
        if counter is not None:
            counter.track(subjects)
        at = time.time()
        write()
        t = wait_news(lambda: seen(at, subjects), timeout)
        one: Latency = {"findings": None if t is None else t - at, "event": None, "reason": "", "grace": 0.0}
        arrived = counter.arrived(at) if counter is not None else None
        one["watched"] = None if arrived is None else arrived - at  # the bench's own watch of the object
        one["planned"] = None
        if t is None:
            missed[what] = missed.get(what, 0) + 1
        if events is not None:
            e = wait_news(lambda: events.first(at, subjects, expect[what]), event_timeout)
            if e is None:
                missed[f"{what} (Event)"] = missed.get(f"{what} (Event)", 0) + 1
            else:
                one.update(event=e[0] - at, reason=e[2], grace=grace.get(e[2], 0.0) if e[1] == "Warning" else 0.0)
                one["planned"] = None if e[3] is None else e[3] - at
        out.setdefault(what, []).append(one)

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
        kind = kinds[turn % len(kinds)]
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
        print(
            f"not seen within {timeout:g} s ({event_timeout:g} s for an Event): {missed}; unsettled {unsettled}",
            file=sys.stderr,
        )
    return {"changes": out, "missed": missed, "unsettled": unsettled}


# -- the monitor's metrics against check -----------------------------------------------------------


def check_findings(kubeconfig: Path) -> list[dict[str, Any]]:
    res = subprocess.run(
        [PY, "-m", "gpulabel", "check", "-o", "json", "--kubeconfig", str(kubeconfig)],
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    if res.returncode not in (0, 1):
        raise SystemExit(f"bench: check failed ({res.returncode}): {res.stderr.decode()[-2000:]}")
    return list(json.loads(res.stdout)["findings"])


def expected_metrics(findings: list[dict[str, Any]], cap: int) -> dict[str, Any]:
    """What ``/metrics`` must show for ``check``'s findings: counts by (check, reason, severity), and the
    problem series (a warning or error, not in a baseline; by check, reason, severity, node, pod, operand)."""
    from gpulabel.model.severity import at_or_above

    counts: dict[tuple[str, ...], float] = {}
    problems: set[tuple[str, ...]] = set()
    for f in findings:
        sev = str(f.get("severity") or "")
        key = (str(f["check"]), str(f["reason"]), sev)
        counts[key] = counts.get(key, 0) + 1
        if sev and at_or_above(sev, "warning") and not f.get("baseline"):
            pod = str(f.get("pod") or "")
            problems.add((*key, "" if pod else str(f.get("node") or ""), pod, str(f.get("operand") or "")))
    return {"findings": counts, "problems": len(problems), "shown": min(cap, len(problems))}


def scraped_metrics(text: str) -> dict[str, Any]:
    from prometheus_client.parser import text_string_to_metric_families

    counts: dict[tuple[str, ...], float] = {}
    shown = dropped = 0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "gpulabel_findings" and sample.value:
                counts[(sample.labels["check"], sample.labels["reason"], sample.labels["severity"])] = sample.value
            elif sample.name == "gpulabel_problem":
                shown += 1
            elif sample.name == "gpulabel_problem_series_dropped":
                dropped = int(sample.value)
    return {"findings": counts, "problems": shown + dropped, "shown": shown}


def agree_with_check(monitor: Monitor, dump: Path, kubeconfig: Path, timeout: float = 300) -> dict[str, Any]:
    """Wait until two ``check`` runs in a row agree and the monitor's dump and ``/metrics``, read between
    them, equal them (``check``'s identities; its counts and problem series). The tries it took."""
    from gpulabel.checks.engine.verdict import identity_of_json

    tries, last = 0, {}
    deadline = time.monotonic() + timeout
    while True:
        tries += 1
        before = check_findings(kubeconfig)
        doc = json.loads(dump.read_bytes())
        scraped = scraped_metrics(monitor.metrics())
        after = check_findings(kubeconfig)
        ids = sorted(identity_of_json(f) for f in after)
        quiet = sorted(identity_of_json(f) for f in before) == ids
        dumped = sorted(identity_of_json(f) for f in doc["findings"]) == ids
        want = expected_metrics(after, 1000)
        last = {"tries": tries, "findings": len(after), "problem_series": want["problems"], "quiet": quiet}
        last |= {"dump_equal": dumped, "metrics_equal": scraped == want}
        if quiet and dumped and scraped == want:
            return last
        if time.monotonic() > deadline:
            print(f"bench: the monitor did not agree with check: {last}", file=sys.stderr)
            return last


# -- API load --------------------------------------------------------------------------------------


def audit_counts(cluster: LabCluster, start: float, end: float, agent: str = "", user: str = "") -> dict[str, int]:
    """Requests by verb (lists and watches) the user agent ``agent`` (or ``user``) made between ``start`` and
    ``end``."""
    from datetime import datetime

    seen: dict[str, set[str]] = {}
    for e in cluster.audit_events():
        when = datetime.fromisoformat(e["requestReceivedTimestamp"].replace("Z", "+00:00")).timestamp()
        who = str((e.get("user") or {}).get("username", ""))
        if start <= when < end and str(e.get("userAgent", "")).startswith(agent) and (not user or who == user):
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


def chart_monitor(cluster: LabCluster) -> tuple[list[str], Path]:
    """The chart's monitor: its RBAC applied; its container's arguments and a token kubeconfig for its
    ServiceAccount (what docs/monitor.md tells a newcomer to run)."""
    build_helm()
    docs = objects(template("--set", "monitor.enabled=true", namespace=MONITOR_NS))
    rbac = [
        d
        for d in docs
        if d["metadata"]["name"].startswith("gpulabel-monitor")
        and d["kind"] in {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
    ]
    (deployment,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "gpulabel-monitor"]
    cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": MONITOR_NS}}, *rbac)
    kubeconfig = cluster.dir / "monitor-sa.kubeconfig"
    made = subprocess.run(
        [
            *(PY, "-m", "gpulabel", "kubeconfig", "--kubeconfig", str(cluster.kubeconfig)),
            *("--service-account", f"{MONITOR_NS}/gpulabel-monitor", "-o", str(kubeconfig)),
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    if made.returncode != 0:
        raise SystemExit(f"bench: gpulabel kubeconfig failed: {made.stderr}")
    return list(deployment["spec"]["template"]["spec"]["containers"][0]["args"]), kubeconfig


def evaluation_totals(text: str) -> tuple[float, float]:
    """(count, sum of seconds) of gpulabel_evaluation_duration_seconds, over its scopes."""
    from prometheus_client.parser import text_string_to_metric_families

    count = total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "gpulabel_evaluation_duration_seconds_count":
                count += sample.value
            elif sample.name == "gpulabel_evaluation_duration_seconds_sum":
                total += sample.value
    return count, total


class Uptime:
    """``uptime``'s load averages every ``every`` seconds on a thread, until :meth:`stop`."""

    def __init__(self, every: float) -> None:
        self.lines: list[str] = []
        self.done = threading.Event()
        self.every = every
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            line = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
            self.lines.append(f"{time.strftime('%H:%M:%S')} {line.rsplit('load average:', 1)[-1].strip()}")
            if self.done.wait(self.every):
                return

    def stop(self) -> list[str]:
        self.done.set()
        return self.lines


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def measure(
    cluster: LabCluster,
    client: KubeClient,
    counter: EventCounter,
    training: dict[str, str],
    chart: tuple[list[str], Path],
    evaluator: str,
    grace: str,
    first: bool,
    args: argparse.Namespace,
    src: str = "",
) -> dict[str, Any]:
    """One monitor process as the chart runs it: startup, the steady state, agreement with check, detection
    latency, RSS, CPU. ``grace``: ``chart`` (the chart's default) or an ``--event-grace`` value."""
    chart_args, kubeconfig = chart
    user = f"system:serviceaccount:{MONITOR_NS}:gpulabel-monitor"
    dump = cluster.dir / f"findings-{evaluator}-{grace.replace('/', '_')}{'-src' if src else ''}.json"
    port = free_port()
    argv = list(chart_args)
    argv[argv.index("--metrics-port") + 1] = str(port)
    grace_args = [] if grace == "chart" else [grace]
    argv += ["--identity", "monitor-bench", "--kubeconfig", str(kubeconfig), "--dump", str(dump)]
    argv += ["--evaluator", evaluator, *(x for g in grace_args for x in ("--event-grace", g))]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "POD_NAMESPACE": MONITOR_NS}  # the downward API's value
    if src:  # gpulabel from another tree (``--after-src``): the same cluster, the same changes
        env["PYTHONPATH"] = src
    monitor = Monitor([PY, "-m", "gpulabel", *argv], env, port)
    out: dict[str, Any] = {"evaluator": evaluator, "grace": grace, "src": src}
    wait_for(dump.exists, timeout=900, interval=0.05, message="for the monitor's first picture")
    out["startup_seconds"] = time.time() - monitor.started
    out["rss_mb_after_start"] = monitor.rss_mb()
    first_line = [line for _, line in monitor.since(0) if "evaluation)" in line]
    out["scope"] = first_line[0].split(": ", 1)[-1] if first_line else ""
    time.sleep(5)  # the first picture's log lines are out
    # steady state: nothing changed by us
    start, cpu0, bytes0 = time.time(), monitor.cpu_seconds(), monitor.read_bytes()
    out["startup_requests"] = audit_counts(cluster, monitor.started, start, user=user)
    out["startup_cpu_seconds"] = cpu0
    time.sleep(args.steady if first else args.steady_again)
    end = time.time()
    time.sleep(2)  # the audit log is written as requests complete
    out["steady"] = {
        "seconds": end - start,
        "requests": audit_counts(cluster, start, end, user=user),
        "bytes_read": monitor.read_bytes() - bytes0,
        "cpu_seconds": monitor.cpu_seconds() - cpu0,
        "rss_mb": monitor.rss_mb(),
    }
    out["agree_before"] = agree_with_check(monitor, dump, cluster.kubeconfig)
    events = EventPoint(client) if args.point == "event" else None
    kinds: tuple[str, ...] = ("taint",) if grace == "chart" else ("label", "pod", "taint")
    changes = args.grace_changes if grace == "chart" else args.changes
    cpu1, events1 = monitor.cpu_seconds(), counter.count
    started = time.time()
    load0 = os.getloadavg()
    evaluations0 = evaluation_totals(monitor.metrics())
    uptimes = Uptime(10.0)
    out["latency"] = detect(
        client, findings_point(monitor), events, graces(grace_args), dump, training, changes, kinds, args.seed, counter
    )
    out["uptime"] = uptimes.stop()
    evaluations1 = evaluation_totals(monitor.metrics())
    out["evaluations"] = {
        "count": evaluations1[0] - evaluations0[0],
        "assess_seconds": evaluations1[1] - evaluations0[1],
    }
    out["latency_phase"] = {
        "seconds": time.time() - started,
        "cpu_seconds": monitor.cpu_seconds() - cpu1,
        "watch_events": counter.count - events1,
        "load": [load0, os.getloadavg()],
    }
    out["rss_mb_end"] = monitor.rss_mb()
    out["agree_after"] = agree_with_check(monitor, dump, cluster.kubeconfig)
    out["metrics_tail"] = [x for x in monitor.metrics().splitlines() if x.startswith("gpulabel_events_")]
    out["monitor_exit"] = monitor.stop()
    out["monitor_log"] = [line for _, line in monitor.since(0) if "appeared" not in line and "resolved" not in line]
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from gpulabel.app.monitor import monitored_kinds
    from gpulabel.cluster.live import served_kinds

    binary = build()
    directory = Path(tempfile.mkdtemp(prefix=f"monbench-{args.nodes}-"))
    cluster = LabCluster.start(directory, binary)
    results: dict[str, Any] = {"nodes": args.nodes, "point": args.point, "monitors": [], "load": [os.getloadavg()]}
    try:
        _, results["operand_pods"] = populate(cluster, args.nodes, args.seed, allocatable=True)
        client = KubeClient(str(cluster.kubeconfig))
        client._api.user_agent = "gpulabel-monitor-bench"  # the bench's own requests are not the monitor's
        training = training_pods(cluster, client, args.nodes, args.seed, args.training)
        chart = chart_monitor(cluster)
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
        runs = [(e, g) for e in args.evaluator for g in args.grace]
        for i, (evaluator, grace) in enumerate(runs):
            m = measure(cluster, client, counter, training, chart, evaluator, grace, i == 0, args)
            results["monitors"].append(m)
            results["load"].append(os.getloadavg())
            print(report_monitor(m), file=sys.stderr, flush=True)
            (Path(args.out) / f"monitor-{args.nodes}-partial.json").write_text(json.dumps(results, indent=2))
        for grace in args.after_grace if args.after_src else ():
            if not (Path(args.after_src) / "gpulabel" / "__init__.py").is_file():
                print(f"bench: no gpulabel in {args.after_src}: no run after", file=sys.stderr, flush=True)
                break
            m = measure(cluster, client, counter, training, chart, "incremental", grace, False, args, args.after_src)
            results["monitors"].append(m)
            results["load"].append(os.getloadavg())
            print(report_monitor(m), file=sys.stderr, flush=True)
            (Path(args.out) / f"monitor-{args.nodes}-partial.json").write_text(json.dumps(results, indent=2))
    finally:
        cluster.stop()
    return results


def _spread(values: list[float]) -> str:
    if not values:
        return "none"
    return (
        f"p50 {statistics.median(values) * 1000:.0f} ms, p99 {percentile(values, 99) * 1000:.0f} ms, "
        f"max {max(values) * 1000:.0f} ms"
    )


def _stages(every: list[Latency]) -> list[str]:
    """Where a change's time goes, by stage (p50 / p99 of each stage's own share, changes with every stamp):
    the bench's own watch receiving the written object (the API server's delivery); the monitor's log line
    (its watch delivery, batching and the evaluation that found it); the Event's planned time (the
    planner's clock: after the evaluation and the other sinks' publish); the Event through the API (the
    background write, the API server, the delivery to the bench's watch of Events)."""
    whole = [o for o in every if None not in (o.get("watched"), o["findings"], o.get("planned"), o["event"])]
    if not whole:
        return []
    out = [f"  by stage, minus the grace ({len(whole)} changes with every stamp), p50 / p99 ms:"]
    stages = [
        ("write -> the bench's watch has the object", [o["watched"] for o in whole]),
        ("write -> monitor's log line (evaluated)", [o["findings"] for o in whole]),
        ("write -> Event planned (minus grace)", [o["planned"] - o["grace"] for o in whole]),
        ("Event planned -> the bench's watch has the Event", [o["event"] - o["planned"] for o in whole]),
    ]
    for name, values in stages:
        out.append(f"    {name}: {statistics.median(values) * 1000:.0f} / {percentile(values, 99) * 1000:.0f}")
    return out


def report_monitor(m: dict[str, Any]) -> str:
    src = f", gpulabel from {m['src']}" if m.get("src") else ""
    lines = [f"{m['evaluator']} evaluator, grace {m['grace']}{src} ({m['scope']}):"]
    lines.append(
        f"  startup to the first picture: {m['startup_seconds']:.1f} s, CPU {m['startup_cpu_seconds']:.1f} s, "
        f"requests {m['startup_requests']}"
    )
    for when in ("agree_before", "agree_after"):
        a = m[when]
        lines.append(
            f"  {when.replace('_', ' ')} the changes: dump equal to check {a['dump_equal']}, metrics equal "
            f"{a['metrics_equal']} ({a['findings']} findings, {a['problem_series']} problem series; {a['tries']} tries)"
        )
    lat = m["latency"]
    every = [one for ones in lat["changes"].values() for one in ones]
    found = [one["findings"] for one in every if one["findings"] is not None]
    lines.append(
        f"  to the log line ({len(found)} of {len(every)} changes): {_spread(found)}; "
        f"missed {lat['missed']}, unsettled {lat['unsettled']}"
    )
    evented = [one for one in every if one["event"] is not None]
    if evented:
        lines.append(f"  to the Event through the API ({len(evented)}): {_spread([o['event'] for o in evented])}")
        own = [o["event"] - o["grace"] for o in evented]
        lines.append(f"  to the Event minus its reason's grace (the monitor's own): {_spread(own)}")
    lines.extend(_stages(every))
    for kind, ones in lat["changes"].items():
        f = [o["findings"] for o in ones if o["findings"] is not None]
        e = [o["event"] - o["grace"] for o in ones if o["event"] is not None]
        reasons = sorted({f"{o['reason']} ({o['grace']:g} s)" for o in ones if o["reason"]})
        lines.append(f"    {kind}: {len(ones)}; log line {_spread(f)}; Event minus grace {_spread(e)} {reasons}")
    s = m["steady"]
    per_hour = 3600 / s["seconds"]
    hourly = {k: round(v * per_hour) for k, v in s["requests"].items()}
    lines.append(
        f"  steady {s['seconds']:.0f} s: requests {s['requests']} ({hourly} per hour), "
        f"{s['bytes_read'] * per_hour / 1e6:.1f} MB/h read, CPU {s['cpu_seconds']:.1f} s, RSS {s['rss_mb'][0]:.0f} MB"
    )
    ev = m.get("evaluations") or {}
    if ev.get("count"):
        lines.append(
            f"  evaluations in the latency phase: {ev['count']:.0f}, assess {ev['assess_seconds']:.1f} s "
            f"({ev['assess_seconds'] / ev['count'] * 1000:.1f} ms mean)"
        )
    loads = m.get("uptime") or []
    if loads:
        lines.append(f"  uptime load averages (every 10 s), first {loads[0]}, last {loads[-1]}")
        ones = [float(x.split()[1].rstrip(",")) for x in loads]
        lines.append(
            f"  1-minute load over the phase: min {min(ones):.2f}, median {statistics.median(ones):.2f}, "
            f"max {max(ones):.2f}"
        )
    p = m["latency_phase"]
    load = " -> ".join("/".join(f"{x:.1f}" for x in la) for la in p["load"])
    lines.append(f"  latency phase {p['seconds']:.0f} s, load average {load}")
    if p["watch_events"]:
        lines.append(
            f"  {p['watch_events']} watch events, CPU {p['cpu_seconds']:.1f} s: "
            f"{p['cpu_seconds'] / p['watch_events'] * 1000:.1f} ms CPU per event"
        )
    lines.append(
        f"  RSS: after start {m['rss_mb_after_start'][0]:.0f} MB, end {m['rss_mb_end'][0]:.0f} MB "
        f"(peak {m['rss_mb_end'][1]:.0f} MB)"
    )
    lines.extend(f"  {x}" for x in m["metrics_tail"])
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
    parser.add_argument(
        "--grace",
        action="append",
        help="per evaluator, one monitor run each: chart (the chart's default grace) or an --event-grace value",
    )
    parser.add_argument(
        "--grace-changes", type=int, default=40, help="changes (taints) of a run with the chart's grace"
    )
    parser.add_argument("--steady-again", type=float, default=120.0, help="steady seconds for the later evaluators")
    parser.add_argument("--point", choices=("findings", "event"), default="findings")
    parser.add_argument(
        "--after-src",
        default="",
        help="then, in the same cluster, incremental monitors with gpulabel from this directory (PYTHONPATH): "
        "a fix measured against the runs before it",
    )
    parser.add_argument("--after-grace", action="append", help="the --after-src runs' graces (default all=0s)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=str(REPO / "bench" / "out"))
    args = parser.parse_args()
    args.evaluator = args.evaluator or ["full"]
    args.grace = args.grace or ["chart"]
    args.after_grace = args.after_grace or ["all=0s"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    results = run(args)
    (out / f"monitor-{args.nodes}.json").write_text(json.dumps(results, indent=2))
    print(report(results), flush=True)


if __name__ == "__main__":
    main()
