"""The ``hazards`` check, defined once: running pods whose node no longer matches, kept pod by pod.

A bound pod's finding reads the pod and its node; a pod whose node no longer
matches also counts the other nodes that would take it (``fits_elsewhere``),
so a node's change re-judges those pods too.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpulabel.checks import pending, placement
from gpulabel.checks.definition import Check, CheckOptions, Fleet, ObjectKey, graded
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Finding, Result

__all__ = ["CHECK"]


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    return Result("hazards", tuple(pending.hazards(state, opts.namespace)))


class _Pieces:
    def __init__(self, check: Check) -> None:
        self.check, self.table = check, check.reasons()
        self.found: dict[ObjectKey, list[Finding]] = {}
        self.everything = True
        self.dirty: set[ObjectKey] = set()
        self.nodes: set[str] = set()  # nodes whose change re-judges the pods bound to them

    def touched(self, kind: str, key: ObjectKey, old: Any | None, new: Any | None) -> None:
        if kind == "Node":
            if old is None or new is None or placement.placement_view(old) != placement.placement_view(new):
                self.nodes.update(n.name for n in (old, new) if n is not None)
                # a pod whose node no longer matches counts the other nodes that would take it
                self.dirty.update(k for k, fs in self.found.items() if any(f.fits_elsewhere is not None for f in fs))
        elif kind == "Pod" and ((old is not None and old.node_name) or (new is not None and new.node_name)):
            self.dirty.add(key)

    def result(self, fleet: Fleet, opts: CheckOptions) -> Result:
        state = fleet.state
        if self.everything:
            part, keys = state, list(fleet.pods)
            self.found = {}
        else:
            self.dirty.update(k for n in self.nodes for k in fleet.bound(n))
            for key in self.dirty:
                self.found.pop(key, None)
            keys = sorted((k for k in self.dirty if k in fleet.pods), key=fleet.order)
            part = replace(state, pods=tuple(fleet.pods[k] for k in keys))
        self.everything, self.dirty, self.nodes = False, set(), set()
        if keys:
            by_ref = {fleet.pods[k].ref: k for k in keys}
            found: dict[str, list[Finding]] = {}
            for f in pending.hazards(part, opts.namespace):
                found.setdefault(f.pod, []).append(f)
            for ref, fs in found.items():
                self.found[by_ref[ref]] = graded(self.check, fs, self.table)
        shown = tuple(f for k in sorted(self.found, key=fleet.order) for f in self.found[k])
        return Result("hazards", shown, graded=True)


CHECK: Check = Check(
    "hazards",
    ("Node", "Pod"),
    ("Node", "Pod"),
    _run,
    "running pods whose node no longer matches",
    reasons=lambda: placement.REASONS,
    pieces=_Pieces,
)
