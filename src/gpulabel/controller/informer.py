"""Watch-driven caches: one paged LIST per kind, then a WATCH kept up for as long as the process runs.

This is client-go's reflector, reduced to what gpulabel needs. :func:`follow`
is the watch of one resource: it starts from a resourceVersion (the LIST's),
asks for bookmarks, and when the server closes the stream (its
``timeoutSeconds``) or the connection drops it resumes from the last
resourceVersion it saw, an event's or a bookmark's. It returns when the
watch cannot be resumed: 410 Gone (the version is older than the API server's
watch cache, as after an API server restart), or, if the caller says so,
after that many reconnections failed in a row. Then the caller relists.
``sync --watch`` (:mod:`gpulabel.controller.reconcile`) and the monitor's
informers both use it.

An :class:`Informer` is one kind of ``model.cluster.KINDS``: it LISTs it
(``KubeClient.list_objects``, pages converted as they arrive), hands the
records over as one :class:`Reset`, then each watch event as a
:class:`Change` (the record made by the kind's reader, the same reader
``check`` uses; the raw object is dropped once read) and each bookmark, and
each stream the server ends at its timeout, as a :class:`Bookmark`. A
relist is another :class:`Reset`.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpulabel.cluster.client import KubeClient
from gpulabel.cluster.watch import WatchExpired, watch_events
from gpulabel.errors import ClusterError, GpulabelError, InputError
from gpulabel.model.cluster import KIND

__all__ = ["Bookmark", "Change", "Delta", "Informer", "Problem", "Reset", "follow"]

JSON = dict[str, Any]
Key = tuple[str, str]  # (namespace, name); "" for cluster-scoped objects
POLL_SECONDS = 0.05  # how often a watch with a relist period looks at the clock


@dataclass(frozen=True, slots=True)
class Reset:
    """Every object of ``kind`` as one LIST read them (the first LIST, or a relist)."""

    kind: str
    records: tuple[tuple[Key, Any], ...]
    relist: bool  # the watch could not resume (410, or broken); False for the first LIST and a scheduled one
    at: float


@dataclass(frozen=True, slots=True)
class Change:
    """One watch event: the object's record (``None``: deleted)."""

    kind: str
    key: Key
    record: Any | None
    at: float


@dataclass(frozen=True, slots=True)
class Bookmark:
    """A bookmark, or (``ended``) the server ending the watch's stream at its ``timeoutSeconds``: no object
    changed, the watch is alive. On a kind nothing changes in, the stream's end is the only sign: the API
    server sends no bookmark until its watch cache's resourceVersion passes the watch's (docs/monitor.md,
    "Bookmarks on a quiet kind")."""

    kind: str
    at: float
    ended: bool = False


@dataclass(frozen=True, slots=True)
class Problem:
    """Something the informer rode out (a dropped watch, an unreadable object): one line for the log."""

    kind: str
    text: str
    code: int | str | None = None


Delta = Reset | Change | Bookmark | Problem


def follow(
    client: KubeClient,
    path: str,
    version: str,
    on_event: Callable[[str, JSON], None],
    on_drop: Callable[[ClusterError], None],
    stop: threading.Event,
    *,
    retired: threading.Event | None = None,
    give_up_after: int | None = None,
    timeout_seconds: int = 300,
    on_end: Callable[[], None] | None = None,
    field_selector: str | None = None,
) -> bool:
    """Watch ``path`` from ``version`` until ``stop`` (or ``retired``) is set or the watch cannot resume.

    ``on_event(type, object)`` gets every event, bookmarks too; ``on_end()``
    is told each time the server ends a stream whole (its ``timeoutSeconds``:
    the server answered, the watch is alive). The stream is
    resumed from the last resourceVersion seen after the server ends it, and
    after a drop (``on_drop`` is told; the retry policy's backoff, waited on
    ``stop``). Returns True when the caller must relist: 410 Gone, or
    ``give_up_after`` failed reconnections in a row (None: never give up).
    Returns False when stopped.
    """
    policy = client.retrier.policy
    failures = 0

    def done() -> bool:
        return stop.is_set() or (retired is not None and retired.is_set())

    while not done():
        try:
            for event in watch_events(client, path, version, timeout_seconds, field_selector):
                obj = event.get("object") or {}
                version = (obj.get("metadata") or {}).get("resourceVersion") or version
                failures = 0
                on_event(str(event.get("type")), obj)
                del event, obj  # the raw object lives no longer than its event
                if done():
                    return False
            failures = 0
            if on_end is not None and not done():
                on_end()
        except WatchExpired:
            return True
        except ClusterError as err:
            failures += 1
            on_drop(err)
            if give_up_after is not None and failures >= give_up_after:
                return True
            stop.wait(policy.delay(failures, rand=random.random()))
    return False


