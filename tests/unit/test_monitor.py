"""The monitor without a cluster: informers (resume, bookmarks, 410, give-up), batching, leadership, agreement.

Runs against :mod:`tests.fakeapi` (a real KubeClient answered from memory) as
tests/unit/test_controller.py does. The agreement tests compare the monitor's
findings after scripted event sequences with what ``check`` computes
(``cluster.live.load_cluster`` + ``judged(run_checks(...))``, ``app.checks.run_all``'s
path) on the fake server's state at the end. labcluster checks the same for
real (tests/cluster/test_monitor_cluster.py).
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from gpulabel.app.monitor import MonitorOptions, monitored_kinds
from gpulabel.checks.engine.assessment import Accepted, Assessment, FullEvaluator, ObjectKey, judged
from gpulabel.checks.engine.incremental.evaluator import IncrementalEvaluator
from gpulabel.checks.engine.verdict import identity
from gpulabel.checks.registry import BUILTIN, run_checks
from gpulabel.cluster.live import load_cluster, served_kinds
from gpulabel.cluster.retry import RetryPolicy
from gpulabel.cluster.snapshot import load_snapshots
from gpulabel.controller import heap
from gpulabel.controller.findings_out import FindingsDump, FindingsLog
from gpulabel.controller.informer import Bookmark, Change, Delta, Informer, Problem, Reset
from gpulabel.controller.lease import LeaseLock
from gpulabel.controller.monitor import WATCH_TIMEOUT, Monitor
from gpulabel.errors import InputError
from gpulabel.k8s.taints import Toleration
from gpulabel.model.cluster import Node, Pod
from tests.fakeapi import FakeApi, FakeClock, Watch, fake_client

FAST = RetryPolicy(budget=60.0, first_delay=0.001, max_delay=0.002, jitter=0.0)
REPO = Path(__file__).resolve().parents[2]
AT = 1.8e9


@pytest.fixture
def api() -> FakeApi:
    return FakeApi()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def node_watches(api: FakeApi) -> list[str]:
    return [q["resourceVersion"] for q in api.queries("GET", "/api/v1/nodes") if q.get("watch") == "true"]


def node_lists(api: FakeApi) -> int:
    return sum(1 for q in api.queries("GET", "/api/v1/nodes") if q.get("watch") != "true")


def run_informer(informer: Informer, until: Callable[[list[Delta]], bool]) -> list[Delta]:
    """Run ``informer`` on a thread until ``until(deltas)`` holds (10 s at most); the deltas it delivered."""
    got: list[Delta] = []
    informer.deliver = got.append
    thread = threading.Thread(target=informer.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not until(got) and time.monotonic() < deadline:
        time.sleep(0.002)
    informer.stop.set()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert until(got), got
    return got


def informer(api: FakeApi, clock: FakeClock, tmp_path: Path, kind: str = "Node", **kwargs: Any) -> Informer:
    client = fake_client(tmp_path, api, clock, FAST)
    return Informer(client, kind, lambda d: None, threading.Event(), clock=lambda: AT, **kwargs)


# -- the informer ------------------------------------------------------------------------------


def test_the_informer_lists_then_resumes_from_the_last_event_or_bookmark(
    tmp_path: Path, api: FakeApi, clock: FakeClock
) -> None:
    api.add_node("n1", {"a": "1"})
    listed = str(api.version)
    served: dict[str, str] = {}
    change = api.noted(served, "change", lambda: api.event("MODIFIED", "n1", {"a": "2"}))
    mark = api.noted(served, "mark", api.bookmark)
    # the stream ends after the event; then after a bookmark; then the connection drops; then it ends quietly
    api.watches = [Watch([change]), Watch([mark]), Watch(drop=True), Watch([])]
    got = run_informer(informer(api, clock, tmp_path), lambda got: len(node_watches(api)) >= 5)
    assert node_watches(api)[:5] == [listed, served["change"], served["mark"], served["mark"], served["mark"]]
    assert node_lists(api) == 1  # resumed every time: no relist
    ended = [d for d in got if isinstance(d, Bookmark) and d.ended]
    assert len(ended) >= 3  # each stream the server ended whole (not the dropped one) is a sign of life
    deltas = [d for d in got if d not in ended]
    reset, changed, bookmark, dropped = deltas[:4]
    assert isinstance(reset, Reset) and not reset.relist
    assert [(key, n.labels) for key, n in reset.records] == [(("", "n1"), {"a": "1"})]
    assert isinstance(changed, Change) and changed.key == ("", "n1")
    assert isinstance(changed.record, Node) and changed.record.labels == {"a": "2"}
    assert bookmark == Bookmark("Node", AT)
    assert isinstance(dropped, Problem) and "watch dropped, resuming" in dropped.text
    assert dropped.code == "unreachable"
    assert [d for d in deltas[4:] if not isinstance(d, Bookmark)] == []


def test_a_relist_period_relists_and_drops_what_the_retired_watch_still_reads(
    tmp_path: Path, api: FakeApi, clock: FakeClock
) -> None:
    api.add_node("n1", {"a": "1"})
    read = threading.Event()

    def late() -> dict[str, Any]:  # the period ends while this stream waits for its next event
        clock.advance(61.0)
        deadline = time.monotonic() + 10
        while node_lists(api) < 2 and time.monotonic() < deadline:  # meanwhile the informer retires this watch
            time.sleep(0.002)  # and relists (not a fixed 0.3 s: a loaded machine may take longer)
        read.set()
        return api.event("MODIFIED", "n1", {"a": "late"})

    api.watches = [Watch([late])]
    client = fake_client(tmp_path, api, clock, FAST)
    period = Informer(client, "Node", lambda d: None, threading.Event(), clock=clock, relist_seconds=60.0)
    deltas = run_informer(period, lambda got: read.is_set() and sum(isinstance(d, Reset) for d in got) >= 2)
    time.sleep(0.1)  # the retired watch hands its event on now, if it ever would
    resets = [d for d in deltas if isinstance(d, Reset)]
    assert [r.relist for r in resets[:2]] == [False, False]  # a scheduled relist, not a broken watch
    assert node_lists(api) >= 2
    assert not [d for d in deltas if isinstance(d, Change)], deltas  # read after its retirement: dropped


def test_a_quiet_watch_is_heard_from_each_time_the_server_ends_its_stream(
    tmp_path: Path, api: FakeApi, clock: FakeClock
) -> None:
    """A kind nothing changes in gets no bookmark from a real API server (its watch cache's resourceVersion
    does not move): the stream ending at its timeoutSeconds is the sign; a dropped connection is not."""
    api.add_node("n1")
    api.watches = [Watch([]), Watch(drop=True), Watch([])]
    got = run_informer(informer(api, clock, tmp_path, timeout_seconds=7), lambda got: len(node_watches(api)) >= 4)
    assert [q["timeoutSeconds"] for q in api.queries("GET", "/api/v1/nodes") if q.get("watch")][:3] == ["7"] * 3
    signs = [d for d in got if not isinstance(d, Reset)]
    assert signs[:3] == [Bookmark("Node", AT, ended=True), signs[1], Bookmark("Node", AT, ended=True)]
    assert isinstance(signs[1], Problem) and "watch dropped" in signs[1].text


@pytest.mark.parametrize(
    "expired",
    [Watch(status=410), Watch([{"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "gone"}}])],
    ids=["410 answer", "410 error event"],
)
def test_a_410_relists_and_watches_from_the_new_list(
    tmp_path: Path, api: FakeApi, clock: FakeClock, expired: Watch
) -> None:
    api.add_node("n1", {"a": "1"})
    first = str(api.version)

    def away() -> None:  # changed while the watch was expired: only the relist can see it
        api.event("MODIFIED", "n1", {"a": "changed-while-away"})

    api.watches = [Watch([lambda: (api.bookmark(), away())[0]]), expired]
    deltas = run_informer(informer(api, clock, tmp_path), lambda got: len(node_watches(api)) >= 3)
    resets = [d for d in deltas if isinstance(d, Reset)]
    assert [r.relist for r in resets] == [False, True]
    assert resets[1].records[0][1].labels == {"a": "changed-while-away"}
    versions = node_watches(api)
    # resumed from the bookmark, expired, relisted: the new watch starts from the relist's version
    assert versions[:3] == [first, str(int(first) + 1), str(int(first) + 2)]
    assert node_lists(api) == 2


def test_a_watch_that_cannot_reconnect_relists_after_three_failures(
    tmp_path: Path, api: FakeApi, clock: FakeClock
) -> None:
    api.add_node("n1")
    api.watches = [Watch(status=500), Watch(status=500), Watch(status=500)]
    deltas = run_informer(informer(api, clock, tmp_path), lambda got: node_lists(api) >= 2)
    problems = [d for d in deltas if isinstance(d, Problem)]
    assert [p.code for p in problems] == [500, 500, 500]
    assert [d.relist for d in deltas if isinstance(d, Reset)] == [False, True]


def test_pod_records_keep_the_scheduling_fields_only_and_lists_are_paged(
    tmp_path: Path, api: FakeApi, clock: FakeClock
) -> None:
    for i in range(1203):
        api.put(pod(f"p{i}", "n1"))
    path = "/api/v1/pods"

    def bigger() -> dict[str, Any]:
        return api.put(pod("p0", "n2"))

    api.kind_watches[path] = [Watch([bigger])]
    deltas = run_informer(informer(api, clock, tmp_path, "Pod"), lambda got: any(isinstance(d, Change) for d in got))
    lists = [q for q in api.queries("GET", path) if q.get("watch") != "true"]
    assert [q.get("continue", "") for q in lists] == ["", "500", "1000"]  # three pages of 500
    reset = deltas[0]
    assert isinstance(reset, Reset) and len(reset.records) == 1203
    change = next(d for d in deltas if isinstance(d, Change))
    assert change.key == ("ml", "p0")
    record = change.record
    assert isinstance(record, Pod) and record.node_name == "n2"
    # the scheduling fields compiled (containers, volumes and the rest dropped): the spec's content is its
    # tolerations alone, nodeName being the record's
    assert record.spec.key == b'\x00{"tolerations":[{"operator":"Exists"}]}'
    assert [str(t) for t in record.spec.requirements.tolerations] == [str(Toleration(operator="Exists"))]
    assert record.gpu_resources == ("nvidia.com/gpu",)


def test_an_unreadable_object_is_one_problem_and_the_last_record_stays(
    tmp_path: Path, api: FakeApi, clock: FakeClock
) -> None:
    api.add_node("n1", {"a": "1"})
    bad = orjson.loads(orjson.dumps(api.nodes["n1"]))
    bad["metadata"]["labels"] = {"a": 5}
    api.watches = [Watch([{"type": "MODIFIED", "object": bad}])]
    deltas = run_informer(informer(api, clock, tmp_path), lambda got: any(isinstance(d, Problem) for d in got))
    problem = next(d for d in deltas if isinstance(d, Problem))
    assert problem.text.startswith("MODIFIED /n1 unreadable: ") and "metadata.labels" in problem.text
    assert not any(isinstance(d, Change) for d in deltas)


def test_a_list_the_reader_refuses_is_retried_and_says_why(tmp_path: Path, api: FakeApi, clock: FakeClock) -> None:
    api.add_node("n1", {"a": "1"})
    api.nodes["n1"]["metadata"]["labels"] = {"a": 5}  # an object check would refuse too

    def mended(got: list[Delta]) -> bool:
        if any(isinstance(d, Problem) for d in got):
            api.nodes["n1"]["metadata"]["labels"] = {"a": "1"}
        return any(isinstance(d, Reset) for d in got)

    deltas = run_informer(informer(api, clock, tmp_path), mended)
    problem = deltas[0]
    assert isinstance(problem, Problem) and problem.text.startswith("LIST failed, retrying: ")
    assert "metadata.labels" in problem.text and problem.code is None  # not an API error
    reset = next(d for d in deltas if isinstance(d, Reset))
    assert [n.labels for _, n in reset.records] == [{"a": "1"}]  # the retried LIST, once the object was mended


def test_a_bug_in_an_informer_stops_the_monitor_with_its_traceback(
    tmp_path: Path, api: FakeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = fake_client(tmp_path, api, FakeClock(), FAST)
    m = Monitor(client, ("Node",), FullEvaluator(BUILTIN.options()), [])

    def broken(self: Informer) -> None:
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(Informer, "run", broken)
    with pytest.raises(ZeroDivisionError, match="planted"):
        m.run()
    assert m.stop.is_set()


# -- batching ---------------------------------------------------------------------------------


class CountingEvaluator(FullEvaluator):
    def __init__(self) -> None:
        super().__init__(BUILTIN.options())
        self.assessed = 0
        self.applied: list[tuple[str, ObjectKey]] = []

    def apply(self, kind: str, key: ObjectKey, record: Any | None) -> bool:
        self.applied.append((kind, key))
        return super().apply(kind, key, record)

    def assess(self, at: float) -> Assessment:
        self.assessed += 1
        return super().assess(at)


def test_events_arriving_within_the_batch_window_are_one_evaluation(tmp_path: Path, api: FakeApi) -> None:
    """The window is read on the monitor's monotonic clock, here one that moves only when the batch finds the
    queue empty: then a late delta arrives (time stands: within the window) or, with none left, a second passes."""
    client = fake_client(tmp_path, api, FakeClock(), FAST)
    now = [0.0]
    arrivals = [Change("Node", ("", "late"), None, AT)]

    def clock() -> float:
        if m.queue.empty():
            if arrivals:
                m.queue.put(arrivals.pop())
            else:
                now[0] += 1.0
        return now[0]

    m = Monitor(client, (), CountingEvaluator(), [], batch_seconds=0.05, monotonic=clock)
    for i in range(5):  # a burst: queued together
        m.queue.put(Change("Node", ("", f"n{i}"), None, AT))
    batch = m._batch(1.0)
    assert [d.key[1] for d in batch if isinstance(d, Change)] == ["n0", "n1", "n2", "n3", "n4", "late"]
    assert m._batch(0.0) == []
    # the window passes with nothing new: a delta after it is the next batch
    m.queue.put(Change("Node", ("", "a"), None, AT))
    first = m._batch(1.0)
    m.queue.put(Change("Node", ("", "b"), None, AT))
    assert (len(first), len(m._batch(1.0))) == (1, 1)


def run_monitor(m: Monitor, until: Callable[[], bool], timeout: float = 10) -> int:
    """Run the monitor on a thread until ``until()`` holds; stop it; its exit code."""
    codes: queue.Queue[int] = queue.Queue()
    thread = threading.Thread(target=lambda: codes.put(m.run()), daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    # held once is enough: asked again, a condition on the queue may not hold (a stream's end queued meanwhile)
    while not (held := until()) and time.monotonic() < deadline:
        time.sleep(0.005)
    m.stop.set()
    thread.join(timeout=5)
    assert held, "the condition never held"
    return codes.get(timeout=1)


class HeldClock:
    """A monotonic clock that moves 50 ms at each reading (a batch window closes after a few, however loaded the
    machine is) until :meth:`hold`; held, it stands still: the window stays open until :meth:`release`."""

    def __init__(self) -> None:
        self.now, self.held, self.lock = 0.0, False, threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            self.now += 0.0 if self.held else 0.05
            return self.now

    def hold(self) -> None:
        with self.lock:
            self.held = True

    def release(self) -> None:
        with self.lock:
            self.held = False


def queued_changes(m: Monitor) -> int:
    with m.queue.mutex:
        return sum(isinstance(d, Change) for d in m.queue.queue)


def test_the_first_evaluation_waits_for_every_kind_then_a_burst_costs_one(tmp_path: Path, api: FakeApi) -> None:
    """Pods are listed first (the Node LIST is answered after the Pods' first WATCH): the first picture still has
    both. Then 40 pod events in one stream, all queued before the next batch starts, whose window is held open on
    the monitor's clock until the batch has taken them all: one evaluation for the burst. Nothing here waits for
    the machine to be fast (this test failed under load when it did: a 200 ms window on the wall clock, and a
    scripted event that waited inside the fake server's lock while the Node LIST needed it)."""
    api.add_node("n1")
    api.put(pod("p1", "n1"))
    client = fake_client(tmp_path, api, FakeClock(), FAST)
    pods_watched = threading.Event()

    def pods_first(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        query = dict(args[0] if args else kwargs.get("query") or [])
        if path == "/api/v1/pods" and query.get("watch") == "true":
            pods_watched.set()
        elif path == "/api/v1/nodes" and query.get("watch") != "true":
            pods_watched.wait(10)
        return api.open(method, path, *args, **kwargs)

    client.open = pods_first  # type: ignore[method-assign]
    window = HeldClock()
    evaluator = CountingEvaluator()
    pictures: list[Assessment] = []
    queued = threading.Event()

    class Burst:
        def publish(self, assessment: Assessment) -> None:
            pictures.append(assessment)
            if len(pictures) > 1:
                return
            window.hold()  # the next batch's window stays open until the test lets it close
            with api.lock:
                burst = [lambda i=i: api.put(pod(f"b{i}", "n1"), "ADDED") for i in range(40)]
                api.kind_watches.setdefault("/api/v1/pods", []).append(Watch(burst))
            deadline = time.monotonic() + 10
            while queued_changes(m) < 40 and time.monotonic() < deadline:
                time.sleep(0.002)
            queued.set()

    m = Monitor(client, ("Node", "Pod"), evaluator, [Burst()], batch_seconds=0.2, monotonic=window)

    def burst_taken_then_assessed() -> bool:
        if queued.is_set() and not queued_changes(m):
            window.release()  # the batch has taken the whole burst: let its window close
        return evaluator.assessed >= 2

    run_monitor(m, burst_taken_then_assessed)
    first = pictures[0].state
    assert ([n.name for n in first.nodes], [p.name for p in first.pods]) == (["n1"], ["p1"])
    assert evaluator.assessed == 2  # the initial picture, then one for the burst
    assert len(evaluator.applied) == 40
    assert m.last is not None and len(m.last.state.pods) == 41


# -- leadership and stopping ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "make", [lambda: FullEvaluator(BUILTIN.options()), lambda: IncrementalEvaluator(BUILTIN.options())]
)
def test_both_evaluators_say_whether_an_event_changed_their_records(make: Callable[[], Any]) -> None:
    from dataclasses import replace

    from gpulabel.model.cluster import node_from_json

    evaluator = make()
    key = ("", "n1")
    record = node_from_json({"kind": "Node", "metadata": {"name": "n1", "labels": {"team": "a"}}}, "test")
    evaluator.reset("Node", [(key, record)])
    evaluator.assess(AT)
    again = node_from_json({"kind": "Node", "metadata": {"name": "n1", "labels": {"team": "a"}}}, "test")
    assert again is not record and not evaluator.apply("Node", key, again)  # equal: a heartbeat
    assert evaluator.apply("Node", key, replace(record, labels={"team": "b"}))
    assert evaluator.apply("Node", key, None)  # deleted
    assert not evaluator.apply("Node", key, None)  # deleted again: nothing was there
    assert evaluator.apply("Node", ("", "n2"), record)  # added


@pytest.mark.parametrize(("unchanged_seconds", "assessed"), [(60.0, 2), (0.0, 22)])
def test_a_heartbeat_that_changes_no_record_is_assessed_only_when_the_last_evaluation_is_old(
    tmp_path: Path, api: FakeApi, unchanged_seconds: float, assessed: int
) -> None:
    """20 status heartbeats (only lastHeartbeatTime moves: the record is the same) then a label change, one event
    per batch: with 60 s the heartbeats cost no evaluation (the first picture and the change: 2); with 0 s each
    one is assessed again (1 + 20 + 1)."""
    node = api.add_node("n1", {"team": "a"})
    node["status"] = {"conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-12-02T00:00:00Z"}]}
    client = fake_client(tmp_path, api, FakeClock(), FAST)
    evaluator = CountingEvaluator()
    m = Monitor(client, ("Node",), evaluator, [], batch_seconds=0.0, unchanged_seconds=unchanged_seconds)

    def event(i: int, team: str = "a") -> dict[str, Any]:
        deadline = time.monotonic() + 5
        while not m.evaluations and time.monotonic() < deadline:
            time.sleep(0.002)  # after the first picture
        obj = orjson.loads(orjson.dumps(node))
        obj["metadata"] |= {"labels": {"team": team}, "resourceVersion": str(1000 + i)}
        obj["status"]["conditions"][0]["lastHeartbeatTime"] = f"2026-12-02T00:00:{i:02d}Z"
        return {"type": "MODIFIED", "object": obj}

    beats: list[dict[str, Any] | Callable[[], dict[str, Any]]] = [lambda i=i: event(i) for i in range(20)]
    api.watches = [Watch([*beats, lambda: event(20, team="b")])]

    def changed() -> bool:
        return m.last is not None and m.last.state.nodes[0].labels.get("team") == "b" and m.queue.empty()

    run_monitor(m, lambda: len(evaluator.applied) == 21 and changed())
    assert evaluator.assessed == assessed


