"""Reading the evidence of failing operand pods from a live cluster: log tails and Events, bounded.

For each pod a finding blames (``checks.explain.evidence.blamed``), and only those:

- ``GET /api/v1/namespaces/NS/pods/NAME`` for its container statuses, then
  ``GET .../pods/NAME/log`` for each container worth reading
  (``model.evidence.containers_to_read``: init containers included, the
  ``previous`` instance of one that restarted; the running ones too when the
  pod may be Ready while its effect is missing), with ``tailLines``,
  ``limitBytes`` and ``timestamps=true``;
- the Events of the pod, of its DaemonSet and of its node: paged LISTs of
  core/v1 Events with ``fieldSelector=involvedObject.kind=K,involvedObject.name=N``
  (the pod's and DaemonSet's in their namespace, the node's in all), at most
  ``event_pages`` pages of ``event_page`` each per object.

Every body read counts against ``total_bytes``; when it is spent, nothing
more is read and that is said. A 403 (the role lacks ``pods/log`` or
``events``) stops that kind of read and is said once, in ``unread``: the
checks' answer stands without it. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import quote

from gpulabel.checks.explain.evidence import Blame
from gpulabel.cluster.client import KubeClient, status_message
from gpulabel.errors import ClusterError
from gpulabel.model.evidence import EventNote, Evidence, LogTail, containers_to_read, event_from_json, parse_log

__all__ = ["EvidenceLimits", "collect_evidence"]

LOG_TIMEOUT = 15.0  # seconds to wait for a log (the API server asks the node's kubelet)
_GRANT = "deploy/rbac/readonly-evidence.yaml; docs/evidence.md"
LOG_BUDGET = 0.0  # a log read is tried once: a kubelet that is away (500 from the API server) is not retried


@dataclass(frozen=True, slots=True)
class EvidenceLimits:
    tail_lines: int = 50  # per container
    limit_bytes: int = 64 * 1024  # per container log
    total_bytes: int = 4 * 1024 * 1024  # everything read for evidence in one run
    event_page: int = 100
    event_pages: int = 2  # per object
    max_blamed: int = 25  # pods (or DaemonSets) read per run; the rest is said, not read


class _Reader:
    def __init__(self, client: KubeClient, limits: EvidenceLimits, note: Callable[[str], None]) -> None:
        self.client, self.limits, self.note = client, limits, note
        self.left = limits.total_bytes
        self.logs: list[LogTail] = []
        self.events: list[EventNote] = []
        self.unread: list[str] = []
        self.logs_off = self.events_off = False
        self.seen: set[tuple[str, str, str]] = set()

    def _spent(self, what: str) -> bool:
        if self.left > 0:
            return False
        line = f"{what}: not read, the evidence budget of {self.limits.total_bytes} bytes is spent"
        if line not in self.unread:
            self.unread.append(line)
        return True

    def _refused(self, status: int, body: bytes, what: str, kind: str) -> None:
        line = f"{what}: {status} {status_message(body)}"
        if status in (401, 403):
            verb = "get" if kind == "pods/log" else "list"
            line = f"{kind}: {status}, {verb} not granted to this user ({_GRANT})"
            if kind == "pods/log":
                self.logs_off = True
            else:
                self.events_off = True
        self.unread.append(line)

    def pod_logs(self, namespace: str, name: str, ready_too: bool = False) -> None:
        if self.logs_off or self._spent(f"pods/log {namespace}/{name}"):
            return
        import orjson

        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(name, safe='')}"
        status, body = self.client.request_raw("GET", path)
        if status >= 400:
            self.unread.append(f"pods {namespace}/{name}: {status} {_short(body)}")
            return
        pod = orjson.loads(body)
        for c in containers_to_read(pod, ready_too):
            what = f"pods/log {namespace}/{name} {c.name}"
            if self.logs_off or self._spent(what):
                return
            query = [
                ("container", c.name),
                ("tailLines", str(self.limits.tail_lines)),
                ("limitBytes", str(min(self.limits.limit_bytes, self.left))),
                ("timestamps", "true"),
            ]
            if c.previous:
                query.append(("previous", "true"))
            self.note(f"log {namespace}/{name} {c.name}")
            try:  # the kubelet behind the API server may be away: a short wait, tried once
                status, body = self.client.request_raw(
                    "GET", path + "/log", query=query, timeout=LOG_TIMEOUT, budget=LOG_BUDGET
                )
            except ClusterError as err:
                status, body = 504, str(err).encode()
            self.left -= len(body)
            if status >= 400:
                self._refused(status, body, what, "pods/log")
                if status >= 500:  # the kubelets do not answer: no more logs this run
                    self.logs_off = True
                    self.unread.append("pods/log: the kubelet did not answer, no other log read")
                continue
            lines = parse_log(body.decode("utf-8", "replace"))
            self.logs.append(LogTail(f"{namespace}/{name}", c.name, c.init, c.previous, lines))

    def object_events(self, kind: str, namespace: str, name: str) -> None:
        key = (kind, namespace, name)
        if key in self.seen or self.events_off:
            return
        self.seen.add(key)
        import orjson

        what = f"events of {kind}/{namespace + '/' if namespace else ''}{name}"
        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/events" if namespace else "/api/v1/events"
        selector = f"involvedObject.kind={kind},involvedObject.name={name}"
        token = ""
        for _ in range(self.limits.event_pages):
            if self._spent(what):
                return
            query = [("fieldSelector", selector), ("limit", str(self.limits.event_page))]
            if token:
                query.append(("continue", token))
            self.note(what)
            status, body = self.client.request_raw("GET", path, query=query)
            self.left -= len(body)
            if status >= 400:
                self._refused(status, body, what, "events")
                return
            page = orjson.loads(body)
            self.events.extend(event_from_json(e) for e in page.get("items") or ())
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                return
        self.unread.append(f"{what}: more than {self.limits.event_pages * self.limits.event_page}, the rest not read")


def _short(body: bytes) -> str:
    return status_message(body)


def collect_evidence(
    client: KubeClient,
    blames: Iterable[Blame],
    limits: EvidenceLimits | None = None,
    note: Callable[[str], None] = lambda text: None,
) -> Evidence:
    """The log tails and Events of the blamed pods, their DaemonSets and nodes (``note`` is told each read)."""
    limits = limits or EvidenceLimits()
    r = _Reader(client, limits, note)
    blames = list(blames)
    if len(blames) > limits.max_blamed:
        r.unread.append(f"{len(blames) - limits.max_blamed} more blamed pod(s) not read (at most {limits.max_blamed})")
    for b in blames[: limits.max_blamed]:
        if b.pod is not None:
            r.pod_logs(b.pod.namespace, b.pod.name, b.ready_read)
            r.object_events("Pod", b.pod.namespace, b.pod.name)
        if b.daemonset is not None:
            r.object_events("DaemonSet", b.daemonset.namespace, b.daemonset.name)
        r.object_events("Node", "", b.node)
    return Evidence(tuple(r.logs), tuple(r.events), tuple(r.unread))
