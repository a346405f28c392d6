"""Writing ``gpulabel monitor``'s Events: the writer, the sink, and the Warnings a previous leader left open.

:class:`EventWriter` creates and patches the :class:`~gpulabel.controller.events.EventSpec`
that :class:`~gpulabel.controller.events.EventPlanner` plans, through ``cluster/writes.py``;
:class:`EventSink` plans on each publish and writes on a background thread,
coalescing what waits (at most ``MAX_QUEUED`` Events; more are counted as suppressed).
On taking the lead it adopts the Warnings no ``<reason>Resolved`` answers
(:func:`open_warnings`), so that a new leader continues their series.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from gpulabel.checks.engine.assessment import Assessment
from gpulabel.controller.events import (
    CONTROLLER,
    MAX_QUEUED,
    MAX_RECORDS,
    EventKey,
    EventPlanner,
    EventSpec,
    Regarding,
    Written,
)
from gpulabel.controller.sinks import BackgroundSink
from gpulabel.errors import ClusterError

if TYPE_CHECKING:
    from gpulabel.cluster.client import KubeClient
    from gpulabel.controller.monitor_metrics import MonitorMetrics

__all__ = ["EventSink", "EventWriter", "SpecWriter", "open_warnings"]


class SpecWriter(Protocol):
    def write(self, spec: EventSpec) -> bool:
        """Write ``spec``; whether an Event was written (``False``: its object is gone)."""
        ...


class EventWriter:
    """Writes EventSpecs to the API server through ``cluster/writes.py`` (``dry_run``: the server's dry run).

    A Pod's Event carries the pod's UID (read with one GET: ``kubectl describe pod`` matches on it); a
    Node's carries the node's name as its UID, as the kubelet's do (``kubectl describe node`` looks
    for both). An Event that already exists (a previous instance wrote it) continues its series from
    the server's count; a series whose Event is gone is created again, with its series.
    """

    def __init__(self, client: KubeClient, instance: str, dry_run: bool = False) -> None:
        self.client = client
        self.instance = instance
        self.dry_run = dry_run
        self.ahead: dict[str, int] = {}  # Event name -> how far the server's count is ahead of the planner's

    def _uid(self, r: Regarding) -> str | None:
        if r.kind == "Node":
            return r.name
        try:
            pod = self.client.request("GET", f"/api/v1/namespaces/{r.namespace}/pods/{r.name}", expected=(404,))
        except ClusterError as err:
            if err.status == 404:
                return None
            raise
        return str((pod.get("metadata") or {}).get("uid") or "")

    def write(self, spec: EventSpec) -> bool:
        from gpulabel.cluster import writes

        uid = self._uid(spec.key.regarding)
        if uid is None:
            return False
        count = spec.count + self.ahead.get(spec.name, 0)
        series = spec.series(count)
        if count >= 2 and writes.patch_event_series(self.client, spec.namespace, spec.name, series, self.dry_run):
            return True
        if writes.create_event(self.client, spec.namespace, spec.body(self.instance, uid, count), self.dry_run):
            return True
        return self._continue(spec, uid, count)

    def open_warnings(self) -> dict[EventKey, Written]:
        """The Warnings gpulabel wrote (``reportingController`` gpulabel, any instance) that no later Normal
        ``<reason>Resolved`` on the same object answers: what the last leader left open."""
        path = "/apis/events.k8s.io/v1/events"
        try:
            items, _ = self.client.list_objects(
                path, lambda e: e, field_selector=f"reportingController={CONTROLLER}", on_page=lambda n, p: None
            )
        except ClusterError as err:
            if err.status != 400:  # a server without that field selector: read them all
                raise
            items, _ = self.client.list_objects(path, lambda e: e, on_page=lambda n, p: None)
        return open_warnings(items)

    def _continue(self, spec: EventSpec, uid: str, count: int) -> bool:
        """The Event exists (409): the next count of the server's series."""
        from gpulabel.cluster import writes

        try:
            found = self.client.request("GET", self.client.event_path(spec.namespace, spec.name), expected=(404,))
        except ClusterError as err:
            if err.status != 404:
                raise
            return bool(writes.create_event(self.client, spec.namespace, spec.body(self.instance, uid), self.dry_run))
        server = int(((found or {}).get("series") or {}).get("count") or 1)
        if server >= count:
            if len(self.ahead) >= MAX_RECORDS:
                self.ahead.clear()
            self.ahead[spec.name] = self.ahead.get(spec.name, 0) + server + 1 - count
            count = server + 1
        return bool(writes.patch_event_series(self.client, spec.namespace, spec.name, spec.series(count), self.dry_run))


