"""The command line: parse, load the cluster once, run pure checks, render.

Every command accepts the shared flags (``--snapshot``, ``--kubeconfig``,
``--context``, ``-o``, ``-n``) before or after its name, as kubectl does.
Exit codes: 0 nothing found, 1 findings, 2 bad input or an unusable cluster.
Heavy libraries are imported inside the commands that need them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from gpulabel import __version__
from gpulabel._errors import GpulabelError, InputError
from gpulabel.render import FORMATS

if TYPE_CHECKING:
    from gpulabel.findings import Finding
    from gpulabel.live import KubeClient
    from gpulabel.model import ClusterState

__all__ = ["main"]

_SHARED_DEFAULTS: dict[str, Any] = {
    "snapshot": None,
    "kubeconfig": None,
    "context": None,
    "output": "text",
    "namespace": None,
}


def _shared_flags() -> argparse.ArgumentParser:
    # default=SUPPRESS on every shared flag lets the same flag be given before
    # or after the subcommand without the subparser's default wiping it out.
    p = argparse.ArgumentParser(add_help=False)
    S = argparse.SUPPRESS
    g = p.add_argument_group("cluster input and output")
    g.add_argument(
        "--snapshot",
        action="append",
        metavar="FILE",
        default=S,
        help="read this snapshot (JSON/YAML from kubectl get -o json|yaml) instead of a cluster; repeatable",
    )
    g.add_argument(
        "--kubeconfig", metavar="FILE", default=S, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config)"
    )
    g.add_argument("--context", metavar="NAME", default=S, help="kubeconfig context to use")
    g.add_argument(
        "-o",
        "--output",
        choices=FORMATS,
        default=S,
        help="text (default, for scripts), wide (with explanations), json, or table (for people)",
    )
    g.add_argument("-n", "--namespace", metavar="NS", default=S, help="only this namespace (pods); default all")
    return p


@dataclass
class Context:
    """What a command gets: its parsed arguments and a way to load the cluster once."""

    args: argparse.Namespace
    out: IO[str]
    err: IO[str]
    _client: KubeClient | None = None

    @property
    def fmt(self) -> str:
        return str(self.args.output)

    def client(self, unreachable_seconds: float = 5.0) -> KubeClient:
        """The API client; ``unreachable_seconds`` is how long to ride out a server that is down."""
        if self.args.snapshot:
            raise InputError("--snapshot", "this command needs a live cluster, not a snapshot")
        if self._client is None:
            from gpulabel.live import KubeClient

            self._client = KubeClient(self.args.kubeconfig, self.args.context, unreachable_seconds=unreachable_seconds)
        return self._client

    def state(self, kinds: Iterable[str], **selectors: str | None) -> ClusterState:
        if self.args.snapshot:
            from gpulabel.snapshot import load_snapshots

            return load_snapshots(self.args.snapshot)
        from gpulabel.live import load_cluster

        return load_cluster(self.client(), kinds, namespace=self.args.namespace, **selectors)


Command = Callable[[Context], int]


def _findings_exit(ctx: Context, findings: Sequence[Finding], check: str) -> int:
    from gpulabel.render import emit_findings

    emit_findings(findings, ctx.fmt, ctx.out, check=check)
    return 1 if findings else 0


# -- commands ---------------------------------------------------------------


def cmd_sanitize(ctx: Context) -> int:
    from gpulabel.labels import sanitize, sanitize_gfd

    a = ctx.args
    if a.gfd:
        results = [sanitize_gfd(v, a.mig_profile or "", a.shared) for v in a.values]
    else:
        if a.mig_profile or a.shared:
            raise InputError("--mig-profile/--shared", "only apply with --gfd")
        results = [sanitize(v) for v in a.values]
    if ctx.fmt == "json":
        from gpulabel.labels import is_valid_value
        from gpulabel.render import emit_json

        emit_json(
            [{"input": v, "output": r, "valid": is_valid_value(r)} for v, r in zip(a.values, results, strict=True)],
            ctx.out,
        )
    else:
        ctx.out.write("".join(r + "\n" for r in results))
    return 0


def cmd_validate(ctx: Context) -> int:
    from gpulabel.labels import label_errors, split_assignment

    rows = []
    for item in ctx.args.labels:
        key, value = split_assignment(item)
        rows.append((item, key, value, label_errors(key, value)))
    if ctx.fmt == "json":
        from gpulabel.render import emit_json

        emit_json([{"label": i, "key": k, "value": v, "valid": not e, "errors": e} for i, k, v, e in rows], ctx.out)
    else:
        ctx.out.write("".join(f"{item}: {msg}\n" for item, _, _, errs in rows for msg in errs))
    return 1 if any(errs for *_, errs in rows) else 0


def cmd_audit(ctx: Context) -> int:
    from gpulabel.audit import audit

    return _findings_exit(ctx, audit(ctx.state(["Node"]), strict=ctx.args.strict), "audit")


def cmd_sources(ctx: Context) -> int:
    from gpulabel.render import emit_json, emit_table

    a = ctx.args
    if a.node:
        from gpulabel.sources import node_sources

        node = ctx.state(["Node"]).node(a.node)
        if node is None:
            raise InputError(f"node {a.node}", "not found")
        rows = node_sources(node)
        wanted = set(a.keys)
        rows = [r for r in rows if not wanted or r.key in wanted]
        if ctx.fmt == "json":
            emit_json({"node": node.name, "labels": [r.to_json() for r in rows]}, ctx.out)
        elif ctx.fmt == "table":
            emit_table(
                ("key", "value", "owner", "last written by", "at"),
                [
                    (
                        r.key,
                        r.value,
                        r.owner,
                        r.written_by.manager if r.written_by else "",
                        r.written_by.time if r.written_by else "",
                    )
                    for r in rows
                ],
                ctx.out,
                title=node.name,
            )
        else:
            ctx.out.write("".join(r.line() + "\n" for r in rows))
        return 0
    if not a.keys:
        raise InputError("sources", "give label keys, or --node NAME")
    from gpulabel.vocabulary import owner_of

    owners = [(k, owner_of(k)) for k in a.keys]
    if ctx.fmt == "json":
        emit_json([{"key": k, "owner": o} for k, o in owners], ctx.out)
    else:
        ctx.out.write("".join(f"{k}={o}\n" for k, o in owners))
    return 0


def cmd_operands(ctx: Context) -> int:
    from gpulabel.operands import CATALOGUE, check_operands, operand_of_daemonset
    from gpulabel.render import emit_findings, emit_json

    unknown = [d for d in ctx.args.disabled if d not in CATALOGUE]
    if unknown:
        raise InputError("--disabled", f"unknown operand {unknown[0]!r}; known: {', '.join(CATALOGUE)}")
    if ctx.args.snapshot:
        state = ctx.state(["Node", "DaemonSet", "ClusterPolicy", "Pod"])
    else:
        from gpulabel.live import with_daemonset_pods

        state = ctx.state(["Node", "DaemonSet", "ClusterPolicy"])
        operand_sets = [ds for ds in state.daemonsets if operand_of_daemonset(ds)]
        state = with_daemonset_pods(ctx.client(), state, operand_sets)
    report = check_operands(state, ctx.args.disabled)
    if ctx.fmt == "json":
        emit_json(
            {"check": "operands", "findings": [f.to_json() for f in report.findings], "daemonsets": report.daemonsets},
            ctx.out,
        )
        return 1 if report.findings else 0
    emit_findings(report.findings, ctx.fmt, ctx.out, check="operands")
    if ctx.fmt == "wide":
        for acc in report.daemonsets:
            excluded = "; ".join(
                f"{e['node']} untolerated-taint {','.join(e['untolerated_taints'])}" for e in acc["excluded"]
            )
            ctx.out.write(
                f"# {acc['daemonset']} operand={acc['operand']} labelled={acc['labelled_nodes']} "
                f"desired={acc['desired_number_scheduled']}" + (f" excluded: {excluded}" if excluded else "") + "\n"
            )
    return 1 if report.findings else 0


def cmd_sync(ctx: Context) -> int:
    from gpulabel.reconcile import Reconciler
    from gpulabel.render import emit_json
    from gpulabel.sync import Change, change_finding

    a = ctx.args
    if not os.path.isdir(a.directory):
        raise InputError(a.directory, "not a directory of <node>.env feature files")
    client = ctx.client(unreachable_seconds=60.0)  # a writer rides out an API server restart
    wide = ctx.fmt == "wide"
    collected: list[Change] = []
    problems: list[str] = []

    def on_change(change: Change) -> None:
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
        from gpulabel.metrics import Metrics, serve

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
        from gpulabel.controller import run_controller

        lock = None
        if a.leader_elect:
            from gpulabel.leader import LeaseLock

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
    from gpulabel.isolation import FIELD_MANAGER, plan_isolation
    from gpulabel.live import with_daemonset_pods
    from gpulabel.operands import operand_of_daemonset
    from gpulabel.render import emit_json
    from gpulabel.vocabulary import DEPLOY_OPERANDS
    from gpulabel.writes import apply_labels, remove_labels

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
    for change in changes:
        try:
            if change.isolate:
                apply_labels(client, change.node, {DEPLOY_OPERANDS: "false"}, FIELD_MANAGER, a.dry_run)
            else:
                remove_labels(client, change.node, [DEPLOY_OPERANDS], FIELD_MANAGER, a.dry_run)
        except GpulabelError as err:
            ctx.err.write(f"gpulabel: node {change.node}: not written: {err}\n")
            failed = True
            continue
        done.append(change)
        if ctx.fmt == "wide" and change.isolate:
            leaving = ", ".join(change.leaving) or "no operand pods"
            ctx.out.write(f"{change.line()} (was {change.previous or 'absent'}; leaving: {leaving})\n")
        elif ctx.fmt != "json":
            ctx.out.write(change.line() + "\n")
    if ctx.fmt == "json":
        emit_json(
            {
                "dry_run": a.dry_run,
                "changes": [
                    {"node": c.node, "isolated": c.isolate, "previous": c.previous, "leaving": list(c.leaving)}
                    for c in done
                ],
                "unknown": unknown,
            },
            ctx.out,
        )
    return 1 if failed else 0


def cmd_check(ctx: Context) -> int:
    from gpulabel.checks import CHECKS, run_checks
    from gpulabel.findings import summarize
    from gpulabel.render import emit_findings, emit_json

    kinds = sorted({k for c in CHECKS for k in c.kinds})
    results = run_checks(ctx.state(kinds), ctx.args)
    if ctx.fmt == "json":
        emit_json(
            {name: {"findings": [f.to_json() for f in fs], "summary": summarize(fs)} for name, fs in results}, ctx.out
        )
    else:
        for name, fs in results:
            counts = summarize(fs)
            tail = " ".join(f"{reason}={n}" for reason, n in counts.items())
            ctx.out.write(f"{name}: OK\n" if not fs else f"{name}: {len(fs)} finding(s) {tail}\n")
        if ctx.fmt in ("wide", "table"):
            for name, fs in results:
                if fs:
                    ctx.out.write("\n")
                    emit_findings(fs, ctx.fmt, ctx.out, check=name)
    return 1 if any(fs for _, fs in results) else 0


# -- parser -----------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    shared = _shared_flags()
    parser = argparse.ArgumentParser(
        prog="gpulabel",
        parents=[shared],
        description="Find, explain and repair the node labels a GPU Kubernetes cluster runs on.",
        epilog="Exit codes: 0 all good, 1 findings, 2 bad input or cluster error.",
    )
    parser.add_argument("--version", action="version", version=f"gpulabel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, func: Command, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[shared], help=help_, description=help_)
        p.set_defaults(func=func)
        return p

    p = add("sanitize", cmd_sanitize, "turn vendor strings into valid label values, one per line")
    p.add_argument("values", nargs="+", metavar="VALUE")
    p.add_argument("--gfd", action="store_true", help="predict what GPU Feature Discovery writes instead")
    p.add_argument("--mig-profile", metavar="PROFILE", help="with --gfd: the MIG profile GFD appends")
    p.add_argument("--shared", action="store_true", help="with --gfd: a time-sliced GPU (GFD appends -SHARED)")

    p = add("validate", cmd_validate, "check KEY=VALUE labels with the API server's rules")
    p.add_argument("labels", nargs="+", metavar="KEY=VALUE")

    p = add("audit", cmd_audit, "check the GPU labels of every node with nvidia.com/gpu.present=true")
    p.add_argument("--strict", action="store_true", help="also report no-pci-label and bad-deploy-value (see README)")

    p = add("sources", cmd_sources, "who owns each label key; with --node, who last wrote each label")
    p.add_argument("keys", nargs="*", metavar="KEY")
    p.add_argument("--node", metavar="NAME", help="list this node's labels with owner and last writer")

    p = add("operands", cmd_operands, "are the operands each node should run running, ready and in order?")
    p.add_argument(
        "--disabled",
        action="append",
        default=[],
        metavar="OPERAND",
        help="operand switched off cluster-wide (when there is no ClusterPolicy); repeatable",
    )

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

    from gpulabel._placecmds import add_placement_commands  # place, pending, hazards

    add_placement_commands(add)

    from gpulabel._reportcmd import add_report_command  # report --html

    add_report_command(add)

    p = add("check", cmd_check, "run every read-only check and summarise each")
    p.add_argument("--strict", action="store_true", help="audit with --strict")
    p.add_argument("--disabled", action="append", default=[], metavar="OPERAND", help="as for operands")
    return parser


def main(argv: Sequence[str] | None = None, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    args = parser.parse_args(argv)
    for name, default in _SHARED_DEFAULTS.items():
        if not hasattr(args, name):
            setattr(args, name, default)
    ctx = Context(args, out, err)
    try:
        return int(args.func(ctx))
    except GpulabelError as exc:
        out.flush()
        err.write(f"gpulabel: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        err.write("gpulabel: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0


def run() -> None:
    """Console-script entry point."""
    code = main()
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.flush()
    raise SystemExit(code)
