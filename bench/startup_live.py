"""The monitor's start to its first picture against ``kubectl get nodes,pods -A -o json`` of the same objects.

Issue 50 item 1: from the process start to the first published picture (its paged LISTs decoded as they
arrive, then the first evaluation), within 1.5x of kubectl fetching and printing the nodes and pods once.
Starts labcluster, creates N nodes from bench/synth.py with the operand DaemonSets (the real DaemonSet
controller and scheduler make the operand pods, kwok runs them) and synth's training pods (as
bench/monitor_bench.py does), then runs, ``--runs`` times in turn so the machine's load hits both alike:

- ``kubectl get nodes,pods -A -o json`` (labcluster's own kubectl, the admin kubeconfig), to /dev/null;
- ``gpulabel monitor`` as the chart runs it (its arguments, its ServiceAccount's token kubeconfig,
  ``--dump FILE``), from the process start until the dump file exists, then stopped.

Each figure is wall seconds and the process's CPU seconds (``wait4`` for kubectl; the monitor's
``/proc/PID/stat`` at its first picture), best of the runs; the ratio is the monitor's best wall over
kubectl's best. The monitor reads more than nodes and pods (DaemonSets, the DRA kinds the cluster serves,
Events by field selector, the autoscaler's ConfigMap, its own Events as leader): its LIST pages in the last
run are counted from the audit log, by resource and field selector. The 1-minute load average is printed
before the first round and after each. The monitor's stderr goes to ``monitor.log`` in the cluster's
directory; one that exits before its first picture stops the bench with its last lines. Results and the
largest size held live: bench/README.md, "Issue 50 item 1: start to first picture, live" (5,000 nodes take
about 5 minutes to populate on 2 cores, 10,000 about twice that).

    .venv/bin/python -m bench.startup_live --nodes 5000 [--runs 3] [--training 300]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "cluster"))

from labcluster_support import LabCluster, build  # noqa: E402

from bench.cluster_bench import populate  # noqa: E402
from bench.monitor_bench import MONITOR_NS, PY, audit_counts, chart_monitor, free_port, training_pods  # noqa: E402
from gpulabel.cluster.client import KubeClient  # noqa: E402


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of one process run to its end, its output discarded."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"bench: {' '.join(argv[:4])} ... failed: {err.read()[-2000:].decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime


def first_picture(argv: list[str], dump: Path, env: dict[str, str], log: Path) -> tuple[float, float]:
    """Wall and CPU seconds from the monitor's start until its dump file exists; the monitor is then stopped.

    Its stderr goes to ``log``; a monitor that exits before its first picture stops the bench with its tail."""
    dump.unlink(missing_ok=True)
    with log.open("wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env)
    try:
        deadline = start + 1800
        while not dump.exists():
            if proc.poll() is not None:
                tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
                raise SystemExit(f"bench: the monitor exited ({proc.returncode}) before its first picture:\n{tail}")
            if time.perf_counter() > deadline:
                raise SystemExit("bench: no first picture from the monitor in 1800 s")
            time.sleep(0.02)
        wall = time.perf_counter() - start
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    finally:
        proc.terminate()
        proc.wait(timeout=120)
    return wall, cpu


def list_pages(cluster: LabCluster, start: float, end: float, user: str) -> dict[str, int]:
    """LIST pages ``user`` asked for between ``start`` and ``end``, by resource (and field selector), from the audit
    log."""
    from datetime import datetime
    from urllib.parse import parse_qs, urlsplit

    out: dict[str, int] = {}
    for e in cluster.audit_events():
        when = datetime.fromisoformat(e["requestReceivedTimestamp"].replace("Z", "+00:00")).timestamp()
        if e.get("verb") != "list" or e.get("stage") != "ResponseComplete" or not start <= when < end:
            continue
        if str((e.get("user") or {}).get("username", "")) != user:
            continue
        selector = parse_qs(urlsplit(e["requestURI"]).query).get("fieldSelector", [""])[0]
        name = (e.get("objectRef") or {}).get("resource", "?") + (f" ({selector})" if selector else "")
        out[name] = out.get(name, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--training", type=int, default=300, help="GPU nodes given a running training pod")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    binary = build()
    directory = Path(tempfile.mkdtemp(prefix=f"startup-{args.nodes}-"))
    cluster = LabCluster.start(directory, binary)
    try:
        _, operand_pods = populate(cluster, args.nodes, args.seed, allocatable=True)
        client = KubeClient(str(cluster.kubeconfig))
        training = training_pods(cluster, client, args.nodes, args.seed, args.training)
        chart_args, kubeconfig = chart_monitor(cluster)
        nodes = len(client.list("Node")[0])
        pods = len(client.list("Pod")[0])
        print(
            f"labcluster: {nodes} nodes, {pods} pods ({operand_pods} operand pods running, {len(training)} training)",
            flush=True,
        )
        kubectl = [str(binary), "kubectl", "--kubeconfig", str(cluster.kubeconfig), "get", "nodes,pods", "-A"]
        kubectl += ["-o", "json"]
        dump = directory / "first.json"
        monitor = list(chart_args)
        monitor[monitor.index("--metrics-port") + 1] = str(free_port())
        monitor += ["--identity", "startup-bench", "--kubeconfig", str(kubeconfig), "--dump", str(dump)]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "POD_NAMESPACE": MONITOR_NS}
        base: list[tuple[float, float]] = []
        mine: list[tuple[float, float]] = []
        loads = [os.getloadavg()[0]]
        for _ in range(args.runs):
            base.append(timed(kubectl))
            began = time.time()
            mine.append(first_picture([PY, "-m", "gpulabel", *monitor], dump, env, directory / "monitor.log"))
            ended = time.time()
            loads.append(os.getloadavg()[0])
        time.sleep(2)  # the audit log is written as requests complete
        user = f"system:serviceaccount:{MONITOR_NS}:gpulabel-monitor"
        requests = audit_counts(cluster, began, ended + 1, user=user)
        print(f"{'what':54} {'best wall s':>11} {'best CPU s':>10}")
        for name, runs in (
            ("kubectl get nodes,pods -A -o json (the baseline)", base),
            ("monitor: start to first picture", mine),
        ):
            print(f"{name:54} {min(w for w, _ in runs):11.2f} {min(c for _, c in runs):10.2f}")
        ratio = min(w for w, _ in mine) / min(w for w, _ in base)
        print(f"ratio (wall, best of {args.runs}): {ratio:.2f}x (goal 1.5x: {'met' if ratio <= 1.5 else 'missed'})")
        print(f"every run, wall s: kubectl {[round(w, 2) for w, _ in base]}, monitor {[round(w, 2) for w, _ in mine]}")
        print(f"the monitor's requests in its last start (audit log): {requests}")
        print(f"its LIST pages by resource: {list_pages(cluster, began, ended + 1, user)}")
        print(f"load average (1 min) before and after each round: {[round(x, 1) for x in loads]}")
    finally:
        cluster.stop()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
