"""The read-only node checks: ``audit``, ``sources``, ``operands`` and ``check``."""

from __future__ import annotations

import argparse

from gpulabel.cli.context import SEVERITY_TABLE, AddCommand, Context, add_all_pods_flag, add_verdict_flags
from gpulabel.cli.evidenceflags import add_evidence_flags, evidence_options
from gpulabel.cli.flags import disabled_flag as _disabled_flag

__all__ = ["add_node_commands"]


def add_node_commands(add: AddCommand) -> None:
    _add_audit(add)
    _add_sources(add)
    _add_operands(add)
    _add_check(add)
    _add_explain(add)


def _add_audit(add: AddCommand) -> None:
    p = add(
        "audit",
        cmd_audit,
        "check the GPU labels of every node with nvidia.com/gpu.present=true",
        groups=("output", "cluster", "nodes"),
        examples=("audit --snapshot examples/drifted-lab.yaml", "audit -l nvidia.com/gpu.product=NVIDIA-A10 -o wide"),
    )
    add_verdict_flags(p)
    p.add_argument(
        "--strict", action="store_true", help="also report no-pci-label and bad-deploy-value (docs/checks.md)"
    )
    from gpulabel.cli.nfdcmds import nfd_config_flag

    nfd_config_flag(p)


def _add_sources(add: AddCommand) -> None:
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
    from gpulabel.cli.nfdcmds import nfd_config_flag

    nfd_config_flag(p)


def _add_operands(add: AddCommand) -> None:
    p = add(
        "operands",
        cmd_operands,
        "are the operands each node should run running, ready and in order?",
        groups=("output", "cluster", "nodes"),
        examples=("operands --snapshot examples/drifted-lab.yaml -o wide", "operands --disabled dcgm"),
    )
    add_verdict_flags(p)
    _disabled_flag(p, "operand switched off cluster-wide (when there is no ClusterPolicy); repeatable")


def _add_check(add: AddCommand) -> None:
    p = add(
        "check",
        cmd_check,
        "run every read-only check and summarise each",
        examples=(
            "check --snapshot examples/drifted-lab.yaml",
            "check -o json | jq '.summary.checks'",
            "check --context gpu-east --context gpu-west -o json   # a List: one envelope per cluster",
        ),
        exits="0 nothing at or above --fail-level (default error), 1 something is, 2 bad input or an unusable "
        "cluster\n\nseverities of the reasons (docs/config.md):\n" + SEVERITY_TABLE,
    )
    add_verdict_flags(p)
    p.add_argument("--strict", action="store_true", help="audit with --strict")
    add_all_pods_flag(p)
    _disabled_flag(p, "as for operands")
    from gpulabel.cli.gpucmds import add_stuck_after

    add_stuck_after(p)
    from gpulabel.cli.nfdcmds import nfd_config_flag

    nfd_config_flag(p)
    add_evidence_flags(p)
    from gpulabel.cli.fleet import add_cluster_flag

    add_cluster_flag(p)


def _add_explain(add: AddCommand) -> None:
    p = add(
        "explain",
        cmd_explain,
        "walk the chain that makes a node's GPUs usable, link by link with its evidence: NFD, gpu.present, "
        "deploy labels, DaemonSets, operand pods, MIG, allocatable, GFD labels, the node",
        groups=("output", "cluster"),
        examples=(
            "explain node/lab-node-3 --snapshot examples/drifted-lab.yaml",
            "explain workload/ml/job-a --snapshot examples/kueue-lab.yaml   # a Kueue Workload: queue, flavor, pods",
            "explain pod/ml/step7-train --snapshot examples/autoscaled.yaml   # a pod: nodes, then the autoscaler",
        ),
        exits="0 no link broken at or above --fail-level, 1 one is, 2 bad input or an unusable cluster",
    )
    p.add_argument("target", metavar="node/NAME|pod/NS/NAME|workload/NS/NAME")
    p.add_argument("--strict", action="store_true", help=argparse.SUPPRESS)
    _disabled_flag(p, "as for operands")
    from gpulabel.cli.gpucmds import add_stuck_after

    add_stuck_after(p)
    add_verdict_flags(p)
    from gpulabel.cli.nfdcmds import nfd_config_flag

    nfd_config_flag(p)
    add_evidence_flags(p)


def cmd_explain(ctx: Context) -> int:
    from gpulabel.app.checks import ExplainOptions, run_explain
    from gpulabel.cli.gpucmds import options

    target = ExplainOptions.of(ctx.args.target)
    if target.workload:
        from gpulabel.app.explainworkload import run_explain_workload

        return ctx.finish(run_explain_workload(ctx.session(), target.workload, options(ctx), ctx.verdict()))
    if target.pod:
        from gpulabel.app.explainpod import run_explain_pod

        return ctx.finish(run_explain_pod(ctx.session(), target.pod, options(ctx), ctx.verdict()))
    evidence = evidence_options(ctx.args)
    return ctx.finish(run_explain(ctx.session(), target, options(ctx), ctx.verdict(), evidence))


def cmd_audit(ctx: Context) -> int:
    from gpulabel.app.checks import check_options, run_audit

    opts = check_options(strict=ctx.args.strict, nfd_config=ctx.args.nfd_config, config=ctx.verdict().config)
    return ctx.finish(run_audit(ctx.session(), opts, ctx.verdict()))


def cmd_sources(ctx: Context) -> int:
    from gpulabel.app.labels import SourcesOptions, run_sources
    from gpulabel.app.nfd import load_nfd_config

    opts = SourcesOptions(keys=tuple(ctx.args.keys), node=ctx.args.node, nfd=load_nfd_config(ctx.args.nfd_config))
    return ctx.finish(run_sources(ctx.session(), opts))


def cmd_operands(ctx: Context) -> int:
    from gpulabel.app.checks import check_options, run_operands

    opts = check_options(disabled=ctx.args.disabled, config=ctx.verdict().config)
    return ctx.finish(run_operands(ctx.session(), opts, ctx.verdict()))


def cmd_check(ctx: Context) -> int:
    from gpulabel.app.checks import run_all
    from gpulabel.cli.gpucmds import options

    opts = options(ctx)  # validated before anything is read
    from gpulabel.cli.fleet import members_of

    members = members_of(ctx)
    if members is not None:  # several clusters: one envelope each (cli/fleet.py)
        from gpulabel.app.fleetreport import run_fleet_check
        from gpulabel.cli.fleet import finish_fleet_check

        fleet = run_fleet_check(members, opts, ctx.verdict(), evidence_options(ctx.args))
        return finish_fleet_check(ctx, fleet)
    return ctx.finish(run_all(ctx.session(), opts, ctx.verdict(), evidence_options(ctx.args)))