def test_without_election_the_only_instance_says_it_leads(tmp_path: Path, api: FakeApi) -> None:
    from gpulabel.controller.monitor_metrics import MonitorMetrics

    api.add_node("n1")
    health = MonitorMetrics()
    m = Monitor(fake_client(tmp_path, api, FakeClock(), FAST), ("Node",), CountingEvaluator(), [], health=health)
    run_monitor(m, lambda: m.evaluations >= 1)
    assert b"gpulabel_leader 0.0" in health.render()  # stepped down when stopped
    m2 = Monitor(fake_client(tmp_path, api, FakeClock(), FAST), ("Node",), CountingEvaluator(), [], health=health)
    run_monitor(m2, lambda: m2.evaluations >= 1 and b"gpulabel_leader 1.0" in health.render())


def test_a_standby_exports_its_findings_and_writes_only_once_it_leads(tmp_path: Path, api: FakeApi) -> None:
    """Every replica evaluates and publishes to its sinks (metrics: no gap in a series at a handover); only the
    leader feeds the leader sinks (Events, conditions), which read what the last leader wrote first."""
    api.add_node("n1", {"nvidia.com/gpu.present": "true"})
    clock = FakeClock()
    client = fake_client(tmp_path, api, clock, FAST)
    holder = LeaseLock(fake_client(tmp_path, api, clock), "gpulabel", "gpulabel-monitor", "other", clock=clock)
    assert holder.try_acquire_or_renew()
    lock = LeaseLock(client, "gpulabel", "gpulabel-monitor", "b", retry_seconds=0.01, clock=clock)
    exported: list[Assessment] = []
    written: list[Assessment] = []
    steps: list[str] = []
    said: list[str] = []

    class Sink:
        def publish(self, a: Assessment) -> None:
            exported.append(a)

    class Writes:
        def take_over(self) -> None:
            steps.append("take over")

        def publish(self, a: Assessment) -> None:
            steps.append("publish")
            written.append(a)

    m = Monitor(
        client,
        ("Node",),
        FullEvaluator(BUILTIN.options()),
        [Sink()],
        leader_sinks=[Writes()],
        lock=lock,
        say=said.append,
    )
    api.watches = [Watch([lambda: api.event("MODIFIED", "n1", {"changed": "while standby"})])]
    released: list[bool] = []

    def release_when_warm() -> bool:
        if not released and not api.watches and m.queue.empty() and exported:
            time.sleep(0.05)
            assert written == []  # a standby writes nothing
            assert exported[-1].state.nodes[0].labels == {"changed": "while standby"}  # but exports what it sees
            holder.release()
            released.append(True)
        return bool(written)

    assert run_monitor(m, release_when_warm) == 0
    # the new leader's first write has the change it saw as a standby: no LIST needed, no new evaluation
    assert written[0].state.nodes[0].labels == {"changed": "while standby"}
    assert steps[:2] == ["take over", "publish"]
    assert node_lists(api) == 1
    assert said[:2] == [
        "standby: lease gpulabel-monitor is held by another instance",
        "leader: holding lease gpulabel-monitor as b",
    ]
    assert api.leases["gpulabel-monitor"]["spec"]["holderIdentity"] == ""  # stopped cleanly: released


