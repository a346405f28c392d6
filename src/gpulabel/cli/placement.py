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

from typing import TYPE_CHECKING, Any

from gpulabel.cli.context import findings_exit

if TYPE_CHECKING:
    from gpulabel.checks.advice import Advice
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
    p.add_argument(
        "--per-node", action="store_true", help="one line per node (<node> yes|no <reason>) instead of grouped"
    )
    p = add(
        "pending",
        cmd_pending,
        "why each Pending pod fits no node: one line per pod and reason with the number of nodes",
        examples=(
            "pending --snapshot examples/drifted-lab.yaml",
            "pending -o wide -n ml",
            "pending --per-node -l nvidia.com/gpu.product=NVIDIA-A10",
        ),
        exits="0 no Pending pod (or no pods in the input: skipped), 1 Pending pods, 2 bad input",
    )
    p.add_argument(
        "--per-node", action="store_true", help="one line per pod and node (<pod> <node> <reason>) instead of grouped"
    )
    add(
        "hazards",
        cmd_hazards,
        "running pods whose required node affinity or nodeSelector no longer matches their node",
        examples=("hazards --snapshot examples/drifted-lab.yaml -o wide",),
    )


# -- place --------------------------------------------------------------------------


def _wide_lines(node: str, result: Result) -> list[str]:
    lines = [result.line(node)]
    lines.extend(f"    {f.filter}: {f.reason}: {f.why}" for f in result.failures)
    return lines


def _fix_lines(prefix: str, advice: Advice) -> list[str]:
    from gpulabel.model.vocabulary import UNKNOWN

    fix = advice.fix
    hints = [f"{prefix}    hint: {h}" for h in advice.hints]
    if fix is None:
        return [f"{prefix}closest: {advice.none_line()}", *hints]
    term = f" (through term[{fix.term}])" if fix.term is not None else ""
    lines = [f"{prefix}closest {fix.node}: {fix.command()}{term}"]
    lines.extend(
        f"{prefix}    note: {c.key} is owned by {c.owner}: a hand edit lasts only until it next updates the node"
        for c in fix.changes
        if c.owner != UNKNOWN
    )
    return lines + hints


def cmd_place(ctx: Context) -> int:
    from gpulabel.checks.advice import advise
    from gpulabel.checks.placement import NodeIndex, group_verdicts, place
    from gpulabel.cluster.manifests import load_workloads
    from gpulabel.model.findings import Result, Section

    dra_objects: list[tuple[str, dict[str, Any]]] = []
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
    capacities = state.capacities()
    index = NodeIndex(nodes, capacities)
    full = ctx.fmt not in ("text", "name")
    per_node = bool(getattr(ctx.args, "per_node", False))
    several = len(workloads) > 1
    plain: list[str] = []
    wide: list[str] = []
    grouped: list[str] = []
    grouped_wide: list[str] = []
    verdicts: list[dict[str, Cell]] = []
    groups: list[dict[str, Cell]] = []
    summaries: list[dict[str, Cell]] = []
    all_fit = True
    for w in workloads:
        results = place(w.requirements, index, full=full, request=w.requests)
        if w.resource_claims:
            results = claim_results(state, w.namespace, w.name, w.resource_claims, results)
        fits = [n.name for n, r in zip(nodes, results, strict=True) if r.fits]
        all_fit = all_fit and bool(fits)
        advice = (
            advise(w.requirements, nodes, results, capacities=capacities, request=w.requests)
            if full and not fits
            else None
        )
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
        for g in group_verdicts(nodes, results):
            grouped.append(prefix + g.line())
            grouped_wide.append(prefix + g.line())
            grouped_wide.extend(f"{prefix}    {g.best}: {f.filter}: {f.reason}: {f.why}" for f in g.result.failures)
            groups.append(
                {
                    "workload": w.ref,
                    "fits": g.result.fits,
                    "reason": g.reason,
                    "count": g.count,
                    "sample": g.sample,
                    "best": g.best,
                    "failures": tuple(f"{f.filter}: {f.reason}: {f.why}" for f in g.result.failures),
                }
            )
        if advice is not None:
            fix_lines = _fix_lines(prefix, advice)
            wide.extend(fix_lines)
            grouped_wide.extend(fix_lines)
        summaries.append(_workload_row(w, fits, advice))
    shown, shown_wide = (plain, wide) if per_node else (grouped, grouped_wide)
    sections = (
        Section("workloads", tuple(summaries)),
        Section("groups", tuple(groups), () if per_node else tuple(shown), None if per_node else tuple(shown_wide)),
        Section("nodes", tuple(verdicts), tuple(shown) if per_node else (), tuple(shown_wide) if per_node else None),
    )
    ctx.emit(Result("place", sections=sections, ok=""))
    return 0 if all_fit else 1


def _workload_row(w: Workload, fits: list[str], advice: Advice | None) -> dict[str, Cell]:
    fix = None if advice is None else advice.fix
    return {
        "workload": w.ref,
        "kind": w.kind,
        "source": w.where,
        "fits": tuple(fits),
        "closest": None if fix is None else fix.node,
        "changes": () if fix is None else tuple(c.arg() for c in fix.changes),
        "command": None if fix is None else fix.command(),
        "hints": () if advice is None else advice.hints,
    }


# -- pending and hazards ------------------------------------------------------------


def cmd_pending(ctx: Context) -> int:
    from gpulabel.checks.registry import CheckOptions, run_check
    from gpulabel.k8s.dra.objects import DRA_KINDS

    opts = CheckOptions(namespace=ctx.args.namespace, per_node=ctx.args.per_node)
    # live, only Pending pods are listed (the server filters on status.phase)
    result = run_check(
        "pending", ctx.state(["Node", "Pod", *DRA_KINDS], pod_field_selector="status.phase=Pending"), opts
    )
    ctx.emit(result)
    return 1 if result.counts.get("pods") else 0


def cmd_hazards(ctx: Context) -> int:
    from gpulabel.checks.registry import CheckOptions, run_check

    return findings_exit(
        ctx, run_check("hazards", ctx.state(["Node", "Pod"]), CheckOptions(namespace=ctx.args.namespace))
    )
