"""The commands that write node labels: ``sync`` and ``isolate``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpulabel.app.sync import LEASE_NAME, RESYNC_SECONDS
from gpulabel.cli.context import AddCommand, Context

if TYPE_CHECKING:
    from gpulabel.model.changes import LabelChange
    from gpulabel.model.featurefile import Problem

__all__ = ["add_write_commands"]


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


def cmd_sync(ctx: Context) -> int:
    from gpulabel.app.sync import SyncOptions, run_sync

    a = ctx.args
    opts = SyncOptions(
        directory=a.directory,
        prune=a.prune,
        dry_run=a.dry_run,
        watch=a.watch,
        offline=bool(a.snapshot),
        resync_period=a.resync_period,
        leader_elect=a.leader_elect,
        lease_namespace=a.lease_namespace,
        lease_name=a.lease_name,
        identity=a.identity,
        metrics_port=a.metrics_port,
    )
    wide = ctx.fmt == "wide"
    structured = ctx.fmt in STRUCTURED

    def on_change(change: LabelChange) -> None:
        if not structured:
            ctx.out.write(f"{change.line()} ({change.explanation()})\n" if wide else f"{change.line()}\n")
            ctx.out.flush()

    def on_problem(problem: Problem) -> None:
        ctx.warn(str(problem))

    outcome = run_sync(ctx.session(), opts, on_change, on_problem, ctx.warn)
    if structured and not opts.watch:
        ctx.emit(outcome.result)
    return outcome.code


def cmd_isolate(ctx: Context) -> int:
    from gpulabel.app.isolate import IsolateOptions, run_isolate

    a = ctx.args
    opts = IsolateOptions(nodes=tuple(a.nodes), undo=a.undo, dry_run=a.dry_run, force=a.force, offline=bool(a.snapshot))
    streamed = ctx.fmt in ("text", "wide")  # the lines as each node is written
    outcome = run_isolate(ctx.session(), opts, ctx.emit if streamed else lambda result: None)
    if not streamed:
        ctx.emit(outcome.result)
    return outcome.code
