"""``monitor``: the long-running watcher that publishes ``check``'s findings as they change."""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import IO

from gpulabel.app.defaults import METRICS_PORT
from gpulabel.app.defaults import MONITOR_LEASE_NAME as LEASE_NAME
from gpulabel.cli.context import AddCommand, Context
from gpulabel.cli.flags import disabled_flag

__all__ = ["add_kubeconfig_command", "add_monitor_command", "log_lines"]


def add_monitor_command(add: AddCommand) -> None:
    """``monitor``: its flags in groups, in the order its help lists them."""
    p = add(
        "monitor",
        cmd_monitor,
        "watch the cluster and publish check's findings as they change: metrics, Events, a log line per change",
        groups=("cluster",),
        examples=(
            "monitor --leader-elect --metrics-port 9102",
            "monitor --metrics-port 0 --dump /tmp/findings.json   # no metrics server; the findings in a file",
        ),
        exits="0 stopped by SIGTERM/SIGINT, 1 the Lease was lost (restart as a standby), 2 bad input or cluster error",
    )
    _leader_election_flags(p)
    _sink_flags(p)
    _judgement_flags(p)
    _evaluation_flags(p)


def _leader_election_flags(p: argparse.ArgumentParser) -> None:
    """Several replicas, one publisher: the Lease they elect it by."""
    p.add_argument("--leader-elect", action="store_true", help="only the Lease holder publishes; a standby stays warm")
    p.add_argument(
        "--lease-namespace",
        metavar="NS",
        help="with --leader-elect: namespace of the Lease (default $POD_NAMESPACE or gpulabel)",
    )
    p.add_argument("--lease-name", metavar="NAME", help=f"with --leader-elect: the Lease's name (default {LEASE_NAME})")
    p.add_argument(
        "--identity", metavar="ID", help="with --leader-elect: this instance's name in the Lease (default host_pid)"
    )


def _sink_flags(p: argparse.ArgumentParser) -> None:
    """Where the findings are published: the metrics server, Events, the node condition."""
    p.add_argument(
        "--metrics-port",
        type=int,
        default=METRICS_PORT,
        metavar="PORT",
        help=f"serve /metrics, /healthz and /readyz (default {METRICS_PORT}; 0: none)",
    )
    p.add_argument(
        "--events",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="write Events on the Node or Pod when a finding appears or is resolved (default on)",
    )
    p.add_argument(
        "--event-evidence",
        action="store_true",
        help="read the blamed operand pod's log tail and Events when a node's Warning Event is first written and add "
        "the cause to its message (needs pods/log get and events list; docs/evidence.md)",
    )
    p.add_argument(
        "--node-condition",
        action="store_true",
        help="keep the informational node condition GPUStackProblem (off by default)",
    )
    p.add_argument(
        "--problem-series",
        type=int,
        default=1000,
        metavar="N",
        help="at most N gpulabel_problem series, worst first (default 1000; the rest is counted)",
    )


def _judgement_flags(p: argparse.ArgumentParser) -> None:
    """What counts as a finding, as for check: the config, the stuck threshold, the operands turned off."""
    p.add_argument(
        "--config",
        metavar="FILE",
        help="ignore rules, severity overrides and thresholds, as for check (docs/config.md)",
    )
    p.add_argument(
        "--stuck-after",
        metavar="DURATION",
        help="a MIG or driver-upgrade state older than this is stuck, as for check (default: the config's, else 30m)",
    )
    disabled_flag(p, "an operand turned off on purpose, as for operands")