def test_a_stop_between_taking_the_lease_and_leading_still_releases_it(tmp_path: Path, api: FakeApi) -> None:
    """SIGTERM lands while the new leader reads what the last one wrote (take_over, before it leads): the
    main thread steps down meanwhile. It waits for the campaign, then gives the Lease up, so the next standby
    takes over at once instead of after the Lease expires (it did not: test_controller's standby test failed
    1 run in 20 on a loaded machine on that race)."""
    api.add_node("n1")
    clock = FakeClock()
    client = fake_client(tmp_path, api, clock, FAST)
    lock = LeaseLock(client, "gpulabel", "gpulabel-monitor", "a", retry_seconds=0.01, clock=clock)
    stepped_down = threading.Event()

    class Gauge:
        def set(self, value: float) -> None:
            if value == 0:
                stepped_down.set()

    class Health:
        leader, ready = Gauge(), threading.Event()

        def watch_event(self, kind: str, at: float) -> None: ...

        def relisted(self, kind: str) -> None: ...

        def api_error(self, code: int | str) -> None: ...

        def evaluated(self, scope: str, seconds: float) -> None: ...

    class SlowTakeOver:
        def take_over(self) -> None:
            m.stop.set()  # the signal
            stepped_down.wait(10)  # the main thread has begun to step down before this one leads

        def publish(self, a: Assessment) -> None: ...

    m = Monitor(
        client,
        ("Node",),
        FullEvaluator(BUILTIN.options()),
        [],
        leader_sinks=[SlowTakeOver()],
        lock=lock,
        health=Health(),
    )
    assert m.run() == 0
    assert stepped_down.is_set()
    assert api.leases["gpulabel-monitor"]["spec"]["holderIdentity"] == ""  # released


