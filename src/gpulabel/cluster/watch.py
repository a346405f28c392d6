"""A watch of one resource: the events of one streamed request, as client-go's reflector reads them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulabel.cluster.client import KubeClient
from gpulabel.errors import ClusterError, WatchExpired

__all__ = ["WatchExpired", "watch_events"]


def watch_events(
    client: KubeClient, path: str, resource_version: str, timeout_seconds: int = 300, field_selector: str | None = None
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
    if field_selector:  # a kind read in part (Warning Events), watched as it is LISTed
        query.append(("fieldSelector", field_selector))
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
