"""``gpulabel rules``: what nfd-master would write on each node, and why each NodeFeatureRule did not match."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from gpulabel.cli.context import AddCommand, Context
from gpulabel.errors import InputError

if TYPE_CHECKING:
    from gpulabel.k8s.nfd.master import NfdConfig

__all__ = ["add_nfd_commands", "load_nfd_config", "nfd_config_flag"]


def nfd_config_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--nfd-config",
        metavar="FILE",
        help="nfd-master's configuration file (nfd-master.conf: enableTaints, denyLabelNs, extraLabelNs, "
        "labelWhiteList, autoDefaultNs, resourceLabels, restrictions); default: nfd-master's defaults",
    )


def load_nfd_config(path: str | None) -> NfdConfig:
    """nfd-master's configuration from ``path`` (YAML, nfd-master's own format), or its defaults."""
    from gpulabel.k8s.nfd.master import NfdConfig, config_from_mapping

    if not path:
        return NfdConfig()
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh)
    except OSError as err:
        raise InputError(path, err.strerror or str(err)) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        raise InputError(where, f"not YAML: {getattr(err, 'problem', None) or err}") from None
    if doc is None:
        return NfdConfig()
    if not isinstance(doc, dict):
        raise InputError(path, "nfd-master configuration must be a mapping")
    return config_from_mapping(doc, path)


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
    from gpulabel.checks.nfdrules import rules_result
    from gpulabel.k8s.nfd.objects import NFD_KINDS

    cfg = load_nfd_config(ctx.args.nfd_config)
    state = ctx.state(["Node", *NFD_KINDS])
    if ctx.args.node and state.node(ctx.args.node) is None:
        raise InputError(f"node {ctx.args.node}", "not found")
    ctx.emit(rules_result(state, cfg, ctx.args.node))
    return 0
