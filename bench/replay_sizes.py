"""The monitor's CPU per event at two cluster sizes, in lockstep: the ratio of their p99s on a noisy machine.

Run: ``.venv/bin/python -m bench.replay_sizes --nodes 5000 --nodes 20000 --events 1000``.

``bench/monitor_replay.py`` measures one size per run; this machine's speed moves by a third within minutes,
so two sizes measured minutes apart compare the machine as much as the evaluator. Here each size's
incremental evaluator runs in a worker process of its own (its cluster from ``bench/synth.py``, its stream
from ``monitor_replay.stream``, the LIST and ``controller.heap.settle`` as the monitor does them), and the
workers take the events in turn: event *i* at the first size, then event *i* at the second, each worker
waiting on a pipe while the other runs. A slow minute slows both. Printed: per size CPU per event p50 / p99 /
max, the p99 of the larger over the smaller's, per event kind the p50 at each size and their ratio, and each
worker's resident set after the LIST and its peak (``VmHWM``: the LIST's decoding included).
Agreement with the full evaluator is ``monitor_replay``'s (its digests); this bench only times.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from bench.monitor_replay import START, _pct, _status, listed_records, stream


def worker(snapshot: str, events_file: str, commands: IO[str], answers: IO[str]) -> None:
    """One incremental evaluator over the LIST of ``snapshot``, then one event of ``events_file`` per ``go``
    line read from ``commands``, its CPU milliseconds written to ``answers``."""
    from gpulabel.app.checks import check_options
    from gpulabel.checks.engine.incremental import IncrementalEvaluator
    from gpulabel.controller.heap import settle
    from gpulabel.model.cluster import KIND

    listed = listed_records(snapshot)
    readers = {k: KIND[k].reader() for k in listed}
    events = [
        (e["kind"], (e["key"][0], e["key"][1]), None if e["object"] is None else readers[e["kind"]](e["object"], "ev"))
        for e in json.loads(Path(events_file).read_text())
    ]
    ev = IncrementalEvaluator(check_options())
    for kind, records in listed.items():
        ev.reset(kind, records)
    ev.assess(START)
    del listed
    settle()
    answers.write(f"ready {_status('VmRSS:'):.0f}\n")
    answers.flush()
    for i, (kind, key, record) in enumerate(events):
        if (command := commands.readline().strip()) != "go":
            if command == "peak":
                answers.write(f"{_status('VmHWM:'):.0f}\n")
                answers.flush()
            return
        started = time.process_time()
        ev.apply(kind, key, record)
        ev.assess(START + 0.1 * (i + 1))
        answers.write(f"{(time.process_time() - started) * 1000:.4f}\n")
        answers.flush()
    if commands.readline().strip() == "peak":
        answers.write(f"{_status('VmHWM:'):.0f}\n")
        answers.flush()


def _prepare(nodes: int, events: int, seed: int, tmp: Path) -> tuple[Path, Path, list[str]]:
    """The snapshot of ``nodes`` nodes and its stream, written under ``tmp`` by a process of their own (the
    snapshot's objects, ~4 GB at 130,000 nodes, go back with it), and each event's kind."""
    snapshot, events_file = tmp / f"synth-{nodes}.json", tmp / f"events-{nodes}.json"
    subprocess.run(
        [sys.executable, "-m", "bench.synth", "--nodes", str(nodes), "--out", str(snapshot)],
        check=True,
        stderr=subprocess.DEVNULL,
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.replay_sizes",
            "--stream",
            str(snapshot),
            str(events_file),
            str(events),
            str(seed),
        ],
        check=True,
    )
    return snapshot, events_file, [str(e["what"]) for e in json.loads(events_file.read_text())]


def _stream(snapshot: str, events_file: str, events: int, seed: int) -> None:
    import orjson

    replayed = stream(orjson.loads(Path(snapshot).read_bytes())["items"], events, seed)
    Path(events_file).write_text(json.dumps(replayed))


def _start(snapshot: Path, events_file: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.replay_sizes", "--worker", str(snapshot), str(events_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    ready = proc.stdout.readline().split()
    if not ready or ready[0] != "ready":
        raise SystemExit(f"worker for {snapshot.name} did not start")
    proc.floor_mb = float(ready[1])  # type: ignore[attr-defined]
    return proc


def _peak(proc: subprocess.Popen[str]) -> float:
    """The worker's peak resident set (``VmHWM``, MB), asked after its last event."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("peak\n")
    proc.stdin.flush()
    return float(proc.stdout.readline())


def _report(sizes: Sequence[int], cpu: list[list[float]], whats: Sequence[Sequence[str]]) -> None:
    print("| nodes | CPU p50 ms | CPU p99 ms | CPU max ms |")
    print("|---|---|---|---|")
    for nodes, ms in zip(sizes, cpu, strict=True):
        print(f"| {nodes:,} | {statistics.median(ms):.2f} | {_pct(ms, 0.99):.2f} | {max(ms):.1f} |")
    small, large = cpu[0], cpu[-1]
    print(f"events timed: {len(small)} at {sizes[0]:,}, {len(large)} at {sizes[-1]:,}")
    print(f"p99 at {sizes[-1]:,} / p99 at {sizes[0]:,}: {_pct(large, 0.99) / _pct(small, 0.99):.2f}x")
    by: list[dict[str, list[float]]] = [{}, {}]
    for kinds, ms, into in zip(whats, cpu, by, strict=True):
        for what, t in zip(kinds, ms, strict=True):
            into.setdefault(what, []).append(t)
    print(f"per event kind, CPU p50 ms at {sizes[0]:,} and {sizes[-1]:,} nodes (events), and the ratio:")
    for what in sorted(by[1], key=lambda w: -statistics.median(by[1][w])):
        a, b = by[0].get(what), by[1][what]
        if a:
            x, y = statistics.median(a), statistics.median(b)
            print(f"  {what}: {x:.2f} ({len(a)}) / {y:.2f} ({len(b)}) ms, {y / x:.2f}x")
    for nodes, kinds, ms in zip(sizes, whats, cpu, strict=True):
        top = sorted(range(len(ms)), key=lambda i: -ms[i])[:12]
        print(f"slowest 12 at {nodes:,}: " + ", ".join(f"{kinds[i]} {ms[i]:.1f}" for i in top))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.replay_sizes", description=__doc__.split("\n")[0])
    p.add_argument("--nodes", type=int, action="append", help="a cluster size (twice: the smaller first)")
    p.add_argument("--events", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--worker", nargs=2, metavar=("SNAPSHOT", "EVENTS"), help=argparse.SUPPRESS)
    p.add_argument("--stream", nargs=4, metavar=("SNAPSHOT", "EVENTS", "N", "SEED"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args.worker[0], args.worker[1], sys.stdin, sys.stdout)
        return 0
    if args.stream:
        _stream(args.stream[0], args.stream[1], int(args.stream[2]), int(args.stream[3]))
        return 0
    sizes = sorted(args.nodes or [5000, 20000])
    if len(sizes) != 2:
        p.error("give --nodes twice")
    with tempfile.TemporaryDirectory() as tmp:
        prepared = [_prepare(n, args.events, args.seed, Path(tmp)) for n in sizes]
        whats = [kinds for _, _, kinds in prepared]
        procs = [_start(snapshot, events_file) for snapshot, events_file, _ in prepared]
        cpu: list[list[float]] = [[], []]
        try:
            for _ in range(args.events):
                for proc, ms in zip(procs, cpu, strict=True):
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write("go\n")
                    proc.stdin.flush()
                    ms.append(float(proc.stdout.readline()))
            memory = [(proc.floor_mb, _peak(proc)) for proc in procs]  # type: ignore[attr-defined]
        finally:
            for proc in procs:
                _close(proc)
    print(f"{args.events} events (seed {args.seed}), each size's incremental evaluator in turn, one event each")
    _report(sizes, cpu, whats)
    for nodes, (floor, peak) in zip(sizes, memory, strict=True):
        print(f"{nodes:,} nodes: RSS after the LIST {floor:.0f} MB, peak (VmHWM, the LIST's included) {peak:.0f} MB")
    return 0


def _close(proc: subprocess.Popen[Any]) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    proc.wait(timeout=60)


if __name__ == "__main__":
    sys.exit(main())
