"""``sync --watch`` as an in-cluster controller: leader election, metrics, clean shutdown.

Without ``--leader-elect`` the reconciler simply runs. With it, the process
waits as a standby until it holds the Lease, reconciles while it keeps
renewing it, and stops writing (exit 1, so the Deployment restarts it) the
moment it cannot renew within the deadline. SIGTERM stops it cleanly and
releases the Lease so a standby takes over at once.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

from gpulabel.errors import ClusterError

if TYPE_CHECKING:
    from gpulabel.controller.lease import LeaseLock
    from gpulabel.controller.metrics import Metrics
    from gpulabel.controller.reconcile import Reconciler

__all__ = ["await_lease", "keep_lease", "run_controller"]


def run_controller(
    rec: Reconciler,
    lock: LeaseLock | None,
    metrics: Metrics | None,
    resync_seconds: float,
    say: Callable[[str], None],
) -> int:
    """Run until SIGTERM/SIGINT; returns the exit code."""

    def on_signal(signum: int, frame: FrameType | None) -> None:
        rec.stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        if lock is None:
            return rec.watch(resync_seconds=resync_seconds)
        return _lead(rec, lock, metrics, resync_seconds, say)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


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


def _lead(
    rec: Reconciler, lock: LeaseLock, metrics: Metrics | None, resync_seconds: float, say: Callable[[str], None]
) -> int:
    def ready() -> None:
        if metrics is not None:
            metrics.ready.set()  # a healthy standby is ready

    if not await_lease(lock, rec.stop, say, ready):
        return 0
    if metrics is not None:
        metrics.leader.set(1)
        metrics.ready.clear()  # ready again after the first full pass as leader
    lost = threading.Event()
    renewer = keep_lease(lock, rec.stop, lost)
    code = rec.watch(resync_seconds=resync_seconds)
    renewer.join(timeout=lock.retry_seconds + 1)
    if metrics is not None:
        metrics.leader.set(0)
    if lost.is_set():
        say(f"lost lease {lock.name}: stopped writing")
        return 1
    lock.release()
    return code
