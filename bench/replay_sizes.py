"""The monitor's CPU per event at two cluster sizes, in lockstep: the ratio of their p99s on a noisy machine.

Run: ``.venv/bin/python -m bench.replay_sizes --nodes 5000 --nodes 20000 --events 1000``; add
``--full-every 100`` for digests against the full evaluator, ``--dir DIR`` to keep (and reuse) the clusters
and streams, ``--tree before=OTHER/src,whole --tree after=src`` for two trees' evaluators side by side.

``bench/monitor_replay.py`` measures one size per run; this machine's speed moves by a third within minutes,
so two sizes measured minutes apart compare the machine as much as the evaluator. Here each size's
incremental evaluator runs in a worker process of its own (its cluster from ``bench/synth.py``, its stream
from ``monitor_replay.stream``), and the workers take the events in turn: event *i* at the first size, then
event *i* at the second, each worker waiting on a pipe while the other runs. A slow minute slows both. With
several ``--tree`` (a ``src`` directory each), every tree has a worker per size, all in the same turn.

The LIST is read as the monitor reads it (``Informer.list``: pages of ``DEFAULT_PAGE_SIZE`` objects, each
page decoded and its objects read by the kind's reader as it arrives, only one page's JSON alive at a time),
from a file of pages written with the stream; then ``reset`` of every kind, the first ``assess`` and
``settle``, and after each event's ``assess`` ``keep`` (on the clock), of a ``controller.heap.Heap`` as
``gpulabel monitor`` calls them. A tree marked ``,whole`` reads the snapshot file whole instead
(``monitor_replay.listed_records``: what this bench did before the pages, a peak of the file's decoding).

Printed: per tree and size CPU per event p50 / p99 / max, the p99 of the larger over the smaller's, per
event kind the p50 at each size and their ratio, and each worker's resident set after the LIST, its peak by
then (``VmHWM``: the LIST's decoding included) and at the end. With ``--full-every K``, once the timing is
done, a FullEvaluator worker per size (this process's tree, the same pages) replays the same stream and
assesses at every K-th event; each incremental worker's digest at those events (taken outside its clock)
must equal it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from bench.monitor_replay import START, _digest, _pct, _status, heap_calls, listed_records, stream
from bench.synth import write_file

ROOT = Path(__file__).resolve().parent.parent
Records = dict[str, list[tuple[tuple[str, str], Any]]]


def paged_records(pages: str, where: str) -> Records:
    """The records of ``pages`` (one JSON line per LIST page: ``{"kind", "items"}``) as ``Informer.list``
    makes them: one reader per kind for the whole LIST, each page's objects read as it is decoded."""
    import orjson

    from gpulabel.model.cluster import KIND

    readers: dict[str, Any] = {}
    out: Records = {}
    with open(pages, "rb") as fh:
        for line in fh:
            page = orjson.loads(line)
            kind = page["kind"]
            read = readers.get(kind) or readers.setdefault(kind, KIND[kind].reader())
            into = out.setdefault(kind, [])
            for item in page["items"]:
                meta = item.get("metadata") or {}
                key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
                into.append((key, read(item, f"{where} {kind}")))
            del page, line
    return out


def _events(events_file: str) -> list[tuple[str, tuple[str, str], Any]]:
    from gpulabel.model.cluster import KIND

    out, readers = [], {}
    for e in json.loads(Path(events_file).read_text()):
        read = readers.get(e["kind"]) or readers.setdefault(e["kind"], KIND[e["kind"]].reader())
        out.append((e["kind"], (e["key"][0], e["key"][1]), None if e["object"] is None else read(e["object"], "ev")))
    return out


def first_picture(listed: Records) -> Any:
    """An IncrementalEvaluator (of the tree imported) told every record of ``listed`` and assessed once, at START:
    the monitor's first picture."""
    from gpulabel.app.checks import check_options
    from gpulabel.checks.engine.incremental import IncrementalEvaluator

    ev = IncrementalEvaluator(check_options())
    for kind, records in listed.items():
        ev.reset(kind, records)
    ev.assess(START)
    return ev


def worker(snapshot: str, events_file: str, commands: IO[str], answers: IO[str], whole: bool = False) -> None:
    """One incremental evaluator over the LIST of ``snapshot`` (its pages file; ``whole``: the file itself,
    read whole), then one event of ``events_file`` per ``go`` line read from ``commands``, its CPU
    milliseconds written to ``answers`` (``go digest``: and the assessment's digest, outside the clock)."""
    settle, keep = heap_calls()

    listed = listed_records(snapshot) if whole else paged_records(_pages_of(snapshot), snapshot)
    events = _events(events_file)
    ev = first_picture(listed)
    del listed
    settle()
    answers.write(f"ready {_status('VmRSS:'):.0f} {_status('VmHWM:'):.0f}\n")
    answers.flush()
    for i, (kind, key, record) in enumerate(events):
        command = commands.readline().split()
        if not command or command[0] != "go":
            if command == ["peak"]:
                answers.write(f"{_status('VmHWM:'):.0f}\n")
                answers.flush()
            return
        started = time.process_time()
        ev.apply(kind, key, record)
        a = ev.assess(START + 0.1 * (i + 1))
        keep()  # as gpulabel monitor does after an ordinary evaluation (controller/heap.py), on the clock
        ms = (time.process_time() - started) * 1000
        answers.write(f"{ms:.4f} {_digest(a) if command[1:] == ['digest'] else '-'}\n")
        answers.flush()
        del a
    if commands.readline().strip() == "peak":
        answers.write(f"{_status('VmHWM:'):.0f}\n")
        answers.flush()


