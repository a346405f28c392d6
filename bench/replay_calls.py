"""Python function calls per event, by the stream's event kind: the replay's work, whatever the machine's load.

    python -m bench.replay_calls --snapshot synth-20000.json [--events 400] [--per-kind 5]
    PYTHONPATH=/tmp/before/src python -m bench.replay_calls --snapshot synth-20000.json   # another tree

The snapshot is ``bench.synth``'s (``bench/replay_before_after.py`` keeps one per size under its work
directory); the stream is ``bench.monitor_replay.stream`` over it (seed 0). The incremental evaluator
takes the LIST, then every event in order; the first ``--per-kind`` events of each kind are applied and
assessed under cProfile, which counts every Python function call (builtins included; a comprehension's
steps are counted, a C loop's are not). CPU time on a shared machine moves with its load; these counts do
not, so two trees compare on a loaded machine too. Printed: per kind, the calls per event, and the
functions called more than a quarter of the nodes' number of times per event (what walks every node).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
from collections.abc import Sequence
from pathlib import Path

from bench.monitor_replay import START, listed_records, stream


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.replay_calls", description=__doc__.split("\n")[0])
    p.add_argument("--snapshot", type=Path, required=True)
    p.add_argument("--events", type=int, default=400)
    p.add_argument("--per-kind", type=int, default=5)
    args = p.parse_args(argv)
    from gpulabel.app.checks import check_options
    from gpulabel.checks.engine.incremental import IncrementalEvaluator
    from gpulabel.model.cluster import KIND

    objects = json.loads(args.snapshot.read_text())["items"]
    events = stream(objects, args.events, 0)
    del objects
    listed = listed_records(str(args.snapshot))
    nodes = len(listed["Node"])
    readers = {k: KIND[k].reader() for k in listed}
    ev = IncrementalEvaluator(check_options())
    for kind, records in listed.items():
        ev.reset(kind, records)
    ev.assess(START)
    del listed
    profiles: dict[str, tuple[cProfile.Profile, list[int]]] = {}
    for i, e in enumerate(events):
        record = None if e["object"] is None else readers[e["kind"]](e["object"], "ev")
        key = (e["key"][0], e["key"][1])
        prof, seen = profiles.setdefault(str(e["what"]), (cProfile.Profile(), [0]))
        counted = seen[0] < args.per_kind
        if counted:
            seen[0] += 1
            prof.enable()
        ev.apply(e["kind"], key, record)
        ev.assess(START + 0.1 * (i + 1))
        if counted:
            prof.disable()
    print(f"{nodes} nodes, {len(events)} events; calls per event (the first {args.per_kind} of each kind)")
    for what, (prof, seen) in sorted(profiles.items()):
        stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
        n = seen[0]
        print(f"{what}: {sum(v[1] for v in stats.values()) / n:,.0f} calls per event ({n} events)")
        for (path, line, name), v in sorted(stats.items(), key=lambda kv: -kv[1][0]):
            if v[0] / n <= nodes / 4:
                break
            print(f"    {v[0] / n:>9,.0f}  {Path(path).name}:{line} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
