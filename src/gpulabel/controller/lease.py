"""Leader election through a ``coordination.k8s.io/v1`` Lease, as client-go does it.

Several replicas of ``sync --watch`` may run; only the one holding the Lease
writes. A candidate takes the Lease when it is free or when its holder has
not renewed it for ``lease_seconds`` as measured on the candidate's own clock
(the time it last saw the record change, so clock skew between nodes does
not matter). Updates carry the Lease's resourceVersion, so two candidates
cannot both win. The holder renews every ``retry_seconds``; if it cannot renew
for ``renew_deadline`` seconds it must stop writing. On a clean stop it
releases the Lease so a standby takes over at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gpulabel.cluster.writes import create_lease, update_lease
from gpulabel.errors import ClusterError

if TYPE_CHECKING:
    from gpulabel.cluster.client import KubeClient

__all__ = ["LeaseLock"]


def _micro_time(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class _Observed:
    holder: str
    renew_time: str
    seen_at: float  # local monotonic time the record last changed


class LeaseLock:
    """One candidate's view of the Lease.

    ``clock`` (monotonic: expiry and the renew deadline) and ``wall`` (the
    times written into the Lease) are injectable, so tests run the election
    without waiting.
    """

    def __init__(
        self,
        client: KubeClient,
        namespace: str,
        name: str,
        identity: str,
        *,
        lease_seconds: int = 15,
        renew_deadline: float = 10.0,
        retry_seconds: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.name = name
        self.path = client.lease_path(namespace, name)
        self.identity = identity
        self.lease_seconds = lease_seconds
        self.renew_deadline = renew_deadline
        self.retry_seconds = retry_seconds
        self.clock = clock
        self.wall = wall
        self._observed: _Observed | None = None
        self.last_renewed = 0.0  # monotonic time of our last successful acquire/renew

    def _spec(self, lease: dict[str, Any] | None) -> dict[str, Any]:
        now = _micro_time(self.wall())
        old = (lease or {}).get("spec") or {}
        taking_over = old.get("holderIdentity") != self.identity
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": self.lease_seconds,
            "acquireTime": now if taking_over or not old.get("acquireTime") else old["acquireTime"],
            "renewTime": now,
            "leaseTransitions": int(old.get("leaseTransitions") or 0) + (1 if taking_over and old else 0),
        }

    def _get(self) -> dict[str, Any] | None:
        """The Lease as it is now, or ``None`` if there is none."""
        import orjson

        status, data = self.client.request_raw("GET", self.path, budget=self.retry_seconds, expected=(404,))
        if status == 404:
            return None
        if status >= 400:
            raise self.client.error(status, data, "GET", self.path)
        lease: dict[str, Any] = orjson.loads(data)
        return lease

    def try_acquire_or_renew(self) -> bool:
        """One round: True if we hold the Lease afterwards.

        Each request retries for at most ``retry_seconds`` (the next round comes then anyway).
        """
        lease = self._get()
        if lease is None:
            if create_lease(self.client, self.namespace, self.name, self._spec(None), self.retry_seconds) is None:
                return False
            self.last_renewed = self.clock()
            return True
        spec = lease.get("spec") or {}
        holder, renew = str(spec.get("holderIdentity") or ""), str(spec.get("renewTime") or "")
        now = self.clock()
        if self._observed is None or (self._observed.holder, self._observed.renew_time) != (holder, renew):
            self._observed = _Observed(holder, renew, now)
        duration = float(spec.get("leaseDurationSeconds") or self.lease_seconds)
        held_by_other = holder not in ("", self.identity)
        if held_by_other and self._observed.seen_at + duration > now:
            return False
        lease["spec"] = self._spec(lease)
        if update_lease(self.client, self.namespace, self.name, lease, self.retry_seconds) is None:
            return False
        self.last_renewed = self.clock()
        return True

    def holds(self) -> bool:
        """Whether our last successful renewal is within the renew deadline."""
        return self.last_renewed > 0 and self.clock() - self.last_renewed < self.renew_deadline

    def release(self) -> None:
        """Give the Lease up (only if we still hold it), so a standby takes over at once."""
        try:
            lease = self._get()
            spec = (lease or {}).get("spec") or {}
            if lease is not None and spec.get("holderIdentity") == self.identity:
                spec.update({"holderIdentity": "", "leaseDurationSeconds": 1, "renewTime": _micro_time(self.wall())})
                lease["spec"] = spec
                update_lease(self.client, self.namespace, self.name, lease, self.retry_seconds)
        except ClusterError:
            pass  # it expires on its own
        self.last_renewed = 0.0
