"""Leading: waiting for the Lease as a standby, and renewing it while leading.

The monitor's loop (``controller/monitor.py``, which ``sync --watch`` runs
too) campaigns with :func:`await_lease` and, once it leads, keeps the Lease
with :func:`keep_lease`; the holder that cannot renew within the deadline
stops (exit 1, so the Deployment restarts it). SIGTERM stops it cleanly and
releases the Lease so a standby takes over at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpulabel.errors import ClusterError

if TYPE_CHECKING:
    from gpulabel.controller.lease import LeaseLock

__all__ = ["await_lease", "keep_lease"]


def await_lease(
    lock: LeaseLock, stop: threading.Event, say: Callable[[str], None], standby: Callable[[], None] = lambda: None
) -> bool:
    """Wait as a standby until this instance holds the Lease (True) or ``stop`` is set (False).

    ``standby`` runs after each round the Lease was held by another instance.
    """
    standby_said = False
    while not stop.is_set():
        try:
            if lock.try_acquire_or_renew():
                break
        except ClusterError as err:
            say(f"lease {lock.name}: {err}")
        if not standby_said:
            say(f"standby: lease {lock.name} is held by another instance")
            standby_said = True
        standby()
        stop.wait(lock.retry_seconds)
    if stop.is_set():
        return False
    say(f"leader: holding lease {lock.name} as {lock.identity}")
    return True


def keep_lease(lock: LeaseLock, stop: threading.Event, lost: threading.Event) -> threading.Thread:
    """A started thread renewing the Lease every ``retry_seconds`` until ``stop``; past the renew deadline
    without a renewal it sets ``lost`` and ``stop``."""

    def renew() -> None:
        while not stop.wait(lock.retry_seconds):
            try:
                if lock.try_acquire_or_renew():
                    continue
            except ClusterError:
                pass
            if not lock.holds():
                lost.set()
                stop.set()
                return

    renewer = threading.Thread(target=renew, name="lease-renewer", daemon=True)
    renewer.start()
    return renewer
