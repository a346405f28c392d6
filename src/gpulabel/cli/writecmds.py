"""The commands that write node labels: ``sync`` and ``isolate``."""

from __future__ import annotations

import argparse
import math
import os
import socket

from gpulabel.cli.context import AddCommand, Context
from gpulabel.errors import GpulabelError, InputError

__all__ = ["add_write_commands"]


LEASE_NAME = "gpulabel-sync"
RESYNC_SECONDS = 300.0
WRITER_BUDGET = 60.0  # a writer rides out an API server restart (cluster/retry.py)

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


def add_write_commands(add: AddCommand) -> None:
    p = add("sync", cmd_sync, "set node labels to their feature files (DIR/<node>.env), as field manager gpulabel")
    p.add_argument("directory", metavar="DIR")
    p.add_argument("--prune", action="store_true", help="remove keys gpulabel applied that left the file")
    p.add_argument("--dry-run", action="store_true", help="server-side dry run: print what would change")
    p.add_argument("--watch", action="store_true", help="keep running: restore drift as it happens")
    # options that apply only with another one default to None, so that giving them alone can be refused
    p.add_argument(
        "--resync-period",
        type=float,
        metavar="SECONDS",
        help=f"with --watch: full resync period (default {RESYNC_SECONDS:g})",
    )
    p.add_argument(
        "--leader-elect", action="store_true", default=None, help="with --watch: only the Lease holder writes"
    )
    p.add_argument(
        "--lease-namespace",
        metavar="NS",
        help="with --leader-elect: namespace of the Lease (default $POD_NAMESPACE or gpulabel)",
    )
    p.add_argument(
        "--lease-name", metavar="NAME", help=f"with --leader-elect: name of the Lease (default {LEASE_NAME})"
    )
    p.add_argument(
        "--identity", metavar="ID", help="with --leader-elect: this instance's name in the Lease (default host_pid)"
    )
    p.add_argument(
        "--metrics-port", type=int, metavar="PORT", help="with --watch: serve /metrics, /healthz and /readyz"
    )

    p = add("isolate", cmd_isolate, "take nodes off every GPU operand (nvidia.com/gpu.deploy.operands=false)")
    p.add_argument("nodes", nargs="+", metavar="NODE")
    p.add_argument("--undo", action="store_true", help="give the nodes back to the operands (remove the key)")
    p.add_argument("--dry-run", action="store_true", help="server-side dry run: print what would change")
    p.add_argument(
        "--force", action="store_true", help="isolate nodes even where GPU pods run (they lose driver and plugin)"
    )


def check_sync_options(a: argparse.Namespace) -> None:
    """Refuse a bad or meaningless combination of sync's options, before anything is contacted or started.

    Fills in the defaults of the options that apply only with another one.
    """
    if a.snapshot:
        raise InputError("--snapshot", "sync writes to a live cluster; it cannot read a snapshot")
    if a.namespace is not None:
        raise InputError("--namespace", "sync writes nodes, which have no namespace (the Lease's is --lease-namespace)")
    if a.watch and a.dry_run:
        raise InputError("--dry-run", "cannot be combined with --watch (a dry run is one pass)")
    for attr, flag, needs_attr, needs_flag in _SYNC_NEEDS:
        if needs_attr is not None and getattr(a, attr) is not None and not getattr(a, needs_attr):
            raise InputError(flag, f"only applies with {needs_flag}")
    if a.resync_period is not None and not (a.resync_period > 0 and math.isfinite(a.resync_period)):
        raise InputError("--resync-period", f"must be a positive number of seconds, not {a.resync_period:g}")
    if a.metrics_port is not None and not 1 <= a.metrics_port <= 65535:
        raise InputError("--metrics-port", f"must be a port from 1 to 65535, not {a.metrics_port}")
    for flag, value in (
        ("--identity", a.identity),
        ("--lease-namespace", a.lease_namespace),
        ("--lease-name", a.lease_name),
    ):
        if value is not None and not value.strip():
            raise InputError(flag, "must not be empty")
    if not os.path.isdir(a.directory):
        raise InputError(a.directory, "not a directory of <node>.env feature files")
    if a.resync_period is None:
        a.resync_period = RESYNC_SECONDS
    if a.leader_elect:
        a.lease_namespace = a.lease_namespace or os.environ.get("POD_NAMESPACE") or "gpulabel"
        a.lease_name = a.lease_name or LEASE_NAME
        a.identity = a.identity or f"{socket.gethostname()}_{os.getpid()}"


