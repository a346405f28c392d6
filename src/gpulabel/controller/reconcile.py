"""The imperative shell of ``gpulabel sync``: read files, LIST nodes, apply plans, watch.

One pass (:func:`run_pass`, which :meth:`Reconciler.run_once` calls after one
LIST of nodes) writes only the nodes whose labels differ, through a
:class:`~gpulabel.cluster.writes.Writer`: the API, the API server's dry run, or
the plan alone (``sync --dry-run --snapshot``); the pass is the same for all
three. ``--watch`` (:func:`watch_sync`) is not a loop of its own: it runs
the monitor's loop (``controller/monitor.py``: an informer of Nodes,
resuming from the last resourceVersion or bookmark, relisting on 410 Gone
and every resync period; the Lease; SIGTERM) with :class:`WatchedSync` as
its evaluator and leader sink, which polls the directory for edits.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from gpulabel.checks.labels.sync import FIELD_MANAGER, plan_node
from gpulabel.cluster.client import KubeClient
from gpulabel.cluster.featurefiles import read_feature_dir
from gpulabel.cluster.progress import Progress
from gpulabel.cluster.writes import ApiWriter, Writer
from gpulabel.errors import ClusterError, ForbiddenError
from gpulabel.model.changes import LabelChange
from gpulabel.model.cluster import Node, node_from_json
from gpulabel.model.featurefile import FeatureFile, Problem
from gpulabel.model.findings import Finding

if TYPE_CHECKING:
    from gpulabel.checks.engine.assessment import Assessment
    from gpulabel.checks.registry import Registry
    from gpulabel.controller.lease import LeaseLock
    from gpulabel.controller.metrics import Metrics

__all__ = ["PassResult", "Reconciler", "WatchedSync", "load_files", "reconcile_node", "run_pass", "watch_sync"]


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
        clock: Callable[[], float] = time.time,
        registry: Registry | None = None,
    ) -> None:
        self.client = client
        self.registry = registry  # the checks whose node-only findings the metrics count (default: gpulabel's)
        self.clock = clock  # wall clock: the watch's stamps and the resync period (injectable for tests)
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

    def node_event(self, name: str, node: Node | None) -> None:
        """One node changed: its feature file (if it has one) applied to ``node``, timed as a ``node`` pass."""
        ff = self.files.get(name)
        if ff is None:
            return
        started = time.perf_counter()
        self._emit(self.reconcile_node(ff, node), PassResult())
        if self.metrics is not None:
            self.metrics.reconcile.labels("node").observe(time.perf_counter() - started)

    def _record_pass(self, nodes: dict[str, Node], result: PassResult, seconds: float) -> None:
        from gpulabel.checks.registry import BUILTIN, NODE_ONLY, run_check
        from gpulabel.model.cluster import ClusterState

        assert self.metrics is not None
        self.metrics.reconcile.labels("full").observe(seconds)
        self.metrics.last_resync.set(time.time())
        # Every registered check that needs nothing but nodes: audit, capacity, mig, sharing, upgrade.
        state = ClusterState(nodes=tuple(sorted(nodes.values(), key=lambda n: n.name)), kinds=frozenset({"Node"}))
        opts = (self.registry or BUILTIN).options()
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


class WatchedSync:
    """``sync --watch`` as a consumer of the monitor's loop (:class:`~gpulabel.controller.monitor.Monitor`):
    its evaluator, which hears the Node deltas, and its one leader sink, which writes.

    As the evaluator it keeps the Node cache and the names changed since the
    last pass, and writes nothing, so a standby keeps it warm too; its
    Assessment is that cache as one state (sync's findings are counted at each
    full pass, :meth:`Reconciler.run_once`). As the leader sink (``publish``
    after each evaluation while leading, ``tick`` about twice a second) it
    makes a full pass after every LIST (the first, a relist, the resync
    period), on taking the Lease and when the directory changed; otherwise one
    pass per changed node that has a feature file.
    """

    def __init__(self, rec: Reconciler) -> None:
        self.rec = rec
        self.nodes: dict[str, Node] = {}
        self.changed: set[str] = set()
        self.full = True
        self.signature: tuple[tuple[str, int, int], ...] | None = None

    # -- the evaluator: the deltas -------------------------------------------------

    def reset(self, kind: str, records: Iterable[tuple[tuple[str, str], Any]]) -> None:
        self.nodes = {key[1]: node for key, node in records}
        self.changed.clear()
        self.full = True

    def apply(self, kind: str, key: tuple[str, str], record: Any | None) -> bool:
        if record is None:
            self.nodes.pop(key[1], None)
            self.changed.discard(key[1])
        else:
            self.nodes[key[1]] = record
            self.changed.add(key[1])
        return True  # sync judges after every event (a write that failed is tried again then)

    def assess(self, at: float) -> Assessment:
        from gpulabel.checks.engine.assessment import Assessment
        from gpulabel.model.cluster import ClusterState
        from gpulabel.model.findings import Result

        return Assessment(Result("sync"), (), ClusterState(nodes=tuple(self.nodes.values()), kinds=_NODE), at)

    # -- the leader sink: the writes ----------------------------------------------------

    def take_over(self) -> None:
        """Taking the Lease (or starting without election): a full pass first."""
        self.full = True

    def publish(self, assessment: Assessment) -> None:
        self._reconcile()

    def tick(self) -> None:
        self._reconcile()

    def _reconcile(self) -> None:
        signature = _dir_signature(self.rec.directory)
        if self.full or signature != self.signature:
            self.full, self.signature = False, signature
            self.changed.clear()
            self.rec.run_once(dict(self.nodes))
            return
        changed, self.changed = sorted(self.changed), set()
        for name in changed:
            self.rec.node_event(name, self.nodes.get(name))


_NODE = frozenset({"Node"})


def watch_sync(
    rec: Reconciler, lock: LeaseLock | None, resync_seconds: float, say: Callable[[str], None] = lambda line: None
) -> int:
    """``sync --watch``: ``rec`` kept running on the monitor's loop until SIGTERM/SIGINT (0), or the Lease lost (1).

    One informer of Nodes (relisting every ``resync_seconds``), the Lease when
    ``lock`` is given (only the leader writes), the signals and the shutdown:
    all the monitor's. ``rec.stop`` (its client's retry cancel) stops it.
    """
    from gpulabel.controller.monitor import Monitor

    sync = WatchedSync(rec)
    monitor = Monitor(
        rec.client,
        ("Node",),
        sync,
        (),
        leader_sinks=(sync,),
        lock=lock,
        health=rec.metrics.base if rec.metrics is not None else None,
        say=say,
        scope="sync",
        resync_seconds=resync_seconds,
        relist_seconds=resync_seconds,
        clock=rec.clock,
        stop=rec.stop,
        writes="writing",
    )
    return monitor.run()
