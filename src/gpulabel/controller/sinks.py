"""Where ``gpulabel monitor``'s findings go: the :class:`Sink` interface and what every sink shares.

The monitor calls each sink's :meth:`Sink.publish` after every evaluation
(and once after the initial LISTs) with the full current
:class:`~gpulabel.checks.engine.assessment.Assessment`. A sink keeps the previous one
itself and finds what appeared, what resolved and what stayed by finding
identity (:func:`changes`, by :func:`gpulabel.checks.engine.verdict.identity`).

Sinks that write to the API server (Events, the node condition) must not hold
the monitor's loop while they write: :class:`Background` runs their writes on
one daemon thread, woken by each publish; ``drain()`` writes in the caller's
thread instead (tests, shutdown).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence, Sized
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from gpulabel.checks.engine.assessment import Assessment
from gpulabel.checks.engine.verdict import Identity, identity
from gpulabel.checks.operands.standalone import gpu_node
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import Node
from gpulabel.model.findings import Finding

__all__ = ["Background", "BackgroundSink", "Changes", "GpuNodes", "NodeFacts", "Sink", "changes", "same_findings"]


class Sink(Protocol):
    def publish(self, assessment: Assessment) -> None: ...


@dataclass(frozen=True, slots=True)
class Changes:
    """The findings of ``current`` new since ``previous`` (``appeared``), the findings of ``previous`` gone
    (``resolved``) and those in both (``stayed``, as ``current`` has them), each in its assessment's order."""

    appeared: tuple[Finding, ...]
    resolved: tuple[Finding, ...]
    stayed: tuple[Finding, ...]


def changes(previous: Iterable[Finding] | None, current: Iterable[Finding]) -> Changes:
    """What changed between two sets of findings, by identity; ``previous`` ``None`` (the first
    publish): every current finding appeared. Two findings of one identity count once (the first)."""
    before: dict[Identity, Finding] = {}
    for f in previous or ():
        before.setdefault(identity(f), f)
    now: dict[Identity, Finding] = {}
    for f in current:
        now.setdefault(identity(f), f)
    appeared = tuple(f for k, f in now.items() if k not in before)
    stayed = tuple(f for k, f in now.items() if k in before)
    resolved = tuple(f for k, f in before.items() if k not in now)
    return Changes(appeared, resolved, stayed)


def same_findings(previous: Assessment | None, current: Assessment) -> bool:
    """Whether ``current`` finds what ``previous`` found (most evaluations: a heartbeat changes nothing).

    Cheap when the evaluator hands the same Finding objects again (the tuple comparison
    tries identity first), and at worst one comparison per finding."""
    if previous is None:
        return False
    return previous.result is current.result or (
        previous.findings == current.findings and previous.causes == current.causes
    )


class NodeFacts(NamedTuple):
    """What the sinks read of a node: a GPU node (``checks.standalone.gpu_node``), NFD's NVIDIA PCI
    label, GFD's ``gpu.product``."""

    gpu: bool
    nfd: bool
    gfd: bool


class GpuNodes:
    """:class:`NodeFacts` of each node, kept for the node records that did not change since the last call
    (a watch event replaces one record; the rest are the same objects). Records no longer in the
    state are dropped once they outnumber the current ones."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[Node, NodeFacts]] = {}
        self._last: tuple[Sequence[Node], dict[str, NodeFacts]] | None = None

    def facts(self, nodes: Sequence[Node]) -> dict[str, NodeFacts]:
        if self._last is not None and self._last[0] is nodes:
            return self._last[1]
        known = self._known
        out = {}
        for n in nodes:
            hit = known.get(id(n))
            if hit is None or hit[0] is not n:
                labels = n.labels
                hit = known[id(n)] = (
                    n,
                    NodeFacts(gpu_node(n), V.has_nvidia_pci(labels), bool(labels.get(V.GPU_PRODUCT))),
                )
            out[n.name] = hit[1]
        if len(known) > 2 * len(nodes) + 64:
            self._known = {id(n): known[id(n)] for n in nodes}
        self._last = (nodes, out)
        return out


class Background:
    """One daemon thread that calls ``work()`` whenever :meth:`wake` was called since its last call.

    ``work`` must take what is pending itself (under its own lock) and write it; an
    exception it raises is handed to ``on_error`` and the thread goes on.
    """

    def __init__(self, name: str, work: Callable[[], object], on_error: Callable[[Exception], None]) -> None:
        self.name = name
        self.work = work
        self.on_error = on_error
        self._cv = threading.Condition()
        self._pending = False
        self._busy = False
        self._stopping = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._stopping = False
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def wake(self) -> None:
        with self._cv:
            self._pending = True
            self._cv.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Whether the thread finished everything it was woken for within ``timeout`` seconds."""
        with self._cv:
            return self._cv.wait_for(lambda: not self._pending and not self._busy, timeout)

    def stop(self, timeout: float = 5.0) -> None:
        with self._cv:
            self._stopping = True
            self._cv.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        while True:
            with self._cv:
                self._cv.wait_for(lambda: self._pending or self._stopping)
                if self._stopping:
                    return
                self._pending, self._busy = False, True
            try:
                self.work()
            except Exception as err:  # a sink's failure must not end the monitor
                self.on_error(err)
            finally:
                with self._cv:
                    self._busy = False
                    self._cv.notify_all()


class BackgroundSink:
    """A sink whose writes wait in ``_pending`` and are made by :meth:`drain`: on a :class:`Background`
    thread, or (``background=False``: tests, shutdown) only when drain is called."""

    _pending: Sized

    def __init__(self, thread: str, label: str, background: bool, warn: Callable[[str], None]) -> None:
        """``thread``: the thread's name; ``label`` begins each line ``warn`` gets for a failed write."""
        self._thread = Background(thread, self.drain, lambda err: warn(f"{label}: {err}")) if background else None

    def drain(self) -> list[Any]:
        """Write what waits, in the caller's thread; what was written."""
        raise NotImplementedError

    def _wake(self) -> None:
        if self._thread is not None:
            self._thread.start()
            self._thread.wake()

    def wait(self, timeout: float = 10.0) -> bool:
        """Whether the background writes are done within ``timeout`` seconds."""
        return self._thread.wait_idle(timeout) if self._thread is not None else not self._pending

    def stop(self) -> None:
        if self._thread is not None:
            self._thread.stop()
        self.drain()
