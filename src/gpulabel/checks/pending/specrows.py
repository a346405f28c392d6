"""Pending's kept rows: each distinct Pending spec's verdict on every node, and the counts pending tells from them.

A Pending pod's part of the pending result (``checks/pending/rules.py``: its grouped
findings and the scheduler's message predicted for it) is a sum over nodes of
what its verdict on each node gives: per reason, how many nodes give it, the
first few in the nodes' order and the closest one (the least ``shortfall``,
whose explanation the finding shows); per scheduler reason, how many nodes; how
many nodes fit, how many only lack resources preemption could free, and how
many of those hold a pod of lower priority (``placement.message_part``). Pods
of one distinct spec (``pending.spec_key``: compiled spec, pin, requests,
priority; replicas) share all of it.

:class:`SpecRow` keeps, for one such spec, the verdict on every node (a *cell*)
and those sums, so that one node's change (its labels, taints, cordon,
allocatable, or what its bound pods take of it) recomputes that node's cell
alone: the old cell's part is taken out of the sums and the new one's put in.
A node that joins adds a cell, one that leaves takes its cell out. A cell is
placement's own verdict for that node (``place`` over a one-node index: what a
full run gives it, since a full run evaluates each group of equal nodes once,
with the node's capacity). :class:`SpecRows` holds the rows of the specs some
Pending pod still has, and counts every cell it computes (``cells``), so that a
test can tell one node's change from a row's rebuild.

The nodes' order is their names' (the incremental evaluator's state lists
nodes sorted by name), so a reason's nodes are kept as a sorted list of names.
Pods with claims or DeviceClass-backed requests (DRA reads every node's
capacity and devices) are not kept here; nor is ``--per-node`` (one finding
per node: the output itself grows with the nodes).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gpulabel.checks.engine.readby import ReadBy
from gpulabel.checks.pending.rules import PENDING_SAMPLE, PendingPod
from gpulabel.checks.placement.fit import (
    MessagePart,
    NodeIndex,
    message_of,
    message_part,
    place,
    result_runs,
    shortfall,
)
from gpulabel.k8s.nodeaffinity import Result
from gpulabel.model.cluster import Node, NodeCapacity, Pod
from gpulabel.model.findings import Finding

__all__ = ["Cell", "Plan", "SpecRow", "SpecRows", "told_by", "told_plan", "told_to"]

Score = tuple[int, int]


class _Group:
    """The nodes that give one reason: their names in order, and by shortfall (each list in order too)."""

    __slots__ = ("names", "scores")

    def __init__(self) -> None:
        self.names: list[str] = []
        self.scores: dict[Score, list[str]] = {}


Cell = tuple[Result, Score, MessagePart | None]  # a node's verdict, its shortfall, its part of the message


class _Cells:
    """Each node's cell (its index in the row's table): the cells of the row's :meth:`SpecRow.fill`, as two
    lists (the names then, sorted, and each one's cell: no dictionary of every node made for a new row, 12 ms
    and 5 MB at 65,000 nodes), and over them the cells put since and the nodes dropped (``None``)."""

    __slots__ = ("_base", "_names", "_over", "_size")

    def __init__(self) -> None:
        self._names: Sequence[str] = []  # never changed in place: a tuple may be every row's (SpecRow.fill)
        self._base: list[int] = []
        self._over: dict[str, int | None] = {}
        self._size = 0

    def fill(self, names: Sequence[str], cells: list[int]) -> None:
        """Every node's cell at once, ``names`` sorted (an empty row)."""
        self._names, self._base, self._over, self._size = names, cells, {}, len(names)

    def get(self, name: str) -> int | None:
        over = self._over
        if name in over:
            return over[name]
        names = self._names
        i = bisect.bisect_left(names, name)
        return self._base[i] if i < len(names) and names[i] == name else None

    def __getitem__(self, name: str) -> int:
        i = self.get(name)
        if i is None:
            raise KeyError(name)
        return i

    def __contains__(self, name: str) -> bool:
        return self.get(name) is not None

    def __setitem__(self, name: str, i: int) -> None:
        if self.get(name) is None:
            self._size += 1
        self._over[name] = i
        self._bound()

    def pop(self, name: str, default: int | None = None) -> int | None:
        i = self.get(name)
        if i is None:
            return default
        self._over[name] = None
        self._size -= 1
        self._bound()
        return i

    def _bound(self) -> None:
        """Once more nodes were put or dropped than the lists hold (nodes come and go under new names for as
        long as the monitor runs): the lists made again from every cell, the changes in them."""
        if len(self._over) <= max(1024, len(self._names)):
            return
        merged = dict(zip(self._names, self._base, strict=True))
        for name, i in self._over.items():
            if i is None:
                merged.pop(name, None)
            else:
                merged[name] = i
        self._names = sorted(merged)
        self._base = [merged[n] for n in self._names]
        self._over = {}

    def __len__(self) -> int:
        return self._size