class EventSink(BackgroundSink):
    """The Events :class:`~gpulabel.controller.sinks.Sink`: plans on each publish, writes in the background.

    ``background=False`` leaves the writes for :meth:`drain` (tests, shutdown). Waiting writes are
    coalesced by Event (the latest count wins); past ``MAX_QUEUED`` waiting Events the rest are counted
    as suppressed.
    """

    def __init__(
        self,
        writer: SpecWriter,
        planner: EventPlanner | None = None,
        metrics: MonitorMetrics | None = None,
        warn: Callable[[str], None] = lambda line: None,
        background: bool = True,
        max_queued: int = MAX_QUEUED,
    ) -> None:
        super().__init__("events", "events", background, warn)
        self.writer = writer
        self.planner = planner or EventPlanner()
        self.metrics = metrics
        self.warn = warn
        self.max_queued = max_queued
        self.previous: Assessment | None = None
        self._lock = threading.Lock()
        self._pending: dict[EventKey, EventSpec] = {}
        self.written: list[EventSpec] = []  # the last drain's writes (for logs and tests)

    def take_over(self) -> None:
        """On taking the lead: adopt the Warnings the last leader left open (one LIST of gpulabel's Events)."""
        read = getattr(self.writer, "open_warnings", None)
        if callable(read):
            found = read()
            self.planner.adopt(found)
            self.warn(f"events: {len(found)} open Warning(s) of the last leader adopted")

    def tick(self) -> None:
        """Plan again on the last picture: a grace may have ended since (cheap when none has)."""
        if self.previous is not None and self.planner.pending:
            self.publish(self.previous)

    def publish(self, assessment: Assessment) -> None:
        plan = self.planner.plan(self.previous, assessment)
        self.previous = assessment
        if self.metrics is not None:
            self.metrics.events_pending(self.planner.pending)
        dropped = plan.suppressed
        with self._lock:
            for spec in plan.events:
                if spec.key in self._pending or len(self._pending) < self.max_queued:
                    self._pending[spec.key] = spec
                else:
                    dropped += 1
        if dropped and self.metrics is not None:
            self.metrics.event_suppressed(dropped)
        if plan.events:
            self._wake()

    def drain(self) -> list[EventSpec]:
        """Write what waits, in the caller's thread; the Events written."""
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
        done = []
        for spec in pending:
            try:
                if not self.writer.write(spec):
                    continue
            except ClusterError as err:
                self.warn(f"event {spec.namespace}/{spec.name} {spec.key.reason}: {err}")
                continue
            done.append(spec)
            if self.metrics is not None:
                self.metrics.event_written(spec.key.type, spec.key.reason)
        self.written = done
        return done


def _time(text: object) -> float:
    if not isinstance(text, str) or not text:
        return 0.0
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def open_warnings(events: Iterable[Mapping[str, Any]]) -> dict[EventKey, Written]:
    """Of events.k8s.io/v1 Events, gpulabel's Warnings that no later ``<reason>Resolved`` Normal answers."""
    warnings: dict[EventKey, Written] = {}
    resolved: dict[EventKey, float] = {}
    for e in events:
        if e.get("reportingController") != CONTROLLER:
            continue
        r = e.get("regarding") or {}
        kind, name = str(r.get("kind") or ""), str(r.get("name") or "")
        if kind not in ("Node", "Pod") or not name:
            continue
        regarding = Regarding(kind, str(r.get("namespace") or "") if kind == "Pod" else "", name)
        series = e.get("series") or {}
        first = _time(e.get("eventTime"))
        last = max(first, _time(series.get("lastObservedTime")))
        reason, type_ = str(e.get("reason") or ""), str(e.get("type") or "")
        if type_ == "Warning":
            count = int(series.get("count") or e.get("deprecatedCount") or 1)
            key = EventKey(regarding, "Warning", reason)
            warnings[key] = Written(count, first, last, str(e.get("note") or ""), str(e.get("action") or ""))
        elif type_ == "Normal" and reason.endswith("Resolved"):
            key = EventKey(regarding, "Warning", reason[: -len("Resolved")])
            resolved[key] = max(resolved.get(key, 0.0), last)
    return {k: w for k, w in warnings.items() if resolved.get(k, float("-inf")) < w.last}
