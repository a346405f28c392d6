"""``sync``: feature files to node labels, as one pass or as a controller.

The pass is :func:`gpulabel.controller.reconcile.run_pass` whatever the run:
a live ``sync`` gives it an :class:`~gpulabel.cluster.writes.ApiWriter`,
``--dry-run`` the same writer as the API server's dry run, and ``--dry-run
--snapshot`` a :class:`~gpulabel.cluster.writes.PlanWriter` over the
snapshot's nodes, which contacts nothing.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpulabel.app.session import WRITER_BUDGET, Outcome, Session, lease_defaults, refuse_bad_controller_flags
from gpulabel.errors import InputError
from gpulabel.model.findings import Cell, Result, Section

if TYPE_CHECKING:
    from gpulabel.controller.reconcile import Reconciler
    from gpulabel.model.changes import LabelChange
    from gpulabel.model.featurefile import Problem

__all__ = ["LEASE_NAME", "RESYNC_SECONDS", "SyncOptions", "run_sync", "sync_result"]

LEASE_NAME = "gpulabel-sync"
RESYNC_SECONDS = 300.0

# option -> the option it only applies with (checked in this order, before anything is contacted)
_SYNC_NEEDS = (
    ("dry_run", "--dry-run", None, None),
    ("resync_period", "--resync-period", "watch", "--watch"),
    ("leader_elect", "--leader-elect", "watch", "--watch"),
    ("metrics_port", "--metrics-port", "watch", "--watch"),
    ("identity", "--identity", "leader_elect", "--leader-elect"),
    ("lease_namespace", "--lease-namespace", "leader_elect", "--leader-elect"),
    ("lease_name", "--lease-name", "leader_elect", "--leader-elect"),
)


@dataclass(frozen=True, slots=True)
class SyncOptions:
    """``sync``'s options, refused in one line when bad or meaningless together, before anything is contacted.

    Options that apply only with another one are ``None`` when not given; once
    checked, the defaults of those that apply are filled in. ``offline``: the
    nodes come from snapshots.
    """

    directory: str
    prune: bool = False
    dry_run: bool = False
    watch: bool = False
    offline: bool = False
    resync_period: float | None = None
    leader_elect: bool | None = None
    lease_namespace: str | None = None
    lease_name: str | None = None
    identity: str | None = None
    metrics_port: int | None = None

    def __post_init__(self) -> None:
        if self.offline and not self.dry_run:
            raise InputError("--snapshot", "only with --dry-run: sync writes to a live cluster")
        if self.watch and self.dry_run:
            raise InputError("--dry-run", "cannot be combined with --watch (a dry run is one pass)")
        for attr, flag, needs_attr, needs_flag in _SYNC_NEEDS:
            if needs_attr is not None and getattr(self, attr) is not None and not getattr(self, needs_attr):
                raise InputError(flag, f"only applies with {needs_flag}")
        if self.resync_period is not None and not (self.resync_period > 0 and math.isfinite(self.resync_period)):
            raise InputError("--resync-period", f"must be a positive number of seconds, not {self.resync_period:g}")
        refuse_bad_controller_flags(self.metrics_port, self.lease_namespace, self.lease_name, self.identity)
        if not os.path.isdir(self.directory):
            raise InputError(self.directory, "not a directory of <node>.env feature files")
        if self.resync_period is None:
            object.__setattr__(self, "resync_period", RESYNC_SECONDS)
        if self.leader_elect:
            lease = lease_defaults(self.lease_namespace, self.lease_name, self.identity, LEASE_NAME)
            for attr, value in zip(("lease_namespace", "lease_name", "identity"), lease, strict=True):
                object.__setattr__(self, attr, value)


def sync_result(
    changes: list[LabelChange], problems: list[str], dry_run: bool, extra: tuple[Section, ...] = ()
) -> Result:
    """The changes and problems of one pass as the one ``sync`` result."""
    from gpulabel.checks.labels.sync import change_finding

    findings = tuple(change_finding(c) for c in changes)
    sections = (Section("problems", tuple({"problem": p} for p in problems)), *extra)
    return Result("sync", findings, sections, ok="", fields={"dry_run": dry_run})


def run_sync(
    session: Session,
    opts: SyncOptions,
    on_change: Callable[[LabelChange], None],
    on_problem: Callable[[Problem], None],
    say: Callable[[str], None],
) -> Outcome:
    """One pass (or, ``--watch``, the controller until stopped); each change and problem is handed on as it happens.

    ``say`` gets the controller's own lines (Lease, metrics). The outcome's
    result holds every change and problem of a single pass.
    """
    from gpulabel.cluster.writes import ApiWriter
    from gpulabel.controller.reconcile import Reconciler

    changes: list[LabelChange] = []
    problems: list[str] = []
    keep = not opts.watch  # a controller hands each change on and keeps none (it runs for months)

    def change(c: LabelChange) -> None:
        if keep:
            changes.append(c)
        on_change(c)

    def problem(p: Problem) -> None:
        if keep:
            problems.append(str(p))
        on_problem(p)

    if opts.offline:  # --dry-run --snapshot: the plan for the snapshot's nodes, nothing contacted
        failed = _plan_offline(session, opts, change, problem)
        return Outcome(sync_result(changes, problems, True), 1 if failed else 0)

    client = session.client(budget=WRITER_BUDGET)
    metrics = None
    if opts.metrics_port is not None:
        from gpulabel.controller.metrics import Metrics, listen

        metrics = Metrics()  # sync's families, in the registry the monitor's loop reports to
        client.on_error = metrics.api_error
        listen(metrics, opts.metrics_port)
    rec = Reconciler(
        client,
        opts.directory,
        prune=opts.prune,
        dry_run=opts.dry_run,
        on_change=change,
        on_problem=problem,
        metrics=metrics,
        writer=ApiWriter(client, opts.dry_run),  # --dry-run: the API server's own dry run
    )
    if opts.watch:
        return Outcome(sync_result(changes, problems, False), _watch(rec, opts, say))
    result = rec.run_once()
    requests: tuple[dict[str, Cell], ...] = tuple(
        {"method": m, "count": n} for m, n in sorted(client.counts.by_method.items())
    )
    return Outcome(
        sync_result(changes, problems, opts.dry_run, (Section("requests", requests),)), 1 if result.failed else 0
    )


def _plan_offline(
    session: Session, opts: SyncOptions, change: Callable[[LabelChange], None], problem: Callable[[Problem], None]
) -> bool:
    """``--dry-run --snapshot``: one pass over the snapshot's nodes through a PlanWriter; True if it failed."""
    from gpulabel.cluster.writes import PlanWriter
    from gpulabel.controller.reconcile import PassResult, load_files, run_pass

    files, found = load_files(opts.directory)
    nodes = {n.name: n for n in session.state(["Node"]).nodes}

    def emit(result: PassResult, total: PassResult) -> None:
        for c in result.changes:
            change(c)
        for p in result.problems:
            problem(p)
        total.changes.extend(result.changes)
        total.problems.extend(result.problems)

    total = PassResult()
    emit(PassResult(problems=found), total)
    run_pass(files, nodes, opts.prune, PlanWriter("snapshot"), emit, total)
    return total.failed


def _watch(rec: Reconciler, opts: SyncOptions, say: Callable[[str], None]) -> int:
    """``--watch``: the reconciler on the monitor's loop (``controller.reconcile.watch_sync``); its exit code."""
    from gpulabel.controller.reconcile import watch_sync

    lock = None
    if opts.leader_elect:
        from gpulabel.controller.lease import LeaseLock

        assert opts.lease_namespace and opts.lease_name and opts.identity  # filled in by the options
        lock = LeaseLock(rec.client, opts.lease_namespace, opts.lease_name, opts.identity)
    assert opts.resync_period is not None
    return watch_sync(rec, lock, opts.resync_period, say)
