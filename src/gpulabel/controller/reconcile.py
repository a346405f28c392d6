"""The imperative shell of ``gpulabel sync``: read files, LIST nodes, apply plans, watch.

One pass (:func:`run_pass`, which :meth:`Reconciler.run_once` calls after one
LIST of nodes) writes only the nodes whose labels differ, through a
:class:`~gpulabel.cluster.writes.Writer`: the API, the API server's dry run, or
the plan alone (``sync --dry-run --snapshot``); the pass is the same for all
three. ``--watch`` (:meth:`Reconciler.watch`) keeps a
cache from a LIST plus a watch of Nodes (resuming from the last
resourceVersion or bookmark, relisting on 410 Gone), polls the directory for
edits, resyncs fully on a period, and stops cleanly on SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from types import FrameType
from typing import TYPE_CHECKING, Any

from gpulabel.checks.sync import FIELD_MANAGER, plan_node
from gpulabel.cluster.client import KubeClient
from gpulabel.cluster.featurefiles import read_feature_dir
from gpulabel.cluster.progress import Progress
from gpulabel.cluster.writes import ApiWriter, Writer
from gpulabel.controller.informer import follow
from gpulabel.errors import ClusterError, ForbiddenError
from gpulabel.model.changes import LabelChange
from gpulabel.model.cluster import Node, node_from_json
from gpulabel.model.featurefile import FeatureFile, Problem
from gpulabel.model.findings import Finding

if TYPE_CHECKING:
    from gpulabel.checks.registry import Registry
    from gpulabel.controller.metrics import Metrics

__all__ = ["PassResult", "Reconciler", "load_files", "reconcile_node", "run_pass"]


@dataclass
class PassResult:
    changes: list[LabelChange] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(p.severity == "error" for p in self.problems)


def _dir_signature(directory: str) -> tuple[tuple[str, int, int], ...]:
    try:
        entries = []
        for name in sorted(os.listdir(directory)):
            try:
                st = os.stat(os.path.join(directory, name))
            except OSError:
                continue
            entries.append((name, st.st_mtime_ns, st.st_size))
        return tuple(entries)
    except OSError:
        return ()


def load_files(directory: str) -> tuple[dict[str, FeatureFile], list[Problem]]:
    """The feature files of ``directory`` by node, and every problem found reading them."""
    files, problems = read_feature_dir(directory)
    for f in files:
        problems.extend(f.problems)
    return {f.node: f for f in files}, problems


def reconcile_node(ff: FeatureFile, node: Node | None, prune: bool, writer: Writer) -> PassResult:
    """One node's labels made equal to its feature file ``ff``, written through ``writer``."""
    result = PassResult()
    if node is None:
        result.problems.append(Problem(ff.path, f"node {ff.node} not found in the {writer.target}; nothing applied"))
        return result
    if ff.refused:
        return result  # the whole file was unusable: touch nothing
    plan = plan_node(node, ff.desired(), prune)
    if not plan.needs_write:
        return result
    try:
        # one apply per node, retried by the client's one policy (cluster/retry.py)
        labels = writer.apply(plan.node, plan.apply_labels, FIELD_MANAGER)
    except ForbiddenError:
        raise  # missing rights are the same for every node: stop with one line
    except ClusterError as err:
        result.problems.append(Problem(f"node {node.name}", f"not written: {err}"))
        return result
    wrong = [] if labels is None else [c.key for c in plan.changes if labels.get(c.key) != c.value]
    if wrong:
        result.problems.append(Problem(f"node {node.name}", f"the API server kept other values for {', '.join(wrong)}"))
    result.changes.extend(plan.changes)
    return result


def run_pass(
    files: Mapping[str, FeatureFile],
    nodes: Mapping[str, Node],
    prune: bool,
    writer: Writer,
    emit: Callable[[PassResult, PassResult], None],
    total: PassResult,
) -> PassResult:
    """One full pass: every file (by node name) against ``nodes``; ``emit(node's result, total)`` after each node."""
    progress = Progress("sync")
    for i, name in enumerate(sorted(files)):
        emit(reconcile_node(files[name], nodes.get(name), prune, writer), total)
        progress.update(i + 1, len(files))
    progress.done()
    return total


