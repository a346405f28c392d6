"""``gpus``: the fleet inventory, per kind of node (or per ``--by`` label value and product)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from gpulabel.app.session import Outcome, Session
from gpulabel.model.findings import Cell, Result, Section

__all__ = ["GpusOptions", "run_gpus"]


@dataclass(frozen=True, slots=True)
class GpusOptions:
    by: str | None = None  # a node label to group by (a pool), with the product
    namespace: str | None = None  # only the pods of this namespace count as requesting


def run_gpus(session: Session, opts: GpusOptions) -> Outcome:
    """One row per group; informational: exit 0."""
    from gpulabel.checks.gpus import inventory

    state = session.state(["Node", "Pod"])
    if opts.namespace:
        state = dataclasses.replace(state, pods=tuple(p for p in state.pods if p.namespace == opts.namespace))
    rows = inventory(state, opts.by)
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
    return Outcome(Result("gpus", sections=(section,), ok="", fields={"by": opts.by}))
