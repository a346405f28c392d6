"""The commands that write node labels: ``sync`` and ``isolate``."""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

from gpulabel.cli.context import AddCommand, Context
from gpulabel.errors import GpulabelError, InputError
from gpulabel.model.findings import Cell, Finding, Result, Section

if TYPE_CHECKING:
    from gpulabel.checks.sync import Change

__all__ = ["add_write_commands"]


def add_write_commands(add: AddCommand) -> None:
    p = add(
        "sync",
        cmd_sync,
        "set node labels to their feature files (DIR/<node>.env), as field manager gpulabel",
        groups=("output", "cluster"),
        examples=(
            "sync features/ --dry-run",
            "sync features/ --dry-run --snapshot nodes.json   # the plan, offline",
            "sync features/ --watch --leader-elect --metrics-port 9090",
        ),
        exits="0 done, 1 entries that could not be applied (one line each on stderr), 2 bad input or cluster error",
    )
    p.add_argument("directory", metavar="DIR")
    p.add_argument("--prune", action="store_true", help="remove keys gpulabel applied that left the file")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="server-side dry run: print what would change (with --snapshot: planned offline, nothing contacted)",
    )
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

    p = add(
        "isolate",
        cmd_isolate,
        "take nodes off every GPU operand (nvidia.com/gpu.deploy.operands=false)",
        groups=("output", "cluster"),
        examples=(
            "isolate lab-node-1 --dry-run -o wide",
            "isolate lab-node-1 --dry-run --snapshot lab.yaml",
            "isolate lab-node-1 --undo",
        ),
        exits="0 done, 1 nodes not found or not written, 2 bad input or cluster error",
    )
    p.add_argument("nodes", nargs="+", metavar="NODE")
    p.add_argument("--undo", action="store_true", help="give the nodes back to the operands (remove the key)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="server-side dry run: print what would change (with --snapshot: planned offline, nothing contacted)",
    )


def cmd_sync(ctx: Context) -> int:
    from gpulabel.controller.reconcile import Reconciler

    a = ctx.args
    if not os.path.isdir(a.directory):
        raise InputError(a.directory, "not a directory of <node>.env feature files")
    if a.snapshot:
        return _sync_offline(ctx)
    client = ctx.client(unreachable_seconds=60.0)  # a writer rides out an API server restart
    wide = ctx.fmt == "wide"
    collected: list[Change] = []
    problems: list[str] = []

    def on_change(change: Change) -> None:
        if ctx.fmt in STRUCTURED:
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
    if ctx.fmt in STRUCTURED:
        requests: tuple[dict[str, Cell], ...] = tuple(
            {"method": m, "count": n} for m, n in sorted(client.counts.by_method.items())
        )
        ctx.emit(_sync_result(collected, problems, a.dry_run, (Section("requests", requests),)))
    return 1 if result.failed else 0


STRUCTURED = ("json", "yaml", "table", "name")  # formats printed once at the end rather than line by line


def _sync_result(changes: list[Change], problems: list[str], dry_run: bool, extra: tuple[Section, ...] = ()) -> Result:
    from gpulabel.checks.sync import change_finding

    findings = tuple(change_finding(c) for c in changes)
    sections = (Section("problems", tuple({"problem": p} for p in problems)), *extra)
    return Result("sync", findings, sections, ok="", fields={"dry_run": dry_run})


def _sync_offline(ctx: Context) -> int:
    """``sync --dry-run --snapshot``: the plan for the snapshot's nodes, computed here, nothing contacted."""
    from gpulabel.checks.sync import plan_node
    from gpulabel.cluster.featurefiles import read_feature_dir
    from gpulabel.model.featurefile import Problem

    a = ctx.args
    if not a.dry_run:
        raise InputError("--snapshot", "only with --dry-run: writing needs a live cluster")
    if a.watch:
        raise InputError("--watch", "needs a live cluster, not --snapshot")
    nodes = {n.name: n for n in ctx.state(["Node"]).nodes}
    files, found = read_feature_dir(a.directory)
    problems = [*found, *(p for f in files for p in f.problems)]
    changes: list[Change] = []
    for ff in files:
        node = nodes.get(ff.node)
        if node is None:
            problems.append(Problem(ff.path, f"node {ff.node} not found in the snapshot; nothing applied"))
        elif not ff.refused:
            changes.extend(plan_node(node, ff.desired(), a.prune).changes)
    for p in problems:
        ctx.warn(str(p))
    if ctx.fmt in STRUCTURED:
        ctx.emit(_sync_result(changes, [str(p) for p in problems], True))
    else:
        wide = ctx.fmt == "wide"
        ctx.out.write("".join(f"{c.line()} ({c.explanation()})\n" if wide else f"{c.line()}\n" for c in changes))
    return 1 if any(p.severity == "error" for p in problems) else 0


def cmd_isolate(ctx: Context) -> int:
    from gpulabel.checks.isolate import FIELD_MANAGER, plan_isolation
    from gpulabel.checks.operands import operand_of_daemonset
    from gpulabel.cluster.writes import apply_labels, remove_labels
    from gpulabel.model.vocabulary import DEPLOY_OPERANDS

    a = ctx.args
    offline = bool(a.snapshot)
    if offline and not a.dry_run:
        raise InputError("--snapshot", "only with --dry-run: writing needs a live cluster")
    client = None if offline else ctx.client()
    if offline:
        state = ctx.state(["Node", "DaemonSet", "Pod"])
    else:
        from gpulabel.cluster.client import with_daemonset_pods

        assert client is not None
        state = ctx.state(["Node", "DaemonSet"])
        if not a.undo:
            state = with_daemonset_pods(client, state, [d for d in state.daemonsets if operand_of_daemonset(d)])
    operand_uids = {d.uid for d in state.daemonsets if operand_of_daemonset(d)}
    operand_pods = [p for p in state.pods if any(k == "DaemonSet" and u in operand_uids for k, u in p.owners)]
    changes, unknown = plan_isolation({n.name: n for n in state.nodes}, a.nodes, a.undo, operand_pods)
    failed = bool(unknown)
    for name in unknown:
        ctx.warn(f"node {name}: not found; nothing written")
    done: list[Finding] = []
    for change in changes:
        if client is not None:
            try:
                if change.isolate:
                    apply_labels(client, change.node, {DEPLOY_OPERANDS: "false"}, FIELD_MANAGER, a.dry_run)
                else:
                    remove_labels(client, change.node, [DEPLOY_OPERANDS], FIELD_MANAGER, a.dry_run)
            except GpulabelError as err:
                ctx.warn(f"node {change.node}: not written: {err}")
                failed = True
                continue
        detail = f"was {change.previous or 'absent'}; leaving: {', '.join(change.leaving) or 'no operand pods'}"
        done.append(
            Finding(
                "isolate",
                "isolated" if change.isolate else "returned",
                node=change.node,
                key=DEPLOY_OPERANDS,
                value="false" if change.isolate else None,
                old=change.previous,
                sample=change.leaving,
                detail=detail if change.isolate else "",
            )
        )
        if ctx.fmt in ("text", "wide"):  # one line as each node is written
            ctx.emit(Result("isolate", (done[-1],), ok=""))
    if ctx.fmt not in ("text", "wide"):
        unknown_rows = tuple({"node": n} for n in unknown)
        sections = (Section("unknown", unknown_rows),)
        ctx.emit(Result("isolate", tuple(done), sections, ok="", fields={"dry_run": a.dry_run}))
    return 1 if failed else 0
