"""``gpulabel monitor``'s Kubernetes Events (events.k8s.io/v1): a pure planner, a writer and the sink.

What an Event is (docs/monitor-sinks.md):

- it is ``regarding`` the Pod of a pod finding, else the Node of a node finding
  (findings about neither make none); only error and warning findings make
  Events, info findings none;
- ``reason`` is UpperCamelCase of the check and the finding's reason
  (``operands``/``missing``: ``OperandMissing``); ``type`` Warning when such a
  finding appears, and ``<reason>Resolved`` of type Normal when the object has
  no finding of that reason left; ``note`` the finding's line and detail (for
  a node, its root cause line too), ``action`` ``Check<Check>``,
  ``reportingController: gpulabel``, ``reportingInstance`` the pod or host;
- as client-go's tools/events recorder does, Events with the same regarding
  object, type, reason (and action, controller, instance: the same for one
  monitor) are one: a repeat (another finding of that reason on the object, a
  problem that comes back, a problem still there after ``refresh``) bumps the
  Event's ``series`` {count, lastObservedTime} instead of making a new Event;
- its name is ``<object>.<hex>`` like the recorders', but the hex is a hash of
  (kind, namespace, object, reason) rather than the time: the same Event
  whichever instance writes it, so a restarted or failed-over monitor continues
  the series instead of duplicating it;
- per regarding object, a token bucket as client-go's tools/record spam filter:
  a burst of 25, refilled by one every 5 minutes; what it leaves out is counted
  (``gpulabel_events_suppressed_total``), never written.

:class:`EventPlanner` is pure (a clock is passed in): assessments in, :class:`EventSpec`
out. Writing them, and reading back what a previous leader left open, is
:mod:`gpulabel.controller.eventsink`'s.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

from gpulabel.checks.engine.assessment import Assessment
from gpulabel.checks.engine.rootcause import Cause
from gpulabel.checks.engine.verdict import Identity, identity
from gpulabel.controller.grace import Grace
from gpulabel.controller.sinks import same_findings
from gpulabel.model.findings import Finding
from gpulabel.model.severity import at_or_above

__all__ = [
    "BURST",
    "CONTROLLER",
    "EVENT_TTL",
    "MAX_QUEUED",
    "MAX_RECORDS",
    "REFILL_SECONDS",
    "REFRESH",
    "EventKey",
    "EventPlanner",
    "EventSpec",
    "Plan",
    "Regarding",
    "TokenBuckets",
    "Written",
    "camel",
    "event_name",
    "event_reason",
    "micro_time",
    "specs_by_key",
]

CONTROLLER = "gpulabel"
BURST = 25  # client-go tools/record defaultSpamBurst: 25 Events about one object at once
REFILL_SECONDS = 300.0  # ... then one more every 5 minutes (defaultSpamQPS = 1/300)
REFRESH = 30 * 60.0  # client-go tools/events refreshTime: a series still going is written again
EVENT_TTL = 60 * 60.0  # kube-apiserver --event-ttl (default 1h): how long a written Event lives
MAX_RECORDS = 4096  # client-go's caches (maxLruCacheEntries): series and buckets of idle objects beyond are dropped
MAX_QUEUED = 1000  # client-go tools/events maxQueuedEvents
FORGET_EVERY = 60.0  # seconds between sweeps for refreshes and for the series the API server has dropped
NOTE_LIMIT = 1024  # API validation: note, reason, action and reportingInstance lengths
NAME_LIMIT = 253
FIELD_LIMIT = 128
NODE_EVENTS_NAMESPACE = "default"  # where recorders put Events about cluster-scoped objects


def camel(text: str) -> str:
    """``operand-pod`` -> ``OperandPod``, ``gpu.present`` -> ``GpuPresent``."""
    return "".join(w[:1].upper() + w[1:] for w in text.replace(".", "-").replace("_", "-").split("-") if w)


def event_reason(f: Finding) -> str:
    """UpperCamelCase of the check (singular) and the reason, the reason's repeat of the check left out:
    ``operands``/``missing`` -> ``OperandMissing``, ``nfd``/``nfd-missing`` -> ``NfdMissing``."""
    check = f.check[:-1] if f.check.endswith("s") and len(f.check) > 3 else f.check
    words = f.reason.split("-")
    if words and words[0] in (f.check, check):
        words = words[1:]
    return (camel(check) + camel("-".join(words)))[:FIELD_LIMIT]


class Regarding(NamedTuple):
    """The object an Event is about: a Node (namespace "") or a Pod."""

    kind: str
    namespace: str
    name: str

    @classmethod
    def of(cls, f: Finding) -> Regarding | None:
        if f.pod:
            namespace, _, name = f.pod.partition("/")
            return cls("Pod", namespace, name) if name else None
        return cls("Node", "", f.node) if f.node else None

    @property
    def event_namespace(self) -> str:
        return self.namespace or NODE_EVENTS_NAMESPACE


class EventKey(NamedTuple):
    """client-go's isomorphic key: the Events one series counts (action, controller and instance are fixed)."""

    regarding: Regarding
    type: str
    reason: str


