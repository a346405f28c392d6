"""``pending`` live reads what a snapshot of the same moment holds: the Pending pods and the bound pods' use.

The defect this holds off: live, ``pending`` once LISTed only ``status.phase=Pending`` pods, so every node looked
empty to its resource fit (two 8-GPU nodes each running an 8-GPU pod "fitted" a third 8-GPU pod), while
``pending --snapshot`` and the scheduler said ``Insufficient nvidia.com/gpu``.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from gpulabel.app.checks import LIVE_PODS, run_pending
from gpulabel.app.session import Outcome, Session, Source
from gpulabel.checks.registry import BUILTIN
from tests.fakeapi import FakeApi, FakeClock, fake_client
from tests.unit.pending_objects import node, pod

JSON = dict[str, object]


def objects() -> list[JSON]:
    """Two 8-GPU nodes each running an 8-GPU pod, a Pending pod asking for 8, a finished pod that held 8 once."""
    done = pod("done", 8, "gpu-a")
    done["status"] = {"phase": "Succeeded"}
    return [
        node("gpu-a", "8", {}),
        node("gpu-b", "8", {}),
        pod("run-a", 8, "gpu-a"),
        pod("run-b", 8, "gpu-b"),
        pod("want", 8),
        done,
    ]


def live(tmp_path: Path, items: list[JSON]) -> tuple[Outcome, FakeApi]:
    api = FakeApi()
    for obj in items:
        if obj["kind"] == "Node":
            api.nodes[str(obj["metadata"]["name"])] = obj  # type: ignore[index]
        else:
            api.put(obj)
    session = Session(Source(kubeconfig="unused"))
    session._client = fake_client(tmp_path, api, FakeClock())  # the session's API client is the fake at the wire
    return run_pending(session, BUILTIN.options()), api


def offline(tmp_path: Path, items: list[JSON]) -> Outcome:
    path = tmp_path / "snapshot.json"
    path.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return run_pending(Session(Source(snapshots=(str(path),))), BUILTIN.options())


def test_live_pending_counts_what_running_pods_hold_as_a_snapshot_does(tmp_path: Path) -> None:
    items = objects()
    got, api = live(tmp_path, items)
    want = offline(tmp_path, items)
    assert got.code == want.code
    assert got.result == want.result
    lines = [f.line() for f in got.result.findings]
    assert lines == ["ml/want insufficient 2 node(s) nvidia.com/gpu"], lines
    # the server left out only the terminal pods: still one paged LIST of pods, never one per node
    pods = api.queries("GET", "/api/v1/pods")
    assert [q.get("fieldSelector") for q in pods] == [LIVE_PODS]


def test_a_finished_pod_holds_nothing_live_or_in_a_snapshot(tmp_path: Path) -> None:
    items = objects()
    items[3]["status"] = {"phase": "Failed"}  # run-b failed: gpu-b is free again
    got, _ = live(tmp_path, items)
    assert got.result == offline(tmp_path, items).result
    assert [f.line() for f in got.result.findings] == [
        "ml/want insufficient 1 node(s) nvidia.com/gpu",
        "ml/want fits 1 node(s)",
    ]
