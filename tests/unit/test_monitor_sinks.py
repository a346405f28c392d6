"""What every sink shares: changes by finding identity, the node facts kept per record, the background writer."""

from __future__ import annotations

import dataclasses
import threading

from gpulabel.controller.sinks import Background, GpuNodes, changes, same_findings
from gpulabel.model.findings import Finding
from tests.unit.monitor_fixtures import CORDONED, NODES, PAUSED, PLUGIN_MISSING, assessment, node


def test_changes_by_identity_not_by_explanation() -> None:
    moved = dataclasses.replace(PLUGIN_MISSING, detail="a new explanation", count=3)
    got = changes([PLUGIN_MISSING, CORDONED], [moved, PAUSED])
    assert got.appeared == (PAUSED,)
    assert got.resolved == (CORDONED,)
    assert got.stayed == (moved,)  # as the current assessment has it
    first = changes(None, [PLUGIN_MISSING, PLUGIN_MISSING])
    assert first.appeared == (PLUGIN_MISSING,) and first.resolved == () and first.stayed == ()
    other_args = Finding("audit", "bad-format", node="gpu-a", key="k", args=("x",))
    assert changes([other_args], [dataclasses.replace(other_args, args=("y",))]).resolved == (other_args,)


def test_same_findings() -> None:
    a = assessment([PLUGIN_MISSING, CORDONED])
    assert not same_findings(None, a)
    assert same_findings(a, a)
    assert same_findings(a, assessment([dataclasses.replace(PLUGIN_MISSING), CORDONED]))
    assert not same_findings(a, assessment([PLUGIN_MISSING]))


def test_node_facts_are_kept_for_unchanged_records_only() -> None:
    facts = GpuNodes()
    first = facts.facts(NODES)
    assert {n: (f.gpu, f.nfd, f.gfd) for n, f in first.items()} == {
        "gpu-a": (True, True, True),
        "gpu-b": (True, True, False),
        "cpu-1": (False, False, False),
    }
    changed = (node("gpu-a", {}), *NODES[1:])
    assert not facts.facts(changed)["gpu-a"].gpu  # a new record of gpu-a: read again


def test_the_background_thread_works_for_every_wake_and_survives_a_failure() -> None:
    done: list[int] = []
    failures: list[Exception] = []
    gate = threading.Event()

    def work() -> None:
        gate.wait(5)
        done.append(len(done))
        if len(done) == 1:
            raise RuntimeError("a failed write")

    bg = Background("test", work, failures.append)
    bg.start()
    bg.wake()
    assert not bg.wait_idle(0.05)  # busy
    gate.set()
    assert bg.wait_idle(5)
    bg.wake()
    assert bg.wait_idle(5)
    bg.stop()
    assert done == [0, 1] and [str(e) for e in failures] == ["a failed write"]
