"""The monitor's evaluation at scale: a synthetic watch stream replayed into IncrementalEvaluator and FullEvaluator.

Run: ``.venv/bin/python -m bench.monitor_replay --nodes 20000 --events 1000`` (and ``--nodes 5000``).

The cluster is ``bench/synth.py``'s (written to a snapshot file and read back as ``check`` reads it: the
LIST). The stream is what the informers would see after it, one event at a time: operand pods going
not Ready and back, deleted and recreated by their DaemonSet under a new name, nodes' deploy labels
paused and back, GFD labels lost, a MIG state pending, Ready flips, taints, allocatable dropping to 0,
cordons, new Pending GPU pods and Pending pods bound, training pods deleted, DaemonSet status
counts, a ClusterPolicy switch, nodes joining and leaving. Every event's object is JSON read by its
kind's own reader before the clock starts.

Each evaluator runs in a process of its own (bench/measure.py): the LIST (``reset`` of every kind and
the first ``assess``), then per event ``apply`` and ``assess`` (no coalescing: the worst case, one
evaluation per event). FullEvaluator reruns every check on the whole state, so it is assessed at every
``--full-every``-th event only (its time does not depend on the event); the incremental one at every
event. Memory: the process's resident set after the records of the LIST are read (the floor: what any
monitor holds), and its peak after that (``VmHWM``, reset through ``/proc/self/clear_refs`` once the
records are built). At each event both assess, the two results are compared by digest: the
incremental answer must be the full one at scale too.
"""

from __future__ import annotations

import argparse
import copy
import gc
import hashlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.measure import Measured, measure_module

JSON = dict[str, Any]
START = 1764590400.0  # 2025-12-01T12:00:00Z: the stream's clock starts here and moves 0.1 s per event


def _key(obj: JSON, namespaced: bool) -> list[str]:
    meta = obj["metadata"]
    return [meta.get("namespace", "default") if namespaced else "", meta["name"]]


_NAMESPACED = {"Node": False, "Pod": True, "DaemonSet": True, "ClusterPolicy": False}