def _key(obj: JSON) -> Key:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class Informer:
    """One kind's LIST and WATCH, its records handed to ``deliver`` as :data:`Delta` values.

    :meth:`run` (a thread's target) LISTs, watches, and relists when the
    watch cannot resume, until ``stop`` is set. A LIST that fails is retried
    after the retry policy's backoff. ``clock`` stamps each delta (wall time).
    """

    def __init__(
        self,
        client: KubeClient,
        kind: str,
        deliver: Callable[[Delta], None],
        stop: threading.Event,
        *,
        give_up_after: int = 3,
        timeout_seconds: int = 300,
        clock: Callable[[], float] = time.time,
        relist_seconds: float | None = None,
    ) -> None:
        self.client = client
        self.relist_seconds = relist_seconds
        self.kind = KIND[kind]
        self.deliver = deliver
        self.stop = stop
        self.give_up_after = give_up_after
        self.timeout_seconds = timeout_seconds
        self.clock = clock
        self.where = f"{client.endpoint} {kind}"  # what check's LIST names its objects by (cluster/live.py)
        self.lists = 0
        self._read: Callable[[JSON, str], Any] = self.kind.reader()

    def list(self) -> tuple[tuple[tuple[Key, Any], ...], str]:
        """One paged LIST: every object's key and record, and the list's resourceVersion.

        The reader is made afresh for each LIST (pods of one load share equal
        parts) and kept for the watch events that follow.
        """
        read = self.kind.reader()
        kind, where = self.kind.object_kind, self.where

        def keyed(item: JSON) -> tuple[Key, Any]:
            item.setdefault("kind", kind)  # a LIST's items carry no kind
            return _key(item), read(item, where)

        items, version = self.client.list_objects(
            self.client.kind_path(kind), keyed, field_selector=self.kind.field_selector
        )
        self._read = read
        return tuple(items), version

    def _delta(self, kind: str, obj: JSON) -> Delta:
        """The delta of one watch event."""
        at = self.clock()
        if kind == "BOOKMARK":
            return Bookmark(self.kind.kind, at)
        key = _key(obj)
        if kind == "DELETED":
            return Change(self.kind.kind, key, None, at)
        try:
            record = self._read(obj, self.where)
        except InputError as err:  # an object check would refuse too: say so, keep the last good record
            return Problem(self.kind.kind, f"{kind} {key[0]}/{key[1]} unreadable: {err}")
        return Change(self.kind.kind, key, record, at)

    def _dropped(self, err: ClusterError) -> Delta:
        return Problem(self.kind.kind, f"watch dropped, resuming: {err}", err.status or "unreachable")

    def _ended(self) -> Delta:
        """The server ended a stream whole (its ``timeoutSeconds``): a sign of life of this kind's watch."""
        return Bookmark(self.kind.kind, self.clock(), ended=True)

    def run(self) -> None:
        """LIST, WATCH, relist when the watch cannot resume (or the relist period is over); until ``stop`` is set."""
        policy = self.client.retrier.policy
        failures, why = 0, "first"
        while not self.stop.is_set():
            try:
                records, version = self.list()
            except GpulabelError as err:  # the server's answer, or an object the reader refuses (as check would)
                failures += 1
                code = (err.status or "unreachable") if isinstance(err, ClusterError) else None
                self.deliver(Problem(self.kind.kind, f"LIST failed, retrying: {err}", code))
                self.stop.wait(policy.delay(failures, rand=random.random()))
                continue
            failures = 0
            self.deliver(Reset(self.kind.kind, records, why == "relist", self.clock()))
            self.lists += 1
            del records
            why = self._watch(version) if self.relist_seconds is not None else self._follow(version, None, self.deliver)
            if why == "stop":
                return

    def _follow(self, version: str, retired: threading.Event | None, deliver: Callable[[Delta], None]) -> str:
        """The watch from ``version``, its deltas to ``deliver``: ``relist`` when it cannot resume, ``stop`` when
        stopped or retired."""
        relist = follow(
            self.client,
            self.client.kind_path(self.kind.kind),
            version,
            lambda kind, obj: deliver(self._delta(kind, obj)),
            lambda err: deliver(self._dropped(err)),
            self.stop,
            retired=retired,
            give_up_after=self.give_up_after,
            timeout_seconds=self.timeout_seconds,
            on_end=lambda: deliver(self._ended()),
            field_selector=self.kind.field_selector,
        )
        return "relist" if relist else "stop"

    def _watch(self, version: str) -> str:
        """:meth:`_follow` on a thread of its own, retired when the relist period is over (``resync``).

        A stream blocks until its next event, so the period is kept here; once
        retired, what the old watch still reads is dropped (under the lock that
        orders it before the next LIST's :class:`Reset`)."""
        assert self.relist_seconds is not None
        retired, lock, ended = threading.Event(), threading.Lock(), list[str | BaseException]()

        def current(delta: Delta) -> None:
            with lock:
                if not retired.is_set():
                    self.deliver(delta)

        def watch() -> None:
            try:
                ended.append(self._follow(version, retired, current))
            except BaseException as err:  # a bug: raised again in the informer's own thread
                ended.append(err)

        deadline = self.clock() + self.relist_seconds  # from the LIST, before the watch can take any time
        watcher = threading.Thread(target=watch, name=f"watch-{self.kind.kind}", daemon=True)
        watcher.start()
        try:
            while watcher.is_alive() and not self.stop.is_set() and self.clock() < deadline:
                watcher.join(POLL_SECONDS)
        finally:
            with lock:
                retired.set()
        if ended and isinstance(ended[0], BaseException):
            raise ended[0]
        if self.stop.is_set():
            return "stop"
        return "relist" if ended == ["relist"] else "resync"
