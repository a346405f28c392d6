"""``gpulabel monitor``'s loop: informers feed one queue, the main thread evaluates in batches and publishes.

One :class:`~gpulabel.controller.informer.Informer` thread per kind LISTs and
WATCHes and puts what it reads on one queue. The main thread waits for the
first LIST of every kind (then evaluates and publishes once), and from then
on drains the queue in batches: a batch is the first delta and every delta
that arrives within ``batch_seconds`` (20 ms) of it, so a burst (a node
added with its operand pods, a relist) costs one evaluation, not one per
event. Each delta goes to the :class:`~gpulabel.checks.engine.assessment.Evaluator`
(``reset`` for a LIST, ``apply`` for an event); then ``assess(now)`` and every
sink's ``publish``. An event that changes no record (a node status heartbeat:
kwok's or a kubelet's, thousands a minute on a large cluster) is assessed only
if the last evaluation is ``unchanged_seconds`` (5 s) old: a change does not
wait behind heartbeats' evaluations, and ages still grow under them. With no
event for ``resync_seconds`` it evaluates anyway: ages (a deploy label paused
past ``--stuck-after``) grow without an event.

Leader election (the existing Lease, ``controller/loop.py``): every replica
keeps its informers running, evaluates and publishes to ``sinks`` (metrics,
the log, the dump), so each finding's series is exported by every replica
and a handover leaves no gap (the alert rules take the max over replicas).
Only the leader publishes to ``leader_sinks``, the sinks that write to the
API server (Events, the node condition): on taking the Lease each one's
``take_over()`` runs first (it reads what the last leader wrote), then it
gets the current picture at once, and while leading its ``tick()`` runs
about twice a second (Warnings whose grace ends between evaluations). The
leader that cannot renew within the deadline stops (exit 1, the Deployment
restarts it as a standby); SIGTERM stops cleanly and releases the Lease.
"""

from __future__ import annotations

import contextlib
import queue
import signal
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from gpulabel.controller.informer import Bookmark, Change, Delta, Informer, Problem, Reset
from gpulabel.controller.loop import await_lease, keep_lease

if TYPE_CHECKING:
    from gpulabel.checks.engine.assessment import Assessment, Evaluator
    from gpulabel.cluster.client import KubeClient
    from gpulabel.controller.heap import Heap
    from gpulabel.controller.lease import LeaseLock
    from gpulabel.controller.sinks import Sink

__all__ = ["BATCH_SECONDS", "UNCHANGED_SECONDS", "WATCH_TIMEOUT", "Health", "Monitor"]

BATCH_SECONDS = 0.02
# An event whose record is equal to the last one (no field gpulabel reads changed: a status heartbeat) is assessed
# only if the last evaluation is this old. At 5,000 kwok nodes such events came 8 a second, each a whole assess
# and publish (about 15 ms of CPU, bench/README.md "Live"), and a change arriving meanwhile waited for it.
UNCHANGED_SECONDS = 5.0
# Each watch asks the server to end its stream after this many seconds (``timeoutSeconds``); the informer
# resumes it at once. On a kind nothing changes in, the stream's end is the only sign of life the API server
# gives (no bookmark until its watch cache's resourceVersion passes the watch's: an etcd progress
# notification, every 10 minutes by default, or a consistent LIST of that kind by some client), so this bounds
# gpulabel_watch_last_event_timestamp_seconds' age on a healthy watch: one minute under the 300 s of
# GPULabelMonitorWatchStale (docs/monitor.md, "Bookmarks on a quiet kind").
WATCH_TIMEOUT = 240


class _Gauge(Protocol):
    def set(self, value: float) -> None: ...


class Health(Protocol):
    """What the monitor tells its metrics about itself (``MonitorMetrics`` has these)."""

    @property
    def leader(self) -> _Gauge: ...

    @property
    def ready(self) -> threading.Event: ...

    def watch_event(self, kind: str, at: float) -> None: ...

    def relisted(self, kind: str) -> None: ...

    def api_error(self, code: int | str) -> None: ...

    def evaluated(self, scope: str, seconds: float) -> None: ...


