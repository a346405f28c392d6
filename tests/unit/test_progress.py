"""The progress line shows on a terminal only (or when forced), after a delay, and erases itself; snapshot's own."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from pathlib import Path

import orjson
import pytest

from gpulabel.cluster.capture import capture
from gpulabel.cluster.client import KubeClient
from gpulabel.cluster.progress import Progress
from gpulabel.cluster.snapshot import iter_objects, load_snapshots
from gpulabel.model.cluster import ClusterState
from tests.objects import kubeconfig as kubeconfig_file

Response = tuple[int, bytes]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_drawn_when_stderr_is_not_a_terminal() -> None:
    out = io.StringIO()
    p = Progress("listing nodes", out, delay=0)
    p.update(10)
    p.done()
    assert out.getvalue() == ""


def test_a_terminal_sees_the_line_and_then_it_is_erased() -> None:
    out = Terminal()
    p = Progress("listing nodes", out, delay=0)
    p.update(3, 10)
    assert "listing nodes: 3/10" in out.getvalue()
    p.done()
    assert out.getvalue().endswith("\r")


def test_quick_work_draws_nothing_before_the_delay() -> None:
    out = Terminal()
    p = Progress("x", out, delay=60)
    p.update(1)
    p.done()
    assert out.getvalue() == ""


class Clock:
    """Monotonic time that moves only when told (a loaded machine cannot make 1,000 updates take 0.1 s)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_updates_are_rate_limited() -> None:
    out, clock = Terminal(), Clock()
    p = Progress("x", out, delay=0, clock=clock)
    for i in range(1000):
        p.update(i)
        clock.now += 0.00005  # 1,000 updates in 50 ms: the first drawn, the rest within its tenth of a second
    assert out.getvalue().count("\r") == 1
    clock.now += 0.11
    p.update(1000)
    assert out.getvalue().count("\r") == 2 and "x: 1000" in out.getvalue()


def test_forced_off_a_terminal_each_step_is_a_line_of_its_own_and_nothing_is_erased() -> None:
    out, clock = io.StringIO(), Clock()
    p = Progress("snapshot", out, delay=0, force=True, clock=clock)
    p.show("Node 2 object(s), 1 page(s)")
    clock.now += 0.9
    p.show("Node 4 object(s), 2 page(s)")  # within the second: not drawn
    p.show("Node 5 object(s), 3 page(s)", final=True)  # a step's last state always is
    p.done()
    assert [line.rsplit(" (", 1)[0] for line in out.getvalue().splitlines()] == [
        "snapshot: Node 2 object(s), 1 page(s)",
        "snapshot: Node 5 object(s), 3 page(s)",
    ]
    assert "\r" not in out.getvalue()


class PagedServer:
    """Answers LISTs page by page (``limit`` objects each, with continue tokens); no CRD or DRA group is served."""

    def __init__(self, counts: dict[str, int], limit: int) -> None:
        self.counts, self.limit = counts, limit

    def __call__(self, method: str, path: str, query: Iterable[tuple[str, str]] = (), **_: object) -> Response:
        if path.startswith("/apis/") and path.count("/") == 3:
            return 404, b"{}"  # discovery of a group: not served
        resource = path.rsplit("/", 1)[-1]
        start = int(dict(query).get("continue") or 0)
        total = self.counts.get(resource, 0)
        end = min(start + self.limit, total)
        items = [{"metadata": {"name": f"{resource}-{i}", "namespace": "default"}} for i in range(start, end)]
        token = str(end) if end < total else ""
        return 200, json.dumps({"items": items, "metadata": {"continue": token, "resourceVersion": "7"}}).encode()


def paged_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counts: dict[str, int]) -> KubeClient:
    """A client whose LISTs :class:`PagedServer` answers, two objects a page."""
    client = KubeClient(kubeconfig_file(tmp_path))
    monkeypatch.setattr(client, "request_raw", PagedServer(counts, limit=2))
    return client


