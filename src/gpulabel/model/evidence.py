"""What was read about failing operand pods: the tails of their containers' logs and the Events around them.

These records are what a live read (``cluster/evidence.py``) or a support
bundle (``cluster/bundle.py``) hands to the pure matcher
(``checks/explain/evidence.py``). Which containers of a pod are worth reading is
decided here from the pod's status, the way a person would: the ones that are
not done or not ready, the previous instance of one that restarted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpulabel.model.redaction import redact_text

__all__ = [
    "ContainerToRead",
    "EventNote",
    "Evidence",
    "LogLine",
    "LogTail",
    "containers_to_read",
    "event_from_json",
    "parse_log",
]


@dataclass(frozen=True, slots=True)
class LogLine:
    time: str  # RFC 3339 as the kubelet stamps it ("" when unknown)
    text: str


@dataclass(frozen=True, slots=True)
class LogTail:
    """The last lines of one container's log (``previous``: of its instance before the last restart)."""

    pod: str  # namespace/name
    container: str
    init: bool = False
    previous: bool = False
    lines: tuple[LogLine, ...] = ()
    error: str = ""  # why it could not be read ("403 ...": then ``lines`` is empty)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pod": self.pod, "container": self.container, "init": self.init}
        out["previous"] = self.previous
        out["lines"] = [{"time": ln.time, "line": ln.text} for ln in self.lines]
        if self.error:
            out["error"] = self.error
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> LogTail:
        lines = tuple(LogLine(str(ln.get("time") or ""), str(ln.get("line") or "")) for ln in doc.get("lines") or ())
        return cls(
            str(doc["pod"]),
            str(doc["container"]),
            bool(doc.get("init")),
            bool(doc.get("previous")),
            lines,
            str(doc.get("error") or ""),
        )


@dataclass(frozen=True, slots=True)
class EventNote:
    """One Event about a pod, a DaemonSet or a node, as ``kubectl describe`` lists it."""

    kind: str  # of the object it is about: Pod, DaemonSet, Node
    namespace: str
    name: str
    type: str  # Normal | Warning
    reason: str
    message: str
    time: str
    count: int = 1
    component: str = ""  # who wrote it: source.component (core/v1), else reportingComponent
    uid: str = ""  # the involved object's uid (a pod of the same name made again is another pod)

    @property
    def about(self) -> str:
        return f"{self.kind}/{self.namespace + '/' if self.namespace else ''}{self.name}"

    @property
    def text(self) -> str:
        return f"{self.reason}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "type": self.type,
            "reason": self.reason,
            "message": self.message,
            "time": self.time,
            "count": self.count,
            **({"component": self.component} if self.component else {}),
            **({"uid": self.uid} if self.uid else {}),
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> EventNote:
        return cls(
            str(doc["kind"]),
            str(doc.get("namespace") or ""),
            str(doc["name"]),
            str(doc.get("type") or ""),
            str(doc.get("reason") or ""),
            str(doc.get("message") or ""),
            str(doc.get("time") or ""),
            int(doc.get("count") or 1),
            str(doc.get("component") or ""),
            str(doc.get("uid") or ""),
        )


@dataclass(frozen=True, slots=True)
class Evidence:
    """What was read, and what could not be (one line each: ``pods/log forbidden ...``)."""

    logs: tuple[LogTail, ...] = ()
    events: tuple[EventNote, ...] = ()
    unread: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "apiVersion": "gpulabel/v1",
            "kind": "Evidence",
            "logs": [t.to_json() for t in self.logs],
            "events": [e.to_json() for e in self.events],
            "unread": list(self.unread),
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Evidence:
        return cls(
            tuple(LogTail.from_json(t) for t in doc.get("logs") or ()),
            tuple(EventNote.from_json(e) for e in doc.get("events") or ()),
            tuple(str(u) for u in doc.get("unread") or ()),
        )


@dataclass(frozen=True, slots=True)
class ContainerToRead:
    name: str
    init: bool
    previous: bool


def _bad(status: Mapping[str, Any], init: bool) -> bool:
    state = status.get("state") or {}
    if init:
        done = state.get("terminated") or {}
        if done and done.get("exitCode") == 0:
            return False
        waiting = state.get("waiting") or {}
        return not (waiting.get("reason") == "PodInitializing" and not status.get("restartCount"))
    return not status.get("ready")


def containers_to_read(pod: Mapping[str, Any], ready_too: bool = False) -> list[ContainerToRead]:
    """The containers of a pod (its JSON) whose log says why it is not ready: init containers that have not
    finished well, then containers that are not ready. A container that is waiting or terminated after a
    restart is read as its previous instance (the one that failed); one waiting that never ran (its turn after
    the init containers, its image, its volumes) is not read: the API server would answer 400, and its
    Events say why it waits. With ``ready_too`` (an operand Running and Ready whose effect is missing: GFD's
    labels, the MIG manager's layout), its running containers are read as well."""
    status = pod.get("status") or {}
    out = []
    for key, init in (("initContainerStatuses", True), ("containerStatuses", False)):
        for cs in status.get(key) or ():
            if not isinstance(cs, dict) or not cs.get("name"):
                continue
            if not _bad(cs, init):
                if ready_too and not init and "running" in (cs.get("state") or {}):
                    out.append(ContainerToRead(str(cs["name"]), False, False))
                continue
            state = cs.get("state") or {}
            running = "running" in state
            previous = bool(cs.get("restartCount")) and "terminated" in (cs.get("lastState") or {}) and not running
            if "waiting" in state and not previous:
                continue  # never started (waiting on init containers, an image, a volume): it has no log to read
            out.append(ContainerToRead(str(cs["name"]), init, previous))
    return out


def parse_log(text: str, timestamps: bool = True) -> tuple[LogLine, ...]:
    """A log body as the API returns it (``timestamps=true``: each line starts with its RFC 3339 time)."""
    out = []
    for raw in text.splitlines():
        if timestamps:
            stamp, sep, rest = raw.partition(" ")
            if sep and stamp[:4].isdigit() and "T" in stamp:
                out.append(LogLine(stamp, rest))
                continue
        out.append(LogLine("", raw))
    return tuple(out)


def event_from_json(obj: Mapping[str, Any]) -> EventNote:
    """A core/v1 Event (what the kubelet and controllers write) as an :class:`EventNote`, its message redacted: the
    runtime check quotes it as the evidence path does (``model/redaction.py``; redacting twice changes nothing)."""
    involved = obj.get("involvedObject") or {}
    meta = obj.get("metadata") or {}
    series = obj.get("series") or {}
    time = obj.get("lastTimestamp") or series.get("lastObservedTime") or obj.get("eventTime")
    source = obj.get("source") or {}
    # the API server's own choice for the ``source`` field selector (pkg/registry/core/event/strategy.go
    # ToSelectableFields: source.component, else reportingComponent)
    component = (source.get("component") if isinstance(source, Mapping) else "") or obj.get("reportingComponent")
    return EventNote(
        str(involved.get("kind") or ""),
        str(involved.get("namespace") or ""),
        str(involved.get("name") or ""),
        str(obj.get("type") or ""),
        str(obj.get("reason") or ""),
        redact_text(str(obj.get("message") or "")),
        str(time or meta.get("creationTimestamp") or ""),
        int(series.get("count") or obj.get("count") or 1),
        str(component or ""),
        str(involved.get("uid") or ""),
    )


def newest_first(events: Iterable[EventNote]) -> list[EventNote]:
    return sorted(events, key=lambda e: e.time, reverse=True)