def full_worker(snapshot: str, events_file: str, every: int) -> None:
    """The FullEvaluator over the same pages and stream, assessed at every ``every``-th event: its digests
    (JSON on stdout)."""
    from gpulabel.app.checks import check_options
    from gpulabel.checks.engine.assessment import FullEvaluator

    listed = paged_records(_pages_of(snapshot), snapshot)
    ev = FullEvaluator(check_options())
    for kind, records in listed.items():
        ev.reset(kind, records)
    del listed
    digests: dict[int, str] = {}
    for i, (kind, key, record) in enumerate(_events(events_file)):
        ev.apply(kind, key, record)
        if i % every == 0:
            digests[i] = _digest(ev.assess(START + 0.1 * (i + 1)))
    print(json.dumps({"digests": digests, "peak": _status("VmHWM:")}))


def _pages_of(snapshot: str | Path) -> str:
    return str(snapshot).replace("synth-", "pages-").replace(".json", ".jsonl")


def _prepare(nodes: int, events: int, seed: int, tmp: Path) -> tuple[Path, Path, list[str]]:
    """The snapshot of ``nodes`` nodes, its LIST pages and its stream, written under ``tmp`` by processes of
    their own (the snapshot's objects, ~4 GB at 130,000 nodes, go back with them) unless there already, and
    each event's kind."""
    snapshot, events_file = tmp / f"synth-{nodes}.json", tmp / f"events-{nodes}-{events}-{seed}.json"
    write_file(snapshot, nodes)
    if not events_file.exists() or not Path(_pages_of(snapshot)).exists():
        stream_args = ["--stream", str(snapshot), str(events_file), str(events), str(seed)]
        subprocess.run([sys.executable, "-m", "bench.replay_sizes", *stream_args], check=True)
    return snapshot, events_file, [str(e["what"]) for e in json.loads(events_file.read_text())]


def _stream(snapshot: str, events_file: str, events: int, seed: int) -> None:
    """The stream after the snapshot, and the snapshot's LIST pages (``DEFAULT_PAGE_SIZE`` objects a page)."""
    import orjson

    from gpulabel.cluster.client import DEFAULT_PAGE_SIZE

    items = orjson.loads(Path(snapshot).read_bytes())["items"]
    by_kind: dict[str, list[Any]] = {}
    for item in items:
        by_kind.setdefault(item["kind"], []).append(item)
    with open(_pages_of(snapshot), "wb") as fh:
        for kind, objs in by_kind.items():
            for start in range(0, len(objs), DEFAULT_PAGE_SIZE):
                fh.write(orjson.dumps({"kind": kind, "items": objs[start : start + DEFAULT_PAGE_SIZE]}) + b"\n")
    del by_kind
    replayed = stream(items, events, seed)
    Path(events_file).write_text(json.dumps(replayed))


@dataclass
class Worker:
    """One tree's incremental evaluator at one size, in its process."""

    tree: str
    nodes: int
    proc: subprocess.Popen[str]
    floor_mb: float = 0.0
    listed_peak_mb: float = 0.0
    peak_mb: float = 0.0
    cpu: list[float] = field(default_factory=list)
    digests: dict[int, str] = field(default_factory=dict)


def _env(src: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(src).resolve()), str(ROOT)])}


