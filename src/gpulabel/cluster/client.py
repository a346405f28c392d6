"""Talking to a live API server.

Configuration and authentication come from the official ``kubernetes``
client (kubeconfig with contexts, client certificates, tokens, exec plugins
of any apiVersion, in-cluster service accounts); its model classes are never
used. Requests go through the client's urllib3 pool and answers are decoded
straight from bytes with orjson, which is what makes LISTs of thousands of
nodes fast. The client is imported only here, and only when a command needs
a cluster, so ``gpulabel --help`` stays fast.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar
from urllib.parse import quote

from gpulabel.errors import ClusterError, ConfigError, ConflictError, ForbiddenError
from gpulabel.k8s.dra.objects import DRA_KINDS
from gpulabel.k8s.dra.plugin import DraState
from gpulabel.model.cluster import (
    ClusterState,
    DaemonSet,
    Node,
    Pod,
    daemonset_from_json,
    node_from_json,
    pod_from_json,
)

__all__ = ["RESOURCES", "KubeClient", "RequestCounts", "load_cluster", "with_daemonset_pods"]

T = TypeVar("T")

# kind -> (list path, namespaced)
RESOURCES: dict[str, tuple[str, bool]] = {
    "Node": ("/api/v1/nodes", False),
    "Pod": ("/api/v1/pods", True),
    "DaemonSet": ("/apis/apps/v1/daemonsets", True),
    "ClusterPolicy": ("/apis/nvidia.com/v1/clusterpolicies", False),
    "DeviceClass": ("/apis/resource.k8s.io/v1/deviceclasses", False),
    "ResourceSlice": ("/apis/resource.k8s.io/v1/resourceslices", False),
    "ResourceClaim": ("/apis/resource.k8s.io/v1/resourceclaims", True),
    "ResourceClaimTemplate": ("/apis/resource.k8s.io/v1/resourceclaimtemplates", True),
}

DEFAULT_PAGE_SIZE = 500
_RETRYABLE = frozenset({429, 500, 502, 503, 504})


@dataclass
class RequestCounts:
    """Requests sent, by HTTP method: what tests and benchmarks count."""

    by_method: dict[str, int] = field(default_factory=dict)

    def add(self, method: str) -> None:
        self.by_method[method] = self.by_method.get(method, 0) + 1


def _status_message(body: bytes) -> str:
    import orjson

    try:
        status = orjson.loads(body)
        if isinstance(status, dict) and status.get("message"):
            return str(status["message"])
    except orjson.JSONDecodeError:
        pass
    return body[:200].decode("utf-8", "replace").strip()


class KubeClient:
    """A thin client: kubeconfig auth from ``kubernetes``, JSON in and out.

    A 429 or 5xx answer is retried ``retries`` times with exponential backoff
    (honouring ``Retry-After``). An unreachable server (refused or dropped
    connection, as while an API server restarts) is retried with the same
    backoff until ``unreachable_seconds`` have passed. Then the error is raised.
    """

    def __init__(
        self,
        kubeconfig: str | None = None,
        context: str | None = None,
        *,
        timeout: float = 60.0,
        retries: int = 4,
        unreachable_seconds: float = 5.0,
        service_account_dir: str = "/var/run/secrets/kubernetes.io/serviceaccount",
    ) -> None:
        from kubernetes import client, config
        from kubernetes.config.incluster_config import InClusterConfigLoader

        cfg = client.Configuration()
        where = kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
        try:
            if kubeconfig or context or os.environ.get("KUBECONFIG") or os.path.exists(where):
                config.load_kube_config(  # type: ignore[no-untyped-call]
                    config_file=kubeconfig, context=context, client_configuration=cfg, persist_config=False
                )
            elif os.environ.get("KUBERNETES_SERVICE_HOST"):
                where = f"in-cluster service account ({service_account_dir})"
                InClusterConfigLoader(
                    token_filename=os.path.join(service_account_dir, "token"),
                    cert_filename=os.path.join(service_account_dir, "ca.crt"),
                ).load_and_set(cfg)  # type: ignore[no-untyped-call]
            else:
                raise ConfigError(where, "no kubeconfig found and not running in a cluster (give --kubeconfig)")
        except config.ConfigException as err:
            raise ConfigError(where, f"cannot use the configuration: {err}") from None
        except OSError as err:
            raise ConfigError(where, err.strerror or str(err)) from None
        except (ValueError, TypeError, KeyError) as err:
            raise ConfigError(where, f"malformed kubeconfig: {err}") from None
        cfg.retries = 0  # we retry ourselves, with backoff and a bound
        self.endpoint: str = cfg.host
        self.timeout = timeout
        self.retries = retries
        self.unreachable_seconds = unreachable_seconds
        self.counts = RequestCounts()
        self.on_error: Callable[[int | str], None] | None = None  # e.g. metrics of API errors by code
        self._api = client.ApiClient(cfg)

    # -- requests ---------------------------------------------------------

    def open(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        read_timeout: float | None = None,
        stream: bool = False,
    ) -> Any:
        """Send one request, once, with fresh credentials; returns the urllib3 response.

        ``stream`` leaves the body unread (for watches). Network faults raise urllib3's errors.
        """
        import urllib3

        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        method_, url, hdrs, _, _ = self._api.param_serialize(
            method, path, query_params=query or None, header_params=headers, auth_settings=["BearerToken"]
        )
        self.counts.add("WATCH" if stream else method)
        return self._api.rest_client.pool_manager.request(
            method_,
            url,
            body=body,
            headers=hdrs,
            timeout=urllib3.Timeout(connect=10.0, read=read_timeout or self.timeout),
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
    ) -> tuple[int, bytes]:
        """Send one request; return ``(status, body)``. Network faults raise ClusterError."""
        import urllib3

        query_list = list(query)
        attempt = 0
        started = time.monotonic()
        while True:
            attempt += 1
            try:
                resp = self.open(method, path, query_list, body, content_type, timeout)
            except urllib3.exceptions.HTTPError as err:
                delay = min(0.2 * 2 ** (attempt - 1), 5.0)
                if time.monotonic() + delay - started < self.unreachable_seconds:
                    time.sleep(delay)
                    continue
                reason = getattr(err, "reason", None) or err
                if self.on_error is not None:
                    self.on_error("unreachable")
                raise ClusterError(self.endpoint, f"unreachable: {reason}") from None
            status, data = resp.status, resp.data
            if status >= 400 and self.on_error is not None:
                self.on_error(status)
            if status in _RETRYABLE and attempt <= self.retries:
                delay = min(0.2 * 2 ** (attempt - 1), 5.0)
                retry_after = resp.headers.get("Retry-After")
                if retry_after and retry_after.isdigit():
                    delay = min(float(retry_after), 10.0)
                time.sleep(delay)
                continue
            return status, data

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """Send one request and decode its JSON answer; HTTP errors raise."""
        import orjson

        status, data = self.request_raw(method, path, **kwargs)
        if status >= 400:
            raise self.error(status, data, method, path)
        return orjson.loads(data) if data else None

    def error(self, status: int, data: bytes, method: str, path: str) -> ClusterError:
        message = _status_message(data)
        where = f"{self.endpoint} {method} {path}"
        if status in (401, 403):
            return ForbiddenError(where, f"{status} {message}", status)
        if status == 409:
            return ConflictError(where, f"{status} {message}", status)
        return ClusterError(where, f"{status} {message}", status)

    # -- reads ------------------------------------------------------------

    def list_objects(
        self,
        path: str,
        transform: Callable[[dict[str, Any]], T],
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        max_restarts: int = 3,
    ) -> tuple[list[T], str]:
        """Every object of a paged LIST, each passed through ``transform`` as its page arrives,
        and the list's resourceVersion.

        Converting page by page means the raw JSON of only one page is alive at
        a time. A 410 Gone on a continuation restarts the LIST from the start and
        drops what was read, so a restart never hands out a partial or
        duplicated result.
        """
        import orjson

        from gpulabel.cluster.progress import Progress

        progress = Progress(f"listing {path.rsplit('/', 1)[-1]}")
        restarts = 0
        while True:
            out: list[T] = []
            token = version = ""
            gone = False
            while True:
                query = [("limit", str(limit))]
                if label_selector:
                    query.append(("labelSelector", label_selector))
                if field_selector:
                    query.append(("fieldSelector", field_selector))
                if token:
                    query.append(("continue", token))
                status, data = self.request_raw("GET", path, query=query)
                if status == 410 and token and restarts < max_restarts:
                    gone = True
                    break
                if status >= 400:
                    raise self.error(status, data, "LIST", path)
                page = orjson.loads(data)
                del data
                out.extend(transform(item) for item in page.get("items") or ())
                progress.update(len(out))
                meta = page.get("metadata") or {}
                token, version = meta.get("continue") or "", meta.get("resourceVersion") or version
                if not token:
                    break
            if not gone:
                progress.done()
                return out, version
            restarts += 1

    def list(self, kind: str, namespace: str | None = None, **kwargs: Any) -> tuple[list[dict[str, Any]], str]:
        """All objects of ``kind`` (in ``namespace``, if given) as JSON, and the list's resourceVersion."""

        def with_kind(item: dict[str, Any]) -> dict[str, Any]:
            item.setdefault("kind", kind)
            return item

        return self.list_objects(self.kind_path(kind, namespace), with_kind, **kwargs)

    def kind_path(self, kind: str, namespace: str | None = None) -> str:
        path, namespaced = RESOURCES[kind]
        if namespaced and namespace:
            path = path.replace("/v1/", f"/v1/namespaces/{quote(namespace, safe='')}/", 1)
        return path

    def has_resource(self, group_version: str, plural: str) -> bool:
        """Whether the server serves ``plural`` in ``group_version`` (e.g. a CRD)."""
        status, data = self.request_raw("GET", f"/apis/{group_version}")
        if status == 404:
            return False
        if status >= 400:
            raise self.error(status, data, "GET", f"/apis/{group_version}")
        import orjson

        doc = orjson.loads(data)
        return any(r.get("name") == plural for r in doc.get("resources") or ())

    def node_path(self, name: str) -> str:
        return f"/api/v1/nodes/{quote(name, safe='')}"


