"""``gpulabel rules``: what nfd-master would write on each node, and why each NodeFeatureRule did not match."""

from __future__ import annotations

import argparse

from gpulabel.cli.context import AddCommand, Context

__all__ = ["add_nfd_commands", "nfd_config_flag"]


def nfd_config_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--nfd-config",
        metavar="FILE",
        help="nfd-master's configuration file (nfd-master.conf: enableTaints, denyLabelNs, extraLabelNs, "
        "labelWhiteList, autoDefaultNs, resourceLabels, restrictions); default: nfd-master's defaults",
    )


def add_nfd_commands(add: AddCommand) -> None:
    p = add(
        "rules",
        cmd_rules,
        "what nfd-master would write on each node from NodeFeatures and NodeFeatureRules, and why a rule did not match",
        groups=("output", "cluster", "nodes"),
        examples=(
            "rules --snapshot examples/nfd-rules.yaml",
            "rules --node gpu-7 --nfd-config nfd-master.conf -o json",
        ),
        exits="0 done (rules that do not match are not findings: see check), 2 bad input or an unusable cluster",
    )
    p.add_argument("--node", metavar="NAME", help="only this node")
    nfd_config_flag(p)


def cmd_rules(ctx: Context) -> int:
    from gpulabel.app.nfd import RulesOptions, load_nfd_config, run_rules

    opts = RulesOptions(node=ctx.args.node, config=load_nfd_config(ctx.args.nfd_config))
    return ctx.finish(run_rules(ctx.session(), opts))