def test_the_leader_that_cannot_renew_stops_publishing_and_exits_1(tmp_path: Path, api: FakeApi) -> None:
    api.add_node("n1")
    client = fake_client(tmp_path, api, FakeClock(), FAST)
    lock = LeaseLock(client, "gpulabel", "gpulabel-monitor", "a", retry_seconds=0.01, renew_deadline=0.05)
    said: list[str] = []
    m = Monitor(client, ("Node",), FullEvaluator(BUILTIN.options()), [], lock=lock, say=said.append)

    def outage() -> None:
        if m.evaluations:
            api.down = True
        time.sleep(0.005)

    api.on_watches_done = outage
    code = run_monitor(m, lambda: m.lost.is_set())
    assert code == 1
    assert said[-1] == "lost lease gpulabel-monitor: stopped publishing"


# -- the sinks of the monitor itself --------------------------------------------------------------


def test_the_log_says_each_finding_once_when_it_appears_and_when_it_is_resolved(tmp_path: Path) -> None:
    state = load_snapshots([str(REPO / "examples" / "drifted-lab.yaml")])
    evaluator = FullEvaluator(BUILTIN.options())
    for kind in ("Node", "Pod", "DaemonSet"):
        evaluator.reset(kind, records_of(state, kind))
    lines: list[str] = []
    log = FindingsLog(lines.append)
    first = evaluator.assess(AT)
    log.publish(first)
    assert len(lines) == len(first.findings) > 0 and all(line.startswith("appeared ") for line in lines)
    log.publish(evaluator.assess(AT))
    assert len(lines) == len(first.findings)  # nothing changed: nothing said
    node = state.nodes[0]
    evaluator.apply("Node", ("", node.name), None)
    after = evaluator.assess(AT)
    log.publish(after)
    gone = {identity(f) for f in first.findings} - {identity(f) for f in after.findings}
    said = lines[len(first.findings) :]
    assert len(said) >= len(gone) > 0
    assert sum(line.startswith("resolved ") for line in said) == len(gone)
    dump = FindingsDump(str(tmp_path / "findings.json"))
    dump.publish(after)
    doc = orjson.loads((tmp_path / "findings.json").read_bytes())
    assert doc["findings"] == [f.to_json() for f in after.findings] and doc["at"] == AT
    assert list(tmp_path.iterdir()) == [tmp_path / "findings.json"]  # the temporary file was renamed