class SpecRow:
    """One distinct Pending spec's verdict on every node (its cells) and the sums pending tells from them."""

    def __init__(self, pod: Pod) -> None:
        self.pending = PendingPod(pod, (), None)  # a pod of the spec: the findings' wording
        self.req = pod.requirements
        self.request = pod.requests
        self.priority = pod.priority
        self.policy = pod.spec.preemption_policy
        self.prefilter = self.req.prefilter_names()
        # a node's cell is its index in ``table``, the row's distinct cells: names to numbers, which the garbage
        # collector never walks (20,000 nodes, a few rows: no 100,000 objects to visit)
        self.cells = _Cells()
        self.table: list[Cell] = []
        self.uses: list[int] = []  # how many nodes have each cell of the table (0: its slot is free)
        self._free: list[int] = []
        self._same: dict[tuple[str, Score, MessagePart | None], list[int]] = {}  # the table by all but the result
        self.groups: dict[str, _Group] = {}
        self.counts: dict[str, int] = {}  # the scheduler's reasons, over refusing nodes
        self.fits = self.resolvable = self.victims = 0
        self._told: tuple[tuple[Finding, ...], str | None] | None = None
        self._last: tuple[tuple[Finding, ...], str | None] | None = None  # the last told, while equal
        self._graded: tuple[Any, tuple[Finding, ...]] | None = None  # the findings told, graded

    def verdict(self, node: Node, cap: NodeCapacity | None) -> Result:
        """The spec's verdict on ``node`` as a full run gives it (placement's own code, one node)."""
        index = NodeIndex((node,), {node.name: cap} if cap is not None else None)
        return place(self.req, index, full=True, request=self.request)[0]

    def _intern(self, cell: Cell, n: int = 1) -> int:
        """``cell``'s index in the table (a cell equal to it, or a new one), used by ``n`` more nodes."""
        result, score, part = cell
        same = self._same.setdefault((result.reason, score, part), [])
        for i in same:
            if self.table[i][0] == result:
                self.uses[i] += n
                return i
        if self._free:
            i = self._free.pop()
            self.table[i], self.uses[i] = cell, n
        else:
            i = len(self.table)
            self.table.append(cell)
            self.uses.append(n)
        same.append(i)
        return i

    def _release(self, i: int) -> None:
        self.uses[i] -= 1
        if not self.uses[i]:
            result, score, part = self.table[i]
            key = (result.reason, score, part)
            self._same[key].remove(i)
            if not self._same[key]:
                del self._same[key]
            self._free.append(i)

    def _group(self, reason: str) -> _Group:
        """The nodes that give ``reason`` (a new, empty group for the first)."""
        group = self.groups.get(reason)
        if group is None:
            group = self.groups[reason] = _Group()
        return group

    def fill(self, names: Sequence[str], results: list[Result], capacities: Mapping[str, NodeCapacity]) -> None:
        """Every node's cell at once (``names`` in order, an empty row): :meth:`put`'s sums, with what nodes
        sharing one result share (its score, group, part of the message) worked out once, and the sums
        added once per run of nodes.

        Placement shares one result object between the nodes of a group (a few dozen distinct at 65,000
        nodes), and a pool's nodes are next to each other by name: the nodes are taken by runs of one result
        object (about 3,000 runs at 65,000 nodes, found in C by identity), each run's names added to its
        group's lists at once and its cells set at once (:class:`_Cells`). The runs come in the nodes' order,
        so every list of a group (empty before) is in order as it is built, with no sort. Only nodes whose part
        of the message is their own (preemption's answer reads the node's capacity; a PreFilter name set names
        the node) are visited one by one."""
        if self.prefilter is not None:  # the part names the node: not shared
            self._fill_each(names, results, capacities)
            return
        # by id of a result: its group's lists, its cell (-1: a cell per node), how many nodes have that cell, and
        # its shortfall
        shared: dict[int, list[Any]] = {}
        own: dict[tuple[int, MessagePart | None], int] = {}  # (id of a result, a node's own part) -> its cell
        tally: dict[MessagePart | None, int] = {}  # the nodes with a part of their own, by it
        base: list[int] = []  # every node's cell, in order
        for at, end in result_runs(results):
            result = results[at]
            known = shared.get(id(result))
            if known is None:
                score = shortfall(result)
                group = self._group(result.reason)
                part = None if result.fits else message_part(None, "", result, None, self.priority)
                # its own preemption answer (whether a pod of lower priority is on it): a cell per node below
                i = -1 if part is not None and part.resolvable else self._intern((result, score, part), 0)
                known = shared[id(result)] = [group.names, group.scores.setdefault(score, []), i, 0, score]
            in_group, same, i, _, score = known
            run = names[at:end]
            in_group.extend(run)
            same.extend(run)
            if i >= 0:
                known[3] += end - at
                base.extend([i] * (end - at))
                continue
            for name in run:
                mine = message_part(None, name, result, capacities.get(name), self.priority)
                j = own.get((id(result), mine))
                if j is None:
                    j = own[(id(result), mine)] = self._intern((result, score, mine), 0)
                self.uses[j] += 1
                base.append(j)
                tally[mine] = tally.get(mine, 0) + 1
        for _, _, i, count, _ in shared.values():
            if i >= 0:
                self.uses[i] += count
                tally[self.table[i][2]] = tally.get(self.table[i][2], 0) + count
        self.cells.fill(names if isinstance(names, tuple) else list(names), base)  # a tuple: shared, never changed
        for counted, count in tally.items():
            self._add(counted, count)
        self._told = None

    def _fill_each(self, names: Sequence[str], results: list[Result], capacities: Mapping[str, NodeCapacity]) -> None:
        """:meth:`fill` node by node (each node's part of the message names it)."""
        known: dict[int, tuple[Score, MessagePart | None, _Group, list[str]]] = {}
        tally: dict[MessagePart | None, int] = {}
        interned: dict[tuple[int, MessagePart | None], int] = {}  # (id of a result, part) -> its table index
        by_name = self.prefilter is not None  # the part names the node: not shared
        cells = self.cells
        for name, result in zip(names, results, strict=True):
            shared = known.get(id(result))
            if shared is None or by_name:
                score = shortfall(result)
                base = None if result.fits else message_part(self.prefilter, name, result, None, self.priority)
                group = self._group(result.reason)
                shared = known[id(result)] = (score, base, group, group.scores.setdefault(score, []))
            score, part, group, same = shared
            if part is not None and part.resolvable:  # its own preemption answer
                part = message_part(self.prefilter, name, result, capacities.get(name), self.priority)
            i = interned.get((id(result), part))
            if i is None:
                i = interned[(id(result), part)] = self._intern((result, score, part), 0)
            self.uses[i] += 1
            cells[name] = i
            group.names.append(name)
            same.append(name)
            tally[part] = tally.get(part, 0) + 1
        for part, n in tally.items():
            self._add(part, n)
        self._told = None

    def put(self, name: str, result: Result, cap: NodeCapacity | None) -> bool:
        """Node ``name``'s cell is ``result`` (with ``cap``, its capacity, for preemption): whether it changed."""
        part = None if result.fits else message_part(self.prefilter, name, result, cap, self.priority)
        old = self.cells.get(name)
        if old is not None:
            was = self.table[old]
            if was[0] == result and was[2] == part:
                return False
            self.drop(name)
        score = shortfall(result)
        self.cells[name] = self._intern((result, score, part))
        group = self._group(result.reason)
        bisect.insort(group.names, name)
        bisect.insort(group.scores.setdefault(score, []), name)
        self._add(part, 1)
        self._told = None
        return True

    def drop(self, name: str) -> None:
        """Node ``name`` left: its cell out of every sum."""
        i = self.cells.pop(name, None)
        if i is None:
            return
        result, score, part = self.table[i]
        self._release(i)
        group = self.groups[result.reason]
        del group.names[bisect.bisect_left(group.names, name)]
        same = group.scores[score]
        del same[bisect.bisect_left(same, name)]
        if not same:
            del group.scores[score]
        if not group.names:
            del self.groups[result.reason]
        self._add(part, -1)
        self._told = None

    def _add(self, part: MessagePart | None, n: int) -> None:
        """``n`` nodes (negative: taken out) whose part of the message is ``part`` (``None``: they fit)."""
        if part is None:
            self.fits += n
            return
        for reason in part.reasons:
            count = self.counts.get(reason, 0) + n
            if count:
                self.counts[reason] = count
            else:
                del self.counts[reason]
        self.resolvable += n * part.resolvable
        self.victims += n * part.victim

    def told(self) -> tuple[tuple[Finding, ...], str | None]:
        """The grouped findings (for the row's own pod; :meth:`findings` names another) and the predicted
        scheduler's message, as ``PendingPod.grouped`` and ``scheduler_message`` give them over every node."""
        if self._told is None:
            found = []
            for group in sorted(self.groups.values(), key=lambda g: g.names[0]):  # by their first node
                best = group.scores[min(group.scores)][0]  # the least shortfall, the first such node
                shown = (best, *[n for n in group.names[: PENDING_SAMPLE + 1] if n != best][: PENDING_SAMPLE - 1])
                found.append(self.pending.group_finding(self.table[self.cells[best]][0], len(group.names), shown))
            message = (
                None
                if self.fits
                else message_of(
                    len(self.cells), self.prefilter, self.counts, self.resolvable, self.victims, self.policy
                )
            )
            told = (tuple(found), message)
            # told as before (a node's change that moved no count): the same object, so its pods keep their pieces
            self._told = self._last = self._last if self._last == told else told
        return self._told

    def graded(self, grade: Callable[[Sequence[Finding]], Sequence[Finding]]) -> tuple[Finding, ...]:
        """:meth:`told`'s findings graded by ``grade``, once per change of the row; a finding equal to one graded
        before is that same object (the groups a node's change did not move: their pods keep their findings)."""
        told = self.told()
        if self._graded is None or self._graded[0] is not told:
            now = tuple(grade(told[0]))
            if self._graded is not None:
                was = {f: f for f in self._graded[1]}
                now = tuple(was.get(f, f) for f in now)
            self._graded = (told, now)
        return self._graded[1]

    def findings(
        self,
        pod: Pod,
        grade: Callable[[Sequence[Finding]], Sequence[Finding]],
        before: tuple[tuple[Finding, ...], tuple[Finding, ...]] | None = None,
    ) -> tuple[Finding, ...]:
        """:meth:`graded`'s findings for ``pod`` (of this spec); ``before``: the graded findings the pod's last
        findings were made from, and those (a graded finding still there gives the pod's own again)."""
        return told_to(self.graded(grade), pod.ref, before)


