"""What the monitor's sinks cost per publish, in-process, on a bench.synth cluster (no API server).

Run: ``.venv/bin/python -m bench.monitor_sinks_bench [--nodes 5000] [--repeat 20]``.

Three pictures of one synthetic cluster are judged as ``check`` judges them: ``base``; ``same``, the
checks run again after one node's record was read again (what a heartbeat does: equal findings,
new objects); ``changed``, one GPU node's ``nvidia.com/gpu.product`` removed (findings appear).
Each sink (metrics, the Event planner with a recording writer, the node condition with a recording
writer: nothing is written anywhere) is told ``base`` once, then alternately ``same``/``base`` (no
change) and ``changed``/``base`` (a change each time); the figures are the median CPU milliseconds of
one publish. Writes run on the sinks' background threads in the monitor and are not measured here.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from bench import synth
from gpulabel.checks.engine.assessment import Accepted, Assessment, judged
from gpulabel.checks.registry import BUILTIN, run_checks
from gpulabel.controller.condition import ConditionSink
from gpulabel.controller.events import EventPlanner, EventSpec
from gpulabel.controller.eventsink import EventSink
from gpulabel.controller.grace import NO_GRACE
from gpulabel.controller.monitor_metrics import MonitorMetrics
from gpulabel.model.cluster import ClusterState, node_from_json


class _Recorder:
    def write(self, spec: EventSpec) -> bool:
        return True

    def apply(self, node: str, body: Any) -> bool:
        return True


def _assess(state: ClusterState, at: float) -> Assessment:
    result, causes = judged(run_checks(state, BUILTIN.options()), state, Accepted())
    return Assessment(result, causes, state, at)


def _with_node(state: ClusterState, obj: dict[str, Any]) -> ClusterState:
    """``state`` with one node's record read again from ``obj``; every other record the same object
    (what the monitor's evaluator holds after one watch event)."""
    record = node_from_json(obj)
    return replace(state, nodes=tuple(record if n.name == record.name else n for n in state.nodes))


def _median_ms(publish: Callable[[Assessment], None], one: Assessment, other: Assessment, repeat: int) -> float:
    took = []
    for _ in range(repeat):
        for a in (one, other):
            started = time.process_time()
            publish(a)
            took.append(time.process_time() - started)
    return statistics.median(took) * 1000


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    objects = synth.objects(args.nodes)
    state = ClusterState.from_objects((("bench", o) for o in objects), "bench")
    victim = next(o for o in objects if o["kind"] == "Node" and "nvidia.com/gpu.product" in o["metadata"]["labels"])
    labels = {k: v for k, v in victim["metadata"]["labels"].items() if k != "nvidia.com/gpu.product"}
    edited = {**victim, "metadata": {**victim["metadata"], "labels": labels}}
    base = _assess(state, 1.0)
    same = _assess(_with_node(state, victim), 2.0)
    changed = _assess(_with_node(state, edited), 3.0)
    problems = sum(1 for f in base.findings if f.severity in ("error", "warning"))
    print(f"{args.nodes} nodes, {len(base.findings)} findings ({problems} error/warning), {len(base.causes)} causes")
    print(f"{'sink':<16}{'first ms':>10}{'no change ms':>14}{'a change ms':>13}")
    sinks: list[tuple[str, Callable[[], Any]]] = [
        ("metrics", lambda: MonitorMetrics()),
        ("events", lambda: EventSink(_Recorder(), EventPlanner(grace=NO_GRACE), background=False)),
        ("node condition", lambda: ConditionSink(_Recorder(), background=False)),
    ]
    for name, make in sinks:
        sink = make()
        started = time.process_time()
        sink.publish(base)
        first = (time.process_time() - started) * 1000
        steady = _median_ms(sink.publish, same, base, args.repeat)
        change = _median_ms(sink.publish, changed, base, args.repeat)
        print(f"{name:<16}{first:>10.1f}{steady:>14.1f}{change:>13.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
