"""A fake API server at the wire, for unit tests of the controller and the watch.

:func:`fake_client` is a real :class:`KubeClient` (real paging, errors, retry
policy, writes) whose one network call, ``open``, is answered by
:class:`FakeApi` from memory: Nodes (LIST, PATCH as a label merge), Leases
(GET, POST, PUT with resourceVersion conflicts, as the API server does) and
watches played from a script. Objects of the other kinds (:meth:`FakeApi.put`)
are served at their kind's path (``model.cluster.KINDS``) with paged LISTs,
their own scripted watches (:attr:`FakeApi.kind_watches`) and API discovery.
The retry policy runs on a :class:`FakeClock`, so retry budgets and Lease
timing cost no real time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import orjson
import urllib3

from gpulabel.cluster.client import KubeClient
from gpulabel.cluster.retry import Retrier, RetryPolicy


class FakeClock:
    """Monotonic time that only moves when told to (or when a retry sleeps)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds

    def sleep(self, seconds: float) -> None:
        self.advance(max(seconds, 0.0))


@dataclass
class FakeResponse:
    status: int
    data: bytes = b""
    chunks: list[bytes] = field(default_factory=list)
    drop_after: bool = False  # the connection breaks after the chunks
    headers: dict[str, str] = field(default_factory=dict)
    released: bool = False

    def stream(self, amount: int) -> Iterator[bytes]:
        yield from self.chunks
        if self.drop_after:
            raise urllib3.exceptions.ProtocolError("connection broken: fake drop")

    def read(self) -> bytes:
        return self.data

    def release_conn(self) -> None:
        self.released = True


@dataclass
class Watch:
    """One scripted watch answer: events then the end of the stream, a drop, or a status.

    An event may be a function, called when the watch is served (so the store changes then, not before), outside
    the server's lock: one that waits (for the monitor's first picture, say) holds up its own stream only, as on a
    real server, never another kind's LIST.
    """

    events: list[dict[str, Any] | Callable[[], dict[str, Any]]] = field(default_factory=list)
    status: int = 200
    drop: bool = False


def _status(code: int, message: str) -> bytes:
    return orjson.dumps({"kind": "Status", "status": "Failure", "message": message, "code": code})