class Reconciler:
    """Keeps the labels of the nodes that have a feature file equal to it."""

    def __init__(
        self,
        client: KubeClient,
        directory: str,
        *,
        prune: bool = False,
        dry_run: bool = False,
        on_change: Callable[[LabelChange], None] = lambda c: None,
        on_problem: Callable[[Problem], None] = lambda p: None,
        metrics: Metrics | None = None,
        writer: Writer | None = None,
        clock: Callable[[], float] = time.monotonic,
        registry: Registry | None = None,
    ) -> None:
        self.client = client
        self.registry = registry  # the checks whose node-only findings the metrics count (default: gpulabel's)
        self.clock = clock  # the resync period's clock (injectable for tests)
        self.directory = directory
        self.prune = prune
        self.dry_run = dry_run
        self.writer: Writer = writer if writer is not None else ApiWriter(client, dry_run)
        self.on_change = on_change
        self.on_problem = on_problem
        self.metrics = metrics
        self.files: dict[str, FeatureFile] = {}
        # stopping also abandons a retry in flight: a controller that lost its Lease stops writing at once
        self.stop = client.retrier.cancel

    # -- files and nodes ---------------------------------------------------

    def load_files(self) -> list[Problem]:
        self.files, problems = load_files(self.directory)
        return problems

    def list_nodes(self) -> tuple[dict[str, Node], str]:
        where = f"{self.client.endpoint} Node"
        nodes, version = self.client.list_objects(self.client.kind_path("Node"), partial(node_from_json, where=where))
        return {n.name: n for n in nodes}, version

    # -- reconciling ---------------------------------------------------------

    def reconcile_node(self, ff: FeatureFile, node: Node | None) -> PassResult:
        return reconcile_node(ff, node, self.prune, self.writer)

    def run_once(self, nodes: dict[str, Node] | None = None) -> PassResult:
        """One full pass: every file against the nodes (LISTed once if not given)."""
        started = time.perf_counter()
        total = PassResult()
        self._emit(PassResult(problems=self.load_files()), total)
        if nodes is None:
            nodes, _ = self.list_nodes()
        run_pass(self.files, nodes, self.prune, self.writer, self._emit, total)
        if self.metrics is not None:
            self._record_pass(nodes, total, time.perf_counter() - started)
        return total

    def _record_pass(self, nodes: dict[str, Node], result: PassResult, seconds: float) -> None:
        from gpulabel.checks.registry import NODE_ONLY, CheckOptions, run_check
        from gpulabel.model.cluster import ClusterState

        assert self.metrics is not None
        self.metrics.reconcile.labels("full").observe(seconds)
        self.metrics.last_resync.set(time.time())
        # Every registered check that needs nothing but nodes: audit, capacity, mig, sharing, upgrade.
        state = ClusterState(nodes=tuple(sorted(nodes.values(), key=lambda n: n.name)), kinds=frozenset({"Node"}))
        opts = CheckOptions() if self.registry is None else CheckOptions(registry=self.registry)
        checks = [c for c in opts.registry if set(c.kinds) <= set(NODE_ONLY)]
        findings = [f for c in checks for f in run_check(c, state, opts).findings]
        findings += [Finding("sync", "invalid-entry", detail=str(p)) for p in result.problems if p.severity == "error"]
        self.metrics.set_findings(findings)
        self.metrics.ready.set()

    def _emit(self, result: PassResult, total: PassResult) -> None:
        for c in result.changes:
            if self.metrics is not None:
                self.metrics.restored.labels(c.node, c.key).inc()
            self.on_change(c)
        for p in result.problems:
            self.on_problem(p)
        total.changes.extend(result.changes)
        total.problems.extend(result.problems)

    # -- watching ----------------------------------------------------------------

    def _watcher(self, events: queue.Queue[tuple[str, Any]], version: str, retired: threading.Event) -> None:
        """Thread: feed node events into ``events``; on 410 ask the main loop to relist.

        A dropped stream is resumed from the last resourceVersion seen (event or
        bookmark), after the retry policy's backoff; a controller's watch is
        never given up. The thread ends when ``retired`` or :attr:`stop` is set.
        """

        def event(kind: str, obj: dict[str, Any]) -> None:
            if kind != "BOOKMARK":
                events.put((kind, obj))

        def drop(err: ClusterError) -> None:
            events.put(("PROBLEM", Problem(self.client.endpoint, f"watch dropped, reconnecting: {err}", "warning")))

        if follow(self.client, "/api/v1/nodes", version, event, drop, self.stop, retired=retired):
            events.put(("RELIST", None))

    def watch(
        self,
        resync_seconds: float = 300.0,
        poll_seconds: float = 0.5,
    ) -> int:
        """Run until SIGTERM/SIGINT (or :attr:`stop` is set). Returns the exit code."""
        previous = {}
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(ValueError):  # not the main thread (tests)
                previous[sig] = signal.signal(sig, self._on_signal)
        try:
            return self._watch_loop(resync_seconds, poll_seconds)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.stop.set()

    def _watch_loop(self, resync_seconds: float, poll_seconds: float) -> int:
        while not self.stop.is_set():
            nodes, version = self.list_nodes()
            self.run_once(nodes)
            signature = _dir_signature(self.directory)
            events: queue.Queue[tuple[str, Any]] = queue.Queue()
            retired = threading.Event()
            deadline = self.clock() + resync_seconds
            threading.Thread(target=self._watcher, args=(events, version, retired), daemon=True).start()
            relist = False
            while not self.stop.is_set() and not relist and self.clock() < deadline:
                try:
                    kind, obj = events.get(timeout=poll_seconds)
                except queue.Empty:
                    kind, obj = "", None
                if kind == "RELIST":
                    relist = True
                elif kind == "PROBLEM":
                    self.on_problem(obj)
                elif kind in ("ADDED", "MODIFIED"):
                    node = node_from_json(obj, f"{self.client.endpoint} Node")
                    nodes[node.name] = node
                    ff = self.files.get(node.name)
                    if ff is not None:
                        started = time.perf_counter()
                        self._emit(self.reconcile_node(ff, node), PassResult())
                        if self.metrics is not None:
                            self.metrics.reconcile.labels("node").observe(time.perf_counter() - started)
                elif kind == "DELETED":
                    nodes.pop(str((obj.get("metadata") or {}).get("name")), None)
                new_signature = _dir_signature(self.directory)
                if new_signature != signature:
                    signature = new_signature
                    self.run_once(nodes)
            # resync period, 410 or stop: this watcher ends with its current stream
            retired.set()
        return 0
