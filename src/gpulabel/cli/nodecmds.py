"""The read-only node checks: ``audit``, ``sources``, ``operands`` and ``check``."""

from __future__ import annotations

import argparse

from gpulabel.cli.context import AddCommand, Context, add_verdict_flags, findings_exit
from gpulabel.errors import InputError
from gpulabel.model.operands import CATALOGUE

__all__ = ["add_node_commands"]


OPERAND_NAMES = ", ".join(CATALOGUE)  # --disabled's valid values, from the catalogue (data, not a check)


def _disabled_flag(p: argparse.ArgumentParser, help_: str) -> None:
    p.add_argument(
        "--disabled", action="append", default=[], metavar="OPERAND", help=f"{help_}; one of: {OPERAND_NAMES}"
    )


def add_node_commands(add: AddCommand) -> None:
    p = add(
        "audit",
        cmd_audit,
        "check the GPU labels of every node with nvidia.com/gpu.present=true",
        groups=("output", "cluster", "nodes"),
        examples=("audit --snapshot examples/drifted-lab.yaml", "audit -l nvidia.com/gpu.product=NVIDIA-A10 -o wide"),
    )
    add_verdict_flags(p)
    p.add_argument("--strict", action="store_true", help="also report no-pci-label and bad-deploy-value (see README)")

    p = add(
        "sources",
        cmd_sources,
        "who owns each label key; with --node, who last wrote each label",
        groups=("output", "cluster"),
        examples=(
            "sources nvidia.com/gpu.product feature.node.kubernetes.io/pci-10de.present",
            "sources --node lab-node-1 --snapshot examples/drifted-lab.yaml",
        ),
        exits="0 done, 2 bad input or an unusable cluster",
    )
    p.add_argument("keys", nargs="*", metavar="KEY")
    p.add_argument("--node", metavar="NAME", help="list this node's labels with owner and last writer")

    p = add(
        "operands",
        cmd_operands,
        "are the operands each node should run running, ready and in order?",
        groups=("output", "cluster", "nodes"),
        examples=("operands --snapshot examples/drifted-lab.yaml -o wide", "operands --disabled dcgm"),
    )
    add_verdict_flags(p)
    _disabled_flag(p, "operand switched off cluster-wide (when there is no ClusterPolicy); repeatable")

    p = add(
        "check",
        cmd_check,
        "run every read-only check and summarise each",
        examples=("check --snapshot examples/drifted-lab.yaml", "check -o json | jq '.summary.checks'"),
    )
    add_verdict_flags(p)
    p.add_argument("--strict", action="store_true", help="audit with --strict")
    from gpulabel.cli.placement import all_pods_flag

    all_pods_flag(p)
    _disabled_flag(p, "as for operands")
    from gpulabel.cli.gpucmds import add_stuck_after

    add_stuck_after(p)


def cmd_audit(ctx: Context) -> int:
    from gpulabel.checks.registry import CheckOptions, run_check

    state = ctx.state(["Node"])
    return findings_exit(ctx, run_check("audit", state, CheckOptions(strict=ctx.args.strict)))


def cmd_sources(ctx: Context) -> int:
    from gpulabel.model.findings import Cell, Result, Section

    a = ctx.args
    if a.node:
        from gpulabel.checks.sources import node_sources

        node = ctx.state(["Node"]).node(a.node)
        if node is None:
            raise InputError(f"node {a.node}", "not found")
        wanted = set(a.keys)
        rows = [r for r in node_sources(node) if not wanted or r.key in wanted]
        cells: tuple[dict[str, Cell], ...] = tuple(
            {
                "key": r.key,
                "value": r.value,
                "owner": r.owner,
                "manager": r.written_by.manager if r.written_by else None,
                "operation": r.written_by.operation if r.written_by else None,
                "time": r.written_by.time if r.written_by else None,
            }
            for r in rows
        )
        section = Section("labels", cells, tuple(r.line() for r in rows))
        ctx.emit(Result("sources", sections=(section,), ok="", fields={"node": node.name}))
        return 0
    if not a.keys:
        raise InputError("sources", "give label keys, or --node NAME")
    from gpulabel.model.vocabulary import owner_of

    owners = [(k, owner_of(k)) for k in a.keys]
    section = Section("keys", tuple({"key": k, "owner": o} for k, o in owners), tuple(f"{k}={o}" for k, o in owners))
    ctx.emit(Result("sources", sections=(section,), ok=""))
    return 0


def cmd_operands(ctx: Context) -> int:
    from gpulabel.checks.operands import operand_of_daemonset
    from gpulabel.checks.registry import run_check
    from gpulabel.cli.gpucmds import options

    opts = options(ctx)
    if ctx.args.snapshot:
        state = ctx.state(["Node", "DaemonSet", "ClusterPolicy", "Pod"])
    else:
        from gpulabel.cluster.live import with_daemonset_pods

        state = ctx.state(["Node", "DaemonSet", "ClusterPolicy"])
        operand_sets = [ds for ds in state.daemonsets if operand_of_daemonset(ds)]
        state = with_daemonset_pods(ctx.client(), state, operand_sets)
    return findings_exit(ctx, run_check("operands", state, opts))


def cmd_check(ctx: Context) -> int:
    from gpulabel.checks.registry import CHECKS, run_checks
    from gpulabel.cli.gpucmds import options

    opts = options(ctx)  # validated before anything is read
    kinds = sorted({k for c in CHECKS for k in c.kinds})
    return findings_exit(ctx, run_checks(ctx.state(kinds), opts))
