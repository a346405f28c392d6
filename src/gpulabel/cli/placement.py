"""The ``place``, ``pending`` and ``hazards`` commands: load, match, render.

Kept out of ``cli.py`` so the CLI only registers them. Output contracts:

- ``place``: one line per node, ``<node> yes`` or ``<node> no <reason>``
  (prefixed with ``<namespace>/<name> `` when several workloads are placed);
  exit 0 when every workload fits some node, 1 otherwise, 2 for a bad manifest.
- ``pending``: ``<namespace>/<pod> <node> <reason>`` for every node (``fits``
  when node selection is not what holds the pod), then
  ``<namespace>/<pod> scheduler: <the pod's PodScheduled message>``; exit 1 if
  any pod is Pending.
- ``hazards``: ``<namespace>/<pod> <node> <reason>``; exit 1 if any.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpulabel.checks.placement import Fix
    from gpulabel.cli.context import AddCommand, Context
    from gpulabel.cluster.manifests import Workload
    from gpulabel.k8s.nodeaffinity import Result
    from gpulabel.model.cluster import Node

__all__ = ["add_placement_commands", "cmd_hazards", "cmd_pending", "cmd_place"]


def add_placement_commands(add: AddCommand) -> None:
    """Register the three commands with the CLI's ``add`` helper."""
    p = add("place", cmd_place, "which nodes each workload in MANIFEST can be scheduled on, and why not the others")
    p.add_argument("manifests", nargs="+", metavar="MANIFEST", help="Pod/Deployment/Job/... YAML or JSON; - is stdin")
    add("pending", cmd_pending, "why each Pending pod fits no node, node by node, beside the scheduler's message")
    add(
        "hazards", cmd_hazards, "running pods whose required node affinity or nodeSelector no longer matches their node"
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
    index = NodeIndex(nodes, state.capacities())
    full = ctx.fmt in ("wide", "json")
    several = len(workloads) > 1
    docs: list[dict[str, Any]] = []
    lines: list[str] = []
    tables: list[tuple[str, list[tuple[str, str, str]]]] = []
    all_fit = True
    for w in workloads:
        results = place(w.requirements, index, full=full, request=w.requests)
        if w.resource_claims:
            results = claim_results(state, w.namespace, w.name, w.resource_claims, results)
        fits = [n.name for n, r in zip(nodes, results, strict=True) if r.fits]
        all_fit = all_fit and bool(fits)
        fix = closest_fix(w.requirements, nodes, results) if full and not fits else None
        prefix = f"{w.ref} " if several else ""
        if ctx.fmt == "json":
            docs.append(_place_json(w, nodes, results, fits, fix))
        elif ctx.fmt == "table":
            rows = [(n.name, "yes" if r.fits else "no", r.reason) for n, r in zip(nodes, results, strict=True)]
            tables.append((f"{w.kind} {w.ref}", rows))
        elif ctx.fmt == "wide":
            for n, r in zip(nodes, results, strict=True):
                lines.extend(prefix + line for line in _wide_lines(n.name, r))
            if not fits:
                lines.extend(_fix_lines(prefix, fix))
        else:
            lines.extend(prefix + r.line(n.name) for n, r in zip(nodes, results, strict=True))
    _emit(ctx.out, ctx.fmt, lines, {"workloads": docs}, tables)
    return 0 if all_fit else 1


def _place_json(
    w: Workload, nodes: Sequence[Node], results: Sequence[Result], fits: list[str], fix: Fix | None
) -> dict[str, Any]:
    doc = w.to_json()
    doc["fits"] = fits
    doc["nodes"] = [{"node": n.name, **r.to_json()} for n, r in zip(nodes, results, strict=True)]
    doc["closest"] = fix.to_json() if fix is not None else None
    return doc


def _emit(
    out: IO[str], fmt: str, lines: list[str], doc: dict[str, Any], tables: list[tuple[str, list[tuple[str, str, str]]]]
) -> None:
    if fmt == "json":
        from gpulabel.render.text import emit_json

        emit_json(doc, out)
    elif fmt == "table":
        from gpulabel.render.text import emit_table

        for title, rows in tables:
            emit_table(("node", "fits", "reason"), rows, out, title=title)
    else:
        out.write("".join(line + "\n" for line in lines))


# -- pending and hazards ------------------------------------------------------------


def cmd_pending(ctx: Context) -> int:
    from gpulabel.checks.placement import pending_pods
    from gpulabel.k8s.dra.objects import DRA_KINDS
    from gpulabel.render.text import emit_findings, emit_json

    state = ctx.state(["Node", "Pod", *DRA_KINDS])
    pods = pending_pods(state, ctx.args.namespace)
    per_pod = [(p, p.findings(state.nodes)) for p in pods]
    findings = [f for _, fs in per_pod for f in fs]
    if ctx.fmt == "json":
        from gpulabel.model.findings import summarize

        emit_json(
            {
                "check": "pending",
                "pods": [
                    {"pod": p.pod.ref, "scheduler_message": p.message, "predicted_message": p.predicted} for p in pods
                ],
                "findings": [f.to_json() for f in findings],
                "summary": summarize(findings),
            },
            ctx.out,
        )
    elif ctx.fmt == "table" or not pods:
        emit_findings(findings, ctx.fmt, ctx.out, check="pending")
    else:
        for p, mine in per_pod:
            emit_findings(mine, ctx.fmt, ctx.out, check="pending")
            ctx.out.write(f"{p.pod.ref} scheduler: {p.message or '(no message yet)'}\n")
            if ctx.fmt == "wide" and p.predicted is not None:
                ctx.out.write(f"{p.pod.ref} predicted: {p.predicted}\n")
    return 1 if pods else 0


def cmd_hazards(ctx: Context) -> int:
    from gpulabel.checks.placement import hazards
    from gpulabel.render.text import emit_findings

    findings = hazards(ctx.state(["Node", "Pod"]), ctx.args.namespace)
    emit_findings(findings, ctx.fmt, ctx.out, check="hazards")
    return 1 if findings else 0
