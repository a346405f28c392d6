"""``monitor``: watch the cluster and publish ``check``'s findings as they change, until stopped.

:class:`MonitorOptions` is checked before anything is contacted.
:func:`run_monitor` reads which kinds the server serves (as ``check`` does:
no ClusterPolicy CRD, no DRA, no NFD means those kinds are left out), makes
the evaluator (:func:`_evaluator`) and the sinks (:func:`_sinks`, the one
place they are wired), and runs :class:`gpulabel.controller.monitor.Monitor`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpulabel.app.config import parse_duration
from gpulabel.app.defaults import METRICS_PORT, MONITOR_LEASE_NAME
from gpulabel.app.session import WRITER_BUDGET, Outcome, Session, lease_defaults, refuse_bad_controller_flags
from gpulabel.checks.engine.assessment import Accepted
from gpulabel.checks.registry import BUILTIN, CheckOptions, Registry
from gpulabel.controller.grace import FAULT, Grace
from gpulabel.errors import InputError
from gpulabel.model.findings import Result

if TYPE_CHECKING:
    from gpulabel.checks.engine.assessment import Evaluator
    from gpulabel.cluster.client import KubeClient
    from gpulabel.controller.monitor import Health
    from gpulabel.controller.sinks import Sink

__all__ = ["LEASE_NAME", "METRICS_PORT", "MonitorOptions", "run_monitor"]

LEASE_NAME = MONITOR_LEASE_NAME
EVALUATORS = ("full", "incremental")
MAX_WATCH_TIMEOUT = 240.0  # controller.monitor.WATCH_TIMEOUT: GPULabelMonitorWatchStale's 300 s less a minute


@dataclass(frozen=True, slots=True)
class MonitorOptions:
    """``monitor``'s options, refused in one line when bad, before anything is contacted.

    ``checks`` and ``accepted`` are what ``check`` would run with (the same
    flags and config file). ``metrics_port`` None: no metrics server.
    ``resync`` (``30m``): evaluate at least this often without events.
    ``dump``: a file the current findings are written to after every
    evaluation (``check -o json``'s envelope). ``evaluator``: ``full`` re-runs
    every check per evaluation, ``incremental`` (the default, None)
    only what a change touches; both always answer the same (tests/unit/test_incremental.py).
    """

    checks: CheckOptions = field(default_factory=BUILTIN.options)
    accepted: Accepted = field(default_factory=Accepted)
    leader_elect: bool = False
    lease_namespace: str | None = None
    lease_name: str | None = None
    identity: str | None = None
    metrics_port: int | None = METRICS_PORT
    events: bool = True
    event_evidence: bool = False  # a node's Warning Event says the blamed pod's cause (reads its log and Events)
    node_condition: bool = False
    problem_series: int = 1000
    resync: str = "30m"
    dump: str | None = None
    evaluator: str | None = None
    batch_ms: float = 20.0
    event_grace: tuple[str, ...] = ()
    cluster_name: str | None = None  # a cluster="<name>" label on every metric (docs/monitor-fleet.md)
    watch_timeout: str = "4m"
    resync_seconds: float = field(init=False, default=0.0)
    watch_seconds: int = field(init=False, default=0)
    grace: Grace = field(init=False, default_factory=Grace)

    def __post_init__(self) -> None:
        if not self.leader_elect:
            for flag, value in (
                ("--lease-namespace", self.lease_namespace),
                ("--lease-name", self.lease_name),
                ("--identity", self.identity),
            ):
                if value is not None:
                    raise InputError(flag, "only applies with --leader-elect")
        refuse_bad_controller_flags(self.metrics_port, self.lease_namespace, self.lease_name, self.identity)
        if self.problem_series < 0:
            raise InputError("--problem-series", f"must be 0 or more, not {self.problem_series}")
        seconds = parse_duration(self.resync, "--resync")
        if seconds <= 0:
            raise InputError("--resync", "must be longer than 0s")
        object.__setattr__(self, "resync_seconds", seconds)
        watch = parse_duration(self.watch_timeout, "--watch-timeout")
        if not 1 <= watch <= MAX_WATCH_TIMEOUT:
            raise InputError(
                "--watch-timeout",
                f"must be from 1s to 4m, not {self.watch_timeout}: an idle kind's watch is heard from only when "
                "its stream ends, and GPULabelMonitorWatchStale fires on one silent for 5 minutes",
            )
        object.__setattr__(self, "watch_seconds", int(watch))
        object.__setattr__(self, "grace", parse_graces(self.event_grace))
        if self.cluster_name is not None:
            from gpulabel.app.fleet import refuse_bad_cluster_name

            refuse_bad_cluster_name(self.cluster_name)
        if self.evaluator is not None and self.evaluator not in EVALUATORS:
            raise InputError("--evaluator", f"{self.evaluator!r} is not one of {', '.join(EVALUATORS)}")
        if not 0 <= self.batch_ms <= 1000:
            raise InputError("--batch-ms", f"must be from 0 to 1000, not {self.batch_ms:g}")
        if self.dump is not None and not os.path.isdir(os.path.dirname(os.path.abspath(self.dump))):
            raise InputError("--dump", f"{os.path.dirname(self.dump)}: no such directory")
        if self.leader_elect:
            lease = lease_defaults(self.lease_namespace, self.lease_name, self.identity, LEASE_NAME)
            for attr, value in zip(("lease_namespace", "lease_name", "identity"), lease, strict=True):
                object.__setattr__(self, attr, value)


def parse_graces(values: Iterable[str], flag: str = "--event-grace") -> Grace:
    """``CHECK/REASON=DURATION``, ``default=DURATION`` (reasons without a grace of their own in
    ``controller.grace.DEFAULTS``) or ``all=DURATION`` (every reason not named) items; a bad one is refused."""
    from gpulabel.controller.grace import DEFAULTS

    overrides: dict[tuple[str, str], float] = {}
    default, table = FAULT, DEFAULTS
    for item in values:
        name, sep, duration = (part.strip() for part in item.partition("="))
        check, slash, reason = name.partition("/")
        if not sep or not (name in ("default", "all") or (slash and check and reason)):
            raise InputError(flag, f"{item!r} is not CHECK/REASON=DURATION, default=DURATION or all=DURATION")
        seconds = parse_duration(duration, flag)
        if seconds < 0:
            raise InputError(flag, f"{item!r}: the duration must be 0 or more")
        if name == "all":
            default, table = seconds, {}
        elif name == "default":
            default = seconds
        else:
            overrides[(check, reason)] = seconds
    return Grace(overrides, default, table)


def monitored_kinds(registry: Registry | None = None) -> list[str]:
    """What ``check`` reads: the union of the kinds of every check of ``registry`` (default: gpulabel's)."""
    return (registry or BUILTIN).kinds


def _evaluator(opts: MonitorOptions, source: str) -> tuple[Evaluator, str]:
    """The evaluator and its scope name for the metrics (``incremental``, the default, or ``full``)."""
    from gpulabel.checks.engine.assessment import FullEvaluator
    from gpulabel.checks.engine.incremental import IncrementalEvaluator

    if opts.evaluator == "full":
        return FullEvaluator(opts.checks, opts.accepted, source), "full"
    return IncrementalEvaluator(opts.checks, opts.accepted, source), "incremental"


def _sinks(
    opts: MonitorOptions, client: KubeClient, say: Callable[[str], None]
) -> tuple[list[Sink], list[Sink], Health | None]:
    """Every sink the options ask for: those every replica feeds, those only the leader feeds (the writes),
    and the metrics that hear about watch health (None: no metrics).

    The one place sinks are wired: metrics (``--metrics-port``: controller/monitor_metrics.py, served
    with ``/findings``), the findings log (stderr), ``--dump``, Events (``--events``,
    controller/events.py, controller/eventsink.py) and the node condition (``--node-condition``,
    controller/condition.py).
    Events name the monitor's pod (``$POD_NAME``) or host as their ``reportingInstance``.
    """
    import os
    import socket

    from gpulabel.controller.findings_out import FindingsDump, FindingsLog

    sinks: list[Sink] = [FindingsLog(say)]
    writes: list[Sink] = []
    if opts.dump is not None:
        sinks.append(FindingsDump(opts.dump))
    health: Health | None = None
    metrics = None
    if opts.metrics_port is not None:
        from gpulabel.checks.health.rules import condition_table
        from gpulabel.controller.metrics import listen
        from gpulabel.controller.monitor_metrics import MonitorMetrics

        # the usable/unhealthy split reads the config's GPU health condition types too, as the findings do
        metrics = MonitorMetrics(
            opts.problem_series,
            conditions=condition_table(opts.checks.health_conditions),
            cluster=opts.cluster_name,
        )
        listen(metrics, opts.metrics_port)
        sinks.append(metrics)
        health = metrics
    from gpulabel.controller.apierrors import ApiErrors

    client.on_error = ApiErrors(metrics.api_error if metrics is not None else None, say)
    if opts.events:
        from gpulabel.controller.events import EventPlanner
        from gpulabel.controller.eventsink import EventSink, EventWriter

        instance = os.environ.get("POD_NAME") or socket.gethostname()
        planner: EventPlanner
        if opts.event_evidence:
            from gpulabel.app.monitorevidence import ExplainingPlanner, live_explainer

            planner = ExplainingPlanner(live_explainer(client, say), grace=opts.grace)
        else:
            planner = EventPlanner(grace=opts.grace)
        writes.append(EventSink(EventWriter(client, instance), planner, metrics=metrics, warn=say))
    if opts.node_condition:
        from gpulabel.controller.condition import ApiConditionWriter, ConditionSink

        writes.append(ConditionSink(ApiConditionWriter(client), metrics=metrics, warn=say))
    return sinks, writes, health


def run_monitor(session: Session, opts: MonitorOptions, say: Callable[[str], None]) -> Outcome:
    """Watch and publish until SIGTERM/SIGINT (exit 0) or the Lease is lost (exit 1).

    ``say`` gets the monitor's lines: each finding that appears or is resolved,
    the Lease, relists, dropped watches. The outcome holds the last findings.
    """
    from gpulabel.cluster.live import served_kinds
    from gpulabel.controller.heap import Heap
    from gpulabel.controller.monitor import Monitor

    client = session.client(budget=WRITER_BUDGET)
    kinds = served_kinds(client, monitored_kinds())
    evaluator, scope = _evaluator(opts, client.endpoint)
    sinks, writes, health = _sinks(opts, client, say)
    lock = None
    if opts.leader_elect:
        from gpulabel.controller.lease import LeaseLock

        assert opts.lease_namespace and opts.lease_name and opts.identity  # filled in by the options
        lock = LeaseLock(client, opts.lease_namespace, opts.lease_name, opts.identity)
    say(f"monitor: watching {', '.join(kinds)} ({scope} evaluation)")
    monitor = Monitor(
        client,
        kinds,
        evaluator,
        sinks,
        leader_sinks=writes,
        lock=lock,
        health=health,
        say=say,
        scope=scope,
        batch_seconds=opts.batch_ms / 1000,
        resync_seconds=opts.resync_seconds,
        watch_timeout=opts.watch_seconds,
        heap=Heap(),  # the collector kept off what the monitor holds (controller/heap.py)
    )
    code = monitor.run()
    for sink in writes:  # the writing sinks write what still waits
        stop = getattr(sink, "stop", None)
        if callable(stop):
            stop()
    findings = monitor.last.findings if monitor.last is not None else ()
    return Outcome(Result("monitor", findings), code)