def told_to(
    graded: tuple[Finding, ...], ref: str, before: tuple[tuple[Finding, ...], tuple[Finding, ...]] | None = None
) -> tuple[Finding, ...]:
    """A row's ``graded`` findings about the pod ``ref``; ``before``: the graded findings the pod's last findings
    were made from, and those (a graded finding still there gives the pod's own again)."""
    if not before:
        return tuple([f if f.pod == ref else f.about(ref) for f in graded])
    return told_by(told_plan(graded, before[0]), ref, before[1])


Plan = list["int | Finding"]


def told_plan(graded: tuple[Finding, ...], before: tuple[Finding, ...]) -> Plan:
    """How :func:`told_to` tells ``graded`` to a pod whose findings were told from ``before`` (graded findings
    too): per finding, the place in ``before`` of that same object (the pod's own finding there is kept), or the
    finding (told about the pod anew). The same for every pod of a row told from ``before``: made once for them."""
    at = {id(f): i for i, f in enumerate(before)}
    return [at.get(id(f), f) for f in graded]


def told_by(plan: Plan, ref: str, mine: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """:func:`told_to`'s findings for the pod ``ref`` by ``plan`` (:func:`told_plan`), ``mine``: the pod's
    findings told from the ``before`` of the plan."""
    return tuple([mine[x] if isinstance(x, int) else x if x.pod == ref else x.about(ref) for x in plan])


class SpecRows(ReadBy[tuple[Any, ...], Any]):
    """The rows of the distinct specs of the Pending pods kept, by ``pending.spec_key``."""

    def __init__(self) -> None:
        self.rows: dict[tuple[Any, ...], SpecRow] = {}
        super().__init__(self.rows)  # the pods whose piece each row tells
        self.cells = 0  # cells computed, ever: one node's change computes one per row
        self.moved: set[tuple[Any, ...]] = set()  # the rows a cell of changed in, since :meth:`settled`

    def row(
        self,
        key: tuple[Any, ...],
        pod: Pod,
        names: Sequence[str],
        capacities: Mapping[str, NodeCapacity],
        index: Callable[[], NodeIndex],
    ) -> SpecRow:
        """``pod``'s row (``key``: its ``spec_key``), made over every node (``names`` in order; ``index`` over
        them) if its spec has none."""
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = SpecRow(pod)
            results = place(row.req, index(), full=True, request=row.request)
            row.fill(names, results, capacities)
            self.cells += len(results)
        return row

    def node(self, name: str, node: Node | None, cap: NodeCapacity | None) -> None:
        """Node ``name`` is now ``node`` (``None``: gone) with ``cap``: its cell in every row, and no other."""
        for key, row in self.rows.items():
            if node is None:
                if name in row.cells:
                    row.drop(name)
                    self.moved.add(key)
            else:
                if row.put(name, row.verdict(node, cap), cap):
                    self.moved.add(key)
                self.cells += 1

    def settled(self) -> set[tuple[Any, ...]]:
        """The rows (spec keys) whose cells changed since the last call: their pods' pieces may be told again."""
        moved, self.moved = self.moved, set()
        return moved