def _with_kind(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    item.setdefault("kind", kind)
    return item


def load_cluster(
    client: KubeClient,
    kinds: Iterable[str],
    *,
    namespace: str | None = None,
    pod_selector: str | None = None,
    pod_field_selector: str | None = None,
) -> ClusterState:
    """LIST only the kinds a command needs, each as a paged LIST converted page by page."""
    wanted = list(dict.fromkeys(kinds))
    nodes: list[Node] = []
    pods: list[Pod] = []
    daemonsets: list[DaemonSet] = []
    policies: list[dict[str, Any]] = []
    dra: list[tuple[str, dict[str, Any]]] = []
    served: bool | None = None
    for kind in wanted:
        where = f"{client.endpoint} {kind}"
        if kind in DRA_KINDS:
            if served is None:
                served = client.has_resource("resource.k8s.io/v1", "resourceslices")
            if not served:
                continue
            # claims of every namespace: devices other claims hold count wherever those claims live
            ns = namespace if kind == "ResourceClaimTemplate" else None
            items = client.list_objects(client.kind_path(kind, ns), partial(_with_kind, kind))[0]
            dra.extend((where, o) for o in items)
            continue
        if kind == "Node":
            nodes = client.list_objects(client.kind_path(kind), partial(node_from_json, where=where))[0]
        elif kind == "Pod":
            pods = client.list_objects(
                client.kind_path(kind, namespace),
                partial(pod_from_json, where=where),
                label_selector=pod_selector,
                field_selector=pod_field_selector,
            )[0]
        elif kind == "DaemonSet":
            daemonsets = client.list_objects(
                client.kind_path(kind, namespace), partial(daemonset_from_json, where=where)
            )[0]
        elif kind == "ClusterPolicy" and client.has_resource("nvidia.com/v1", "clusterpolicies"):
            policies = client.list_objects(client.kind_path(kind), lambda i: i)[0]
    nodes.sort(key=lambda n: n.name)
    return ClusterState(
        tuple(nodes),
        tuple(pods),
        tuple(daemonsets),
        tuple(policies),
        client.endpoint,
        frozenset(wanted),
        DraState.from_objects(dra),
    )


def with_daemonset_pods(client: KubeClient, state: ClusterState, daemonsets: Iterable[DaemonSet]) -> ClusterState:
    """``state`` plus the pods of ``daemonsets``: one LIST per DaemonSet, by its selector.

    Listing by selector reads only the operand pods, not every pod of a
    150,000-pod cluster.
    """
    import dataclasses

    pods = list(state.pods)
    seen = {(p.namespace, p.name) for p in pods}
    where = f"{client.endpoint} Pod"
    for ds in daemonsets:
        selector = ds.selector_string()
        if not selector:
            continue
        found, _ = client.list_objects(
            client.kind_path("Pod", ds.namespace), partial(pod_from_json, where=where), label_selector=selector
        )
        for pod in found:
            if (pod.namespace, pod.name) not in seen:
                seen.add((pod.namespace, pod.name))
                pods.append(pod)
    return dataclasses.replace(state, pods=tuple(pods), kinds=state.kinds | {"Pod"})


class WatchExpired(Exception):
    """The watch's resourceVersion is too old (410 Gone): relist, then watch again."""


def watch_events(
    client: KubeClient, path: str, resource_version: str, timeout_seconds: int = 300
) -> Iterator[dict[str, Any]]:
    """Yield the events of one watch request (``ADDED``, ``MODIFIED``, ``DELETED``, ``BOOKMARK``).

    Ends when the server closes the stream; raises :class:`WatchExpired` on
    410 and :class:`ClusterError` on other failures. Bookmarks are asked for,
    so the caller can resume from a recent resourceVersion.
    """
    import orjson
    import urllib3

    query = [
        ("watch", "true"),
        ("resourceVersion", resource_version),
        ("allowWatchBookmarks", "true"),
        ("timeoutSeconds", str(timeout_seconds)),
    ]
    try:
        resp = client.open("GET", path, query, read_timeout=timeout_seconds + 30, stream=True)
    except urllib3.exceptions.HTTPError as err:
        raise ClusterError(client.endpoint, f"watch failed: {getattr(err, 'reason', None) or err}") from None
    try:
        if resp.status == 410:
            raise WatchExpired(path)
        if resp.status >= 400:
            raise client.error(resp.status, resp.read(), "WATCH", path)
        buffer = b""
        for chunk in resp.stream(65536):
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if not line.strip():
                    continue
                event = orjson.loads(line)
                if event.get("type") == "ERROR":
                    status = event.get("object") or {}
                    if status.get("code") == 410:
                        raise WatchExpired(path)
                    raise ClusterError(client.endpoint, f"watch error: {status.get('message')}")
                yield event
    except (urllib3.exceptions.HTTPError, OSError) as err:
        raise ClusterError(client.endpoint, f"watch interrupted: {err}") from None
    finally:
        resp.release_conn()
