"""Where an event's CPU goes: the monitor's evaluator replayed, each part of ``assess`` timed, per event kind.

Run: ``.venv/bin/python -m bench.replay_parts --dir DIR --nodes 20000 --nodes 65000``, ``DIR`` holding what
``bench.replay_sizes --dir DIR`` prepared for those sizes (made here if missing: the same files). One size at a
time, in a process of its own: the LIST read as ``replay_sizes`` reads it, a ``controller.heap.Heap``'s ``settle``, then
the stream, event by event, its ``keep`` after each (as the monitor does). Around each part a
``process_time`` clock (the wrapper costs about a microsecond a call: the parts' sum is a little over the
event). The parts:

- ``check:NAME``: each check's keeper (``IncrementalEvaluator._part``), what it keeps and its result;
- within ``check:pending``: ``pending:retell`` (the pieces of a row's pods told again), ``pending:cells`` (the
  rows' cells of the nodes that changed, the kept index), ``pending:judge`` (pods judged again, new rows
  included), of which ``row:place`` and ``row:fill`` (a new spec's verdict on every node, and its row);
- ``judged`` (the judgment over every check's result: regrouping, the pods' causes), ``state`` (the
  ClusterState of the event), ``apply`` (the event into the records and the keepers' marks);
- ``gc:N``: the cyclic collector's collections of generation N (a ``gc.callbacks`` clock), inside whichever
  part set them off (counted in it too).

Printed per size and event kind: the events' p50 and max, and each part's p50 and max over those events, the
largest first. This bench gives no ratio: it says which part a ratio of ``replay_sizes`` comes from.
"""

from __future__ import annotations

import argparse
import collections
import functools
import gc
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.replay_sizes import START, _events, _pages_of, _prepare, first_picture, paged_records

ROOT = Path(__file__).resolve().parent.parent

Clock = collections.Counter[str]


def _timed(owner: Any, name: str, label: Callable[..., str] | str, clock: Clock) -> None:
    """``owner.name`` wrapped: its CPU time added to ``clock[label]`` (a callable: the label from its arguments)."""
    inner = getattr(owner, name)

    @functools.wraps(inner)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            clock[label(*args) if callable(label) else label] += time.process_time() - started

    setattr(owner, name, timed)


def _collections(clock: Clock) -> Callable[[str, dict[str, Any]], None]:
    """A ``gc.callbacks`` entry adding each collection's CPU time to ``clock["gc:<generation>"]``."""
    started = [0.0]

    def collection(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.process_time()
        else:
            clock[f"gc:{info['generation']}"] += time.process_time() - started[0]

    return collection


def _instrument(clock: Clock) -> None:
    from gpulabel.checks.engine import judging
    from gpulabel.checks.engine.incremental import evaluator
    from gpulabel.checks.pending import check as pending
    from gpulabel.checks.pending import specrows

    _timed(evaluator.IncrementalEvaluator, "_part", lambda _self, c, *_: f"check:{c.name}", clock)
    _timed(evaluator.IncrementalEvaluator, "_state", "state", clock)
    _timed(evaluator.IncrementalEvaluator, "apply", "apply", clock)
    _timed(judging.KeptJudgment, "judged", "judged", clock)
    _timed(pending._Pieces, "_retell", "pending:retell", clock)
    _timed(pending._Pieces, "_cells", "pending:cells", clock)
    _timed(pending._Pieces, "_judge", "pending:judge", clock)
    _timed(specrows, "place", "row:place", clock)
    _timed(specrows.SpecRow, "fill", "row:fill", clock)


def worker(snapshot: str, events_file: str) -> None:
    """One size: per event, its kind, CPU ms and each part's (JSON lines on stdout)."""
    from gpulabel.controller.heap import Heap

    clock: Clock = collections.Counter()
    listed = paged_records(_pages_of(snapshot), snapshot)
    what = [e["what"] for e in json.loads(Path(events_file).read_text())]
    events = _events(events_file)
    ev = first_picture(listed)
    del listed
    heap = Heap()
    heap.settle()
    _instrument(clock)
    gc.callbacks.append(_collections(clock))
    for i, ((kind, key, record), name) in enumerate(zip(events, what, strict=True)):
        clock.clear()
        started = time.process_time()
        ev.apply(kind, key, record)
        done = ev.assess(START + 0.1 * (i + 1))
        heap.keep()  # as the monitor does (controller/heap.py): ``gc:N`` is then what an event's own objects cost
        ms = (time.process_time() - started) * 1000
        del done
        parts = {k: round(v * 1000, 4) for k, v in clock.items()}
        print(json.dumps({"what": name, "ms": round(ms, 4), "parts": parts}), flush=True)


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(nodes: int, rows: list[dict[str, Any]], kinds: Sequence[str]) -> list[str]:
    """The lines for one size: per event kind (those of ``kinds``; none given: every kind, slowest first)."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["what"], []).append(r)
    order = list(kinds) or sorted(by, key=lambda k: -max(r["ms"] for r in by[k]))
    out = [f"## {nodes:,} nodes: {len(rows)} events"]
    for kind in order:
        got = by.get(kind, [])
        if not got:
            out.append(f"{kind}: no event")
            continue
        ms = [r["ms"] for r in got]
        out.append(f"{kind} ({len(got)} events): p50 {_pct(ms, 0.5):.2f} ms, max {max(ms):.2f} ms; parts p50 / max:")
        labels = {k for r in got for k in r["parts"]}
        total = {k: sum(r["parts"].get(k, 0.0) for r in got) for k in labels}
        for label in sorted(labels, key=lambda k: -total[k]):
            each = [r["parts"].get(label, 0.0) for r in got]
            if max(each) >= 0.05:
                out.append(f"  {label:24} {_pct(each, 0.5):7.2f} {max(each):7.2f}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.replay_parts", description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, action="append", help="a cluster size (repeat)")
    p.add_argument("--events", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", type=Path, required=True, help="the clusters and streams of bench.replay_sizes --dir")
    p.add_argument("--kind", action="append", default=[], help="an event kind to show (repeat; default: all)")
    args = p.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    for nodes in args.nodes or [20000]:
        snapshot, events_file, _ = _prepare(nodes, args.events, args.seed, args.dir)
        code = f"from bench.replay_parts import worker; worker({str(snapshot)!r}, {str(events_file)!r})"
        run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
        if run.returncode:
            print(run.stderr[-2000:], file=sys.stderr)
            return 1
        rows = [json.loads(line) for line in run.stdout.splitlines()]
        print("\n".join(report(nodes, rows, args.kind)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