def test_monitor_options_are_checked_before_anything_is_contacted(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--lease-name: only applies with --leader-elect"):
        MonitorOptions(lease_name="x")
    with pytest.raises(InputError, match="--resync: 'soon' is not a duration"):
        MonitorOptions(resync="soon")
    with pytest.raises(InputError, match="--metrics-port: must be a port"):
        MonitorOptions(metrics_port=70000)
    with pytest.raises(InputError, match=r"--dump: .*no such directory"):
        MonitorOptions(dump=str(tmp_path / "missing" / "f.json"))
    with pytest.raises(InputError, match=r"--watch-timeout: must be from 1s to 4m, not 5m: .*silent for 5 minutes"):
        MonitorOptions(watch_timeout="5m")
    opts = MonitorOptions(leader_elect=True, resync="1h")
    assert (opts.resync_seconds, opts.lease_name, opts.lease_namespace) == (3600.0, "gpulabel-monitor", "gpulabel")
    assert opts.watch_seconds == WATCH_TIMEOUT == 240 and MonitorOptions(watch_timeout="20s").watch_seconds == 20


# -- agreement with check -------------------------------------------------------------------------


def pod(name: str, node: str, namespace: str = "ml") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {
            "nodeName": node,
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "c", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
            "volumes": [{"name": "v", "emptyDir": {}}],
        },
        "status": {"phase": "Running"},
    }