def _evaluation_flags(p: argparse.ArgumentParser) -> None:
    """When and how each evaluation runs (resync, evaluator, batching, watch streams), and what it leaves
    besides the sinks (the dump file, the Event grace, the log's form, the cluster label)."""
    p.add_argument(
        "--resync",
        default="30m",
        metavar="DURATION",
        help="evaluate at least this often without events: ages grow without one (default 30m)",
    )
    p.add_argument(
        "--dump",
        metavar="FILE",
        help="write the current findings (check -o json's document) to FILE after every evaluation, atomically",
    )
    p.add_argument(
        "--evaluator",
        choices=("full", "incremental"),
        default=None,
        help="full: every check on each evaluation; incremental: only what a change touches (default where built)",
    )
    p.add_argument(
        "--event-grace",
        action="append",
        default=[],
        metavar="CHECK/REASON=DURATION",
        help="how long a finding must hold before its Warning Event (repeatable; default=D for the reasons"
        " without their own, all=D for every reason not named; docs/monitor-sinks.md has the defaults)",
    )
    p.add_argument(
        "--watch-timeout",
        default="4m",
        metavar="DURATION",
        help="the server ends each watch's stream after this and it is resumed: on a quiet kind the only sign "
        "the watch lives (default and most 4m; docs/monitor.md)",
    )
    p.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="text: a UTC timestamp, then the line; json: one object per line (time, msg) (default text)",
    )
    p.add_argument(
        "--cluster-name",
        metavar="NAME",
        help="label every metric cluster=NAME: several clusters' monitors on one Prometheus (docs/monitor-fleet.md)",
    )
    p.add_argument(
        "--batch-ms", type=float, default=20.0, metavar="MS", help="coalesce events arriving within MS (default 20)"
    )


def add_kubeconfig_command(add: AddCommand) -> None:
    p = add(
        "kubeconfig",
        cmd_kubeconfig,
        "write a kubeconfig that acts as a ServiceAccount (a TokenRequest), to run monitor or sync outside the "
        "cluster with exactly the chart's rights",
        groups=("cluster",),
        examples=(
            "kubeconfig --service-account gpulabel/gpulabel-monitor -o monitor.kubeconfig",
            "monitor --kubeconfig monitor.kubeconfig --leader-elect --lease-namespace gpulabel",
        ),
        exits="0 written, 2 bad input, the token refused or the file not writable",
        omit=("output",),  # its -o is a file
    )
    p.add_argument("--service-account", required=True, metavar="NS/NAME", help="the ServiceAccount to act as")
    p.add_argument("-o", "--output", dest="file", required=True, metavar="FILE", help="the kubeconfig (mode 0600)")
    p.add_argument(
        "--duration", default="1h", metavar="DURATION", help="how long the token is valid (default 1h, at least 10m)"
    )


def cmd_kubeconfig(ctx: Context) -> int:
    from gpulabel.app.kubeconfig import KubeconfigOptions, run_kubeconfig

    a = ctx.args
    opts = KubeconfigOptions(service_account=a.service_account, output=a.file, duration=a.duration)
    code = run_kubeconfig(ctx.session(), opts).code
    ctx.out.write(f"{a.file}: serviceaccount {a.service_account}, token valid {a.duration}\n")
    return code


def cmd_monitor(ctx: Context) -> int:
    from gpulabel.app.checks import check_options
    from gpulabel.app.monitor import MonitorOptions, run_monitor
    from gpulabel.checks.engine.assessment import Accepted

    a = ctx.args
    config = ctx.verdict().config
    opts = MonitorOptions(
        checks=check_options(disabled=a.disabled, stuck_after=a.stuck_after, config=config),
        accepted=Accepted(config.severities, config.ignore),
        leader_elect=a.leader_elect,
        lease_namespace=a.lease_namespace,
        lease_name=a.lease_name,
        identity=a.identity,
        metrics_port=a.metrics_port or None,
        events=a.events,
        event_evidence=a.event_evidence,
        node_condition=a.node_condition,
        problem_series=a.problem_series,
        resync=a.resync,
        dump=a.dump,
        evaluator=a.evaluator,
        batch_ms=a.batch_ms,
        event_grace=tuple(a.event_grace),
        cluster_name=a.cluster_name,
        watch_timeout=a.watch_timeout,
    )

    return run_monitor(ctx.session(), opts, log_lines(ctx.err, a.log_format)).code


def log_lines(out: IO[str], form: str, clock: Callable[[], float] = time.time) -> Callable[[str], None]:
    """The monitor's log: each line stamped with its UTC time (``2026-01-02T03:04:05.678Z gpulabel: ...``), or
    as one JSON object (``{"time": ..., "logger": "gpulabel", "msg": ...}``) per line; written whole and flushed."""
    import orjson

    lock = threading.Lock()

    def say(text: str) -> None:
        now = datetime.fromtimestamp(clock(), UTC)
        stamp = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
        if form == "json":
            line = orjson.dumps({"time": stamp, "logger": "gpulabel", "msg": text}).decode()
        else:
            line = f"{stamp} gpulabel: {text}"
        with lock:
            out.write(line + "\n")
            out.flush()

    return say
