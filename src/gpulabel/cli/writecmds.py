"""The commands that write node labels: ``sync`` and ``isolate``."""

from __future__ import annotations

import os
import socket

from gpulabel.cli.context import AddCommand, Context
from gpulabel.errors import GpulabelError, InputError

__all__ = ["add_write_commands"]


def add_write_commands(add: AddCommand) -> None:
    p = add("sync", cmd_sync, "set node labels to their feature files (DIR/<node>.env), as field manager gpulabel")
    p.add_argument("directory", metavar="DIR")
    p.add_argument("--prune", action="store_true", help="remove keys gpulabel applied that left the file")
    p.add_argument("--dry-run", action="store_true", help="server-side dry run: print what would change")
    p.add_argument("--watch", action="store_true", help="keep running: restore drift as it happens")
    p.add_argument(
        "--resync-period",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="with --watch: full resync period (default 300)",
    )
    p.add_argument("--leader-elect", action="store_true", help="with --watch: only the Lease holder writes")
    p.add_argument(
        "--lease-namespace",
        default=os.environ.get("POD_NAMESPACE", "gpulabel"),
        metavar="NS",
        help="namespace of the Lease (default $POD_NAMESPACE or gpulabel)",
    )
    p.add_argument("--lease-name", default="gpulabel-sync", metavar="NAME", help="name of the Lease")
    p.add_argument("--identity", metavar="ID", help="this instance's name in the Lease (default host_pid)")
    p.add_argument(
        "--metrics-port", type=int, metavar="PORT", help="with --watch: serve /metrics, /healthz and /readyz"
    )

    p = add("isolate", cmd_isolate, "take nodes off every GPU operand (nvidia.com/gpu.deploy.operands=false)")
    p.add_argument("nodes", nargs="+", metavar="NODE")
    p.add_argument("--undo", action="store_true", help="give the nodes back to the operands (remove the key)")
    p.add_argument("--dry-run", action="store_true", help="server-side dry run: print what would change")


def cmd_sync(ctx: Context) -> int:
    from gpulabel.checks.sync import change_finding
    from gpulabel.controller.reconcile import Reconciler
    from gpulabel.model.changes import LabelChange
    from gpulabel.render.text import emit_json

    a = ctx.args
    if not os.path.isdir(a.directory):
        raise InputError(a.directory, "not a directory of <node>.env feature files")
    client = ctx.client(unreachable_seconds=60.0)  # a writer rides out an API server restart
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
        if not a.watch:
            raise InputError("--metrics-port", "only with --watch")
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
        if a.dry_run:
            raise InputError("--watch", "cannot be combined with --dry-run")
        from gpulabel.controller.loop import run_controller

        lock = None
        if a.leader_elect:
            from gpulabel.controller.lease import LeaseLock

            identity = a.identity or f"{socket.gethostname()}_{os.getpid()}"
            lock = LeaseLock(client, a.lease_namespace, a.lease_name, identity)
        elif a.identity:
            raise InputError("--identity", "only with --leader-elect")

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


def cmd_isolate(ctx: Context) -> int:
    from gpulabel.checks.isolate import FIELD_MANAGER, plan_isolation
    from gpulabel.checks.operands import operand_of_daemonset
    from gpulabel.cluster.client import with_daemonset_pods
    from gpulabel.cluster.writes import apply_labels, remove_labels
    from gpulabel.model.vocabulary import DEPLOY_OPERANDS
    from gpulabel.render.text import emit_json

    a = ctx.args
    client = ctx.client()
    state = ctx.state(["Node", "DaemonSet"])
    if not a.undo:
        state = with_daemonset_pods(client, state, [d for d in state.daemonsets if operand_of_daemonset(d)])
    changes, unknown = plan_isolation({n.name: n for n in state.nodes}, a.nodes, a.undo, state.pods)
    failed = bool(unknown)
    for name in unknown:
        ctx.err.write(f"gpulabel: node {name}: not found; nothing written\n")
    done = []
    for item in changes:
        change = item.change
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
                    }
                    for i in done
                ],
                "unknown": unknown,
            },
            ctx.out,
        )
    return 1 if failed else 0