def records_of(state: Any, kind: str) -> list[tuple[ObjectKey, Any]]:
    if kind == "Node":
        return [(("", n.name), n) for n in state.nodes]
    items = state.pods if kind == "Pod" else state.daemonsets
    return [((r.namespace, r.name), r) for r in items]


def raw_objects(path: Path) -> list[dict[str, Any]]:
    import yaml

    doc = yaml.safe_load(path.read_text())
    return [dict(o) for o in doc["items"]]


def check_now(api: FakeApi, tmp_path: Path) -> Assessment:
    """What ``check`` answers on the fake server now: its LISTs, its checks, its judgement."""
    client = fake_client(tmp_path, api, FakeClock(), FAST)
    state = load_cluster(client, served_kinds(client, monitored_kinds()))
    opts = BUILTIN.options(now=datetime.fromtimestamp(AT, UTC))
    result, causes = judged(run_checks(state, opts), state, Accepted())
    return Assessment(result, causes, state, AT)


def random_events(api: FakeApi, rng: random.Random, count: int) -> list[Callable[[], dict[str, Any]]]:
    """``count`` changes as scripted node/pod/DaemonSet watch events, made against the store when served."""

    def node_change(name: str, edit: Callable[[dict[str, Any]], None]) -> Callable[[], dict[str, Any]]:
        def make() -> dict[str, Any]:
            node = api.nodes.get(name)
            if node is None:
                return api.bookmark()
            edit(node)
            node["metadata"]["resourceVersion"] = api._bump()
            return {"type": "MODIFIED", "object": orjson.loads(orjson.dumps(node))}

        return make

    def drop_label(node: dict[str, Any]) -> None:
        labels = node["metadata"]["labels"]
        gpu = sorted(k for k in labels if k.startswith("nvidia.com/"))
        if gpu:
            del labels[rng.choice(gpu)]

    def taint(node: dict[str, Any]) -> None:
        node.setdefault("spec", {}).setdefault("taints", []).append({"key": "gpu-broken", "effect": "NoSchedule"})

    def cordon(node: dict[str, Any]) -> None:
        node.setdefault("spec", {})["unschedulable"] = True

    def delete_pod() -> dict[str, Any]:
        pods = sorted(api.objects.get("/api/v1/pods", {}))
        if not pods:
            return api.bookmark()
        ns, name = rng.choice(pods).split("/")
        return api.delete("Pod", ns, name)

    def add_pod() -> dict[str, Any]:
        if not api.nodes:
            return api.bookmark()
        return api.put(pod(f"new-{rng.randrange(10**6)}", rng.choice(sorted(api.nodes))), "ADDED")

    def delete_node() -> dict[str, Any]:
        if not api.nodes:
            return api.bookmark()
        name = rng.choice(sorted(api.nodes))
        node = api.nodes.pop(name)
        node["metadata"]["resourceVersion"] = api._bump()
        return {"type": "DELETED", "object": node}

    events: list[Callable[[], dict[str, Any]]] = []
    for _ in range(count):
        what = rng.choice(["label", "label", "taint", "cordon", "pod-", "pod+", "node-"])
        name = rng.choice(sorted(api.nodes))
        if what == "label":
            events.append(node_change(name, drop_label))
        elif what == "taint":
            events.append(node_change(name, taint))
        elif what == "cordon":
            events.append(node_change(name, cordon))
        elif what == "pod-":
            events.append(delete_pod)
        elif what == "pod+":
            events.append(add_pod)
        else:
            events.append(delete_node)
    return events


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("example", ["drifted-lab.yaml", "lab-cluster.yaml", "mixed-fleet.yaml"])
def test_after_random_events_the_monitor_agrees_with_check(
    tmp_path: Path, api: FakeApi, example: str, seed: int
) -> None:
    objects = raw_objects(REPO / "examples" / example)
    for obj in objects:
        if obj["kind"] == "Node":
            obj["metadata"]["resourceVersion"] = api._bump()
            api.nodes[obj["metadata"]["name"]] = obj
        else:
            if obj["kind"] != "ClusterPolicy":
                obj["metadata"].setdefault("namespace", "default")
            api.put(obj)
    for path in ("/api/v1/pods", "/apis/apps/v1/daemonsets"):  # served, even where the example has none
        api.objects.setdefault(path, {})
    rng = random.Random(seed)
    events = random_events(api, rng, 12)
    # node events on the node watch, the others on the pod watch, in a few streams each
    node_events = [e for e in events if e.__name__ == "make" or e.__name__ == "delete_node"]
    pod_events = [e for e in events if e not in node_events]
    api.watches = [Watch(node_events[i : i + 3]) for i in range(0, len(node_events), 3)]
    api.kind_watches["/api/v1/pods"] = [Watch(pod_events[i : i + 3]) for i in range(0, len(pod_events), 3)]
    client = fake_client(tmp_path, api, FakeClock(), FAST)
    kinds = served_kinds(client, monitored_kinds())
    m = Monitor(client, kinds, FullEvaluator(BUILTIN.options()), [], clock=lambda: AT, batch_seconds=0.002)
    expected: list[Assessment] = []

    def agreed() -> bool:
        if api.watches or api.kind_watches["/api/v1/pods"] or not m.queue.empty() or m.last is None:
            return False
        expected[:] = [check_now(api, tmp_path)]
        return m.last.findings == expected[0].findings

    run_monitor(m, agreed)
    assert m.last is not None and m.last.findings == expected[0].findings
    assert m.last.causes == expected[0].causes
    assert m.last.state.kinds == expected[0].state.kinds