class FakeApi:
    def __init__(self) -> None:
        self.version = 100
        self.nodes: dict[str, dict[str, Any]] = {}
        self.leases: dict[str, dict[str, Any]] = {}
        self.watches: list[Watch] = []
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.down = False  # every request answers 503
        # then an empty stream: a real server holds a quiet stream for its timeoutSeconds, and each end is a sign
        # of life the monitor queues (controller/informer.py), so an idle fake watch ends every 50 ms, not at once
        self.on_watches_done: Callable[[], None] = lambda: time.sleep(0.05)
        self.before_write: Callable[[], None] | None = None  # runs once, before the next Lease write
        self.lock = threading.RLock()
        # the other kinds: collection path -> "namespace/name" -> object; scripted watches by path
        # Events and ConfigMaps are served by every API server (the runtime check LISTs and watches the Warning
        # Events, pending the autoscalers' and Cluster Autoscaler's status ConfigMap), none at first
        self.objects: dict[str, dict[str, dict[str, Any]]] = {"/api/v1/events": {}, "/api/v1/configmaps": {}}
        self.kind_watches: dict[str, list[Watch]] = {}

    # -- state ------------------------------------------------------------------

    def _bump(self) -> str:
        with self.lock:
            self.version += 1
            return str(self.version)

    def add_node(self, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
        with self.lock:
            return self._add_node(name, labels)

    def _add_node(self, name: str, labels: dict[str, str] | None) -> dict[str, Any]:
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": dict(labels or {}), "resourceVersion": self._bump()},
            "spec": {},
            "status": {},
        }
        self.nodes[name] = node
        return node

    def event(self, kind: str, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
        """A watch event for node ``name`` (with ``labels``, changed in the store too), at a new resourceVersion."""
        with self.lock:
            return self._event(kind, name, labels)

    def _event(self, kind: str, name: str, labels: dict[str, str] | None) -> dict[str, Any]:
        node = orjson.loads(orjson.dumps(self.nodes.get(name) or self.add_node(name)))
        if labels is not None:
            node["metadata"]["labels"] = dict(labels)
            self.nodes[name]["metadata"]["labels"] = dict(labels)
        node["metadata"]["resourceVersion"] = self.nodes[name]["metadata"]["resourceVersion"] = self._bump()
        return {"type": kind, "object": node}

    def bookmark(self) -> dict[str, Any]:
        return {"type": "BOOKMARK", "object": {"kind": "Node", "metadata": {"resourceVersion": self._bump()}}}

    def put(self, obj: dict[str, Any], kind_type: str = "MODIFIED") -> dict[str, Any]:
        """Store ``obj`` (of any kind of the table but Node) at a new resourceVersion; its watch event."""
        path = _kind_path(str(obj["kind"]))
        obj = orjson.loads(orjson.dumps(obj))
        with self.lock:
            obj["metadata"]["resourceVersion"] = self._bump()
            self.objects.setdefault(path, {})[_name(obj)] = obj
        return {"type": kind_type, "object": obj}

    def delete(self, kind: str, namespace: str, name: str) -> dict[str, Any]:
        """Remove an object; its DELETED event."""
        with self.lock:
            obj = self.objects[_kind_path(kind)].pop(f"{namespace}/{name}")
            obj["metadata"]["resourceVersion"] = self._bump()
        return {"type": "DELETED", "object": obj}

    @staticmethod
    def noted(served: dict[str, str], name: str, make: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
        """``make`` as a scripted event that notes the resourceVersion it was served at as ``served[name]``."""

        def event() -> dict[str, Any]:
            made = make()
            served[name] = made["object"]["metadata"]["resourceVersion"]
            return made

        return event

    def queries(self, method: str, path: str) -> list[dict[str, str]]:
        return [q for m, p, q in self.requests if (m, p) == (method, path)]

    # -- the wire -----------------------------------------------------------------

    def open(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        read_timeout: float | None = None,
        stream: bool = False,
        connect_timeout: float = 10.0,
    ) -> FakeResponse:
        q = dict(query or [])
        with self.lock:
            self.requests.append((method, path, q))
            if self.down:
                return FakeResponse(503, _status(503, "the server is currently unable to handle the request"))
        if path == "/api/v1/nodes" and q.get("watch") == "true":
            return self._watch()  # not under the lock: a script's end may wait for the other thread
        if path in self.objects and q.get("watch") == "true":
            return self._watch(path)
        with self.lock:
            if path in self.objects and method == "GET":
                return self._list(path, q)
            if path.startswith("/apis/") and path.count("/") == 3 and method == "GET":
                served = [{"name": p.rsplit("/", 1)[1]} for p in self.objects if p.startswith(path + "/")]
                if not served:
                    return FakeResponse(404, _status(404, "the server could not find the requested resource"))
                return FakeResponse(200, orjson.dumps({"kind": "APIResourceList", "resources": served}))
            if path == "/api/v1/nodes" and method == "GET":
                items = [self.nodes[n] for n in sorted(self.nodes)]
                page = {"kind": "NodeList", "metadata": {"resourceVersion": str(self.version)}, "items": items}
                return FakeResponse(200, orjson.dumps(page))
            if path.startswith("/api/v1/nodes/") and method == "PATCH":
                return self._patch(unquote(path.rsplit("/", 1)[1]), body or b"{}")
            if "/leases" in path:
                return self._lease(method, path, body)
            return FakeResponse(404, _status(404, f"{path} not found"))

    def _list(self, path: str, q: dict[str, str]) -> FakeResponse:
        """One page: ``limit`` objects from the offset the ``continue`` token names."""
        items = [self.objects[path][k] for k in sorted(self.objects[path])]
        if q.get("fieldSelector"):
            items = [o for o in items if _fields_match(o, q["fieldSelector"])]
        start, limit = int(q.get("continue") or 0), int(q.get("limit") or len(items) or 1)
        page = items[start : start + limit]
        token = str(start + limit) if start + limit < len(items) else ""
        meta = {"resourceVersion": str(self.version), "continue": token}
        return FakeResponse(200, orjson.dumps({"kind": "List", "metadata": meta, "items": page}))

    def _watch(self, path: str = "/api/v1/nodes") -> FakeResponse:
        with self.lock:
            script = self.watches if path == "/api/v1/nodes" else self.kind_watches.setdefault(path, [])
            w = script.pop(0) if script else None
        if w is None:
            self.on_watches_done()
            return FakeResponse(200)
        if w.status != 200:
            return FakeResponse(w.status, _status(w.status, "too old resource version"))
        events = [e() if callable(e) else e for e in w.events]  # not under the lock: an event may wait
        text = b"".join(orjson.dumps(e) + b"\n" for e in events)
        chunks = [text[i : i + 7] for i in range(0, len(text), 7)]  # events split across chunks
        return FakeResponse(200, chunks=chunks, drop_after=w.drop)

    def _patch(self, name: str, body: bytes) -> FakeResponse:
        node = self.nodes.get(name)
        if node is None:
            return FakeResponse(404, _status(404, f'nodes "{name}" not found'))
        labels = (orjson.loads(body).get("metadata") or {}).get("labels") or {}
        for key, value in labels.items():
            if value is None:
                node["metadata"]["labels"].pop(key, None)
            else:
                node["metadata"]["labels"][key] = value
        node["metadata"]["resourceVersion"] = self._bump()
        return FakeResponse(200, orjson.dumps(node))

    def _lease(self, method: str, path: str, body: bytes | None) -> FakeResponse:
        name = path.rsplit("/", 1)[1]
        if method == "GET":
            lease = self.leases.get(name)
            return FakeResponse(200, orjson.dumps(lease)) if lease else FakeResponse(404, _status(404, "not found"))
        if self.before_write is not None:
            hook, self.before_write = self.before_write, None
            hook()  # e.g. another candidate writes first
        obj = orjson.loads(body or b"{}")
        if method == "POST":
            name = obj["metadata"]["name"]
            if name in self.leases:
                return FakeResponse(409, _status(409, f'leases "{name}" already exists'))
        elif method == "PUT":
            current = self.leases.get(name)
            if current is None:
                return FakeResponse(404, _status(404, "not found"))
            if obj["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
                return FakeResponse(409, _status(409, "the object has been modified"))
        else:
            return FakeResponse(405, _status(405, method))
        obj["metadata"]["resourceVersion"] = self._bump()
        self.leases[name] = obj
        return FakeResponse(201 if method == "POST" else 200, orjson.dumps(obj))


def _kind_path(kind: str) -> str:
    from gpulabel.model.cluster import KIND

    return KIND[kind].path


def _fields_match(obj: dict[str, Any], selector: str) -> bool:
    """Whether ``obj`` passes a field selector of ``path=value`` and ``path!=value`` terms, all of them (as the
    API server's ``fields.ParseSelector``; a field the object lacks is ``""``, as a pod's unset phase is)."""
    for term in selector.split(","):
        negated = "!=" in term
        path, value = term.split("!=" if negated else "=", 1)
        found: Any = obj
        for part in path.split("."):
            found = found.get(part) if isinstance(found, dict) else None
        if path == "source" and obj.get("kind") == "Event":
            # an Event's selectable ``source`` (pkg/registry/core/event/strategy.go ToSelectableFields):
            # source.component, else reportingComponent
            found = (obj.get("source") or {}).get("component") or obj.get("reportingComponent")
        if ((found or "") == value) == negated:
            return False
    return True


def _name(obj: dict[str, Any]) -> str:
    return f"{obj['metadata'].get('namespace') or ''}/{obj['metadata']['name']}"


def fake_client(tmp_path: Path, api: FakeApi, clock: FakeClock, policy: RetryPolicy | None = None) -> KubeClient:
    """A KubeClient whose requests ``api`` answers and whose retries sleep on ``clock``."""
    kubeconfig = tmp_path / "fake.kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://fake.invalid:6443'}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    client = KubeClient(str(kubeconfig))
    client.open = api.open  # type: ignore[method-assign]
    client.retrier = Retrier(policy or RetryPolicy(), clock=clock, rand=lambda: 0.0, sleep=clock.sleep)
    return client
