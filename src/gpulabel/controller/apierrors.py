"""The monitor's API errors: counted in the metrics and named in the log, at most once a minute per kind.

``KubeClient.on_error`` is told of every answer that is an error (a status of 400 or more the
request did not expect, or no answer: ``unreachable``). What a request expects is an outcome,
not an error, and is not told: a 404 on an object that is gone (a pod or node deleted before its
Event, an Event past the API server's TTL, no Lease yet) and a 409 on one that exists (an Event
the last leader wrote, a Lease another candidate took). So ``gpulabel_api_errors_total`` counts
only what needs a look: 401/403 (a right missing), 429 and 5xx (an API server overloaded or
failing), other 4xx (a request the server refused), ``unreachable``.

Each error is also one log line naming the verb, the resource and the code (``api error: PATCH
events 403``), at most once a minute per (verb, resource, code); the errors of that kind left
unsaid meanwhile are counted on the next line.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["ApiErrors", "resource_of"]

EVERY = 60.0


def resource_of(path: str) -> str:
    """``/api/v1/namespaces/ml/pods/x`` -> ``pods``; ``/apis/events.k8s.io/v1/namespaces/default/events/e``
    -> ``events.events.k8s.io``; a subresource after a slash (``nodes/status``)."""
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    group = ""
    if parts[:1] == ["api"]:
        parts = parts[2:]
    elif parts[:1] == ["apis"]:
        group, parts = (parts[1] if len(parts) > 1 else ""), parts[3:]
    if len(parts) >= 3 and parts[0] == "namespaces":
        parts = parts[2:]
    if not parts:
        return path
    name = parts[0] + (f".{group}" if group else "")
    return f"{name}/{parts[2]}" if len(parts) >= 3 else name


class ApiErrors:
    """``KubeClient.on_error``: ``count(code)`` for each error, and a line to ``say`` at most every ``every``
    seconds per (verb, resource, code)."""

    def __init__(
        self,
        count: Callable[[int | str], None] | None,
        say: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
        every: float = EVERY,
    ) -> None:
        self.count = count
        self.say = say
        self.clock = clock
        self.every = every
        self._lock = threading.Lock()
        self._said: dict[tuple[str, str, str], tuple[float, int]] = {}  # kind -> (when said, errors unsaid since)

    def __call__(self, code: int | str, method: str, path: str) -> None:
        if self.count is not None:
            self.count(code)
        kind = (method, resource_of(path), str(code))
        now = self.clock()
        with self._lock:
            said, unsaid = self._said.get(kind, (float("-inf"), 0))
            if now - said < self.every:
                self._said[kind] = (said, unsaid + 1)
                return
            self._said[kind] = (now, 0)
        more = f" ({unsaid} more since the last line)" if unsaid else ""
        self.say(f"api error: {method} {kind[1]} {code}{more}")