def event_name(key: EventKey) -> str:
    """``<object>.<16 hex>``: the recorders' shape, the hex a hash of the object and reason (a DNS subdomain)."""
    r = key.regarding
    digest = hashlib.sha256(f"{r.kind}/{r.namespace}/{r.name}/{key.reason}".encode()).hexdigest()[:16]
    return f"{r.name[: NAME_LIMIT - 17].rstrip('.-')}.{digest}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def micro_time(at: float) -> str:
    """metav1.MicroTime as the API writes it."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class EventSpec:
    """One write: ``count`` 1 creates the Event, more sets its ``series`` (created with it if it is gone)."""

    key: EventKey
    action: str
    note: str
    count: int
    first: float  # eventTime: the series' first occurrence
    last: float  # series.lastObservedTime

    @property
    def name(self) -> str:
        return event_name(self.key)

    @property
    def namespace(self) -> str:
        return self.key.regarding.event_namespace

    def series(self, count: int | None = None) -> dict[str, Any]:
        return {"count": count or self.count, "lastObservedTime": micro_time(self.last)}

    def body(self, instance: str, uid: str, count: int | None = None) -> dict[str, Any]:
        r = self.key.regarding
        regarding: dict[str, Any] = {"apiVersion": "v1", "kind": r.kind, "name": r.name, "uid": uid}
        if r.namespace:
            regarding["namespace"] = r.namespace
        event: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "eventTime": micro_time(self.first),
            "reportingController": CONTROLLER,
            "reportingInstance": _clip(instance, FIELD_LIMIT),
            "action": self.action,
            "reason": self.key.reason,
            "type": self.key.type,
            "note": self.note,
            "regarding": regarding,
        }
        if (count or self.count) >= 2:
            event["series"] = self.series(count)
        return event


class Written(NamedTuple):
    """What an Event on the server says of its series (read on taking the lead)."""

    times: int  # series.count (1 without a series)
    first: float
    last: float
    note: str
    action: str


class TokenBuckets:
    """Per-object token buckets (client-go's EventSourceObjectSpamFilter): ``burst`` at first, one more each
    ``refill`` seconds. A full bucket is the same as none, so full ones are forgotten; past ``limit``
    objects the least recently used are too (client-go keeps them in an LRU of 4096)."""

    def __init__(self, burst: int = BURST, refill: float = REFILL_SECONDS, limit: int = MAX_RECORDS) -> None:
        self.burst = burst
        self.refill = refill
        self.limit = limit
        self.buckets: dict[Regarding, tuple[float, float]] = {}  # object -> (tokens, when counted), oldest first

    def _tokens(self, obj: Regarding, now: float) -> float:
        tokens, stamp = self.buckets.get(obj, (float(self.burst), now))
        return min(float(self.burst), tokens + max(now - stamp, 0.0) / self.refill)

    def take(self, obj: Regarding, now: float) -> bool:
        tokens = self._tokens(obj, now)
        self.buckets.pop(obj, None)  # re-inserted last: the dict's order is the LRU's
        allowed = tokens >= 1.0
        self.buckets[obj] = (tokens - 1.0 if allowed else tokens, now)
        if len(self.buckets) > self.limit:
            self.prune(now)
        return allowed

    def prune(self, now: float) -> None:
        """Forget full buckets; then, past three quarters of ``limit``, the least recently used."""
        for obj in [o for o in self.buckets if self._tokens(o, now) >= self.burst]:
            del self.buckets[obj]
        excess = len(self.buckets) - self.limit * 3 // 4
        for obj in list(self.buckets)[: max(excess, 0)]:
            del self.buckets[obj]


@dataclass(slots=True)
class _Series:
    count: int  # occurrences written (0: every one so far was suppressed)
    first: float
    last: float  # the last occurrence, written or not
    note: str


@dataclass(frozen=True, slots=True)
class Plan:
    events: tuple[EventSpec, ...] = ()
    suppressed: int = 0


@dataclass(slots=True)
class _Group:
    """The current problem findings of one Warning key, in order, and their identities."""

    findings: list[Finding] = field(default_factory=list)
    ids: set[Identity] = field(default_factory=set)
    held: bool = False  # a Pending pod's placement Warning while a node is coming for it (``pending`` node-coming)


COMING = ("pending", "node-coming")  # checks/pending/autoscale.py: info, a NodeClaim in flight within its grace


def _groups(assessment: Assessment, reasons: dict[tuple[str, str], str]) -> dict[EventKey, _Group]:
    """The current problem findings by Warning key; ``reasons`` remembers each check and reason's Event reason."""
    groups: dict[EventKey, _Group] = {}
    for f in assessment.findings:
        if f.baseline or not at_or_above(f.severity, "warning"):
            continue
        regarding = Regarding.of(f)
        if regarding is None:
            continue
        reason = reasons.get((f.check, f.reason))
        if reason is None:
            reason = reasons[(f.check, f.reason)] = event_reason(f)
        g = groups.setdefault(EventKey(regarding, "Warning", reason), _Group())
        g.findings.append(f)
        g.ids.add(identity(f))
    coming = {f.pod for f in assessment.findings if f.reason == COMING[1] and f.check == COMING[0] and f.pod}
    for key, g in groups.items():
        # a Pending pod a Karpenter NodeClaim is coming for, within its grace, waits on purpose: its placement
        # Warnings are held (not written, their grace kept) until the NodeClaim is late (node-late) or gone
        if coming and key.regarding.kind == "Pod" and all(f.check == COMING[0] for f in g.findings):
            g.held = f"{key.regarding.namespace}/{key.regarding.name}" in coming
    return groups


def _finding_note(f: Finding) -> str:
    return f"{f.line()}: {f.detail}" if f.detail else f.line()


class EventPlanner:
    """Assessments in, Event writes out; pure but for the state it keeps (series, buckets) and ``clock``."""

    def __init__(
        self,
        clock: Callable[[], float] = time.time,
        buckets: TokenBuckets | None = None,
        refresh: float = REFRESH,
        ttl: float = EVENT_TTL,
        grace: Grace | None = None,
    ) -> None:
        self.clock = clock
        self.buckets = buckets or TokenBuckets()
        self.refresh = refresh
        self.ttl = ttl
        self.series: dict[EventKey, _Series] = {}
        self._last: tuple[Assessment, dict[EventKey, _Group]] | None = None
        self._reasons: dict[tuple[str, str], str] = {}  # bounded by the checks' reason tables
        self._forgot = self._refreshed = float("-inf")
        self.grace = grace or Grace()
        self.posted: set[EventKey] = set()  # Warnings written (or rate-limited) for the current finding
        self._since: dict[EventKey, float] = {}  # when each current Warning key's findings appeared
        self._next_due = float("inf")  # the earliest end of a pending grace
        self.pending: dict[str, int] = {}  # Event reason -> Warnings waiting out their grace
        self._adopted: set[EventKey] = set()  # adopted, not yet planned: a finding there at the first plan stayed
        self._actions: dict[EventKey, str] = {}  # the action of an adopted Warning's Resolved Event

    def _grouped(self, assessment: Assessment | None) -> dict[EventKey, _Group]:
        if assessment is None:
            return {}
        if self._last is not None and self._last[0].result is assessment.result:
            return self._last[1]
        return _groups(assessment, self._reasons)

    def adopt(self, open_warnings: Mapping[EventKey, Written]) -> None:
        """The Warnings a previous leader wrote and did not resolve (read by ``EventWriter.open_warnings``): kept
        as this planner's own, so a finding still there is not written again (its count stays) and one gone is
        resolved at the first plan."""
        for key, w in open_warnings.items():
            if key.type != "Warning":
                continue
            self.series[key] = _Series(w.times, w.first, w.last, w.note)
            resolved = EventKey(key.regarding, "Normal", (key.reason + "Resolved")[:FIELD_LIMIT])
            self._actions[resolved] = w.action
            self.posted.add(key)
            self._adopted.add(key)
            self._since.setdefault(key, w.first)

    def _due(self, key: EventKey, group: _Group, now: float) -> float | None:
        """When ``key``'s grace ends, if it has not yet: None once it has held long enough."""
        since = self._since.setdefault(key, now)
        first = group.findings[0]
        ends = since + self.grace.seconds(first.check, first.reason)
        return ends if now < ends else None

    def plan(self, previous: Assessment | None, current: Assessment) -> Plan:
        """The writes that take ``previous`` to ``current`` (``previous`` ``None``: the first publish, when
        every current problem is new, but for the Warnings adopted), and what the rate limit left out.

        A Warning is written once its finding has held for its grace (``grace``); until then it is
        pending (``pending``, by Event reason), and a finding gone within its grace writes nothing."""
        now = self.clock()
        before = self._grouped(previous)
        if same_findings(previous, current):
            after = before  # nothing appeared or resolved: a grace ending or the refresh may have something to write
            if now - self._refreshed < FORGET_EVERY and now < self._next_due:
                self._last = (current, after)
                return Plan()
        else:
            after = self._grouped(current)
        self._last = (current, after)
        self._refreshed = now
        causes = {c.node: c for c in current.causes}
        out: list[EventSpec] = []
        suppressed = 0
        pending: dict[str, int] = {}
        next_due = float("inf")
        adopted, self._adopted = self._adopted, set()
        for key, group in after.items():
            record = self.series.get(key)
            if key not in self.posted:
                if group.held:
                    self._since.setdefault(key, now)  # its grace counts from now: written at once when released
                    pending[key.reason] = pending.get(key.reason, 0) + 1
                    continue
                due = self._due(key, group, now)
                if due is not None:
                    pending[key.reason] = pending.get(key.reason, 0) + 1
                    next_due = min(next_due, due)
                    continue  # not yet held for its grace
                self.posted.add(key)
            else:
                was = before.get(key)
                stayed = key in adopted if was is None else not (group.ids - was.ids)
                if stayed and (record is None or now - record.last < self.refresh):
                    continue  # stayed: written again only after ``refresh``
            spec = self._occur(key, group.findings, causes.get(key.regarding.name), now)
            if spec is None:
                suppressed += 1
            else:
                out.append(spec)
        for key in [k for k in self._since if k not in after]:
            del self._since[key]  # gone: its grace starts again if it comes back
        taken_back, left_out = self._resolutions(before, after, current, now)
        out.extend(taken_back)
        suppressed += left_out
        self.pending, self._next_due = pending, next_due
        if now - self._forgot >= FORGET_EVERY or len(self.series) - len(after) > MAX_RECORDS:
            self._forget(now, after)
            self._forgot = now
        return Plan(tuple(out), suppressed)

    def _resolutions(
        self, before: dict[EventKey, _Group], after: dict[EventKey, _Group], current: Assessment, now: float
    ) -> tuple[list[EventSpec], int]:
        """The Normal ``...Resolved`` Events of the posted Warnings whose findings are gone, and how many the
        rate limit left out."""
        out: list[EventSpec] = []
        suppressed = 0
        nodes: set[str] | None = None
        for key in [k for k in self.posted if k not in after]:
            self.posted.discard(key)
            warned = self.series.get(key)
            if warned is None or warned.count == 0:
                continue  # its Warning was never written: nothing to take back
            if key.regarding.kind == "Node":
                nodes = nodes if nodes is not None else {n.name for n in current.state.nodes}
                if key.regarding.name not in nodes:
                    continue  # the node is gone: nothing to tell about it
            resolved = EventKey(key.regarding, "Normal", (key.reason + "Resolved")[:FIELD_LIMIT])
            gone = before.get(key)
            spec = self._occur(resolved, gone.findings if gone else [], None, now, warned.note)
            self._actions.pop(resolved, None)
            if spec is None:
                suppressed += 1
            else:
                out.append(spec)
        return out, suppressed

    def _note(self, key: EventKey, findings: list[Finding], cause: Cause | None, warned: str = "") -> str:
        if not findings:  # a Warning adopted from the last leader, resolved: its note says what it was
            return _clip("no longer found: " + warned, NOTE_LIMIT)
        first = findings[0]
        text = _finding_note(first)
        if key.type == "Normal":
            text = "no longer found: " + first.line()
        if len(findings) > 1:
            text += f" (and {len(findings) - 1} more of this reason)"
        if cause is not None and key.regarding.kind == "Node":
            text += f"; {cause.line()}"
        return _clip(text, NOTE_LIMIT)

    def _occur(
        self, key: EventKey, findings: list[Finding], cause: Cause | None, now: float, warned: str = ""
    ) -> EventSpec | None:
        """One occurrence of ``key``: a new Event, or the next count of its series; ``None`` if rate-limited."""
        record = self.series.get(key)
        if record is not None and now - record.last > self.ttl:
            record = None  # its Event is gone (the API server's TTL): a new one
        allowed = self.buckets.take(key.regarding, now)
        if record is None or record.count == 0:
            record = _Series(0, now, now, self._note(key, findings, cause, warned))
            self.series[key] = record
        record.last = now
        if not allowed:
            return None
        record.count += 1
        action = _clip("Check" + camel(findings[0].check), FIELD_LIMIT) if findings else self._actions.get(key, "")
        return EventSpec(key, action, record.note, record.count, record.first, now)

    def _forget(self, now: float, active: Mapping[EventKey, _Group]) -> None:
        """Drop the series of Events the API server has dropped too; past ``MAX_RECORDS``, the oldest idle ones."""
        stale = [k for k, r in self.series.items() if k not in active and now - r.last > self.ttl]
        for k in stale:
            del self.series[k]
        if len(self.series) > MAX_RECORDS:
            idle = sorted((r.last, k) for k, r in self.series.items() if k not in active)
            for _, k in idle[: len(self.series) - MAX_RECORDS]:
                del self.series[k]


def specs_by_key(specs: Iterable[EventSpec]) -> dict[EventKey, EventSpec]:
    """The last write of each Event (tests and logs)."""
    return {s.key: s for s in specs}