def _stamp(obj: JSON, key: str, at: float) -> None:
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))
    entry = {"manager": "mig-manager", "operation": "Update", "apiVersion": "v1", "time": when}
    entry |= {"fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {f"f:{key}": {}}}}}
    obj["metadata"]["managedFields"] = [*(obj["metadata"].get("managedFields") or []), entry]


def stream(objects: list[JSON], events: int, seed: int) -> list[JSON]:
    """``events`` watch events after the LIST of ``objects``: ``{"kind", "key", "object" (None: deleted)}``."""
    rng = random.Random(seed)
    now: dict[tuple[str, str, str], JSON] = {}
    for o in objects:
        if o["kind"] in _NAMESPACED:
            now[(o["kind"], *_key(o, _NAMESPACED[o["kind"]]))] = o  # type: ignore[index]
    by_kind: dict[str, list[tuple[str, str, str]]] = {}
    for k in now:
        by_kind.setdefault(k[0], []).append(k)
    operand_pods = [k for k in by_kind["Pod"] if k[1] == "gpu-operator"]
    training = [k for k in by_kind["Pod"] if k[1] != "gpu-operator"]
    gpu_nodes = [k for k in by_kind["Node"] if not k[2].startswith("cpu-")]
    out: list[JSON] = []
    later: list[tuple[int, JSON]] = []  # recreated pods, due at an event index
    serial = 0
    what = "list"  # the stream's event kind (below) each event is part of: the tail is told by it

    def put(obj: JSON) -> None:
        k = (obj["kind"], *_key(obj, _NAMESPACED[obj["kind"]]))
        now[k] = obj  # type: ignore[index]
        out.append({"kind": obj["kind"], "key": list(k[1:]), "object": obj, "what": what})

    def delete(k: tuple[str, str, str]) -> JSON:
        obj = now.pop(k)
        out.append({"kind": k[0], "key": list(k[1:]), "object": None, "what": what})
        return obj

    def pick(keys: list[tuple[str, str, str]]) -> tuple[str, str, str] | None:
        for _ in range(20):
            k = rng.choice(keys)
            if k in now:
                return k
        return None

    kinds = [
        ("pod-ready", 0.24),
        ("pod-recreate", 0.10),
        ("node-label", 0.16),
        ("node-ready", 0.09),
        ("node-taint", 0.08),
        ("node-allocatable", 0.05),
        ("node-cordon", 0.04),
        ("pending-new", 0.06),
        ("pending-bind", 0.04),
        ("workload-delete", 0.05),
        ("ds-status", 0.06),
        ("policy", 0.01),
        ("node-join-leave", 0.02),
    ]
    while len(out) < events:
        at = START + 0.1 * len(out)
        due = [obj for i, obj in later if i <= len(out)]
        later = [(i, obj) for i, obj in later if i > len(out)]
        what = "pod-recreate"  # a recreated pod back under its new name
        for obj in due:
            put(obj)
        what = rng.choices([k for k, _ in kinds], weights=[w for _, w in kinds])[0]
        serial += 1
        if what in ("pod-ready", "pod-recreate"):
            k = pick(operand_pods)
            if k is None:
                continue
            pod = copy.deepcopy(now[k])
            if what == "pod-recreate":
                delete(k)
                pod["metadata"]["name"] = f"{pod['metadata']['name'][:-5]}r{serial:04d}"
                operand_pods.append(("Pod", pod["metadata"]["namespace"], pod["metadata"]["name"]))
                later.append((len(out) + rng.randrange(1, 20), pod))
                continue
            ready = (pod["status"].get("conditions") or [{}])[-1].get("status") != "True"
            pod["status"]["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
            if not ready:
                pod["status"]["containerStatuses"] = [
                    {"name": "c", "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
                ]
            else:
                pod["status"].pop("containerStatuses", None)
            put(pod)
        elif what.startswith("node-") and what != "node-join-leave":
            k = pick(gpu_nodes)
            if k is None:
                continue
            node = copy.deepcopy(now[k])
            labels, spec, status = node["metadata"]["labels"], node.setdefault("spec", {}), node["status"]
            if what == "node-label":
                change = rng.choice(("pause", "gfd", "count", "mig"))
                if change == "pause":
                    key = "nvidia.com/gpu.deploy.device-plugin"
                    labels[key] = "true" if labels.get(key) != "true" else "paused-for-mig-change"
                elif change == "gfd":
                    labels.pop("nvidia.com/gpu.product", None)
                elif change == "count":
                    labels["nvidia.com/gpu.count"] = rng.choice(("eight", "8", "4"))
                else:
                    labels["nvidia.com/mig.config.state"] = rng.choice(("pending", "success", "failed"))
                    _stamp(node, "nvidia.com/mig.config.state", at - rng.choice((0, 1200, 2400)))
            elif what == "node-ready":
                ready = next((c["status"] for c in status.get("conditions", []) if c["type"] == "Ready"), "True")
                status["conditions"] = [{"type": "Ready", "status": "False" if ready == "True" else "True"}]
            elif what == "node-taint":
                taint = {"key": "dedicated", "value": "training", "effect": "NoSchedule"}
                taints = spec.get("taints") or []
                spec["taints"] = [t for t in taints if t != taint] if taint in taints else [*taints, taint]
            elif what == "node-allocatable":
                gpus = status["allocatable"].get("nvidia.com/gpu", "0")
                back = labels.get("nvidia.com/gpu.count", "8")
                status["allocatable"]["nvidia.com/gpu"] = "0" if gpus != "0" else back
            else:
                spec["unschedulable"] = not spec.get("unschedulable", False)
            put(node)
        elif what == "pending-new":
            k = pick(training)
            if k is None:
                continue
            pod = copy.deepcopy(now[k])
            pod["metadata"]["name"] = f"{pod['metadata']['name']}-p{serial:04d}"
            pod["spec"].pop("nodeName", None)
            message = "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
            pod["status"] = {
                "phase": "Pending",
                "conditions": [{"type": "PodScheduled", "status": "False", "message": message}],
            }
            training.append(("Pod", pod["metadata"]["namespace"], pod["metadata"]["name"]))
            put(pod)
        elif what == "pending-bind":
            waiting = [k for k in training if k in now and not now[k]["spec"].get("nodeName")]
            if not waiting:
                continue
            pod = copy.deepcopy(now[rng.choice(waiting)])
            pod["spec"]["nodeName"] = rng.choice(gpu_nodes)[2]
            pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
            put(pod)
        elif what == "workload-delete":
            k = pick(training)
            if k is not None:
                delete(k)
        elif what == "ds-status":
            k = rng.choice(by_kind["DaemonSet"])
            ds = copy.deepcopy(now[k])
            ds["status"]["numberReady"] = max(0, ds["status"].get("numberReady", 0) + rng.choice((-1, 1)))
            put(ds)
        elif what == "policy":
            k = rng.choice(by_kind.get("ClusterPolicy", []) or [None])  # type: ignore[list-item]
            if k is None:
                continue
            policy = copy.deepcopy(now[k])
            dcgm = policy["spec"].setdefault("dcgmExporter", {})
            dcgm["enabled"] = not dcgm.get("enabled", True)
            put(policy)
        else:  # a node leaves, or one joins (a copy of a GPU node under a new name)
            k = pick(gpu_nodes)
            if k is None:
                continue
            if rng.random() < 0.5:
                delete(k)
            else:
                node = copy.deepcopy(now[k])
                node["metadata"]["name"] = f"{k[2]}-j{serial:04d}"
                gpu_nodes.append(("Node", "", node["metadata"]["name"]))
                put(node)
    return out[:events]


def _status(field: str) -> float:
    """A ``/proc/self/status`` figure in MB."""
    with open("/proc/self/status") as fh:
        return int(next(line for line in fh if line.startswith(field)).split()[1]) / 1024


def _digest(assessment: Any) -> str:
    return hashlib.sha256(repr((assessment.result, assessment.causes)).encode()).hexdigest()[:16]


def listed_records(snapshot: str) -> dict[str, list[tuple[tuple[str, str], Any]]]:
    """The snapshot's records as the informers' LISTs give them to an evaluator (``reset``), by kind."""
    from gpulabel.app.session import Session, Source

    state = Session(Source(snapshots=(snapshot,))).state(["Node", "Pod", "DaemonSet", "ClusterPolicy"])
    return {
        "Node": [(("", n.name), n) for n in state.nodes],
        "Pod": [((p.namespace, p.name), p) for p in state.pods],
        "DaemonSet": [((d.namespace, d.name), d) for d in state.daemonsets],
        "ClusterPolicy": [(("", str(c["metadata"]["name"])), c) for c in state.cluster_policies],
    }


def _nothing() -> None:
    pass


def heap_calls() -> tuple[Callable[[], None], Callable[[], None]]:
    """The imported tree's ``settle`` (after the LIST is assessed) and ``keep`` (after every other evaluation), as
    ``gpulabel monitor`` calls them (``controller.heap.Heap``). A tree from before ``Heap`` froze nothing after an
    ordinary event; one from before ``settle`` (bench/replay_before_after.py) only collected."""
    try:
        from gpulabel.controller.heap import Heap
    except ImportError:
        try:
            from gpulabel.controller.heap import settle
        except ImportError:
            return gc.collect, _nothing
        return settle, _nothing
    heap = Heap()
    return heap.settle, heap.keep


def worker(
    which: str, snapshot: str, events_file: str, full_every: int, traced: int = 0, digest_all: bool = False
) -> JSON:
    """One evaluator over the LIST and the stream, in this process: its times, memory and digests (the
    incremental one's at every event with ``digest_all``, so that a full run of any ``full_every`` compares).

    ``traced``: with tracemalloc on from the evaluator's creation, over the first ``traced`` events only
    (tracing slows every allocation, so those runs are not timed): what the evaluator allocates beyond
    the records it is given, kept (``kept_mb``) and at its peak (``traced_peak_mb``)."""
    from gpulabel.app.checks import check_options
    from gpulabel.model.cluster import KIND

    try:
        from gpulabel.checks.engine.assessment import FullEvaluator
        from gpulabel.checks.engine.incremental import IncrementalEvaluator
    except ImportError:  # a tree from before checks/engine (bench/replay_before_after.py): the same classes
        from gpulabel.checks.assessment import FullEvaluator
        from gpulabel.checks.incremental import IncrementalEvaluator

    settle, keep = heap_calls()

    listed = listed_records(snapshot)
    readers = {k: KIND[k].reader() for k in listed}
    raw = json.loads(Path(events_file).read_text())
    events = [
        (e["kind"], (e["key"][0], e["key"][1]), None if e["object"] is None else readers[e["kind"]](e["object"], "ev"))
        for e in raw
    ]
    del raw
    gc.collect()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # the peak from here on: the evaluator's, over the records it is given
    floor = _status("VmRSS:")
    opts = check_options()
    if traced:
        import tracemalloc

        tracemalloc.start()
        events = events[:traced]
    ev = IncrementalEvaluator(opts) if which == "incremental" else FullEvaluator(opts)
    started = time.perf_counter()
    for kind, records in listed.items():
        ev.reset(kind, records)
    ev.assess(START)
    list_seconds = time.perf_counter() - started
    del listed
    settle()  # as gpulabel monitor does once a LIST is assessed (controller/heap.py)
    times: list[float] = []
    cpu: list[float] = []
    digests: dict[int, str] = {}
    findings = 0
    for i, (kind, key, record) in enumerate(events):
        started, started_cpu = time.perf_counter(), time.process_time()
        ev.apply(kind, key, record)
        if which == "incremental" or i % full_every == 0:
            a = ev.assess(START + 0.1 * (i + 1))
            if which == "incremental":
                keep()  # as gpulabel monitor does after an ordinary evaluation (controller/heap.py)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
            if i % full_every == 0 or (which == "incremental" and digest_all):
                digests[i] = _digest(a)  # outside the clock
                findings = len(a.findings)
    if traced:
        kept, peak = tracemalloc.get_traced_memory()
        return {"kept_mb": kept / 2**20, "traced_peak_mb": peak / 2**20, "events": len(events)}
    return {
        "list_seconds": list_seconds,
        "times": times,
        "cpu": cpu,
        "floor_mb": floor,
        "peak_mb": _status("VmHWM:"),
        "end_mb": _status("VmRSS:"),
        "digests": digests,
        "findings": findings,
    }


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _tail(whats: Sequence[str], cpu: Sequence[float]) -> None:
    """The incremental evaluator's CPU per event by the stream's event kind, and which kinds make its tail."""
    by: dict[str, list[float]] = {}
    for what, ms in zip(whats, cpu, strict=True):
        by.setdefault(what, []).append(ms)
    print(f"incremental CPU per event by kind (max {max(cpu):.1f} ms):")
    for what, ms in sorted(by.items(), key=lambda kv: -statistics.median(kv[1])):
        print(f"  {what}: {len(ms)} events, p50 {statistics.median(ms):.1f} / max {max(ms):.1f} ms")
    p99 = _pct(cpu, 0.99)
    tail = Counter(what for what, ms in zip(whats, cpu, strict=True) if ms >= p99)
    print(f"events at or above p99 ({p99:.1f} ms): " + ", ".join(f"{w} {n}" for w, n in tail.most_common()))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.monitor_replay", description=__doc__.split("\n")[0])
    p.add_argument("--nodes", type=int, default=20000)
    p.add_argument("--events", type=int, default=1000)
    p.add_argument("--full-every", type=int, default=50, help="FullEvaluator assesses at every N-th event")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--traced", type=int, default=100, help="events in the tracemalloc runs (0: none)")
    p.add_argument("--worker", nargs=3, metavar=("EVALUATOR", "SNAPSHOT", "EVENTS"), help=argparse.SUPPRESS)
    p.add_argument("--worker-traced", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--digest-all", action="store_true", help="the incremental worker's digest at every event")
    args = p.parse_args(argv)
    if args.worker:
        which, snapshot, events_file = args.worker
        digest_all = args.digest_all
        print(json.dumps(worker(which, snapshot, events_file, args.full_every, args.worker_traced, digest_all)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        snapshot, events_file = Path(tmp) / "synth.json", Path(tmp) / "events.json"
        subprocess.run(
            [sys.executable, "-m", "bench.synth", "--nodes", str(args.nodes), "--out", str(snapshot)],
            check=True,
            stderr=subprocess.DEVNULL,
        )
        objects = json.loads(snapshot.read_text())["items"]
        replayed = stream(objects, args.events, args.seed)
        events_file.write_text(json.dumps(replayed))
        whats = [str(e["what"]) for e in replayed]
        del replayed
        pods = sum(o["kind"] == "Pod" for o in objects)
        del objects
        results: dict[str, JSON] = {}
        measured: dict[str, Measured] = {}
        traced: dict[str, JSON] = {}
        for which in ("incremental", "full"):
            for runs, n in ((results, 0), (traced, args.traced)):
                if runs is traced and not n:
                    continue
                # the full evaluator's traced run: the LIST and two of its assessments
                n = n if which == "incremental" else min(n, args.full_every + 1)
                m = measure_module(
                    "bench.monitor_replay",
                    *("--full-every", str(args.full_every), "--worker-traced", str(n)),
                    *("--worker", which, str(snapshot), str(events_file)),
                )
                if m.code != 0:
                    sys.stderr.write(m.stderr.decode())
                    return 2
                runs[which] = json.loads(m.stdout)
                if runs is results:
                    measured[which] = m
    inc, full = results["incremental"], results["full"]
    agree = [i for i in full["digests"] if inc["digests"].get(i) != full["digests"][i]]
    print(f"{args.nodes} nodes, {pods} pods, {args.events} events (seed {args.seed}); {full['findings']} findings")
    print(
        "| evaluator | LIST s | per event wall p50 / p99 / max ms | CPU p50 / p99 ms | events timed "
        "| RSS after records MB | peak MB |"
    )
    print("|---|---|---|---|---|---|---|")
    for which, r in results.items():
        t, c = [x * 1000 for x in r["times"]], [x * 1000 for x in r["cpu"]]
        print(
            f"| {which} | {r['list_seconds']:.2f} | {statistics.median(t):.1f} / {_pct(t, 0.99):.1f} / "
            f"{max(t):.1f} | {statistics.median(c):.1f} / {_pct(c, 0.99):.1f} | {len(t)} | {r['floor_mb']:.0f} "
            f"| {r['peak_mb']:.0f} |"
        )
    ratio50 = statistics.median(full["cpu"]) / statistics.median(inc["cpu"])
    ratio99 = _pct(full["cpu"], 0.99) / _pct(inc["cpu"], 0.99)
    extra_inc = inc["peak_mb"] - inc["floor_mb"]
    extra_full = full["peak_mb"] - full["floor_mb"]
    print(f"full / incremental per event (CPU): p50 {ratio50:.1f}x, p99 {ratio99:.1f}x")
    print(f"peak over the records: incremental {extra_inc:.0f} MB, full {extra_full:.0f} MB")
    for which, r in traced.items():
        print(
            f"tracemalloc, {which} (LIST + {r['events']} events): kept {r['kept_mb']:.0f} MB beyond the records, "
            f"peak {r['traced_peak_mb']:.0f} MB"
        )
    _tail(whats, [x * 1000 for x in inc["cpu"]])
    print(f"agreement at {len(full['digests'])} events: {'all equal' if not agree else f'DIFFER at {agree}'}")
    return 1 if agree else 0


if __name__ == "__main__":
    sys.exit(main())