class Monitor:
    """Watches ``kinds``, keeps ``evaluator`` told, publishes to ``sinks``, and to ``leader_sinks`` while leading.

    ``lock`` None: no election, this instance leads. ``scope`` names the
    evaluator's kind of work for the metrics (``full`` or ``incremental``).
    ``clock`` is the wall clock an assessment is made at; ``monotonic`` the
    one the batch window, the resync period and an unchanged record's age are
    measured on (a test holds a batch open on it). ``relist_seconds``:
    each informer also relists that often (``sync --watch``'s resync period).
    ``stop``: the Event that stops it (default a new one; ``sync`` passes its
    client's retry cancel, so a lost Lease also abandons a write in flight).
    ``writes`` says what a lost Lease stops, in the line that says so.
    ``heap``: its ``settle`` called after the evaluation that follows a LIST or a relist, its ``keep`` after
    every other (``gpulabel monitor`` passes one; none: the collector left as it is).
    """

    def __init__(
        self,
        client: KubeClient,
        kinds: Sequence[str],
        evaluator: Evaluator,
        sinks: Sequence[Sink],
        *,
        leader_sinks: Sequence[Sink] = (),
        lock: LeaseLock | None = None,
        health: Health | None = None,
        say: Callable[[str], None] = lambda line: None,
        scope: str = "full",
        batch_seconds: float = BATCH_SECONDS,
        resync_seconds: float = 1800.0,
        unchanged_seconds: float = UNCHANGED_SECONDS,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        watch_timeout: int = WATCH_TIMEOUT,
        relist_seconds: float | None = None,
        stop: threading.Event | None = None,
        writes: str = "publishing",
        heap: Heap | None = None,
    ) -> None:
        self.client = client
        self.kinds = tuple(kinds)
        self.evaluator = evaluator
        self.sinks = tuple(sinks)
        self.leader_sinks = tuple(leader_sinks)
        self.lock = lock
        self.health = health
        self.say = say
        self.scope = scope
        self.batch_seconds = batch_seconds
        self.resync_seconds = resync_seconds
        self.unchanged_seconds = unchanged_seconds
        self._evaluated = float("-inf")  # monotonic time of the last evaluation
        self.clock, self.monotonic = clock, monotonic
        self.writes, self.heap = writes, heap
        self._listed = False  # a LIST or relist taken since the last evaluation: settle after the next
        self.stop = stop if stop is not None else threading.Event()
        self.leading = threading.Event()
        self.lost = threading.Event()
        self.queue: queue.Queue[Delta | None] = queue.Queue()
        self.informers = [
            Informer(
                client,
                k,
                self.queue.put,
                self.stop,
                timeout_seconds=watch_timeout,
                clock=clock,
                relist_seconds=relist_seconds,
            )
            for k in self.kinds
        ]
        self.evaluations = 0
        self.last: Assessment | None = None
        self._led = False  # the leader sinks have had a picture since this instance leads
        self.crashed: BaseException | None = None  # a bug in an informer thread, raised again by run()
        self._lease_threads: list[threading.Thread] = []  # the campaign, then the renewer: joined before stepping down

    # -- leading ------------------------------------------------------------------

    def _campaign(self) -> None:
        """Thread: wait for the Lease, then lead (wake the main loop) and keep renewing it."""
        assert self.lock is not None
        if not await_lease(self.lock, self.stop, self.say):
            return
        self._lease_threads.append(keep_lease(self.lock, self.stop, self.lost))
        self._take_over()
        self.leading.set()
        if self.health is not None:
            self.health.leader.set(1)
        self.queue.put(None)  # evaluate the warm caches now

    def _take_over(self) -> None:
        """What the last leader (or this monitor before a restart) wrote, read before this one writes."""
        for sink in self.leader_sinks:
            take_over = getattr(sink, "take_over", None)
            if callable(take_over):
                try:
                    take_over()
                except Exception as err:  # a failed read: the sink starts from nothing, as before
                    self.say(f"take over: {err}")

    def _inform(self, informer: Informer) -> None:
        """Thread: one informer; a bug in it stops the monitor, and :meth:`run` raises it (with its traceback)."""
        try:
            informer.run()
        except BaseException as err:
            self.crashed = err
            self.stop.set()
            self.queue.put(None)

    # -- the loop -----------------------------------------------------------------

    def _batch(self, timeout: float) -> list[Delta | None]:
        """The next delta (waiting at most ``timeout``) and every one arriving within ``batch_seconds`` of it.

        The window is read on :attr:`monotonic` alone: a wait that finds nothing asks the clock again rather
        than ending the batch (on the real clock the same thing: the queue's own wait ends only past it)."""
        try:
            batch = [self.queue.get(timeout=max(timeout, 0.0))]
        except queue.Empty:
            return []
        deadline = self.monotonic() + self.batch_seconds
        while (left := deadline - self.monotonic()) > 0 and not self.stop.is_set():
            with contextlib.suppress(queue.Empty):
                batch.append(self.queue.get(timeout=left))
        return batch

    def _take(self, delta: Delta | None, unsynced: set[str]) -> bool:
        """Hand one delta to the evaluator; True if it is to be assessed (the state changed, or an unchanged
        record arrived ``unchanged_seconds`` after the last evaluation)."""
        health = self.health
        if isinstance(delta, Change):
            changed = self.evaluator.apply(delta.kind, delta.key, delta.record)
            if health is not None:
                health.watch_event(delta.kind, delta.at)
            return changed or self.monotonic() - self._evaluated >= self.unchanged_seconds
        if isinstance(delta, Reset):
            self.evaluator.reset(delta.kind, delta.records)
            unsynced.discard(delta.kind)
            self._listed = True
            if delta.relist:
                self.say(f"{delta.kind}: relisted ({len(delta.records)} objects)")
                if health is not None:
                    health.relisted(delta.kind)
            return True
        if isinstance(delta, Bookmark):
            if health is not None:
                health.watch_event(delta.kind, delta.at)
        elif isinstance(delta, Problem):
            self.say(f"{delta.kind}: {delta.text}")
            if health is not None and delta.code is not None:
                health.api_error(delta.code)
        return False

    def evaluate(self) -> Assessment:
        """Assess now and publish to every sink."""
        self._evaluated = self.monotonic()
        started = time.perf_counter()
        assessment = self.evaluator.assess(self.clock())
        if self.health is not None:
            self.health.evaluated(self.scope, time.perf_counter() - started)
        for sink in self.sinks:
            sink.publish(assessment)
        if self.leading.is_set():
            self._led = True
            for sink in self.leader_sinks:
                sink.publish(assessment)
        self.evaluations += 1
        self.last = assessment
        return assessment

    def run(self) -> int:
        """Until :attr:`stop` is set (SIGTERM or SIGINT, or the Lease lost): 0 on a clean stop, 1 when the Lease
        was lost. The one place gpulabel's controllers (``monitor``, ``sync --watch``) take the signals."""
        previous = {}
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(ValueError):  # not the main thread (tests)
                previous[sig] = signal.signal(sig, lambda signum, frame: self.stop.set())
        try:
            code = self._run()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if self.crashed is not None:
            raise self.crashed
        return code

    def _run(self) -> int:
        for informer in self.informers:
            threading.Thread(
                target=self._inform, args=(informer,), name=f"informer-{informer.kind.kind}", daemon=True
            ).start()
        if self.lock is None:
            self._take_over()
            self.leading.set()  # no election: the only instance leads (the NoLeader alert reads the gauge)
            if self.health is not None:
                self.health.leader.set(1)
        else:
            campaign = threading.Thread(target=self._campaign, name="lease-campaign", daemon=True)
            self._lease_threads.append(campaign)
            campaign.start()
        unsynced = set(self.kinds)
        dirty = published = False
        due = self.monotonic() + self.resync_seconds
        try:
            while not self.stop.is_set():
                batch = self._batch(min(due - self.monotonic(), 0.5))
                for delta in batch:
                    dirty = self._take(delta, unsynced) or dirty
                del batch
                if unsynced:
                    continue
                if self.health is not None:
                    self.health.ready.set()  # every kind listed: a leader about to publish, or a warm standby
                resync = self.monotonic() >= due
                if dirty or resync or not published:
                    self.evaluate()  # every replica: its metrics export the findings too
                    dirty, published = False, True
                    if self._listed:  # the records of a LIST are assessed: the heap they make is settled
                        self._listed = False
                        if self.heap is not None:
                            self.heap.settle()
                    elif self.heap is not None:  # what the evaluation kept: out of the young generation's walks
                        self.heap.keep()
                    due = self.monotonic() + self.resync_seconds
                elif self.leading.is_set():
                    self._lead()
        finally:
            self.stop.set()
            self._step_down()
        return 1 if self.lost.is_set() else 0

    def _lead(self) -> None:
        """While leading: the leader sinks get the current picture once (just took the lead), then their ticks."""
        if not self._led and self.last is not None:
            self._led = True
            for sink in self.leader_sinks:
                sink.publish(self.last)
            return
        for sink in self.leader_sinks:
            tick = getattr(sink, "tick", None)
            if callable(tick):
                tick()

    def _step_down(self) -> None:
        """After a stop: release the Lease if this instance holds it. The campaign and the renewer end first (a
        round in flight may still take or renew it), and the release does not ask whether this instance got
        to lead: one stopped between taking the Lease and leading held it until it expired, keeping the next
        standby waiting (``LeaseLock.release`` gives it up only if the server says this instance holds it)."""
        if self.health is not None:
            self.health.leader.set(0)
        if self.lock is None:
            return
        joined = 0
        while joined < len(self._lease_threads):  # the campaign appends the renewer before it ends
            self._lease_threads[joined].join(timeout=self.lock.retry_seconds + 5.0)
            joined += 1
        if self.lost.is_set():
            self.say(f"lost lease {self.lock.name}: stopped {self.writes}")
        elif self.leading.is_set() or self.lock.last_renewed > 0:
            self.lock.release()
