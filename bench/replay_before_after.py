"""The monitor replay before and after, interleaved: one snapshot and stream, two source trees, one oracle.

    python -m bench.replay_before_after --rev 8040494 --nodes 5000 --nodes 20000 [--full-every 1]

The ``before`` tree is ``git archive REV src`` in a work directory; ``after`` is this checkout. Each size
gets one ``bench.synth`` snapshot and one stream (``bench.monitor_replay.stream``), written once under
``--work`` and reused. Per size the incremental evaluator runs in a process of its own from each tree
(the worker is this checkout's ``bench.monitor_replay``; only ``gpulabel`` comes from the tree), before
then after, so the load of the shared machine hits both alike; its digest is taken at every event. The
full evaluator (the oracle) runs once, from this checkout (``--oracle-tree before``: from the ``before``
tree, so the oracle is not the code under test), at every ``--full-every``-th event; its digests
are kept in the work directory, so a second invocation only reruns the incremental sides. Printed: per
size and tree the CPU per event p50 / p99 / max, the peak RSS (``VmHWM`` after the records are built),
how many of the oracle's digests each side equals, and the load average around each run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from bench.monitor_replay import _pct, stream
from bench.synth import write_file

ROOT = Path(__file__).resolve().parent.parent


def _prepare(work: Path, nodes: int, events: int, seed: int) -> tuple[Path, Path, list[str]]:
    snapshot, events_file = work / f"synth-{nodes}.json", work / f"events-{nodes}-{events}-{seed}.json"
    write_file(snapshot, nodes)
    if not events_file.exists():
        objects = json.loads(snapshot.read_text())["items"]
        events_file.write_text(json.dumps(stream(objects, events, seed)))
    whats = [str(e["what"]) for e in json.loads(events_file.read_text())]
    return snapshot, events_file, whats


def _worker(src: Path, which: str, snapshot: Path, events_file: Path, full_every: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    args = ["--full-every", str(full_every), "--worker", which, str(snapshot), str(events_file)]
    args += ["--digest-all"] if full_every == 1 else []  # else at the oracle's events only (a digest costs)
    load = os.getloadavg()[0]
    done = subprocess.run(
        [sys.executable, "-m", "bench.monitor_replay", *args], capture_output=True, check=False, cwd=ROOT, env=env
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr.decode())
        raise SystemExit(2)
    out: dict[str, Any] = json.loads(done.stdout)
    out["load"] = (load, os.getloadavg()[0])
    return out


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m bench.replay_before_after", description=__doc__.split("\n")[0])
    p.add_argument("--rev", required=True, help="the before tree's revision")
    p.add_argument("--nodes", type=int, action="append")
    p.add_argument("--events", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--full-every", type=int, default=1, help="the oracle assesses at every N-th event")
    p.add_argument("--work", type=Path, default=Path("/tmp/replay-before-after"))
    p.add_argument(
        "--only", choices=("before", "after", "oracle"), action="append", help="only these (oracle: the full run)"
    )
    p.add_argument("--reuse", action="store_true", help="take the runs kept in the work directory, run none")
    p.add_argument(
        "--oracle-tree",
        choices=("after", "before"),
        default="after",
        help="the tree whose full evaluator is the oracle (before: the oracle is not the code under test)",
    )
    args = p.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    before = args.work / f"tree-{args.rev}"
    if not before.exists():
        before.mkdir()
        archive = subprocess.run(["git", "archive", args.rev, "src"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive.stdout, check=True)
    sides = {"before": before / "src", "after": ROOT / "src"}
    print("| nodes | tree | CPU p50 ms | CPU p99 ms | CPU max ms | peak RSS MB | digests equal | load |")
    print("|---|---|---|---|---|---|---|---|")
    for nodes in args.nodes or [5000]:
        snapshot, events_file, whats = _prepare(args.work, nodes, args.events, args.seed)
        tree = "" if args.oracle_tree == "after" else f"-{args.rev}"
        oracle_file = args.work / f"oracle-{nodes}-{args.events}-{args.seed}-{args.full_every}{tree}.json"
        runs: dict[str, dict[str, Any]] = {}
        for side, src in sides.items():  # the timed runs first, the oracle (the longest) after them
            kept = args.work / f"run-{nodes}-{args.events}-{args.seed}-{side}.json"
            if args.reuse and kept.exists():
                runs[side] = json.loads(kept.read_text())
            elif not args.only or side in args.only:
                runs[side] = _worker(src, "incremental", snapshot, events_file, args.full_every)
                kept.write_text(json.dumps(runs[side]))
        if not oracle_file.exists() and not args.reuse and (not args.only or "oracle" in args.only):
            full = _worker(sides[args.oracle_tree], "full", snapshot, events_file, args.full_every)
            oracle_file.write_text(json.dumps({str(k): v for k, v in full["digests"].items()}))
        oracle = {int(k): v for k, v in json.loads(oracle_file.read_text()).items()} if oracle_file.exists() else {}
        for side, r in runs.items():
            cpu = [x * 1000 for x in r["cpu"]]
            digests = {int(k): v for k, v in r["digests"].items()}
            equal = sum(digests.get(i) == d for i, d in oracle.items())
            print(
                f"| {nodes:,} | {side} | {statistics.median(cpu):.1f} | {_pct(cpu, 0.99):.1f} | {max(cpu):.1f} "
                f"| {r['peak_mb']:.0f} | {equal} / {len(oracle)} | {r['load'][0]:.1f}-{r['load'][1]:.1f} |",
                flush=True,
            )
            by: dict[str, list[float]] = {}
            for what, ms in zip(whats, cpu, strict=True):
                by.setdefault(what, []).append(ms)
            p99 = _pct(cpu, 0.99)
            tail = Counter(w for w, ms in zip(whats, cpu, strict=True) if ms >= p99)
            kinds = ", ".join(
                f"{w} {statistics.median(v):.0f}/{max(v):.0f}"
                for w, v in sorted(by.items(), key=lambda kv: -statistics.median(kv[1]))
            )
            print(f"<!-- {nodes} {side}: p50/max ms by kind: {kinds}; at or above p99: {dict(tail)} -->", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
