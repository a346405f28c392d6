"""Talking to a live API server: requests, their retries, paged LISTs.

Requests go through the urllib3 pool of the official ``kubernetes`` client
(configured by ``auth.py``) and answers are decoded straight from bytes with
orjson, which is what makes LISTs of thousands of nodes fast. Every request
is retried by the one policy in ``retry.py``. Imported only when a command
needs a cluster, so ``gpulabel --help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote

from gpulabel.cluster import collector
from gpulabel.cluster.auth import SERVICE_ACCOUNT_DIR, load_configuration
from gpulabel.cluster.retry import Retrier, RetryPolicy
from gpulabel.errors import ClusterError, ConflictError, ForbiddenError
from gpulabel.model.cluster import KIND, KINDS

__all__ = ["CONNECT_TIMEOUT", "RESOURCES", "KubeClient", "RequestCounts", "status_message", "unreachable_reason"]

T = TypeVar("T")

# kind -> (list path, namespaced), from the one table of kinds
RESOURCES: dict[str, tuple[str, bool]] = {k.kind: (k.path, k.namespaced) for k in KINDS}

DEFAULT_PAGE_SIZE = 500
CONNECT_TIMEOUT = 10.0  # seconds a connection may take to open; never past the operation's retry deadline
MIN_CONNECT_TIMEOUT = 1.0  # the shortest a last attempt at the deadline is given


@dataclass
class RequestCounts:
    """Requests sent, by HTTP method: what tests and benchmarks count."""

    by_method: dict[str, int] = field(default_factory=dict)

    def add(self, method: str) -> None:
        self.by_method[method] = self.by_method.get(method, 0) + 1


def status_message(body: bytes) -> str:
    import orjson

    try:
        status = orjson.loads(body)
        if isinstance(status, dict) and status.get("message"):
            return str(status["message"])
    except orjson.JSONDecodeError:
        pass
    return body[:200].decode("utf-8", "replace").strip()


def unreachable_reason(err: BaseException) -> str:
    """What a request that got no answer met, in a few words: ``connection refused``, ``no connection within
    the connect timeout (10 s)``, ``no answer within the read timeout (60 s)``, or urllib3's own words without
    its object reprs (urllib3's NewConnectionError, a refused connection, is a kind of ConnectTimeoutError)."""
    import re

    import urllib3

    exceptions = urllib3.exceptions
    if isinstance(err, exceptions.ConnectTimeoutError) and not isinstance(err, exceptions.NewConnectionError):
        return "no connection within the connect timeout" + _timeout_said(err)
    if isinstance(err, exceptions.ReadTimeoutError):
        return "no answer within the read timeout" + _timeout_said(err)
    text = re.sub(
        r"^\(?<?HTTPS?Connection\([^)]*\)(?: at 0x[0-9a-f]+>)?,? ?:? ?", "", str(getattr(err, "reason", None) or err)
    )
    said = text.rsplit("Failed to establish a new connection: ", 1)[-1]
    return said.split("] ", 1)[-1].lower() if said.startswith("[Errno") else said


def _timeout_said(err: BaseException) -> str:
    """`` (10 s)`` from urllib3's ``(connect timeout=10.0)`` / ``(read timeout=60.0)``, else nothing."""
    import re

    found = re.search(r"timeout=([0-9.]+)\)", str(err))
    return f" ({round(float(found[1]), 1):g} s)" if found else ""


class KubeClient:
    """A thin client: kubeconfig auth from ``kubernetes``, JSON in and out.

    Every request goes through :attr:`retrier` (``cluster/retry.py``), the one
    retry policy: 429, 5xx and an unreachable server are retried with backoff
    (honouring ``Retry-After``) within one time budget per operation.
    """

    def __init__(
        self,
        kubeconfig: str | None = None,
        context: str | None = None,
        *,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        service_account_dir: str = SERVICE_ACCOUNT_DIR,
    ) -> None:
        from kubernetes import client

        cfg = load_configuration(kubeconfig, context, service_account_dir)
        self.endpoint: str = cfg.host
        self.timeout = timeout
        self.retrier = Retrier(retry or RetryPolicy())
        self.counts = RequestCounts()
        # kind -> the older version the server serves it at, where it does not serve the table's (live.served_kinds)
        self.versions: dict[str, str] = {}
        # told of each API error: (HTTP status or "unreachable", method, path); not of the statuses a request
        # expects as an answer (``expected``: a 404 on an object that is gone, a 409 on one that exists)
        self.on_error: Callable[[int | str, str, str], None] | None = None
        self._api = client.ApiClient(cfg)

    def trust(self) -> tuple[str, bytes | None, bool]:
        """The server's URL, the CA bundle it is verified with (None: the system's) and whether TLS is verified:
        what a kubeconfig for another user of the same cluster needs."""
        cfg = self._api.configuration
        ca = None
        if cfg.ssl_ca_cert:
            with open(cfg.ssl_ca_cert, "rb") as f:
                ca = f.read()
        return str(cfg.host), ca, bool(cfg.verify_ssl)

    # -- requests ---------------------------------------------------------

    def _serialize(
        self, path: str, query: list[tuple[str, str]], headers: dict[str, str]
    ) -> tuple[str, dict[str, str]]:
        """The URL and headers of one request, with fresh credentials.

        What ``ApiClient`` does before a request, through the calls every
        supported ``kubernetes`` release has (``param_serialize`` exists only
        from 37): its default headers (User-Agent), then the bearer token from
        ``Configuration.auth_settings()``, which first runs the refresh hook
        that exec plugins and service-account tokens set. Client certificates
        live in the connection pool. Query values are quoted as the client
        quotes them.
        """
        cfg = self._api.configuration
        hdrs = {**headers, **self._api.default_headers}
        bearer = cfg.auth_settings().get("BearerToken")
        if bearer and bearer.get("in") == "header" and bearer.get("value"):
            hdrs[bearer["key"]] = bearer["value"]
        url = cfg.host + path
        if query:
            url += "?" + "&".join(f"{key}={quote(str(value))}" for key, value in query)
        return url, hdrs

    def open(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        read_timeout: float | None = None,
        stream: bool = False,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> Any:
        """Send one request, once, with fresh credentials; returns the urllib3 response.

        ``stream`` leaves the body unread (for watches). Network faults raise urllib3's errors.
        """
        import urllib3

        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        url, hdrs = self._serialize(path, query or [], headers)
        self.counts.add("WATCH" if stream else method)
        return self._api.rest_client.pool_manager.request(
            method,
            url,
            body=body,
            headers=hdrs,
            timeout=urllib3.Timeout(connect=connect_timeout, read=read_timeout or self.timeout),
            retries=False,
            preload_content=not stream,
        )

    def request_raw(
        self,
        method: str,
        path: str,
        query: Iterable[tuple[str, str]] = (),
        body: bytes | None = None,
        content_type: str | None = None,
        timeout: float | None = None,
        budget: float | None = None,
        expected: Collection[int] = (),
    ) -> tuple[int, bytes]:
        """Send one request under the retry policy; return ``(status, body)``.

        ``expected``: statuses that are an answer, not an error (``on_error`` is not told of them).

        ``budget`` overrides the policy's seconds of retrying for this
        operation (a Lease renewal cannot wait a minute). No connection is waited for past the operation's
        deadline (at least 1 s), so a server that never answers fails within the budget and a second: that
        raises ClusterError naming what failed, the attempts and the time they took.
        """
        import urllib3

        query_list = list(query)
        clock = self.retrier.clock
        started = clock()
        deadline = started + (self.retrier.policy.budget if budget is None else budget)
        attempts = 0

        def send() -> Any:
            nonlocal attempts
            attempts += 1
            connect = min(CONNECT_TIMEOUT, max(MIN_CONNECT_TIMEOUT, deadline - clock()))
            resp = self.open(method, path, query_list, body, content_type, timeout, connect_timeout=connect)
            if resp.status >= 400 and resp.status not in expected and self.on_error is not None:
                self.on_error(resp.status, method, path)
            return resp

        try:
            resp = self.retrier.call(send, (urllib3.exceptions.HTTPError,), budget)
        except urllib3.exceptions.HTTPError as err:
            if self.on_error is not None:
                self.on_error("unreachable", method, path)
            tried = f"{attempts} attempt(s) in {clock() - started:.1f} s"
            raise ClusterError(self.endpoint, f"unreachable: {unreachable_reason(err)} ({tried})") from None
        return resp.status, resp.data

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """Send one request and decode its JSON answer; HTTP errors raise."""
        import orjson

        status, data = self.request_raw(method, path, **kwargs)
        if status >= 400:
            raise self.error(status, data, method, path)
        return orjson.loads(data) if data else None

    def error(self, status: int, data: bytes, method: str, path: str) -> ClusterError:
        message = status_message(data)
        where = f"{self.endpoint} {method} {path}"
        if status in (401, 403):
            return ForbiddenError(where, f"{status} {message}", status)
        if status == 409:
            return ConflictError(where, f"{status} {message}", status)
        return ClusterError(where, f"{status} {message}", status)

    # -- reads ------------------------------------------------------------

    @collector.while_paused  # pages and records hold no cycles: see cluster/collector.py
    def list_objects(
        self,
        path: str,
        transform: Callable[[dict[str, Any]], T],
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        max_restarts: int = 3,
        on_page: Callable[[int, int], None] | None = None,
        restarted: Callable[[], None] | None = None,
    ) -> tuple[list[T], str]:
        """Every object of a paged LIST, each passed through ``transform`` as its page arrives,
        and the list's resourceVersion.

        ``on_page(objects, pages)`` is told the totals so far after each page (a caller with a
        progress line of its own); without it, the client draws its own on a terminal.

        Converting page by page means the raw JSON of only one page is alive at
        a time. A 410 Gone on a continuation restarts the LIST from the start and
        drops what was read, so a restart never hands out a partial or
        duplicated result; ``restarted()`` is called before each such restart (a ``transform`` that
        writes its objects somewhere drops them there).
        """
        from gpulabel.cluster.progress import Progress

        progress = Progress(f"listing {path.rsplit('/', 1)[-1]}") if on_page is None else None
        told = on_page if progress is None else lambda objects, _pages: progress.update(objects)
        query = [("limit", str(limit))]
        if label_selector:
            query.append(("labelSelector", label_selector))
        if field_selector:
            query.append(("fieldSelector", field_selector))
        restarts = 0
        while True:
            listed = self._list_pages(path, transform, query, restartable=restarts < max_restarts, told=told)
            if listed is not None:
                if progress is not None:
                    progress.done()
                return listed
            restarts += 1
            if restarted is not None:
                restarted()

    def _list_pages(
        self,
        path: str,
        transform: Callable[[dict[str, Any]], T],
        query: list[tuple[str, str]],
        *,
        restartable: bool,
        told: Callable[[int, int], None] | None,
    ) -> tuple[list[T], str] | None:
        """One pass of a paged LIST from its first page: every object through ``transform``, and the list's
        resourceVersion; ``told(objects, pages)`` after each page. None when a continuation is 410 Gone and
        ``restartable``: what was read is dropped, and the caller starts over."""
        import orjson

        out: list[T] = []
        token = version = ""
        pages = 0
        while True:
            status, data = self.request_raw("GET", path, query=[*query, ("continue", token)] if token else query)
            if status == 410 and token and restartable:
                return None
            if status >= 400:
                raise self.error(status, data, "LIST", path)
            page = orjson.loads(data)
            del data
            out.extend(transform(item) for item in page.get("items") or ())
            pages += 1
            if told is not None:
                told(len(out), pages)
            meta = page.get("metadata") or {}
            token, version = meta.get("continue") or "", meta.get("resourceVersion") or version
            if not token:
                return out, version

    def list(self, kind: str, namespace: str | None = None, **kwargs: Any) -> tuple[list[dict[str, Any]], str]:
        """All objects of ``kind`` (in ``namespace``, if given) as JSON, and the list's resourceVersion."""

        object_kind = KIND[kind].object_kind  # a row read in part of an API kind (Event/Nominated): Event

        def with_kind(item: dict[str, Any]) -> dict[str, Any]:
            item.setdefault("kind", object_kind)
            return item

        kwargs.setdefault("field_selector", KIND[kind].field_selector)  # a kind read in part (Warning Events)
        return self.list_objects(self.kind_path(kind, namespace), with_kind, **kwargs)

    def kind_path(self, kind: str, namespace: str | None = None) -> str:
        """The LIST path of ``kind`` at the version the server serves it at (in ``namespace``, if given)."""
        table = KIND[kind]
        path = table.served_at(self.versions.get(kind, table.version))
        if table.namespaced and namespace:
            prefix, _, resource = path.rpartition("/")
            path = f"{prefix}/namespaces/{quote(namespace, safe='')}/{resource}"
        return path

    def served_resources(self, group_version: str) -> frozenset[str]:
        """The resources (plurals) the server serves in ``group_version`` (a CRD's, DRA's): none where it serves
        no such group version. One discovery request per group version."""
        status, data = self.request_raw("GET", f"/apis/{group_version}")
        if status == 404:
            return frozenset()
        if status >= 400:
            raise self.error(status, data, "GET", f"/apis/{group_version}")
        import orjson

        doc = orjson.loads(data)
        return frozenset(str(r.get("name")) for r in doc.get("resources") or ())

    def node_path(self, name: str) -> str:
        return f"/api/v1/nodes/{quote(name, safe='')}"

    def event_path(self, namespace: str, name: str = "") -> str:
        """The events.k8s.io/v1 Event ``name`` in ``namespace`` (the collection when ``name`` is empty)."""
        path = f"/apis/events.k8s.io/v1/namespaces/{quote(namespace, safe='')}/events"
        return f"{path}/{quote(name, safe='')}" if name else path

    def lease_path(self, namespace: str, name: str = "") -> str:
        """The Lease ``name`` in ``namespace`` (the collection when ``name`` is empty)."""
        path = f"/apis/coordination.k8s.io/v1/namespaces/{quote(namespace, safe='')}/leases"
        return f"{path}/{quote(name, safe='')}" if name else path
