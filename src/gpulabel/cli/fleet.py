"""The fleet flags of ``check``, ``report`` and ``gpus``: ``--cluster NAME=SNAPSHOT`` (repeatable), ``--context``
repeated.

A fleet is asked for by any ``--cluster`` or by more than one ``--context``; each cluster is then read and
checked as it would be alone (app/fleet.py). ``--snapshot`` does not mix with ``--cluster`` (which snapshot
would be which cluster?): each snapshot is named ``--cluster NAME=FILE``.
"""

from __future__ import annotations

import argparse
import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulabel.app.fleet import Member
    from gpulabel.app.fleetreport import FleetCheck
    from gpulabel.cli.context import Context

__all__ = ["add_cluster_flag", "finish_fleet_check", "members_of"]


def add_cluster_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cluster",
        action="append",
        default=[],
        dest="clusters",
        metavar="NAME=SNAPSHOT",
        help="one cluster of a fleet, read from a snapshot; repeatable, and with --context repeated for live "
        "clusters (named by their context): each cluster is checked as alone, a few at once",
    )


def members_of(ctx: Context) -> list[Member] | None:
    """The fleet the flags name, or None for one cluster (no ``--cluster``, at most one ``--context``)."""
    a = ctx.args
    contexts = list(getattr(a, "contexts", ()))
    if not a.clusters and len(contexts) < 2:
        return None
    from gpulabel.app.fleet import fleet_members
    from gpulabel.errors import InputError

    if a.snapshot:
        raise InputError("--snapshot", "not with --cluster: name each snapshot --cluster NAME=FILE")
    if getattr(a, "baseline", None):  # a baseline is one cluster's known findings; node names repeat across clusters
        raise InputError("--baseline", "is one cluster's: not with several clusters")
    return fleet_members(a.clusters, contexts, kubeconfig=a.kubeconfig, selector=a.selector)


def finish_fleet_check(ctx: Context, fleet: FleetCheck) -> int:
    """``-o json``/``yaml``: one List of the clusters' envelopes; else each cluster's output, every line led by
    ``<cluster>: `` (grep keeps working); then the warnings, each naming its cluster; the worst exit code."""
    from gpulabel.render.table import style_for
    from gpulabel.render.text import emit, emit_json, emit_yaml

    if ctx.fmt in ("json", "yaml"):
        (emit_json if ctx.fmt == "json" else emit_yaml)(fleet.document(), ctx.out)
    else:
        style = style_for(ctx.out, headers=not ctx.args.no_headers)
        for name, outcome in fleet.outcomes:
            text = io.StringIO()
            emit(outcome.result, ctx.fmt, text, style)
            ctx.out.write("".join(f"{name}: {line}\n" if line else "\n" for line in text.getvalue().splitlines()))
    for line in fleet.warnings:
        ctx.warn(line)
    return fleet.code
