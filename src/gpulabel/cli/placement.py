"""The ``place``, ``pending`` and ``hazards`` commands: load, match, render.

Output contracts:

- ``place``: one line per node, ``<node> yes`` or ``<node> no <reason>``
  (prefixed with ``<namespace>/<name> `` when several workloads are placed);
  exit 0 when every workload fits some node, 1 otherwise, 2 for a bad manifest.
- ``pending``: ``<namespace>/<pod> <reason> <n> node(s) [args]`` for every pod
  and reason (``fits`` when node selection is not what holds the pod; with
  ``--per-node`` ``<namespace>/<pod> <node> <reason> [args]`` for every node),
  then ``<namespace>/<pod> scheduler: <the pod's PodScheduled message>``; exit
  1 if any pod is Pending.
- ``hazards``: ``<namespace>/<pod> <node> <reason>``; exit 1 if any.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from gpulabel.cli.context import add_verdict_flags, findings_exit

if TYPE_CHECKING:
    from gpulabel.checks.placement import Fix
    from gpulabel.cli.context import AddCommand, Context
    from gpulabel.cluster.manifests import Workload
    from gpulabel.k8s.nodeaffinity import Result
    from gpulabel.model.findings import Cell

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
    p = add(
        "pending",
        cmd_pending,
        "why each Pending pod fits no node: one line per pod and reason with the number of nodes",
        examples=(
            "pending --snapshot examples/drifted-lab.yaml",
            "pending -o wide -n ml",
            "pending --per-node -l nvidia.com/gpu.product=NVIDIA-A10",
        ),
        exits="0 nothing at or above --fail-level (a Pending pod is a warning; one whose filters all pass, info), "
        "1 something is, 2 bad input",
    )
    add_verdict_flags(p)
    p.add_argument(
        "--per-node", action="store_true", help="one line per pod and node (<pod> <node> <reason>) instead of grouped"
    )
    all_pods_flag(p)
    p = add(
        "hazards",
        cmd_hazards,
        "running pods whose required node affinity or nodeSelector no longer matches their node",
        examples=("hazards --snapshot examples/drifted-lab.yaml -o wide",),
    )
    add_verdict_flags(p)


def all_pods_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--all-pods",
        action="store_true",
        help="every Pending pod, not only GPU pods (pods requesting nvidia.com/* or another GPU device plugin's "
        "resource, holding a DRA claim, or selecting nvidia.com/* or NFD's NVIDIA PCI label); without it the "
        "others are only counted, as info",
    )


# -- place --------------------------------------------------------------------------


def _wide_lines(node: str, result: Result) -> list[str]:
    lines = [result.line(node)]
    lines.extend(f"    {f.filter}: {f.reason}: {f.why}" for f in result.failures)
    return lines


def _fix_lines(prefix: str, fix: Fix | None) -> list[str]:
    from gpulabel.model.vocabulary import UNKNOWN

    if fix is None:
        return [f"{prefix}closest: none (no node can be made to fit by changing labels alone)"]
    term = f" (through term[{fix.term}])" if fix.term is not None else ""
    lines = [f"{prefix}closest {fix.node}: {fix.command()}{term}"]
    lines.extend(
        f"{prefix}    note: {c.key} is owned by {c.owner}: a hand edit lasts only until it next updates the node"
        for c in fix.changes
        if c.owner != UNKNOWN
    )
    return lines


def cmd_place(ctx: Context) -> int:
    from gpulabel.checks.placement import NodeIndex, closest_fix, place
    from gpulabel.cluster.manifests import load_workloads
    from gpulabel.model.findings import Result, Section

    dra_objects: list[tuple[str, dict[str, object]]] = []
    workloads = load_workloads(ctx.args.manifests, dra_objects)
    uses_claims = any(w.resource_claims for w in workloads)
    if uses_claims:
        import dataclasses

        from gpulabel.checks.dra import claim_results
        from gpulabel.k8s.dra.objects import DRA_KINDS

        state = ctx.state(["Node", "Pod", *DRA_KINDS])
        ns = next((w.namespace for w in workloads if w.resource_claims), "default")
        state = dataclasses.replace(state, dra=state.dra.with_objects(dra_objects, ns))
    else:
        state = ctx.state(["Node", "Pod"])
    nodes = state.nodes
    index = NodeIndex(nodes, state.capacities())
    full = ctx.fmt not in ("text", "name")
    several = len(workloads) > 1
    plain: list[str] = []
    wide: list[str] = []
    verdicts: list[dict[str, Cell]] = []
    summaries: list[dict[str, Cell]] = []
    all_fit = True
    for w in workloads:
        results = place(w.requirements, index, full=full, request=w.requests)
        if w.resource_claims:
            results = claim_results(state, w.namespace, w.name, w.resource_claims, results)
        fits = [n.name for n, r in zip(nodes, results, strict=True) if r.fits]
        all_fit = all_fit and bool(fits)
        fix = closest_fix(w.requirements, nodes, results) if full and not fits else None
        prefix = f"{w.ref} " if several else ""
        for n, r in zip(nodes, results, strict=True):
            plain.append(prefix + r.line(n.name))
            wide.extend(prefix + line for line in _wide_lines(n.name, r))
            verdicts.append(
                {
                    "workload": w.ref,
                    "node": n.name,
                    "fits": r.fits,
                    "reason": r.reason,
                    "failures": tuple(f"{f.filter}: {f.reason}: {f.why}" for f in r.failures),
                }
            )
        if full and not fits:
            wide.extend(_fix_lines(prefix, fix))
        summaries.append(_workload_row(w, fits, fix))
    sections = (
        Section("workloads", tuple(summaries)),
        Section("nodes", tuple(verdicts), tuple(plain), tuple(wide)),
    )
    ctx.emit(Result("place", sections=sections, ok=""))
    return 0 if all_fit else 1


def _workload_row(w: Workload, fits: list[str], fix: Fix | None) -> dict[str, Cell]:
    return {
        "workload": w.ref,
        "kind": w.kind,
        "source": w.where,
        "fits": tuple(fits),
        "closest": None if fix is None else fix.node,
        "changes": () if fix is None else tuple(c.arg() for c in fix.changes),
        "command": None if fix is None else fix.command(),
    }


# -- pending and hazards ------------------------------------------------------------


def cmd_pending(ctx: Context) -> int:
    from gpulabel.checks.registry import CheckOptions, run_check
    from gpulabel.k8s.dra.objects import DRA_KINDS

    opts = CheckOptions(namespace=ctx.args.namespace, per_node=ctx.args.per_node, all_pods=ctx.args.all_pods)
    # live, only Pending pods are listed (the server filters on status.phase)
    result = run_check(
        "pending", ctx.state(["Node", "Pod", *DRA_KINDS], pod_field_selector="status.phase=Pending"), opts
    )
    return findings_exit(ctx, result)


def cmd_hazards(ctx: Context) -> int:
    from gpulabel.checks.registry import CheckOptions, run_check

    return findings_exit(
        ctx, run_check("hazards", ctx.state(["Node", "Pod"]), CheckOptions(namespace=ctx.args.namespace))
    )