def test_the_monitors_log_lines_carry_their_time_as_text_or_json() -> None:
    import io

    from gpulabel.cli.monitorcmds import log_lines

    out = io.StringIO()
    log_lines(out, "text", clock=lambda: 1_800_000_000.25)("monitor: watching Node")
    log_lines(out, "json", clock=lambda: 1_800_000_000.25)('appeared error operands gpu-a "x"')
    text, js = out.getvalue().splitlines()
    assert text == "2027-01-15T08:00:00.250Z gpulabel: monitor: watching Node"
    assert orjson.loads(js) == {
        "time": "2027-01-15T08:00:00.250Z",
        "logger": "gpulabel",
        "msg": 'appeared error operands gpu-a "x"',
    }


def test_a_service_account_kubeconfig_has_the_clusters_trust_and_the_token(tmp_path: Path) -> None:
    import base64

    import yaml

    from gpulabel.app.kubeconfig import KubeconfigOptions, token_kubeconfig

    config = token_kubeconfig("https://10.0.0.1:6443", b"CA", True, "gpulabel/gpulabel-monitor", "tok")
    assert config["clusters"][0]["cluster"] == {
        "server": "https://10.0.0.1:6443",
        "certificate-authority-data": base64.b64encode(b"CA").decode(),
    }
    assert config["users"][0]["user"] == {"token": "tok"}
    assert config["contexts"][0]["context"]["namespace"] == "gpulabel"
    assert yaml.safe_load(yaml.safe_dump(config))["current-context"] == "gpulabel/gpulabel-monitor"
    assert token_kubeconfig("https://x", None, False, "a/b", "t")["clusters"][0]["cluster"] == {
        "server": "https://x",
        "insecure-skip-tls-verify": True,
    }
    opts = KubeconfigOptions("gpulabel/gpulabel-monitor", str(tmp_path / "k"), "8h")
    assert (opts.namespace, opts.account, opts.seconds) == ("gpulabel", "gpulabel-monitor", 28800)
    for bad, flag in (("gpulabel", "--service-account"), ("a/b/c", "--service-account")):
        with pytest.raises(InputError, match=flag):
            KubeconfigOptions(bad, "k")
    with pytest.raises(InputError, match="--duration"):
        KubeconfigOptions("a/b", "k", "5m")


