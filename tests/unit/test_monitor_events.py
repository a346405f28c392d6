"""The monitor's Events: the pure planner on a fake clock, the writer on a fake API, the sink's bounds."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from gpulabel.checks.engine.assessment import Assessment
from gpulabel.cluster.client import KubeClient
from gpulabel.controller.events import (
    EventKey,
    EventPlanner,
    EventSpec,
    Regarding,
    TokenBuckets,
    event_name,
    event_reason,
)
from gpulabel.controller.eventsink import EventSink, EventWriter
from gpulabel.controller.grace import NO_GRACE
from gpulabel.controller.monitor_metrics import MonitorMetrics
from gpulabel.errors import ClusterError, ConflictError
from gpulabel.model.findings import Finding
from tests.unit.monitor_fixtures import CORDONED, PAUSED, PENDING, PLUGIN_MISSING, assessment


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def warnings(specs: Iterable[EventSpec]) -> list[tuple[str, str, int]]:
    return [(s.key.type, s.key.reason, s.count) for s in specs]


@pytest.mark.parametrize(
    ("check", "reason", "expected"),
    [
        ("operands", "missing", "OperandMissing"),
        ("operands", "not-ready", "OperandNotReady"),
        ("nfd", "nfd-missing", "NfdMissing"),
        ("mig", "mig-invalid", "MigInvalid"),
        ("upgrade", "upgrade-failed", "UpgradeFailed"),
        ("capacity", "no-allocatable", "CapacityNoAllocatable"),
        ("hazards", "untolerated-taint", "HazardUntoleratedTaint"),
        ("pending", "insufficient", "PendingInsufficient"),
        ("audit", "no-pci-label", "AuditNoPciLabel"),
    ],
)
def test_reasons_are_the_check_and_reason_in_upper_camel_case(check: str, reason: str, expected: str) -> None:
    assert event_reason(Finding(check, reason)) == expected


def test_appear_warns_repeat_counts_the_series_resolve_is_normal() -> None:
    clock = Clock()
    planner = EventPlanner(clock, grace=NO_GRACE)
    broken = assessment([PLUGIN_MISSING, PAUSED])
    first = planner.plan(None, broken)
    assert warnings(first.events) == [("Warning", "OperandMissing", 1)]
    spec = first.events[0]
    assert spec.key.regarding == Regarding("Node", "", "gpu-a")
    assert spec.namespace == "default" and spec.name == event_name(spec.key) and spec.name.startswith("gpu-a.")
    assert spec.action == "CheckOperands"
    assert spec.note == (
        "gpu-a device-plugin missing: no pod on the node; "
        "cause gpu-a operand-pod 4 GPU(s): device-plugin missing (no pod on the node)"
    )
    body = spec.body("gpulabel-monitor-0", "gpu-a")
    assert body["reportingController"] == "gpulabel" and body["reportingInstance"] == "gpulabel-monitor-0"
    assert body["regarding"] == {"apiVersion": "v1", "kind": "Node", "name": "gpu-a", "uid": "gpu-a"}
    assert body["eventTime"] == "2023-11-14T22:13:20.000000Z" and "series" not in body

    clock.now += 60
    assert planner.plan(broken, broken).events == ()  # it stayed: nothing new to say
    clock.now += 60
    fixed = assessment([PAUSED])
    resolved = planner.plan(broken, fixed).events
    assert warnings(resolved) == [("Normal", "OperandMissingResolved", 1)]
    assert resolved[0].note.startswith("no longer found: gpu-a device-plugin missing")
    clock.now += 60
    again = planner.plan(fixed, broken).events  # it came back: the same Event, its series counts it
    assert warnings(again) == [("Warning", "OperandMissing", 2)]
    assert again[0].name == spec.name and again[0].first == spec.first and again[0].last == clock.now
    assert again[0].body("i", "gpu-a")["series"] == {"count": 2, "lastObservedTime": "2023-11-14T22:16:20.000000Z"}
    clock.now += 60
    assert warnings(planner.plan(broken, fixed).events) == [("Normal", "OperandMissingResolved", 2)]


def test_a_problem_that_stays_is_observed_again_after_the_refresh() -> None:
    clock = Clock()
    planner = EventPlanner(clock, grace=NO_GRACE)
    broken = assessment([CORDONED])
    assert warnings(planner.plan(None, broken).events) == [("Warning", "CapacityCordoned", 1)]
    clock.now += 29 * 60
    assert planner.plan(broken, broken).events == ()
    clock.now += 60
    assert warnings(planner.plan(broken, broken).events) == [("Warning", "CapacityCordoned", 2)]


def test_another_finding_of_the_same_reason_on_the_object_is_a_repeat() -> None:
    planner = EventPlanner(Clock(), grace=NO_GRACE)
    toolkit = Finding("operands", "missing", node="gpu-a", operand="container-toolkit", severity="error")
    one = assessment([PLUGIN_MISSING])
    planner.plan(None, one)
    both = assessment([PLUGIN_MISSING, toolkit])
    assert warnings(planner.plan(one, both).events) == [("Warning", "OperandMissing", 2)]
    assert planner.plan(both, one).events == ()  # one is left: the reason is not resolved


def test_info_findings_make_no_events_and_pod_findings_regard_the_pod() -> None:
    planner = EventPlanner(Clock(), grace=NO_GRACE)
    specs = planner.plan(None, assessment([PAUSED, PENDING])).events
    assert [(s.key.regarding, s.key.reason, s.namespace) for s in specs] == [
        (Regarding("Pod", "ml", "train-0"), "PendingUntoleratedTaint", "ml")
    ]
    assert specs[0].body("i", "uid-1")["regarding"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "train-0",
        "uid": "uid-1",
        "namespace": "ml",
    }


def test_a_node_that_is_gone_gets_no_resolved_event() -> None:
    planner = EventPlanner(Clock(), grace=NO_GRACE)
    broken = assessment([PLUGIN_MISSING])
    planner.plan(None, broken)
    assert planner.plan(broken, assessment([], nodes=())).events == ()


def test_burst_of_25_per_object_then_suppressed_then_one_per_5_minutes() -> None:
    clock = Clock()
    planner = EventPlanner(clock, grace=NO_GRACE)
    broken, fixed = assessment([PLUGIN_MISSING]), assessment([])
    written: list[EventSpec] = []
    suppressed = 0
    previous: Assessment | None = None
    for i in range(30):  # a flapping operand: every transition is an Event about gpu-a
        current = broken if i % 2 == 0 else fixed
        plan = planner.plan(previous, current)
        written += plan.events
        suppressed += plan.suppressed
        previous = current
        clock.now += 1
    assert (len(written), suppressed) == (25, 5)
    other = planner.plan(None, assessment([CORDONED]))  # another object has its own bucket
    assert warnings(other.events) == [("Warning", "CapacityCordoned", 1)]
    clock.now += 299 - 30
    assert planner.plan(previous, broken).suppressed == 1
    clock.now += 31  # five minutes since the bucket ran dry: one token
    plan = planner.plan(fixed, broken)
    assert (warnings(plan.events), plan.suppressed) == ([("Warning", "OperandMissing", 14)], 0)
    clock.now += 1
    assert planner.plan(broken, fixed).suppressed == 1


class FakeApi:
    """What EventWriter asks of KubeClient, with Events kept by namespace and name."""

    event_path = KubeClient.event_path

    def __init__(self, pods: dict[str, str] | None = None) -> None:
        self.events: dict[str, dict[str, Any]] = {}
        self.pods = pods or {}
        self.calls: list[tuple[str, str, tuple[tuple[str, str], ...]]] = []

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        import orjson

        self.calls.append((method, path, tuple(kwargs.get("query") or ())))
        dry = ("dryRun", "All") in (kwargs.get("query") or ())
        if path.startswith("/api/v1/namespaces/"):
            ns, name = path.split("/")[4], path.split("/")[6]
            if f"{ns}/{name}" not in self.pods:
                raise ClusterError(path, "404 not found", 404)
            return {"metadata": {"uid": self.pods[f"{ns}/{name}"]}}
        if method == "POST":
            body = orjson.loads(kwargs["body"])
            key = path.split("/")[5] + "/" + body["metadata"]["name"]
            if key in self.events:
                raise ConflictError(path, "409 exists", 409)
            if not dry:
                self.events[key] = body
            return body
        key = path.split("/")[5] + "/" + path.split("/")[7]
        if key not in self.events:
            raise ClusterError(path, "404 not found", 404)
        if method == "GET":
            return self.events[key]
        assert method == "PATCH" and kwargs["content_type"] == "application/merge-patch+json"
        if not dry:
            self.events[key] = {**self.events[key], **orjson.loads(kwargs["body"])}
        return self.events[key]


def test_the_writer_creates_then_patches_the_series() -> None:
    api = FakeApi()
    planner, writer = EventPlanner(Clock(), grace=NO_GRACE), EventWriter(api, "mon-0")  # type: ignore[arg-type]
    broken, fixed = assessment([PLUGIN_MISSING]), assessment([])
    for previous, current in ((None, broken), (broken, fixed), (fixed, broken)):
        for spec in planner.plan(previous, current).events:
            assert writer.write(spec)
    warning = next(e for e in api.events.values() if e["type"] == "Warning")
    assert warning["series"]["count"] == 2 and warning["reason"] == "OperandMissing"
    assert [c[0] for c in api.calls] == ["POST", "POST", "PATCH"]


def test_an_event_another_instance_wrote_continues_its_series() -> None:
    api = FakeApi()
    spec = EventPlanner(Clock(), grace=NO_GRACE).plan(None, assessment([PLUGIN_MISSING])).events[0]
    api.events[f"default/{spec.name}"] = {**spec.body("old-0", "gpu-a"), "series": {"count": 3}}
    writer = EventWriter(api, "mon-1")  # type: ignore[arg-type]
    assert writer.write(spec)  # create -> 409 -> the server's series + 1
    assert api.events[f"default/{spec.name}"]["series"]["count"] == 4
    assert [c[0] for c in api.calls] == ["POST", "GET", "PATCH"]


def test_a_series_whose_event_expired_is_created_with_its_series() -> None:
    api = FakeApi()
    clock = Clock()
    planner = EventPlanner(clock, grace=NO_GRACE)
    broken, fixed = assessment([PLUGIN_MISSING]), assessment([])
    planner.plan(None, broken)
    planner.plan(broken, fixed)
    spec = planner.plan(fixed, broken).events[0]
    assert EventWriter(api, "mon-0").write(spec)  # type: ignore[arg-type]
    assert [c[0] for c in api.calls] == ["PATCH", "POST"]
    assert api.events[f"default/{spec.name}"]["series"]["count"] == 2


def test_pod_events_carry_the_pods_uid_and_a_gone_pod_gets_none() -> None:
    spec = EventPlanner(Clock(), grace=NO_GRACE).plan(None, assessment([PENDING])).events[0]
    api = FakeApi({"ml/train-0": "u-123"})
    assert EventWriter(api, "mon-0").write(spec)  # type: ignore[arg-type]
    assert api.events[f"ml/{spec.name}"]["regarding"]["uid"] == "u-123"
    assert not EventWriter(FakeApi(), "mon-0").write(spec)  # type: ignore[arg-type]


def test_dry_run_asks_the_server_for_its_dry_run() -> None:
    api = FakeApi()
    spec = EventPlanner(Clock(), grace=NO_GRACE).plan(None, assessment([PLUGIN_MISSING])).events[0]
    assert EventWriter(api, "mon-0", dry_run=True).write(spec)  # type: ignore[arg-type]
    assert api.events == {} and api.calls[0][2] == (("dryRun", "All"),)


class Recorder:
    def __init__(self) -> None:
        self.specs: list[EventSpec] = []

    def write(self, spec: EventSpec) -> bool:
        self.specs.append(spec)
        return True


def test_the_sink_counts_what_it_writes_and_bounds_what_waits() -> None:
    metrics = MonitorMetrics()
    recorder = Recorder()
    sink = EventSink(recorder, EventPlanner(Clock(), grace=NO_GRACE), metrics, background=False, max_queued=2)
    many = [Finding("capacity", "cordoned", node=f"gpu-{i}", severity="warning") for i in range(5)]
    sink.publish(assessment(many))
    assert len(sink.drain()) == 2
    text = metrics.render().decode()
    assert 'gpulabel_events_total{reason="CapacityCordoned",type="Warning"} 2.0' in text
    assert "gpulabel_events_suppressed_total 3.0" in text


def test_the_background_sink_writes_without_holding_the_caller() -> None:
    recorder = Recorder()
    sink = EventSink(recorder, EventPlanner(Clock(), grace=NO_GRACE))
    sink.publish(assessment([PLUGIN_MISSING]))
    assert sink.wait(5.0)
    sink.stop()
    assert [s.key for s in recorder.specs] == [EventKey(Regarding("Node", "", "gpu-a"), "Warning", "OperandMissing")]


def test_buckets_and_series_stay_bounded() -> None:
    from gpulabel.controller.events import MAX_RECORDS

    buckets = TokenBuckets(limit=100)
    for i in range(1000):
        assert buckets.take(Regarding("Node", "", f"n{i}"), 0.0)
    assert len(buckets.buckets) <= 100
    clock = Clock()
    planner = EventPlanner(clock, grace=NO_GRACE)
    many = [Finding("capacity", "cordoned", node=f"n{i}", severity="warning") for i in range(MAX_RECORDS + 500)]
    broken = assessment(many)
    assert len(planner.plan(None, broken).events) == MAX_RECORDS + 500  # each object's first Event
    fixed = assessment([])
    clock.now += 1
    planner.plan(broken, fixed)
    clock.now += 2 * 3600  # the API server has dropped them all (--event-ttl 1h)
    planner.plan(fixed, fixed)
    assert planner.series == {}
    assert len(planner.buckets.buckets) <= MAX_RECORDS


def test_a_warning_never_written_is_never_resolved() -> None:
    clock = Clock()
    planner = EventPlanner(clock, TokenBuckets(burst=1), grace=NO_GRACE)
    broken, fixed = assessment([PLUGIN_MISSING]), assessment([])
    assert warnings(planner.plan(None, broken).events) == [("Warning", "OperandMissing", 1)]
    clock.now += 1
    assert planner.plan(broken, fixed).suppressed == 1  # the Resolved: no token left
    clock.now += 1
    other = Finding("capacity", "cordoned", node="gpu-a", severity="warning")
    with_other = assessment([other])
    assert planner.plan(fixed, with_other).suppressed == 1  # its Warning: no token either
    clock.now += 1
    plan = planner.plan(with_other, fixed)
    assert (plan.events, plan.suppressed) == ((), 0)  # nothing to take back


# -- grace, and taking over from the last leader ---------------------------------------------------


def test_a_warning_waits_out_its_grace_and_a_transient_writes_nothing() -> None:
    from gpulabel.controller.grace import Grace

    clock = Clock()
    planner = EventPlanner(clock, grace=Grace({("operands", "missing"): 5.0, ("pending", "untolerated-taint"): 120.0}))
    broken, fixed = assessment([PLUGIN_MISSING, PENDING]), assessment([])
    assert planner.plan(None, broken).events == ()
    assert planner.pending == {"OperandMissing": 1, "PendingUntoleratedTaint": 1}
    clock.now += 4.9
    assert planner.plan(broken, broken).events == ()  # same findings, the grace not over: nothing
    clock.now += 0.2
    assert warnings(planner.plan(broken, broken).events) == [("Warning", "OperandMissing", 1)]
    assert planner.pending == {"PendingUntoleratedTaint": 1}
    clock.now += 10
    plan = planner.plan(broken, fixed)  # the pod's finding went within its grace: no Warning, no Resolved
    assert warnings(plan.events) == [("Normal", "OperandMissingResolved", 1)]
    assert planner.pending == {}
    clock.now += 1
    assert planner.plan(fixed, broken).events == ()  # back: its grace starts again


def test_the_next_leader_adopts_open_warnings_keeps_their_counts_and_resolves_the_gone() -> None:
    from gpulabel.controller.events import Written
    from gpulabel.controller.eventsink import open_warnings

    node = Regarding("Node", "", "gpu-a")
    cordon = Regarding("Node", "", "gpu-b")
    at = "2023-11-14T22:13:00.000000Z"
    later = "2023-11-14T22:13:10.000000Z"

    def event(regarding: Regarding, type_: str, reason: str, count: int, last: str) -> dict[str, Any]:
        return {
            "reportingController": "gpulabel",
            "regarding": {"kind": regarding.kind, "name": regarding.name},
            "type": type_,
            "reason": reason,
            "eventTime": at,
            "series": {"count": count, "lastObservedTime": last} if count > 1 else None,
            "note": f"{regarding.name} {reason}",
            "action": "CheckX",
        }

    server = [
        event(node, "Warning", "OperandMissing", 3, later),  # open, still found: kept at x3
        event(cordon, "Warning", "CapacityCordoned", 1, at),  # open, repaired while no one led
        event(node, "Warning", "CapacityNoAllocatable", 2, at),  # resolved later by the last leader
        event(node, "Normal", "CapacityNoAllocatableResolved", 1, later),
        {**event(node, "Warning", "Other", 1, at), "reportingController": "kubelet"},
    ]
    found = open_warnings(server)
    assert set(found) == {EventKey(node, "Warning", "OperandMissing"), EventKey(cordon, "Warning", "CapacityCordoned")}
    assert found[EventKey(node, "Warning", "OperandMissing")].times == 3
    assert isinstance(found[EventKey(cordon, "Warning", "CapacityCordoned")], Written)
    clock = Clock(1_700_000_100.0)
    planner = EventPlanner(clock, grace=NO_GRACE)
    planner.adopt(found)
    first = planner.plan(None, assessment([PLUGIN_MISSING]))
    assert warnings(first.events) == [("Normal", "CapacityCordonedResolved", 1)]  # not re-posted, the cordon resolved
    assert first.events[0].note == "no longer found: gpu-b CapacityCordoned" and first.events[0].action == "CheckX"
    clock.now += 5
    again = planner.plan(assessment([PLUGIN_MISSING]), assessment([]))
    assert warnings(again.events) == [("Normal", "OperandMissingResolved", 1)]
    clock.now += 5
    assert warnings(planner.plan(assessment([]), assessment([PLUGIN_MISSING])).events) == [
        ("Warning", "OperandMissing", 4)  # a new occurrence continues the adopted series
    ]


def test_event_grace_values_are_read_and_refused_in_one_line() -> None:
    from gpulabel.app.monitor import parse_graces
    from gpulabel.controller.grace import FAULT
    from gpulabel.errors import InputError

    grace = parse_graces(["operands/missing=0s", "default=1m"])
    assert grace.seconds("operands", "missing") == 0.0
    assert grace.seconds("operands", "noexecute-taint") == 60.0  # no grace of its own: the default
    assert grace.seconds("operands", "not-ready") == 300.0  # its own
    assert parse_graces(["all=2s"]).seconds("operands", "not-ready") == 2.0
    assert parse_graces([]).seconds("capacity", "cordoned") == FAULT
    for bad in ("operands=1s", "operands/missing", "x/y=soon", "operands/missing=-1"):
        with pytest.raises(InputError, match="--event-grace"):
            parse_graces([bad])


def test_api_errors_are_counted_and_said_once_a_minute_per_kind_expected_answers_are_not() -> None:
    from gpulabel.controller.apierrors import ApiErrors, resource_of

    assert resource_of("/api/v1/namespaces/ml/pods/x") == "pods"
    assert resource_of("/apis/events.k8s.io/v1/namespaces/default/events/e.1") == "events.events.k8s.io"
    assert resource_of("/api/v1/nodes/gpu-a/status") == "nodes/status"
    assert resource_of("/apis/coordination.k8s.io/v1/namespaces/gpulabel/leases") == "leases.coordination.k8s.io"
    counted: list[int | str] = []
    said: list[str] = []
    clock = Clock()
    errors = ApiErrors(counted.append, said.append, clock=clock)
    for _ in range(3):
        errors(403, "PATCH", "/apis/events.k8s.io/v1/namespaces/default/events/e.1")
    errors(503, "GET", "/api/v1/nodes")
    clock.now += 60
    errors(403, "PATCH", "/apis/events.k8s.io/v1/namespaces/default/events/e.2")
    assert counted == [403, 403, 403, 503, 403]
    assert said == [
        "api error: PATCH events.events.k8s.io 403",
        "api error: GET nodes 503",
        "api error: PATCH events.events.k8s.io 403 (2 more since the last line)",
    ]


def test_a_404_on_a_gone_pod_and_a_409_on_an_existing_event_are_no_api_errors(tmp_path: Any) -> None:
    """At the wire: the client tells ``on_error`` of a 403, not of the 404 and 409 the writer expects."""
    from tests.fakeapi import FakeApi as WireApi
    from tests.fakeapi import FakeClock, fake_client

    api = WireApi()
    client = fake_client(tmp_path, api, FakeClock())
    told: list[tuple[int | str, str, str]] = []
    client.on_error = lambda code, method, path: told.append((code, method, path))
    writer = EventWriter(client, "mon-0")
    spec = EventPlanner(Clock(), grace=NO_GRACE).plan(None, assessment([PENDING])).events[0]
    assert writer.write(spec) is False  # the pod is gone: a 404 answer, nothing written
    with pytest.raises(ClusterError):
        client.request("GET", "/api/v1/namespaces/ml/pods/train-0")  # not expected here: an error
    assert told == [(404, "GET", "/api/v1/namespaces/ml/pods/train-0")]


def test_a_pending_pods_warning_is_held_while_a_node_is_coming_for_it_and_written_when_it_is_late() -> None:
    """Issue 45: a Pending pod a Karpenter NodeClaim is in flight for waits on purpose: its placement Warning
    (``insufficient``) is held while ``node-coming`` (info) says so, past its grace though it is, and written at
    once when the NodeClaim turns ``node-late`` (with that Warning too); another pod's Warning is not held."""
    clock = Clock()
    planner = EventPlanner(clock, grace=NO_GRACE)
    insufficient = Finding("pending", "insufficient", pod="ml/train-1", severity="warning", args=("nvidia.com/gpu",))
    claim = ("nodeclaim/gpu-a100-7xk2p", "nodepool/gpu-a100")
    coming = Finding("pending", "node-coming", pod="ml/train-1", severity="info", args=claim)
    late = Finding("pending", "node-late", pod="ml/train-1", severity="warning", args=(*claim, "not-Registered"))
    waiting = assessment([insufficient, coming, PENDING])
    assert warnings(planner.plan(None, waiting).events) == [("Warning", "PendingUntoleratedTaint", 1)]
    assert planner.pending == {"PendingInsufficient": 1}
    clock.now += 600
    assert planner.plan(waiting, waiting).events == ()  # held, however long
    lapsed = assessment([insufficient, late, PENDING])
    events = warnings(planner.plan(waiting, lapsed).events)
    assert sorted(events) == [("Warning", "PendingInsufficient", 1), ("Warning", "PendingNodeLate", 1)]
    assert planner.pending == {}
    # without the NodeClaim the same Warning is written as before
    alone = EventPlanner(Clock(), grace=NO_GRACE)
    assert warnings(alone.plan(None, assessment([insufficient])).events) == [("Warning", "PendingInsufficient", 1)]
