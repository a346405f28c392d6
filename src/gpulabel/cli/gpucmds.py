"""The GPU stack commands: ``capacity``, ``mig``, ``sharing``, ``upgrade`` and the ``gpus`` inventory.

Thin glue: each loads the cluster once through the Context, runs the pure
check from :mod:`gpulabel.checks` and renders with the shared helpers
(``<node> <key> <reason>`` per finding or ``OK``; ``-o wide`` adds the
evidence and, where one label change is the documented repair, the exact
``kubectl label`` line; exit 0/1/2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulabel.checks.registry import CheckOptions
    from gpulabel.cli.context import AddCommand, Context

from gpulabel.cli.context import add_verdict_flags

__all__ = ["add_gpu_commands", "add_stuck_after", "options"]


def add_stuck_after(p: object) -> None:
    """``--stuck-after`` and ``--at``: how old a MIG or driver-upgrade state may get, measured when."""
    p.add_argument(  # type: ignore[attr-defined]
        "--stuck-after",
        default=None,
        metavar="DURATION",
        help="a MIG or driver-upgrade state older than this is stuck, past half of it slow (30m, 1h30m, 90s; "
        "default: the config file's thresholds.stuck-after, else 30m)",
    )
    p.add_argument(  # type: ignore[attr-defined]
        "--at",
        metavar="TIME",
        help="measure label ages at this RFC 3339 time instead of now (for a snapshot taken earlier)",
    )


def options(ctx: Context) -> CheckOptions:
    """The check options from the shared flags and ``--disabled``, ``--stuck-after``, ``--at``, ``--strict``."""
    from gpulabel.checks.registry import DEFAULT_STUCK_AFTER, CheckOptions, parse_duration
    from gpulabel.errors import InputError
    from gpulabel.model.gpustack import parse_time

    a = ctx.args
    config = ctx.config()
    stuck_after = DEFAULT_STUCK_AFTER if config.stuck_after is None else config.stuck_after
    opts = CheckOptions(
        strict=bool(getattr(a, "strict", False)),
        disabled=tuple(getattr(a, "disabled", ()) or ()),
        namespace=a.namespace,
        stuck_after=parse_duration(a.stuck_after) if getattr(a, "stuck_after", None) else stuck_after,
        all_pods=bool(getattr(a, "all_pods", False)),
        operator_namespace=config.operator_namespace,
    )
    at = getattr(a, "at", None)
    if at:
        when = parse_time(at)
        if when is None:
            raise InputError("--at", f"{at!r} is not an RFC 3339 time such as 2026-11-30T04:00:00Z")
        from dataclasses import replace

        opts = replace(opts, now=when)
    return opts


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
    p.add_argument("--disabled", action="append", default=[], metavar="OPERAND", help="as for operands")
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
    p = add(
        "gpus",
        cmd_gpus,
        "the fleet inventory: nodes, GPUs, allocatable, requested, free per kind of node",
        examples=("gpus --by node.kubernetes.io/instance-type", "gpus -o table"),
        exits="0 done, 2 bad input or an unusable cluster",
    )
    p.add_argument("--by", metavar="LABEL", help="group by this node label (a pool) and product")


def _run(ctx: Context, name: str) -> int:
    from gpulabel.checks.registry import check_named, run_check
    from gpulabel.cli.context import findings_exit

    check = check_named(name)
    opts = options(ctx)
    return findings_exit(ctx, run_check(check, ctx.state(check.kinds), opts))


def cmd_capacity(ctx: Context) -> int:
    from gpulabel.checks.registry import known_operands

    known_operands(ctx.args.disabled)
    return _run(ctx, "capacity")


def cmd_mig(ctx: Context) -> int:
    return _run(ctx, "mig")


def cmd_sharing(ctx: Context) -> int:
    return _run(ctx, "sharing")


def cmd_upgrade(ctx: Context) -> int:
    return _run(ctx, "upgrade")


def cmd_gpus(ctx: Context) -> int:
    from gpulabel.checks.gpus import inventory
    from gpulabel.model.findings import Cell, Result, Section

    rows = inventory(ctx.state(["Node", "Pod"]), ctx.args.by)
    wide = []
    for r in rows:
        parts = [f"{res} {r.allocatable.get(res, 0)}/{r.requested.get(res, 0)}" for res in sorted(r.allocatable)]
        extra = "allocatable/requested: " + (", ".join(parts) or "none")
        if r.unknown_allocatable:
            extra += f"; {r.unknown_allocatable} node(s) without status.allocatable"
        wide.append(f"{r.line()} ({extra})")
    cells: tuple[dict[str, Cell], ...] = tuple(
        {
            **r.group,
            "nodes": r.nodes,
            "gpus": r.gpus,
            "allocatable": r.total_allocatable,
            "requested": r.total_requested,
            "free": r.free,
            "unknown_allocatable": r.unknown_allocatable,
        }
        for r in rows
    )
    text = tuple(r.line() for r in rows) or ("no GPU nodes",)
    section = Section("rows", cells, text, tuple(wide) or ("no GPU nodes",))
    ctx.emit(Result("gpus", sections=(section,), ok="", fields={"by": ctx.args.by}))
    return 0