def test_a_capture_draws_each_kinds_objects_and_pages_and_the_client_draws_nothing_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = paged_client(tmp_path, monkeypatch, {"nodes": 5, "pods": 2})
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)  # where the client's own line would go (not a terminal: none)
    out = io.StringIO()
    notes: list[str] = []
    doc = capture(client, notes.append, Progress("snapshot", out, delay=0, force=True))
    # 5 nodes, 2 pods, and the DaemonSets, the Warning Events, the autoscalers' Events (one LIST per reason) and
    # the status ConfigMap listed empty: an empty typed List says the kind was read
    assert len(doc["items"]) == 14 and doc["items"][-7:] == [
        {"apiVersion": "apps/v1", "kind": "DaemonSetList", "items": []},
        *[{"apiVersion": "v1", "kind": "EventList", "items": []}] * 5,
        {"apiVersion": "v1", "kind": "ConfigMapList", "items": []},
    ]
    kinds: set[str] = set()
    state = ClusterState.from_objects(list(iter_objects(doc, "capture", kinds)), "capture", kinds)
    assert state.kinds == {"Node", "Pod", "DaemonSet", "Event", "ConfigMap"} and not state.daemonsets
    path = tmp_path / "snapshot.json"
    path.write_bytes(orjson.dumps(doc))
    assert load_snapshots([str(path)]).kinds == state.kinds  # the file reader (one JSON List, streamed) too
    shown = [line.rsplit(" (", 1)[0] for line in out.getvalue().splitlines()]
    assert shown[0] == "snapshot: Node 2 object(s), 1 page(s); kind 1/9"
    assert "snapshot: Node 5 object(s), 3 page(s); kind 1/9" in shown
    assert shown[-8:] == [
        "snapshot: Pod 2 object(s), 1 page(s); kind 2/9",
        "snapshot: DaemonSet 0 object(s), 1 page(s); kind 3/9",
        "snapshot: Event 0 object(s), 1 page(s); kind 4/9",
        "snapshot: Event/Nominated 0 object(s), 1 page(s); kind 5/9",
        "snapshot: Event/FailedScheduling 0 object(s), 1 page(s); kind 6/9",
        "snapshot: Event/TriggeredScaleUp 0 object(s), 1 page(s); kind 7/9",
        "snapshot: Event/NotTriggerScaleUp 0 object(s), 1 page(s); kind 8/9",
        "snapshot: ConfigMap 0 object(s), 1 page(s); kind 9/9",
    ]
    assert err.getvalue() == ""
    assert notes[0].startswith(
        "5 Node, 2 Pod, 0 DaemonSet, 0 Event, 0 Event/Nominated, 0 Event/FailedScheduling, 0 Event/TriggeredScaleUp, "
        "0 Event/NotTriggerScaleUp, 0 ConfigMap; not served: ClusterPolicy"
    )


def test_a_kind_listed_empty_is_kept_so_check_on_the_snapshot_says_what_it_says_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpulabel.cli.main import main
    from gpulabel.cluster.snapshot import load_snapshots

    client = paged_client(tmp_path, monkeypatch, {"nodes": 2, "pods": 0})
    doc = capture(client)
    empty = [item for item in doc["items"] if item["kind"].endswith("List")]
    assert empty == [
        {"apiVersion": "v1", "kind": "PodList", "items": []},
        {"apiVersion": "apps/v1", "kind": "DaemonSetList", "items": []},
        *[{"apiVersion": "v1", "kind": "EventList", "items": []}] * 5,  # the Warnings, each autoscaler reason
        {"apiVersion": "v1", "kind": "ConfigMapList", "items": []},
    ]
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(doc))
    # the live load's kinds are the kinds listed: the snapshot's are the same, empty ones included
    assert load_snapshots([str(path)]).kinds == frozenset({"Node", "Pod", "DaemonSet", "Event", "ConfigMap"})
    out = io.StringIO()
    main(["check", "--snapshot", str(path)], out, io.StringIO())
    lines = out.getvalue().splitlines()
    assert not [line for line in lines if "no daemonsets" in line or "no pods" in line], lines
