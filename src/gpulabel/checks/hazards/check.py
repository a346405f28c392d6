"""The ``hazards`` check, defined once: running pods whose node no longer matches, kept pod by pod.

A bound pod's finding reads the pod and its node; a pod whose node no longer
matches also counts the other nodes that would take it (``fits_elsewhere``),
so a node's change re-judges those pods too. What they count is kept per
distinct requirement (:class:`KeptFits`: the names of the nodes that fit, in
order), so a node's change evaluates that node alone for each kept
requirement; the pods of a requirement whose list that node moved in or out of
read their count and names from there again (``pending.hazard_recounted``: the
same pod on the same node, only the count, names and the detail's fate change).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import replace
from itertools import chain
from typing import Any

from gpulabel.checks.engine.definition import Check, CheckOptions, Fleet, ObjectKey, graded
from gpulabel.checks.engine.readby import ReadBy
from gpulabel.checks.pending import rules as pending
from gpulabel.checks.placement import fit as placement
from gpulabel.k8s.nodeaffinity import PodRequirements
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding, Result

__all__ = ["CHECK", "KeptFits"]


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    return Result("hazards", tuple(pending.hazards(state, opts.namespace)))


class KeptFits(ReadBy[PodRequirements, ObjectKey]):
    """Per distinct requirement of a pod whose node no longer matches, the nodes that would take it (sorted
    names: the state's order), as :func:`~gpulabel.checks.placement.fit.fitting_nodes` finds them; ``cells``
    counts the (requirement, node) verdicts computed, a whole list counting one per node."""

    def __init__(self) -> None:
        self.fitting: dict[PodRequirements, list[str]] = {}
        super().__init__(self.fitting)  # the pods whose finding reads each list
        self.cells = 0

    def answer(self, req: PodRequirements, index: Callable[[], placement.NodeIndex]) -> tuple[int, list[str]]:
        """``fitting_nodes``' answer over every node (the first 20 names), the list made over ``index()`` if new."""
        names = self.fitting.get(req)
        if names is None:
            whole = index()
            names = self.fitting[req] = placement.fitting_names(req, whole)
            self.cells += len(whole.nodes)
        return len(names), names[:20]

    def node(self, name: str, node: Node | None) -> set[PodRequirements]:
        """Node ``name`` is now ``node`` (``None``: gone): its place in every kept list, and no other; the
        requirements whose list it moved (their count changed)."""
        moved = set()
        for req, names in self.fitting.items():
            fits = node is not None and placement.fits_node(req, node)
            self.cells += node is not None
            i = bisect.bisect_left(names, name)
            there = i < len(names) and names[i] == name
            if fits and not there:
                names.insert(i, name)
                moved.add(req)
            elif there and not fits:
                del names[i]
                moved.add(req)
        return moved


class _Pieces:
    def __init__(self, check: Check) -> None:
        self.check, self.table = check, check.reasons()
        self.found: dict[ObjectKey, list[Finding]] = {}
        self.everything = True
        self.dirty: set[ObjectKey] = set()
        self.nodes: set[str] = set()  # nodes whose change re-judges the pods bound to them
        self.fits = KeptFits()
        self.req_of: dict[ObjectKey, PodRequirements] = {}  # the pods whose finding counts other nodes
        self.shown: Result | None = None  # the last result, while no pod's findings change
        self.listed: list[ObjectKey] | None = None  # the pods with findings in the state's order, while the same
        # every node grouped for placement, made for a new requirement's list and patched node by node after
        self.index: placement.NodeIndex | None = None

    def touched(self, kind: str, key: ObjectKey, old: Any | None, new: Any | None) -> None:
        if kind == "Node":
            if old is None or new is None or placement.placement_view(old) != placement.placement_view(new):
                # its pods; and a pod whose node no longer matches counts the other nodes that would take it:
                # re-judged if this node moved in or out of its requirement's kept list (result)
                self.nodes.update(n.name for n in (old, new) if n is not None)
        elif kind == "Pod" and ((old is not None and old.node_name) or (new is not None and new.node_name)):
            self.dirty.add(key)

    def result(self, fleet: Fleet, opts: CheckOptions) -> Result:
        state = fleet.state
        moved: set[PodRequirements] = set()
        for name in self.nodes:
            node = fleet.nodes.get(name)
            moved |= self.fits.node(name, node)
            if self.index is not None and not placement.keep_index(self.index, name, node):
                self.index = None  # made again for the next new requirement
        recount = self.fits.readers(moved) if moved else set()  # their count moved: told again (_recount)
        before: dict[ObjectKey, list[Finding]] = {}  # the re-judged pods' findings before (to tell a change)
        if self.everything:
            part, keys = state, list(fleet.pods)
            self.found, self.req_of, self.shown, self.listed = {}, {}, None, None
            self.fits.clear()
            self.index = None
        else:
            self.dirty.update(k for n in self.nodes for k in fleet.bound(n))
            self.dirty |= self._recount(recount - self.dirty, fleet)
            before = {k: was for k in self.dirty if (was := self.found.pop(k, None)) is not None}
            for key in self.dirty:
                req = self.req_of.pop(key, None)
                if req is not None:
                    self.fits.disown(req, key)
            keys = sorted((k for k in self.dirty if k in fleet.pods), key=fleet.order)
            part = replace(state, pods=tuple(fleet.pods[k] for k in keys))
        self.everything, self.dirty, self.nodes = False, set(), set()
        if keys:
            by_ref = {fleet.pods[k].ref: k for k in keys}
            found: dict[str, list[Finding]] = {}

            # over every node, made for the first new requirement
            def elsewhere(req: PodRequirements) -> tuple[int, list[str]]:
                return self.fits.answer(req, lambda: self._index(state))

            for f in pending.hazards(part, opts.namespace, by_name=fleet.nodes, elsewhere_of=elsewhere):
                found.setdefault(f.pod, []).append(f)
            for ref, fs in found.items():
                key = by_ref[ref]
                self.found[key] = graded(self.check, fs, self.table)
                if any(f.fits_elsewhere is not None for f in fs):
                    req = self.req_of[key] = fleet.pods[key].requirements
                    self.fits.own(req, key)
        self.fits.prune()
        now = self.found.keys() & set(keys)
        if now != before.keys():
            self.shown = self.listed = None  # a pod's findings came or went
        elif any(self.found[k] != before[k] for k in now):
            self.shown = None  # a pod's findings changed
        if self.shown is None:
            if self.listed is None:
                self.listed = sorted(self.found, key=fleet.order)  # a pod's place never moves (Fleet.order)
            shown = tuple(chain.from_iterable(map(self.found.__getitem__, self.listed)))
            self.shown = Result("hazards", shown, graded=True)
        return self.shown

    def _index(self, state: ClusterState) -> placement.NodeIndex:
        """Every node, grouped for placement: kept between results, each node's change patched in (result)."""
        if self.index is None:
            self.index = placement.NodeIndex(state.nodes)
        return self.index

    def _recount(self, keys: set[ObjectKey], fleet: Fleet) -> set[ObjectKey]:
        """The findings of the pods ``keys`` (the same pod on the same node; the kept list of nodes their
        requirements would fit moved) with the count and names now, as ``pending.hazards`` words them; the pods
        whose findings it did not write (to judge again)."""
        again: set[ObjectKey] = set()
        answers: dict[int, tuple[int, tuple[str, ...]]] = {}  # by id of a requirement (req_of keeps it): asked once

        def index() -> placement.NodeIndex:
            return self._index(fleet.state)

        for key in keys:
            req = self.req_of[key]
            answer = answers.get(id(req))
            if answer is None:
                count, first = self.fits.answer(req, index)
                answer = answers[id(req)] = (count, tuple(first))
            count, names = answer
            was = self.found[key]
            now = [f if f.fits_elsewhere is None else pending.hazard_recounted(f, count, names) for f in was]
            if any(f is None for f in now):
                again.add(key)
            elif now != was:
                self.found[key] = [f for f in now if f is not None]
                self.shown = None
        return again


CHECK: Check = Check(
    "hazards",
    ("Node", "Pod"),
    ("Node", "Pod"),
    _run,
    "running pods whose node no longer matches",
    reasons=lambda: placement.REASONS,
    pieces=_Pieces,
)
