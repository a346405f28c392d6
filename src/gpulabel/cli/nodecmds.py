"""The read-only node checks: ``audit``, ``sources``, ``operands`` and ``check``."""

from __future__ import annotations

from gpulabel.cli.context import AddCommand, Context, findings_exit
from gpulabel.errors import InputError

__all__ = ["add_node_commands"]


def add_node_commands(add: AddCommand) -> None:
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

    p = add("check", cmd_check, "run every read-only check and summarise each")
    p.add_argument("--strict", action="store_true", help="audit with --strict")
    p.add_argument("--disabled", action="append", default=[], metavar="OPERAND", help="as for operands")
    from gpulabel.cli.gpucmds import add_stuck_after

    add_stuck_after(p)


def cmd_audit(ctx: Context) -> int:
    from gpulabel.checks.audit import audit

    return findings_exit(ctx, audit(ctx.state(["Node"]), strict=ctx.args.strict), "audit")


def cmd_sources(ctx: Context) -> int:
    from gpulabel.render.text import emit_json, emit_table

    a = ctx.args
    if a.node:
        from gpulabel.checks.sources import node_sources

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
    from gpulabel.model.vocabulary import owner_of

    owners = [(k, owner_of(k)) for k in a.keys]
    if ctx.fmt == "json":
        emit_json([{"key": k, "owner": o} for k, o in owners], ctx.out)
    else:
        ctx.out.write("".join(f"{k}={o}\n" for k, o in owners))
    return 0


def cmd_operands(ctx: Context) -> int:
    from gpulabel.checks.operands import check_operands, operand_of_daemonset
    from gpulabel.checks.registry import known_operands
    from gpulabel.render.text import emit_findings, emit_json

    disabled = known_operands(ctx.args.disabled)
    if ctx.args.snapshot:
        state = ctx.state(["Node", "DaemonSet", "ClusterPolicy", "Pod"])
    else:
        from gpulabel.cluster.live import with_daemonset_pods

        state = ctx.state(["Node", "DaemonSet", "ClusterPolicy"])
        operand_sets = [ds for ds in state.daemonsets if operand_of_daemonset(ds)]
        state = with_daemonset_pods(ctx.client(), state, operand_sets)
    report = check_operands(state, disabled)
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


def cmd_check(ctx: Context) -> int:
    from gpulabel.checks.registry import CHECKS, run_checks
    from gpulabel.model.findings import summarize
    from gpulabel.render.text import emit_findings, emit_json

    kinds = sorted({k for c in CHECKS for k in c.kinds})
    from gpulabel.cli.gpucmds import options

    opts = options(ctx)
    results = run_checks(ctx.state(kinds), opts)
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