def _start(tree: str, src: str, whole: bool, nodes: int, snapshot: Path, events_file: Path) -> Worker:
    args = [sys.executable, "-m", "bench.replay_sizes", "--worker", str(snapshot), str(events_file)]
    proc = subprocess.Popen(
        [*args, *(["--whole"] if whole else [])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(src),
    )
    assert proc.stdout is not None
    ready = proc.stdout.readline().split()
    if not ready or ready[0] != "ready":
        raise SystemExit(f"worker for {tree} at {snapshot.name} did not start")
    return Worker(tree, nodes, proc, float(ready[1]), float(ready[2]))


def _ask(w: Worker, line: str) -> str:
    assert w.proc.stdin is not None and w.proc.stdout is not None
    w.proc.stdin.write(line + "\n")
    w.proc.stdin.flush()
    return w.proc.stdout.readline()


def _trees(given: Sequence[str] | None) -> Iterator[tuple[str, str, bool]]:
    """``LABEL=SRC[,whole]`` each: the label, the ``src`` directory, whether the LIST is read whole."""
    for t in given or [f"this={ROOT / 'src'}"]:
        label, _, rest = t.partition("=")
        src, _, how = rest.partition(",")
        yield label, src, how == "whole"


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


def _compare(workers: Sequence[Worker], prepared: Sequence[tuple[Path, Path, list[str]]], every: int) -> bool:
    """Each size's FullEvaluator (this tree) over the same pages and stream: its digests against every worker's."""
    same = True
    for (snapshot, events_file, _), nodes in zip(prepared, sorted({w.nodes for w in workers}), strict=True):
        args = ["--full", str(snapshot), str(events_file), str(every)]
        done = subprocess.run(
            [sys.executable, "-m", "bench.replay_sizes", *args], check=True, capture_output=True, text=True
        )
        full = {int(i): d for i, d in json.loads(done.stdout)["digests"].items()}
        for w in (w for w in workers if w.nodes == nodes):
            differ = [i for i, d in full.items() if w.digests.get(i) != d]
            same = same and not differ
            told = "all equal" if not differ else f"DIFFER at {differ}"
            print(f"digests, {w.tree} at {nodes:,} nodes, against the full evaluator at {len(full)} events: {told}")
    return same


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.replay_sizes", description=__doc__.split("\n")[0])
    p.add_argument("--nodes", type=int, action="append", help="a cluster size (twice: the smaller first)")
    p.add_argument("--events", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", help="keep the clusters, pages and streams here (and reuse them); default: a temp dir")
    p.add_argument("--tree", action="append", metavar="LABEL=SRC[,whole]", help="a tree's evaluators (repeat)")
    p.add_argument("--full-every", type=int, default=0, help="digests against the full evaluator every K events")
    p.add_argument("--worker", nargs=2, metavar=("SNAPSHOT", "EVENTS"), help=argparse.SUPPRESS)
    p.add_argument("--whole", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--full", nargs=3, metavar=("SNAPSHOT", "EVENTS", "EVERY"), help=argparse.SUPPRESS)
    p.add_argument("--stream", nargs=4, metavar=("SNAPSHOT", "EVENTS", "N", "SEED"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args.worker[0], args.worker[1], sys.stdin, sys.stdout, whole=args.whole)
        return 0
    if args.full:
        full_worker(args.full[0], args.full[1], int(args.full[2]))
        return 0
    if args.stream:
        _stream(args.stream[0], args.stream[1], int(args.stream[2]), int(args.stream[3]))
        return 0
    sizes = sorted(args.nodes or [5000, 20000])
    if len(sizes) != 2:
        p.error("give --nodes twice")
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(args.dir or tmp)
        where.mkdir(parents=True, exist_ok=True)
        prepared = [_prepare(n, args.events, args.seed, where) for n in sizes]
        whats = [kinds for _, _, kinds in prepared]
        trees = list(_trees(args.tree))
        workers = [
            _start(label, src, whole, n, snapshot, events_file)
            for label, src, whole in trees
            for n, (snapshot, events_file, _) in zip(sizes, prepared, strict=True)
        ]
        print(f"{args.events} events (seed {args.seed}), each worker in turn, one event each; load {_load()}")
        try:
            for i in range(args.events):
                line = "go digest" if args.full_every and i % args.full_every == 0 else "go"
                for w in workers:
                    ms, digest = _ask(w, line).split()
                    w.cpu.append(float(ms))
                    if digest != "-":
                        w.digests[i] = digest
            for w in workers:
                w.peak_mb = float(_ask(w, "peak"))
        finally:
            for w in workers:
                _close(w.proc)
        print(f"load at the end of the timing: {_load()}")
        for label, src, whole in trees:
            mine = [w for w in workers if w.tree == label]
            print(f"\n## {label}: {src}{' (the LIST read whole)' if whole else ''}")
            _report(sizes, [w.cpu for w in mine], whats)
            for w in mine:
                print(
                    f"{w.nodes:,} nodes: RSS after the LIST {w.floor_mb:.0f} MB, peak by then (VmHWM, the LIST's "
                    f"decoding included) {w.listed_peak_mb:.0f} MB, at the end {w.peak_mb:.0f} MB"
                )
        if len(trees) > 1:
            first, last = trees[0][0], trees[-1][0]
            for n in sizes:
                a, b = (next(w for w in workers if w.tree == t and w.nodes == n) for t in (first, last))
                print(
                    f"{n:,} nodes, {last} / {first}: p50 {statistics.median(b.cpu) / statistics.median(a.cpu):.2f}x, "
                    f"p99 {_pct(b.cpu, 0.99) / _pct(a.cpu, 0.99):.2f}x, max {max(b.cpu) / max(a.cpu):.2f}x, "
                    f"peak {b.peak_mb / a.peak_mb:.2f}x"
                )
        same = _compare(workers, prepared, args.full_every) if args.full_every else True
        print(f"load at the end: {_load()}")
    return 0 if same else 1


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _close(proc: subprocess.Popen[Any]) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    proc.wait(timeout=60)


if __name__ == "__main__":
    sys.exit(main())
