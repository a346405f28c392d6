"""The controller without a cluster: Lease election, the watch, resume, relist and resync.

Everything runs against :mod:`tests.fakeapi` (a real KubeClient whose requests
an in-memory API server answers) on a fake clock: Lease expiry, the renew
deadline and retry budgets cost no real time. labcluster checks the same
behaviour for real (tests/cluster/test_deploy_cluster.py,
test_reliability_cluster.py); these run in the fast loop.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from gpulabel.cluster.retry import RetryPolicy
from gpulabel.cluster.watch import WatchExpired, watch_events
from gpulabel.controller.lease import LeaseLock
from gpulabel.controller.reconcile import Reconciler, watch_sync
from gpulabel.errors import ClusterError
from tests.fakeapi import FakeApi, FakeClock, FakeResponse, Watch, fake_client

LEASE = "gpulabel-sync"
FAST = RetryPolicy(budget=60.0, first_delay=0.001, max_delay=0.002, jitter=0.0)


@pytest.fixture
def api() -> FakeApi:
    return FakeApi()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def candidate(tmp_path: Path, api: FakeApi, clock: FakeClock, identity: str, **kwargs: Any) -> LeaseLock:
    client = fake_client(tmp_path, api, clock)
    return LeaseLock(client, "gpulabel", LEASE, identity, clock=clock, wall=lambda: 1.8e9 + clock(), **kwargs)


def spec(api: FakeApi) -> dict[str, Any]:
    return dict(api.leases[LEASE]["spec"])


# -- the Lease -------------------------------------------------------------------------------


def test_a_free_lease_is_created_and_held(tmp_path: Path, api: FakeApi, clock: FakeClock) -> None:
    a = candidate(tmp_path, api, clock, "a")
    assert a.try_acquire_or_renew()
    assert a.holds()
    s = spec(api)
    assert (s["holderIdentity"], s["leaseDurationSeconds"], s["leaseTransitions"]) == ("a", 15, 0)
    assert s["acquireTime"] == s["renewTime"]


def test_the_holder_renews_keeping_its_acquire_time(tmp_path: Path, api: FakeApi, clock: FakeClock) -> None:
    a = candidate(tmp_path, api, clock, "a")
    assert a.try_acquire_or_renew()
    first = spec(api)
    clock.advance(2.0)
    assert a.try_acquire_or_renew()
    renewed = spec(api)
    assert renewed["acquireTime"] == first["acquireTime"]
    assert renewed["renewTime"] > first["renewTime"]
    assert renewed["leaseTransitions"] == 0


def test_a_standby_waits_while_the_holder_renews_then_takes_over(tmp_path: Path, api: FakeApi) -> None:
    clock_a, clock_b = FakeClock(1000.0), FakeClock(7.0)  # two machines: their clocks need not agree
    a = candidate(tmp_path, api, clock_a, "a")
    b = candidate(tmp_path, api, clock_b, "b")
    assert a.try_acquire_or_renew()
    for _ in range(20):  # 40 s, far past the 15 s lease: the holder keeps renewing, the standby keeps waiting
        clock_a.advance(2.0)
        clock_b.advance(2.0)
        assert a.try_acquire_or_renew()
        assert not b.try_acquire_or_renew()
    # the holder stops renewing (paused, partitioned): the standby counts 15 s from when it last saw a change
    clock_a.advance(14.9)
    clock_b.advance(14.9)
    assert not b.try_acquire_or_renew()
    clock_a.advance(0.2)
    clock_b.advance(0.2)
    assert b.try_acquire_or_renew()
    s = spec(api)
    assert (s["holderIdentity"], s["leaseTransitions"]) == ("b", 1)
    # the old holder comes back: it is past its renew deadline, so it has stopped writing, and cannot renew
    assert not a.holds()
    assert not a.try_acquire_or_renew()
    assert spec(api)["holderIdentity"] == "b"


def test_a_holder_that_cannot_renew_loses_the_lease_at_the_renew_deadline(
    tmp_path: Path, api: FakeApi, clock: FakeClock
) -> None:
    a = candidate(tmp_path, api, clock, "a")
    assert a.try_acquire_or_renew()
    api.down = True  # every request answers 503
    started = clock()
    rounds = 0
    while a.holds() and rounds < 100:
        with pytest.raises(ClusterError, match="503"):
            a.try_acquire_or_renew()  # retried for at most retry_seconds (2 s) on the fake clock, then given up
        clock.advance(a.retry_seconds)  # the renewer's wait before its next round
        rounds += 1
    assert 10.0 <= clock() - started <= 12.0
    assert 4 <= rounds <= 5


def test_two_candidates_racing_for_an_expired_lease_one_wins(tmp_path: Path, api: FakeApi, clock: FakeClock) -> None:
    old = candidate(tmp_path, api, clock, "old")
    a = candidate(tmp_path, api, clock, "a")
    b = candidate(tmp_path, api, clock, "b")
    assert old.try_acquire_or_renew()
    assert not a.try_acquire_or_renew() and not b.try_acquire_or_renew()
    clock.advance(16.0)
    api.before_write = lambda: b.try_acquire_or_renew()  # b writes between a's read and a's write
    assert not a.try_acquire_or_renew()  # a's update carries a stale resourceVersion: 409
    assert spec(api)["holderIdentity"] == "b"
    assert spec(api)["leaseTransitions"] == 1


def test_two_candidates_creating_the_lease_one_wins(tmp_path: Path, api: FakeApi, clock: FakeClock) -> None:
    a = candidate(tmp_path, api, clock, "a")
    b = candidate(tmp_path, api, clock, "b")
    api.before_write = lambda: b.try_acquire_or_renew()
    assert not a.try_acquire_or_renew()  # b created it first: 409 for a
    assert spec(api)["holderIdentity"] == "b"


def test_a_released_lease_is_taken_at_once(tmp_path: Path, api: FakeApi, clock: FakeClock) -> None:
    a = candidate(tmp_path, api, clock, "a")
    b = candidate(tmp_path, api, clock, "b")
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    a.release()
    assert not a.holds()
    assert b.try_acquire_or_renew()  # no 15 s wait
    assert spec(api)["holderIdentity"] == "b"


# -- one watch request ------------------------------------------------------------------------


def test_a_watch_yields_events_and_bookmarks_from_the_resource_version(
    tmp_path: Path, api: FakeApi, clock: FakeClock
) -> None:
    client = fake_client(tmp_path, api, clock)
    api.add_node("n1")
    api.watches = [Watch([api.event("MODIFIED", "n1", {"a": "b"}), api.bookmark(), api.event("DELETED", "n1")])]
    events = list(watch_events(client, "/api/v1/nodes", "42"))
    assert [e["type"] for e in events] == ["MODIFIED", "BOOKMARK", "DELETED"]
    query = api.queries("GET", "/api/v1/nodes")[0]
    assert (query["resourceVersion"], query["allowWatchBookmarks"], query["watch"]) == ("42", "true", "true")


@pytest.mark.parametrize(
    "answer",
    [Watch(status=410), Watch([{"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "gone"}}])],
    ids=["410 answer", "410 error event"],
)
def test_a_watch_too_old_is_expired(tmp_path: Path, api: FakeApi, clock: FakeClock, answer: Watch) -> None:
    client = fake_client(tmp_path, api, clock)
    api.watches = [answer]
    with pytest.raises(WatchExpired):
        list(watch_events(client, "/api/v1/nodes", "1"))


def test_a_dropped_watch_is_a_cluster_error_and_releases_its_connection(
    tmp_path: Path, api: FakeApi, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = fake_client(tmp_path, api, clock)
    answers: list[FakeResponse] = []

    def record(*args: Any, **kwargs: Any) -> FakeResponse:
        answers.append(api.open(*args, **kwargs))
        return answers[-1]

    monkeypatch.setattr(client, "open", record)
    api.add_node("n1")
    api.watches = [Watch([api.event("ADDED", "n1")], drop=True)]
    seen: list[str] = []
    with pytest.raises(ClusterError, match="watch interrupted"):
        seen.extend(e["type"] for e in watch_events(client, "/api/v1/nodes", "1"))
    assert seen == ["ADDED"]
    assert answers[0].released


# -- the reconciler: resume, relist, resync ------------------------------------------------------


def reconciler(tmp_path: Path, api: FakeApi, clock: FakeClock, files: dict[str, str]) -> Reconciler:
    directory = tmp_path / "features.d"
    directory.mkdir()
    for node, text in files.items():
        (directory / f"{node}.env").write_text(text)
    return Reconciler(fake_client(tmp_path, api, clock, FAST), str(directory), clock=clock)


def watch_versions(api: FakeApi) -> list[str]:
    return [q["resourceVersion"] for q in api.queries("GET", "/api/v1/nodes") if q.get("watch") == "true"]


def lists(api: FakeApi) -> int:
    return sum(1 for q in api.queries("GET", "/api/v1/nodes") if q.get("watch") != "true")


def stop_when(rec: Reconciler, api: FakeApi, done: Any) -> None:
    """When the scripted watches are used up: stop the reconciler once ``done()`` holds (or after 10 s)."""

    def finish() -> None:
        for _ in range(2000):
            if done():
                break
            threading.Event().wait(0.005)
        rec.stop.set()

    api.on_watches_done = finish


def test_the_watch_resumes_from_the_last_event_or_bookmark_and_restores_drift(
    tmp_path: Path, api: FakeApi, clock: FakeClock
) -> None:
    api.add_node("n1", {"example.com/gpu": "a"})
    rec = reconciler(tmp_path, api, clock, {"n1": "example.com/gpu=a\n"})
    served: dict[str, str] = {}
    # the event a hand edit causes
    drift = api.noted(served, "drift", lambda: api.event("MODIFIED", "n1", {"example.com/gpu": "drifted"}))
    mark = api.noted(served, "mark", api.bookmark)
    api.watches = [Watch([drift]), Watch([mark]), Watch(drop=True), Watch([])]
    patches: list[dict[str, str]] = []
    rec.on_change = lambda c: patches.append({c.key: str(c.value)})
    restored = lambda: api.nodes["n1"]["metadata"]["labels"]["example.com/gpu"] == "a"
    stop_when(rec, api, lambda: len(watch_versions(api)) >= 5 and "drift" in served and restored())
    assert watch_sync(rec, None, 300) == 0
    listed = api.queries("GET", "/api/v1/nodes")[0]
    assert "watch" not in listed
    first = watch_versions(api)[0]
    # the stream ended: resume from the event; then from the bookmark; a drop resumes from the same place
    assert watch_versions(api)[1:5] == [served["drift"], served["mark"], served["mark"], served["mark"]]
    assert int(first) < int(served["drift"])
    assert patches == [{"example.com/gpu": "a"}]  # restored from the event, without a LIST
    assert lists(api) == 1


def test_a_410_relists_then_watches_from_the_new_list(tmp_path: Path, api: FakeApi, clock: FakeClock) -> None:
    api.add_node("n1", {"example.com/gpu": "a"})
    rec = reconciler(tmp_path, api, clock, {"n1": "example.com/gpu=a\n"})
    first = str(api.version)

    def expire() -> dict[str, Any]:
        api.event("MODIFIED", "n1", {"example.com/gpu": "changed-while-away"})  # happened; never delivered
        return {"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old resource version"}}

    api.watches = [Watch([expire])]
    # the relist's pass runs on the loop's thread after the new watch may have started: stop once it did
    stop_when(rec, api, lambda: lists(api) >= 2 and api.nodes["n1"]["metadata"]["labels"]["example.com/gpu"] == "a")
    watch_sync(rec, None, 300)
    assert lists(api) == 2
    assert watch_versions(api)[0] == first
    assert int(watch_versions(api)[1]) > int(first)  # the new watch starts from the relist's version
    assert api.nodes["n1"]["metadata"]["labels"]["example.com/gpu"] == "a"  # the relist's pass restored it


def test_a_full_resync_every_period_catches_what_no_event_said(tmp_path: Path, api: FakeApi, clock: FakeClock) -> None:
    api.add_node("n1", {"example.com/gpu": "a"})
    rec = reconciler(tmp_path, api, clock, {"n1": "example.com/gpu=a\n"})
    calls = 0

    def quiet_then_later() -> None:
        nonlocal calls
        calls += 1
        if calls == 1:  # a quiet watch; the label changes without an event; the period passes
            api.event("MODIFIED", "n1", {"example.com/gpu": "lost-event"})  # never delivered
            clock.advance(299.0)
            threading.Event().wait(0.05)
            assert lists(api) == 1  # 299 s: not yet
            clock.advance(2.0)
        elif lists(api) >= 2 and api.nodes["n1"]["metadata"]["labels"]["example.com/gpu"] == "a":
            rec.stop.set()  # once the resync's pass restored it
        threading.Event().wait(0.005)

    api.on_watches_done = quiet_then_later
    watch_sync(rec, None, 300)
    assert lists(api) == 2
    assert api.nodes["n1"]["metadata"]["labels"]["example.com/gpu"] == "a"


# -- the loop: leading, and stopping when the Lease is lost ----------------------------------------


def test_the_leader_stops_writing_and_exits_1_when_it_cannot_renew(
    tmp_path: Path, api: FakeApi, clock: FakeClock
) -> None:
    api.add_node("n1", {"example.com/gpu": "a"})
    rec = reconciler(tmp_path, api, clock, {"n1": "example.com/gpu=a\n"})
    # the renewer waits in real time (10 ms rounds), so its deadline is measured in real time too: 50 ms
    lock = LeaseLock(rec.client, "gpulabel", LEASE, "a", retry_seconds=0.01, renew_deadline=0.05)
    said: list[str] = []

    def outage() -> None:  # the watch starts before the campaign: wait for the Lease
        if LEASE in api.leases and spec(api)["holderIdentity"] == "a":
            api.down = True  # from now on every request is a 503; retries sleep on the fake clock
        threading.Event().wait(0.005)

    api.on_watches_done = outage
    code = watch_sync(rec, lock, 300.0, said.append)
    assert code == 1
    assert said[0] == f"leader: holding lease {LEASE} as a"
    assert said[-1] == f"lost lease {LEASE}: stopped writing"
    assert rec.stop.is_set()


def test_a_standby_leads_once_the_lease_is_released(tmp_path: Path, api: FakeApi, clock: FakeClock) -> None:
    api.add_node("n1", {"example.com/gpu": "a"})
    holder = candidate(tmp_path, api, clock, "other")
    assert holder.try_acquire_or_renew()
    rec = reconciler(tmp_path, api, clock, {"n1": "example.com/gpu=a\n"})
    lock = LeaseLock(rec.client, "gpulabel", LEASE, "b", retry_seconds=0.01, clock=clock)
    said: list[str] = []

    def say(line: str) -> None:
        said.append(line)
        if line.startswith("standby:"):
            holder.release()  # once it has said it waits (a timer of 50 ms raced its first try on a loaded machine)

    # a standby watches too (its cache is warm when it leads): stop once it leads
    stop_when(rec, api, lambda: said[-1:] == [f"leader: holding lease {LEASE} as b"])
    code = watch_sync(rec, lock, 300.0, say)
    assert code == 0
    assert said == [f"standby: lease {LEASE} is held by another instance", f"leader: holding lease {LEASE} as b"]
    assert spec(api)["holderIdentity"] == ""  # stopped cleanly: released for the next standby


# -- one loop: the signals, the Lease and the metrics are the monitor's ------------------------------


def test_sigterm_during_a_sync_watch_ends_cleanly_and_releases_the_lease(
    tmp_path: Path, api: FakeApi, clock: FakeClock
) -> None:
    api.add_node("n1", {"example.com/gpu": "drifted"})
    rec = reconciler(tmp_path, api, clock, {"n1": "example.com/gpu=a\n"})
    lock = LeaseLock(rec.client, "gpulabel", LEASE, "a", retry_seconds=0.01)
    said: list[str] = []
    before = signal.getsignal(signal.SIGTERM)

    def terminate_once_restored() -> None:
        for _ in range(2000):
            if api.nodes["n1"]["metadata"]["labels"]["example.com/gpu"] == "a" and spec(api)["holderIdentity"] == "a":
                break
            threading.Event().wait(0.005)
        os.kill(os.getpid(), signal.SIGTERM)  # the handler the loop installed sets its stop

    killer = threading.Thread(target=terminate_once_restored)
    killer.start()
    code = watch_sync(rec, lock, 300.0, said.append)
    killer.join()
    assert code == 0
    assert said == [f"leader: holding lease {LEASE} as a"]
    assert spec(api)["holderIdentity"] == ""  # released: a standby leads within one retry period
    assert signal.getsignal(signal.SIGTERM) is before  # and the process's own handler is back


def _calls(name: str) -> list[str]:
    """Every ``<name>(`` call under src/gpulabel, as ``module:line``."""
    import ast

    root = Path(__file__).parents[2] / "src" / "gpulabel"
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if name.rpartition(".")[2] not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == name:
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_one_controller_loop_and_one_place_that_takes_the_signals() -> None:
    # the one queue the controllers drain (the monitor's; sync --watch runs it too)
    assert [c.split(":")[0] for c in _calls("queue.Queue")] == ["controller/monitor.py"]
    # installed, then put back, in Monitor.run only
    assert {c.split(":")[0] for c in _calls("signal.signal")} == {"controller/monitor.py"}


def test_syncs_metrics_are_served_from_the_monitors_registry(tmp_path: Path, api: FakeApi, clock: FakeClock) -> None:
    from gpulabel.controller.metrics import Metrics
    from gpulabel.controller.monitor_metrics import MonitorMetrics

    api.add_node("n1", {"example.com/gpu": "drifted"})
    rec = reconciler(tmp_path, api, clock, {"n1": "example.com/gpu=a\n"})
    rec.metrics = Metrics()
    assert isinstance(rec.metrics.base, MonitorMetrics)
    assert rec.metrics.registry is rec.metrics.base.registry
    stop_when(rec, api, lambda: api.nodes["n1"]["metadata"]["labels"]["example.com/gpu"] == "a")
    assert watch_sync(rec, None, 300.0) == 0
    text = rec.metrics.render().decode()
    # sync's own families, unchanged in name and labels
    assert 'gpulabel_labels_restored_total{key="example.com/gpu",node="n1"} 1.0' in text
    assert 'gpulabel_reconcile_duration_seconds_count{scope="full"} 1.0' in text
    assert "gpulabel_last_full_resync_timestamp_seconds " in text
    assert "# TYPE gpulabel_findings gauge" in text
    # the registry's: the monitor's loop told it (leader, the watch of Nodes, the one evaluation scope)
    assert "gpulabel_leader 0.0" in text  # stepped down when it stopped
    assert 'gpulabel_watch_last_event_timestamp_seconds{kind="Node"}' in text or "gpulabel_watch_relists" in text
    assert 'gpulabel_evaluation_duration_seconds_count{scope="sync"}' in text
    # none of the monitor's findings families: sync's gpulabel_findings is the only one of that name
    assert text.count("# TYPE gpulabel_findings ") == 1
    assert "gpulabel_problem" not in text and "gpulabel_gpu_nodes" not in text