def test_the_heap_is_settled_after_the_evaluation_that_follows_a_list_and_kept_after_the_others(
    tmp_path: Path, api: FakeApi
) -> None:
    """``settle`` (gc.freeze in ``gpulabel monitor``) runs once the LIST's records are assessed, not before and
    not after an ordinary event's evaluation; ``keep`` after that one and not after the LIST's."""
    api.add_node("n1", {"team": "a"})
    client = fake_client(tmp_path, api, FakeClock(), FAST)
    evaluator = CountingEvaluator()
    settled: list[int] = []
    kept: list[int] = []

    class Heap(heap.Heap):  # its calls, each with the evaluations made by then (no collection here)
        def settle(self) -> None:
            settled.append(evaluator.assessed)

        def keep(self) -> None:
            kept.append(evaluator.assessed)

    m = Monitor(client, ("Node",), evaluator, [], batch_seconds=0.0, heap=Heap())

    def event() -> dict[str, Any]:
        deadline = time.monotonic() + 5
        while not settled and time.monotonic() < deadline:
            time.sleep(0.002)
        obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"team": "b"}}}
        obj["metadata"]["resourceVersion"] = "1001"
        return {"type": "MODIFIED", "object": obj}

    api.watches = [Watch([event])]
    run_monitor(m, lambda: evaluator.assessed >= 2 and m.queue.empty() and bool(kept))
    assert settled == [1]  # after the first evaluation (the LIST's), not after the change's
    assert kept == [2]  # after the change's evaluation, not after the LIST's
