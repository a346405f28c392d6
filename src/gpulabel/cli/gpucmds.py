"""The GPU stack commands: ``capacity``, ``mig``, ``sharing``, ``upgrade``, ``queues`` and the ``gpus`` inventory.

Thin glue: each loads the cluster once through the Context, runs the pure
check from :mod:`gpulabel.checks` and renders with the shared helpers
(``<node> <key> <reason>`` per finding or ``OK``; ``-o wide`` adds the
evidence and, where one label change is the documented repair, the exact
``kubectl label`` line; exit 0/1/2).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from gpulabel.cli.context import add_verdict_flags

if TYPE_CHECKING:
    from gpulabel.checks.registry import CheckOptions
    from gpulabel.cli.context import AddCommand, Context

__all__ = ["add_gpu_commands", "add_stuck_after", "options"]


def add_stuck_after(p: argparse.ArgumentParser) -> None:
    """``--stuck-after`` and ``--at``: how old a MIG or driver-upgrade state may get, measured when."""
    p.add_argument(
        "--stuck-after",
        default=None,
        metavar="DURATION",
        help="a MIG or driver-upgrade state older than this is stuck, past half of it slow (30m, 1h30m, 90s; "
        "default: the config file's thresholds.stuck-after, else 30m)",
    )
    p.add_argument(
        "--at",
        metavar="TIME",
        help="measure label ages at this RFC 3339 time instead of now (for a snapshot taken earlier)",
    )


def options(ctx: Context) -> CheckOptions:
    """``check``'s and ``report``'s check options: ``--strict``, ``--disabled``, ``--stuck-after``, ``--at``, ``-n``."""
    from gpulabel.app.checks import check_options

    a = ctx.args
    return check_options(
        strict=a.strict,
        disabled=a.disabled,
        namespace=a.namespace,
        stuck_after=a.stuck_after,
        at=a.at,
        nfd_config=a.nfd_config,
        all_pods=getattr(a, "all_pods", False),
        config=ctx.verdict().config,
    )


def _stuck_options(ctx: Context) -> CheckOptions:
    """The check options of ``mig`` and ``upgrade``: ``--stuck-after`` and ``--at``."""
    from gpulabel.app.checks import check_options

    return check_options(stuck_after=ctx.args.stuck_after, at=ctx.args.at, config=ctx.verdict().config)


NODE_FLAGS = ("output", "cluster", "nodes")  # these commands read nodes only: no -n/-A


def add_gpu_commands(add: AddCommand) -> None:
    p = add(
        "capacity",
        cmd_capacity,
        "GPU labels against status.allocatable: GPUs labelled but not advertised, or not",
        groups=NODE_FLAGS,
        examples=("capacity --snapshot nodes.json", "capacity -l nvidia.com/gpu.product=NVIDIA-A10 -o wide"),
    )
    add_verdict_flags(p)
    from gpulabel.cli.flags import disabled_flag

    disabled_flag(p, "as for operands")
    p.add_argument(
        "--at",
        metavar="TIME",
        help="judge a Karpenter NodeClaim's age at this RFC 3339 time instead of now (for a snapshot taken earlier)",
    )
    p = add(
        "mig",
        cmd_mig,
        "MIG reconfigurations failed or stuck, invalid or impossible layouts, strategy drift",
        groups=NODE_FLAGS,
        examples=("mig -o wide", "mig --stuck-after 1h --at 2026-11-30T04:00:00Z --snapshot nodes.json"),
    )
    add_verdict_flags(p)
    add_stuck_after(p)
    p = add(
        "sharing",
        cmd_sharing,
        "time-slicing and MPS labels that contradict each other",
        groups=NODE_FLAGS,
        examples=("sharing -o wide",),
    )
    add_verdict_flags(p)
    p = add(
        "upgrade",
        cmd_upgrade,
        "driver upgrades failed or stuck, operands left paused, deploy-label typos",
        groups=NODE_FLAGS,
        examples=("upgrade -o wide", "upgrade --stuck-after 45m"),
    )
    add_verdict_flags(p)
    add_stuck_after(p)
    _add_queues(add)
    _add_gpus(add)


def _add_queues(add: AddCommand) -> None:
    p = add(
        "queues",
        cmd_queues,
        "Kueue's ResourceFlavors against the nodes: flavors that select no node or no GPU, quotas above the GPUs",
        groups=NODE_FLAGS,
        examples=("queues -o wide", "queues --snapshot cluster.json"),
    )
    add_verdict_flags(p)


def _add_gpus(add: AddCommand) -> None:
    p = add(
        "gpus",
        cmd_gpus,
        "the fleet inventory: nodes, GPUs, allocatable, usable, requested, free per kind of node",
        examples=(
            "gpus --by node.kubernetes.io/instance-type",
            "gpus --by namespace",
            "gpus --by flavor",
            "gpus -o table",
            "gpus --context gpu-east --context gpu-west   # one inventory per cluster, each line led by its name",
        ),
        exits="0 done, 2 bad input, an unusable cluster or input that selects no node (-l, --snapshot, -n)",
    )
    p.add_argument(
        "--by",
        metavar="LABEL",
        help="group by this node label (a pool) and product; 'namespace': GPUs requested per namespace "
        "(and Kueue queue, label kueue.x-k8s.io/queue-name); 'flavor', 'clusterqueue': per Kueue ResourceFlavor "
        "(or ClusterQueue and flavor) its nominal GPU quota, admitted and reserved GPUs and its nodes' GPUs "
        "(docs/kueue.md). free counts usable GPUs only: not lost "
        "(capacity minus allocatable), not on a node with a GPU health condition, cordoned, NotReady or "
        "tainted NoSchedule/NoExecute (but nvidia.com/gpu)",
    )
    from gpulabel.cli.fleet import add_cluster_flag

    add_cluster_flag(p)


def _run(ctx: Context, name: str, opts: CheckOptions) -> int:
    from gpulabel.app.checks import run_named

    return ctx.finish(run_named(ctx.session(), name, opts, ctx.verdict()))


def cmd_capacity(ctx: Context) -> int:
    from gpulabel.app.checks import check_options

    opts = check_options(disabled=ctx.args.disabled, at=ctx.args.at, config=ctx.verdict().config)
    return _run(ctx, "capacity", opts)


def cmd_mig(ctx: Context) -> int:
    return _run(ctx, "mig", _stuck_options(ctx))


def cmd_sharing(ctx: Context) -> int:
    from gpulabel.app.checks import check_options

    return _run(ctx, "sharing", check_options(config=ctx.verdict().config))


def cmd_queues(ctx: Context) -> int:
    from gpulabel.app.checks import check_options

    return _run(ctx, "queues", check_options(config=ctx.verdict().config))


def cmd_upgrade(ctx: Context) -> int:
    return _run(ctx, "upgrade", _stuck_options(ctx))


def cmd_gpus(ctx: Context) -> int:
    from gpulabel.app.gpustack import GpusOptions, run_gpus

    conditions = ctx.verdict().config.health_conditions  # the config file's GPU health condition types
    opts = GpusOptions(by=ctx.args.by, namespace=ctx.args.namespace, health_conditions=conditions)
    from gpulabel.cli.fleet import members_of

    members = members_of(ctx)
    if members is not None:  # several clusters: one inventory each (cli/fleet.py)
        from gpulabel.app.gpustack import run_fleet_gpus
        from gpulabel.cli.fleet import finish_fleet_check

        return finish_fleet_check(ctx, run_fleet_gpus(members, opts))
    return ctx.finish(run_gpus(ctx.session(), opts))
