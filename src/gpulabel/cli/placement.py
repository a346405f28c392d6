"""The ``place``, ``pending`` and ``hazards`` commands: load, match, render.

Output contracts:

- ``place``: one line per verdict, ``yes <n> node(s): <names>`` or ``no <reason>
  <n> node(s): <names>`` (a few names, the group's best node first; with
  ``--per-node`` one line per node, ``<node> yes`` or ``<node> no <reason>``),
  prefixed with ``<namespace>/<name> `` when several workloads are placed;
  exit 0 when every workload fits some node, 1 otherwise, 2 for a bad manifest.
- ``pending``: ``<namespace>/<pod> <reason> <n> node(s) [args]`` for every pod
  and reason (``fits`` when node selection is not what holds the pod; with
  ``--per-node`` ``<namespace>/<pod> <node> <reason> [args]`` for every node),
  then ``<namespace>/<pod> scheduler: <the pod's PodScheduled message>``; exit
  1 if any pod is Pending.
- ``hazards``: ``<namespace>/<pod> <node> <reason>``; exit 1 if any.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpulabel.cli.context import add_all_pods_flag, add_verdict_flags
from gpulabel.model.vocabulary import GPU_POD_RULE

if TYPE_CHECKING:
    import argparse

    from gpulabel.cli.context import AddCommand, Context

__all__ = ["add_placement_commands", "cmd_hazards", "cmd_pending", "cmd_place"]


def add_placement_commands(add: AddCommand) -> None:
    """Register the three commands with the CLI's ``add`` helper."""
    p = add(
        "place",
        cmd_place,
        "which nodes each workload in MANIFEST can be scheduled on, and why not the others",
        groups=("output", "cluster", "nodes"),
        examples=(
            "place examples/pods/train-b.yaml --snapshot examples/drifted-lab.yaml -o wide",
            "place deploy.yaml -l nvidia.com/gpu.present=true",
        ),
        exits="0 every workload fits some node, 1 one fits none, 2 bad manifest or an unusable cluster",
    )
    p.add_argument("manifests", nargs="+", metavar="MANIFEST", help="Pod/Deployment/Job/... YAML or JSON; - is stdin")
    p.add_argument(
        "--per-node", action="store_true", help="one line per node (<node> yes|no <reason>) instead of grouped"
    )
    _add_at(p)
    p = add(
        "pending",
        cmd_pending,
        "why each Pending pod fits no node: one line per pod and reason with the number of nodes",
        examples=(
            "pending --snapshot examples/drifted-lab.yaml",
            "pending -o wide -n ml",
            "pending --per-node -l nvidia.com/gpu.product=NVIDIA-A10",
        ),
        exits="0 nothing at or above --fail-level (a Pending GPU pod is a warning; one whose node filters all "
        "pass, info), 1 something is, 2 bad input",
    )
    p.description = f"{p.description}. {GPU_POD_RULE} Other Pending pods are counted (--all-pods lists them)."
    p.add_argument(
        "--per-node", action="store_true", help="one line per pod and node (<pod> <node> <reason>) instead of grouped"
    )
    _add_at(p)
    add_all_pods_flag(p)
    add_verdict_flags(p)
    p = add(
        "hazards",
        cmd_hazards,
        "running pods whose required node affinity or nodeSelector no longer matches their node",
        examples=("hazards --snapshot examples/drifted-lab.yaml -o wide",),
        exits="0 nothing at or above --fail-level (a hazard is a warning), 1 something is, 2 bad input",
    )
    add_verdict_flags(p)


def _add_at(p: argparse.ArgumentParser) -> None:
    """``place``'s and ``pending``'s ``--at``: the moment a NodeClaim's age is judged at."""
    p.add_argument(
        "--at",
        metavar="TIME",
        help="judge a Karpenter NodeClaim's age at this RFC 3339 time instead of now (for a snapshot taken earlier)",
    )


def cmd_place(ctx: Context) -> int:
    from gpulabel.app.checks import parse_at
    from gpulabel.app.placement import PlaceOptions, run_place

    a = ctx.args
    opts = PlaceOptions(
        manifests=tuple(a.manifests),
        explain=ctx.fmt not in ("text", "name"),
        per_node=a.per_node,
        now=parse_at(a.at) if a.at else None,
    )
    return ctx.finish(run_place(ctx.session(), opts))


def cmd_pending(ctx: Context) -> int:
    from gpulabel.app.checks import check_options, run_pending

    a = ctx.args
    verdict = ctx.verdict()
    opts = check_options(
        namespace=a.namespace, per_node=a.per_node, all_pods=a.all_pods, at=a.at, config=verdict.config
    )
    return ctx.finish(run_pending(ctx.session(), opts, verdict, explain=ctx.fmt not in ("text", "name")))


def cmd_hazards(ctx: Context) -> int:
    from gpulabel.app.checks import check_options, run_named

    opts = check_options(namespace=ctx.args.namespace, config=ctx.verdict().config)
    return ctx.finish(run_named(ctx.session(), "hazards", opts, ctx.verdict()))