def cmd_sync(ctx: Context) -> int:
    a = ctx.args
    check_sync_options(a)
    from gpulabel.checks.sync import change_finding
    from gpulabel.controller.reconcile import Reconciler
    from gpulabel.model.changes import LabelChange
    from gpulabel.render.text import emit_json

    client = ctx.client(budget=WRITER_BUDGET)
    wide = ctx.fmt == "wide"
    collected: list[LabelChange] = []
    problems: list[str] = []

    def on_change(change: LabelChange) -> None:
        if ctx.fmt == "json":
            collected.append(change)
            return
        ctx.out.write(f"{change.line()} ({change.explanation()})\n" if wide else f"{change.line()}\n")
        ctx.out.flush()

    def on_problem(problem: object) -> None:
        problems.append(str(problem))
        ctx.err.write(f"gpulabel: {problem}\n")
        ctx.err.flush()

    metrics = None
    if a.metrics_port is not None:
        from gpulabel.controller.metrics import Metrics, serve

        metrics = Metrics()
        client.on_error = metrics.api_error
        try:
            serve(metrics, a.metrics_port)
        except OSError as err:
            raise InputError("--metrics-port", f"cannot listen on {a.metrics_port}: {err.strerror}") from None
    rec = Reconciler(
        client,
        a.directory,
        prune=a.prune,
        dry_run=a.dry_run,
        on_change=on_change,
        on_problem=on_problem,
        metrics=metrics,
    )
    if a.watch:
        from gpulabel.controller.loop import run_controller

        lock = None
        if a.leader_elect:
            from gpulabel.controller.lease import LeaseLock

            lock = LeaseLock(client, a.lease_namespace, a.lease_name, a.identity)

        def say(text: str) -> None:
            ctx.err.write(f"gpulabel: {text}\n")
            ctx.err.flush()

        return run_controller(rec, lock, metrics, a.resync_period, say)
    result = rec.run_once()
    if ctx.fmt == "json":
        emit_json(
            {
                "changes": [change_finding(c).to_json() for c in collected],
                "problems": problems,
                "dry_run": a.dry_run,
                "requests": dict(client.counts.by_method),
            },
            ctx.out,
        )
    return 1 if result.failed else 0


def check_isolate_options(a: argparse.Namespace) -> None:
    """Refuse isolate's bad options before anything is contacted."""
    if a.snapshot:
        raise InputError("--snapshot", "isolate writes to a live cluster; it cannot read a snapshot")
    for name in a.nodes:
        if not name.strip():
            raise InputError("NODE", "a node name must not be empty")


def cmd_isolate(ctx: Context) -> int:
    from functools import partial

    from gpulabel.checks.isolate import FIELD_MANAGER, plan_isolation
    from gpulabel.checks.operands import operand_of_daemonset
    from gpulabel.cluster.live import with_daemonset_pods
    from gpulabel.cluster.writes import apply_labels, remove_labels
    from gpulabel.model.cluster import Pod, pod_from_json
    from gpulabel.model.vocabulary import DEPLOY_OPERANDS
    from gpulabel.render.text import emit_json

    a = ctx.args
    check_isolate_options(a)
    client = ctx.client(budget=WRITER_BUDGET)
    state = ctx.state(["Node", "DaemonSet"])
    node_pods: list[Pod] = []
    if not a.undo:
        state = with_daemonset_pods(client, state, [d for d in state.daemonsets if operand_of_daemonset(d)])
        known = {n.name for n in state.nodes}
        for name in dict.fromkeys(a.nodes):
            if name in known:  # one LIST per node to isolate, as kubectl drain does
                node_pods += client.list_objects(
                    client.kind_path("Pod"),
                    partial(pod_from_json, where=f"{client.endpoint} Pod"),
                    field_selector=f"spec.nodeName={name}",
                )[0]
    changes, unknown = plan_isolation({n.name: n for n in state.nodes}, a.nodes, a.undo, state.pods, node_pods)
    failed = bool(unknown)
    for name in unknown:
        ctx.err.write(f"gpulabel: node {name}: not found; nothing written\n")
    done = []
    refused = []
    for item in changes:
        change = item.change
        if item.gpu_pods and not a.force and not a.dry_run:
            refused.append(item)
            pods = ", ".join(f"{ref} ({' '.join(res)})" for ref, res in item.gpu_pods)
            ctx.err.write(
                f"gpulabel: node {change.node}: not isolated: GPU pods running: {pods} "
                "(they would keep their devices without driver or device plugin); --force to isolate anyway\n"
            )
            failed = True
            continue
        try:
            if item.isolate:
                apply_labels(client, change.node, {DEPLOY_OPERANDS: "false"}, FIELD_MANAGER, a.dry_run)
            else:
                remove_labels(client, change.node, [DEPLOY_OPERANDS], FIELD_MANAGER, a.dry_run)
        except GpulabelError as err:
            ctx.err.write(f"gpulabel: node {change.node}: not written: {err}\n")
            failed = True
            continue
        done.append(item)
        if ctx.fmt == "wide" and item.isolate:
            leaving = ", ".join(item.leaving) or "no operand pods"
            ctx.out.write(f"{change.line()} (was {change.previous or 'absent'}; leaving: {leaving})\n")
        elif ctx.fmt != "json":
            ctx.out.write(change.line() + "\n")
        if ctx.fmt != "json":
            for ref, res in item.gpu_pods:
                ctx.out.write(f"{change.node} gpu-pod {ref} {' '.join(res)}\n")
    if ctx.fmt == "json":
        emit_json(
            {
                "dry_run": a.dry_run,
                "changes": [
                    {
                        "node": i.change.node,
                        "isolated": i.isolate,
                        "previous": i.change.previous,
                        "leaving": list(i.leaving),
                        "gpu_pods": [{"pod": ref, "resources": list(res)} for ref, res in i.gpu_pods],
                    }
                    for i in done
                ],
                "unknown": unknown,
                "refused": [
                    {
                        "node": i.change.node,
                        "gpu_pods": [{"pod": ref, "resources": list(res)} for ref, res in i.gpu_pods],
                    }
                    for i in refused
                ],
            },
            ctx.out,
        )
    return 1 if failed else 0
