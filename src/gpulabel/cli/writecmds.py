"""The commands that write node labels: ``sync`` and ``isolate``."""

from __future__ import annotations

import argparse
import math
import os
import socket
from typing import TYPE_CHECKING

from gpulabel.cli.context import AddCommand, Context
from gpulabel.errors import GpulabelError, InputError
from gpulabel.model.findings import Cell, Finding, Result, Section

if TYPE_CHECKING:
    from gpulabel.model.changes import LabelChange

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


DRY_RUN_HELP = "server-side dry run: print what would change (with --snapshot: planned offline, nothing contacted)"
STRUCTURED = ("json", "yaml", "table", "name")  # formats printed once at the end rather than line by line


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
    p.add_argument("--dry-run", action="store_true", help=DRY_RUN_HELP)
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

    p = add(
        "isolate",
        cmd_isolate,
        "take nodes off every GPU operand (nvidia.com/gpu.deploy.operands=false)",
        groups=("output", "cluster"),
        examples=(
            "isolate lab-node-1 --dry-run -o wide",
            "isolate lab-node-1 --dry-run --snapshot lab.yaml   # the plan, offline",
            "isolate lab-node-1 --undo",
        ),
        exits="0 done, 1 nodes not found or not written, 2 bad input or cluster error",
    )
    p.add_argument("nodes", nargs="+", metavar="NODE")
    p.add_argument("--undo", action="store_true", help="give the nodes back to the operands (remove the key)")
    p.add_argument("--dry-run", action="store_true", help=DRY_RUN_HELP)
    p.add_argument(
        "--force", action="store_true", help="isolate nodes even where GPU pods run (they lose driver and plugin)"
    )


def check_sync_options(a: argparse.Namespace) -> None:
    """Refuse a bad or meaningless combination of sync's options, before anything is contacted or started.

    Fills in the defaults of the options that apply only with another one.
    """
    if a.snapshot and not a.dry_run:
        raise InputError("--snapshot", "only with --dry-run: sync writes to a live cluster")
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
    if a.snapshot:
        return _sync_offline(ctx)
    from gpulabel.controller.reconcile import Reconciler

    client = ctx.client(budget=WRITER_BUDGET)
    wide = ctx.fmt == "wide"
    collected: list[LabelChange] = []
    problems: list[str] = []

    def on_change(change: LabelChange) -> None:
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
    if ctx.fmt in STRUCTURED:
        requests: tuple[dict[str, Cell], ...] = tuple(
            {"method": m, "count": n} for m, n in sorted(client.counts.by_method.items())
        )
        ctx.emit(_sync_result(collected, problems, a.dry_run, (Section("requests", requests),)))
    return 1 if result.failed else 0


def _sync_result(
    changes: list[LabelChange], problems: list[str], dry_run: bool, extra: tuple[Section, ...] = ()
) -> Result:
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
    nodes = {n.name: n for n in ctx.state(["Node"]).nodes}
    files, found = read_feature_dir(a.directory)
    problems = [*found, *(p for f in files for p in f.problems)]
    changes: list[LabelChange] = []
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


def check_isolate_options(a: argparse.Namespace) -> None:
    """Refuse isolate's bad options before anything is contacted."""
    if a.snapshot and not a.dry_run:
        raise InputError("--snapshot", "only with --dry-run: isolate writes to a live cluster")
    for name in a.nodes:
        if not name.strip():
            raise InputError("NODE", "a node name must not be empty")


def cmd_isolate(ctx: Context) -> int:
    from functools import partial

    from gpulabel.checks.isolate import FIELD_MANAGER, plan_isolation
    from gpulabel.checks.operands import operand_of_daemonset
    from gpulabel.cluster.writes import apply_labels, remove_labels
    from gpulabel.model.cluster import Pod, pod_from_json
    from gpulabel.model.vocabulary import DEPLOY_OPERANDS

    a = ctx.args
    check_isolate_options(a)
    offline = bool(a.snapshot)  # --dry-run --snapshot: the plan, nothing contacted
    client = None if offline else ctx.client(budget=WRITER_BUDGET)
    node_pods: list[Pod] = []
    if client is None:
        state = ctx.state(["Node", "DaemonSet", "Pod"])
        wanted = set(a.nodes)
        node_pods = [p for p in state.pods if p.node_name in wanted]
    else:
        from gpulabel.cluster.live import with_daemonset_pods

        state = ctx.state(["Node", "DaemonSet"])
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
    operand_uids = {d.uid for d in state.daemonsets if operand_of_daemonset(d)}
    operand_pods = [p for p in state.pods if any(k == "DaemonSet" and u in operand_uids for k, u in p.owners)]
    changes, unknown = plan_isolation({n.name: n for n in state.nodes}, a.nodes, a.undo, operand_pods, node_pods)
    failed = bool(unknown)
    for name in unknown:
        ctx.warn(f"node {name}: not found; nothing written")
    done: list[Finding] = []
    refused: list[dict[str, Cell]] = []
    for item in changes:
        change = item.change
        if item.gpu_pods and not a.force and not a.dry_run:
            pods = ", ".join(f"{ref} ({' '.join(res)})" for ref, res in item.gpu_pods)
            ctx.warn(
                f"node {change.node}: not isolated: GPU pods running: {pods} "
                "(they would keep their devices without driver or device plugin); --force to isolate anyway"
            )
            refused.append({"node": change.node, "gpu_pods": tuple(ref for ref, _ in item.gpu_pods)})
            failed = True
            continue
        if client is not None:
            try:
                if item.isolate:
                    apply_labels(client, change.node, {DEPLOY_OPERANDS: "false"}, FIELD_MANAGER, a.dry_run)
                else:
                    remove_labels(client, change.node, [DEPLOY_OPERANDS], FIELD_MANAGER, a.dry_run)
            except GpulabelError as err:
                ctx.warn(f"node {change.node}: not written: {err}")
                failed = True
                continue
        leaving = ", ".join(item.leaving) or "no operand pods"
        mine = [
            Finding(
                "isolate",
                "isolated" if item.isolate else "returned",
                node=change.node,
                key=change.key,
                value=change.value,
                old=change.previous,
                sample=item.leaving,
                detail=f"was {change.previous or 'absent'}; leaving: {leaving}" if item.isolate else "",
            ),
            *(Finding("isolate", "gpu-pod", node=change.node, pod=ref, args=tuple(res)) for ref, res in item.gpu_pods),
        ]
        done.extend(mine)
        if ctx.fmt in ("text", "wide"):  # the lines as each node is written
            ctx.emit(Result("isolate", tuple(mine), ok=""))
    if ctx.fmt not in ("text", "wide"):
        sections = (Section("unknown", tuple({"node": n} for n in unknown)), Section("refused", tuple(refused)))
        ctx.emit(Result("isolate", tuple(done), sections, ok="", fields={"dry_run": a.dry_run}))
    return 1 if failed else 0
