"""The ``pending`` check, defined once: why each Pending pod fits no node, kept pod by pod.

A Pending pod's verdicts read every node (what placement reads of it), what
the bound pods use of each node (its capacity), the DRA and NFD objects, and
never another Pending pod. A Pending pod's change re-judges itself.

Each distinct Pending spec's verdict on every node is kept
(:mod:`gpulabel.checks.pending.specrows`): every change of a node (in place, come or
gone) or of what is free on it recomputes that node's cell in each kept row,
and no other; a judged pod's piece is told from its spec's row, and told again
from it when the row's cells moved (``_retell``: the pod's record the same,
only its findings, row and predicted line). A node that comes or goes judges
every pod again only if which pods are GPU pods changed with it (or NFD's
hints read the nodes).

Pods with claims or DeviceClass-backed requests, and ``--per-node``, are judged
by ``pending_result`` on a part of the state (every node, those pods): a node
that comes or goes re-judges them all, a node changed in place only those whose
verdict on it may differ (:mod:`gpulabel.checks.pending.columns`), a bound pod's change
those whose verdict may flip on its node
(:func:`gpulabel.checks.pending.scope.flips`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from itertools import chain
from operator import itemgetter
from typing import Any, NamedTuple

from gpulabel.checks.engine.definition import Check, CheckOptions, Fleet, ObjectKey, graded
from gpulabel.checks.pending import autoscale, autoscaler_events, scope
from gpulabel.checks.pending import rules as pending
from gpulabel.checks.pending.columns import Columns
from gpulabel.checks.pending.specrows import Plan, SpecRows, told_by, told_plan
from gpulabel.checks.placement import fit as placement
from gpulabel.k8s.dra.objects import DRA_KINDS
from gpulabel.k8s.nfd.objects import NFD_KINDS
from gpulabel.model.cluster import AUTOSCALER_KINDS, KIND, ClusterState, Node, NodeCapacity, Pod
from gpulabel.model.findings import Finding, Result, Section

__all__ = ["CHECK", "KnownCapacities"]


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    return pending.pending_result(
        state,
        opts.namespace,
        per_node=opts.per_node,
        all_pods=opts.all_pods,
        nfd_config=opts.nfd_config,
        now=opts.now,
    )


def _caveats(state: ClusterState, opts: CheckOptions) -> tuple[str, ...]:
    return _unchecked_claims(state.kinds, (p for p in state.pods if _unbound(p)))


def _unchecked_claims(kinds: Collection[str], unbound: Iterable[Pod]) -> tuple[str, ...]:
    """Pending pods (``unbound``) with ResourceClaims in an input without DRA objects: their claims are unchecked."""
    if "ResourceSlice" not in kinds and any(p.spec.resource_claims for p in unbound):
        return ("claims not checked (no DRA objects in the input: resource.k8s.io/v1 not served, or not captured)",)
    return ()


def _unbound(pod: Pod | None) -> bool:
    return pod is not None and pod.phase == "Pending" and not pod.node_name


def _use(pod: Pod | None) -> tuple[Any, ...] | None:
    """What a pod takes of its node as placement counts it (bound and not terminal)."""
    if pod is None or not pod.node_name or pod.terminal:
        return None
    return (pod.node_name, pod.requests, pod.priority)


class KnownCapacities(ClusterState):
    """A part of the state whose :meth:`capacities` (what each node has free, from every bound pod) are
    given: the keeper keeps them node by node, so pending reads them without walking every pod."""

    def capacities(self) -> dict[str, NodeCapacity]:
        known = self.__dict__["known"]
        return {n.name: known[n.name] for n in self.nodes if n.name in known}  # in node order, as the state's

    @classmethod
    def of(cls, state: ClusterState, pods: tuple[Pod, ...], known: Mapping[str, NodeCapacity]) -> KnownCapacities:
        part = cls(
            nodes=state.nodes,
            pods=pods,
            daemonsets=state.daemonsets,
            cluster_policies=state.cluster_policies,
            source=state.source,
            kinds=state.kinds,
            dra=state.dra,
            nfd=state.nfd,
            karpenter=state.karpenter,
            events=state.events,  # the autoscalers' pod Events
            autoscaler=state.autoscaler,
        )
        object.__setattr__(part, "known", known)
        return part


class _Piece(NamedTuple):
    """One Pending pod's part of the result: its findings, its row and its lines (a tuple: a node's change
    tells hundreds of them again)."""

    findings: tuple[Finding, ...]
    row: Mapping[str, Any]
    text: str
    wide: tuple[str, ...]


_FINDINGS, _ROW, _TEXT, _WIDE = map(itemgetter, range(4))


def _pieces(part: ClusterState, opts: CheckOptions) -> dict[str, _Piece]:
    """pending on ``part`` (every node and what is free on it, the Pending pods to judge), cut per pod (by ref)."""
    result = _run(part, opts)
    section = result.sections[0]
    found: dict[str, list[Finding]] = {}
    for f in result.findings:
        found.setdefault(f.pod, []).append(f)
    wide: dict[str, list[str]] = {}
    for line in section.wide or ():
        wide.setdefault(line.split(" ", 1)[0], []).append(line)
    out = {}
    for row, text in zip(section.rows, section.text, strict=True):
        ref = str(row["pod"])
        out[ref] = _Piece(tuple(found.get(ref, ())), row, text, tuple(wide.get(ref, ())))
    return out


class _Told:
    """A pod told by a row: its record (and ``ref``), the row's told and graded findings its piece was made from,
    the piece, and its message and hints (the pod's own: a piece told again keeps them). Changed in place when
    told again."""

    __slots__ = ("graded", "hints", "message", "piece", "pod", "ref", "told")

    def __init__(
        self, pod: Pod, told: Any, piece: _Piece, message: str, hints: list[str], graded: tuple[Finding, ...]
    ) -> None:
        self.pod, self.told, self.piece, self.message, self.hints, self.graded = (
            pod, told, piece, message, hints, graded,
        )  # fmt: skip
        self.ref = pod.ref


class _Pieces:
    def __init__(self, check: Check) -> None:
        self.check, self.table = check, check.reasons()
        self.found: dict[ObjectKey, _Piece] = {}
        self.unbound: set[ObjectKey] = set()  # the unbound Pending pods
        self.capacities: dict[str, NodeCapacity] = {}  # as ClusterState.capacities() says, node by node
        self.capacities_dirty: set[str] = set()
        self.use_nodes: set[str] = set()  # nodes whose bound pods' use changed: re-judge what may flip there
        self.started = False
        self.everything = True
        self.dirty: set[ObjectKey] = set()
        self.columns = Columns()  # nodes changed in place: re-judge the pods whose verdict on them may differ
        self.rows = SpecRows()  # each distinct Pending spec's cell per node (checks/pending/specrows.py)
        self.row_of: dict[ObjectKey, tuple[Any, ...]] = {}  # the pods whose piece was told by a row: its spec key
        # which pods are GPU pods: told every node's change (pending.GpuPods.put), made again when a DRA
        # object changes (what a DeviceClass backs)
        self.gpu: pending.GpuPods | None = None
        # every node grouped for placement, made for a new row and kept while no node or capacity changes
        self.index: placement.NodeIndex | None = None
        # every node's name in order, for the new rows' cells (one tuple shared by them, not a copy each): made
        # again after a node came or went
        self.names: tuple[str, ...] | None = None
        self.cap_keys: dict[str, Any] = {}  # each node's NodeCapacity.key(), dropped when its capacity changes
        # one copy of each distinct key: nodes of one machine with the same pods share it (the key's tuples are 10
        # objects a node, 45 MB at 130,000 nodes); emptied when it holds many more keys than nodes
        self.cap_shared: dict[Any, Any] = {}
        self.finished: Result | None = None  # the last result, while no Pending pod is re-judged
        # each rowed pod's piece with the record and the row's told it was made from (and the pod's message and
        # NFD hints): re-judged, a pod whose record and row's told are the same objects keeps it (a node's
        # change that moved no count of its spec); its row's told changed, its piece is told again from these
        self.told_of: dict[ObjectKey, _Told] = {}  # also each row's readers' values (rows.users), by row
        self.caveated: tuple[str, ...] | None = None  # its caveats, as long
        self.recount = False  # a pod came to or left Pending: the result counts the pods no piece tells
        self.joined = False  # a node came or went
        self.gpu_was: tuple[frozenset[str], frozenset[str] | None] | None = None  # GpuPods.view() before the batch
        # the pods with a piece in the state's order, and the other Pending pods' count: kept while the pods with
        # a piece and the Pending pods are the same (a node's change tells pieces again, the same pods')
        self.listed: tuple[list[ObjectKey], int] | None = None
        self.changed = False  # something was touched since the last result
        # when a NodeClaim in flight passes autoscale.COMING_GRACE (its pods' node-coming turns node-late): the
        # verdicts read the clock then, so every pod is judged again once the time given has passed it
        self.deadline: datetime | None = None
        # when an autoscaler's Event the verdicts read ages past its window (autoscaler_events.events_deadline):
        # every pod is judged again once the time given has passed it
        self.events_deadline: datetime | None = None

    def touched(self, kind: str, key: ObjectKey, old: Any | None, new: Any | None) -> None:
        self.changed = True
        if kind == "Node":
            if self.gpu is not None:
                if self.gpu_was is None:
                    self.gpu_was = self.gpu.view()
                self.gpu.put(old, new)
            if old is None or new is None:
                self.names = None  # a node came or went
            if old is None or new is None or placement.placement_view(old) != placement.placement_view(new):
                if old is not None and new is not None and old.name == new.name:
                    self.columns.changed(old)  # in place: its column (checks/pending/columns.py)
                else:
                    self.joined = True  # a node came or went: its cell comes or goes in every row (result)
                self.capacities_dirty.update(n.name for n in (old, new) if n is not None)
        elif kind == "Pod":
            if _unbound(old) or _unbound(new):
                self.dirty.add(key)
            if _unbound(new):
                self.unbound.add(key)
            else:
                self.unbound.discard(key)
            if _unbound(old) != _unbound(new):
                self.recount = True  # the other Pending pods the result counts
            if _use(old) != _use(new):  # what is free on its node(s) changed
                names = {p.node_name for p in (old, new) if p is not None and p.node_name}
                self.capacities_dirty.update(names)
                self.use_nodes.update(names)
        elif KIND[kind].field in ("dra", "nfd", "karpenter", "autoscaler") or (
            KIND[kind].field == "events" and (autoscaler_events.is_autoscaler_event(old or new))
        ):
            self.everything = True
            self.gpu, self.told_of = None, {}  # what a DeviceClass backs; NFD's hints, a pod's claims

    def _refresh_capacities(self, fleet: Fleet) -> None:
        for name in self.capacities_dirty:
            self.capacities.pop(name, None)
            self.cap_keys.pop(name, None)
            node = fleet.nodes.get(name)
            if node is None or node.amounts is None:
                continue
            pods = [p for p in (fleet.pods[k] for k in fleet.bound(name)) if not p.terminal]
            self.capacities[name] = NodeCapacity.of(
                node.amounts, [p.requests for p in pods], [p.priority for p in pods]
            )
        self.capacities_dirty = set()

    def _flipped(
        self, before: Mapping[str, NodeCapacity | None], keys: Collection[ObjectKey], fleet: Fleet
    ) -> set[ObjectKey]:
        """The Pending pods of ``keys`` whose verdict may differ on a node whose capacity went from ``before``
        to now."""
        changed = [(old, new) for n, old in before.items() if old != (new := self.capacities.get(n))]
        if not changed:
            return set()
        backed = fleet.state.dra.extended
        return {k for k in keys if any(scope.flips(fleet.pods[k], o, n, backed) for o, n in changed)}

    def _retell(self, moved: Collection[tuple[Any, ...]]) -> bool:
        """Tell again the pieces of the pods read from the rows ``moved`` (their cells changed) whose row's told
        is not the one their piece was made from; whether a piece changed. The pod's record is the same (a
        pod that changed was judged again), so its message, hints and text are kept. What is the same for
        every pod of the row is worked out once: which of its findings it keeps (``told_plan``, per graded
        findings its piece was told from) and the predicted line's words."""
        changed = False
        found = self.found
        for spec in moved:
            row = self.rows.rows.get(spec)
            if row is None:
                continue
            now, graded = row.told(), row.graded(self._grade)
            predicted = now[1]
            plans: dict[int, tuple[tuple[Finding, ...], Plan]] = {}  # by id of the graded a piece was told from
            for key, told in self.rows.users.get(spec, {}).items():
                if told.told is now:
                    continue
                piece, was, ref = told.piece, told.graded, told.ref
                plan = plans.get(id(was))
                if plan is None:
                    plan = plans[id(was)] = (was, told_plan(graded, was))
                findings = told_by(plan[1], ref, piece.findings)
                if told.told[1] == predicted:  # the predicted message: the row and wide lines the same
                    found[key] = told.piece = _Piece(findings, piece.row, piece.text, piece.wide)
                else:
                    pod, message, text = told.pod, told.message, piece.text
                    found[key] = told.piece = _Piece(
                        findings,
                        pending.pod_row(pod, message, predicted, ref),
                        text,
                        pending.pod_wide(pod, message, predicted, told.hints, text, ref),
                    )
                told.told, told.graded = now, graded
                changed = True
        return changed

    def _grade(self, found: Sequence[Finding]) -> list[Finding]:
        return graded(self.check, found, self.table)

    def result(self, fleet: Fleet, opts: CheckOptions) -> Result:
        if self.deadline is not None and opts.now >= self.deadline:
            self.changed = True  # a NodeClaim in flight passed its grace: the autoscaler's verdicts change
        if self.events_deadline is not None and opts.now >= self.events_deadline:
            self.everything = True  # an autoscaler's Event aged past its window: the verdicts it made change
        before = self._cells(fleet)
        judged_keys, earlier = self._scope(fleet, before)
        moved = self.rows.settled()
        retell = not self.everything and bool(moved)
        self.everything, self.dirty = False, set()
        if judged_keys:
            self._judge(judged_keys, fleet, opts)
        now = {k: p for k in judged_keys if (p := self.found.get(k)) is not None}
        if now.keys() != earlier.keys():
            self.finished = self.listed = None  # a piece came or went
        elif any(p is not earlier[k] for k, p in now.items()):
            self.finished = None  # a piece made again
        if retell and self._retell(moved):
            self.finished = None
        self.rows.prune()
        if self.finished is None:
            self.finished = self._finish(fleet, opts)
        nodepools = fleet.state.karpenter.nodepools
        self.deadline = autoscale.coming_deadline(fleet.state, opts.now) if nodepools else None
        self.events_deadline = autoscaler_events.events_deadline(fleet.state, opts.now)
        return self.finished

    def _cells(self, fleet: Fleet) -> dict[str, NodeCapacity | None]:
        """What is free on each changed node made again, and each kept row's cell of those nodes (no other
        cell); the capacities before of the nodes whose bound pods' use changed."""
        if not self.started:
            self.started = True
            self.unbound = {k for k, p in fleet.pods.items() if _unbound(p)}
            self.capacities, self.capacities_dirty, self.use_nodes = fleet.state.capacities(), set(), set()
        before = {n: self.capacities.get(n) for n in self.use_nodes}
        self.columns.before(self.capacities)
        changed = self.capacities_dirty  # nodes changed, come, gone, or what their pods take changed
        self._refresh_capacities(fleet)
        self.use_nodes = set()
        for name in changed:
            node, cap = fleet.nodes.get(name), self.capacities.get(name)
            self.rows.node(name, node, cap)
            if self.index is not None and not self._keep_index(name, node, cap):
                self.index = None  # made again for the next new row
        return before

    def _keep_index(self, name: str, node: Node | None, cap: NodeCapacity | None) -> bool:
        """Node ``name`` (now ``node``, ``None``: gone, with ``cap``) patched into the kept index, in the state's
        order (by name); whether the index holds (else it must be made again: too many groups left empty)."""
        assert self.index is not None
        key = None if cap is None else self._cap_key(name, cap)
        return placement.keep_index(self.index, name, node, cap, key)

    def _cap_key(self, name: str, cap: NodeCapacity) -> Any:
        """Node ``name``'s ``cap.key()``, kept, and one object for every node whose key is equal."""
        key = self.cap_keys.get(name)
        if key is None:
            made, shared = cap.key(), self.cap_shared
            if len(shared) > 2 * len(self.cap_keys) + 1024:
                shared.clear()
            key = self.cap_keys[name] = shared.setdefault(made, made)
        return key

    def _scope(
        self, fleet: Fleet, before: Mapping[str, NodeCapacity | None]
    ) -> tuple[set[ObjectKey], dict[ObjectKey, _Piece]]:
        """The Pending pods to judge again (their pieces dropped), and the pieces they had."""
        # a pod told by a row needs no column of its own: its row's cells of the changed nodes are new (_cells),
        # and its piece is told again from the row (_retell) if the row's told changed
        unrowed = self.unbound - self.row_of.keys()
        if self.changed and autoscale.autoscale_applies(fleet.state):
            self.everything = True  # the autoscaler's verdict reads every node's pool and every NodeClaim
        self.changed = False
        if self.joined and not self.everything:
            # a node that came or went is a cell in each row, and counts in every other pod's verdicts;
            # which pods are GPU pods may change with it, and NFD's hints read every node's labels
            nfd = fleet.state.nfd.rules or fleet.state.nfd.nodefeatures
            if nfd or (self.gpu is not None and self.gpu_was is not None and self.gpu.view() != self.gpu_was):
                self.everything = True
            else:
                self.dirty |= unrowed
        self.joined, self.gpu_was = False, None
        if not self.everything:
            column = self.columns.flipped(fleet.pods, unrowed, fleet.nodes, self.capacities, fleet.state)
            if column is None:
                self.everything = True
            else:
                self.dirty |= column
        self.columns.clear()
        if self.recount:
            self.finished = self.listed = None
            self.recount = False
        if self.everything:  # which pods are GPU pods may have changed (columns: a node's GPU view, or none)
            self.caveated = None
            earlier, self.found, self.row_of = self.found, {}, {}
            self.told_of = {k: v for k, v in self.told_of.items() if k in self.unbound}
            self.rows.clear()
            return set(self.unbound), earlier
        self.dirty |= self._flipped(before, unrowed, fleet)
        if self.dirty:
            self.caveated = None
        earlier = {}
        for key in self.dirty:
            if (piece := self.found.pop(key, None)) is not None:
                earlier[key] = piece
            if key not in self.unbound:
                self.told_of.pop(key, None)
            spec = self.row_of.pop(key, None)
            if spec is not None:
                self.rows.disown(spec, key)
        return self.dirty & self.unbound, earlier

    def _judge(self, keys: Collection[ObjectKey], fleet: Fleet, opts: CheckOptions) -> None:
        """The pieces of the Pending pods ``keys``: from their spec's rows, or judged on every node."""
        rowed: list[ObjectKey] = []
        rest: list[ObjectKey] = []
        applies = autoscale.autoscale_applies(fleet.state)
        for k in sorted(keys, key=fleet.order):
            (rowed if self._rowed(fleet.pods[k], fleet.state, opts, applies) else rest).append(k)
        self._from_rows(rowed, fleet, opts)
        if rest:
            pods = tuple(fleet.pods[k] for k in rest)
            by_ref = {p.ref: k for p, k in zip(pods, rest, strict=True)}
            for ref, piece in _pieces(KnownCapacities.of(fleet.state, pods, self.capacities), opts).items():
                graded_piece = piece._replace(findings=tuple(graded(self.check, piece.findings, self.table)))
                self.found[by_ref[ref]] = graded_piece

    @staticmethod
    def _rowed(pod: Pod, state: ClusterState, opts: CheckOptions, autoscaled: bool) -> bool:
        """Whether ``pod``'s piece is told by its spec's kept row (not with claims, not one finding per node, not
        where NodePools are: the autoscaler's verdict comes with ``pending_result``)."""
        return not opts.per_node and not pending.with_claims(pod, state) and not autoscaled

    def _from_rows(self, keys: list[ObjectKey], fleet: Fleet, opts: CheckOptions) -> None:
        """The pieces of the Pending pods ``keys`` (in order), each told by its spec's row: the pods
        ``pending_result`` lists (GPU pods unless ``--all-pods``, in the namespace) get one."""
        if not keys:
            return
        state, ns = fleet.state, opts.namespace
        if self.gpu is None and not opts.all_pods:
            self.gpu = pending.GpuPods(fleet.nodes.values(), state.dra.extended)  # a live view: put() keeps it
        gpu = None if opts.all_pods else self.gpu

        def whole() -> placement.NodeIndex:
            if self.index is None:
                for name, cap in self.capacities.items():
                    self._cap_key(name, cap)
                self.index = placement.NodeIndex(state.nodes, self.capacities, self.cap_keys)
            return self.index

        memo: dict[Any, list[str]] = {}
        for key in keys:
            pod = fleet.pods[key]
            if (ns and pod.namespace != ns) or (gpu is not None and pod not in gpu):
                continue
            spec = pending.spec_key(pod)
            if self.names is None:
                self.names = tuple(fleet.names)
            row = self.rows.row(spec, pod, self.names, self.capacities, whole)
            told = row.told()
            kept = self.told_of.get(key)
            if kept is not None and kept.pod is pod and kept.told is told:
                self.found[key] = kept.piece
            else:
                message = pod.condition_message("PodScheduled")
                hints = pending.nfd_hints(state, opts.nfd_config, pod, memo)
                before = (kept.graded, kept.piece.findings) if kept is not None else None  # the same pod's, by key
                self.found[key] = _Piece(
                    row.findings(pod, self._grade, before),
                    pending.pod_row(pod, message, told[1]),
                    pending.pod_text(pod, message),
                    pending.pod_wide(pod, message, told[1], hints),
                )
                kept = self.told_of[key] = _Told(pod, told, self.found[key], message, hints, row.graded(self._grade))
            self.row_of[key] = spec
            self.rows.own(spec, key, kept)  # its row tells it again from the record (_retell)

    def caveats(self, fleet: Fleet, opts: CheckOptions) -> tuple[str, ...]:
        """The check's caveats from the Pending pods kept (the evaluator asks after :meth:`result`)."""
        if self.caveated is None:
            self.caveated = _unchecked_claims(fleet.state.kinds, (fleet.pods[k] for k in self.unbound))
        return self.caveated

    def _finish(self, fleet: Fleet, opts: CheckOptions) -> Result:
        if self.listed is None:
            others = 0
            if not opts.all_pods:
                ns = opts.namespace
                others = sum(1 for k in self.unbound if not ns or fleet.pods[k].namespace == ns) - len(self.found)
            self.listed = (sorted(self.found, key=fleet.order), others)  # a pod's place never moves (Fleet.order)
        keys, others = self.listed
        pieces = list(map(self.found.__getitem__, keys))
        counts = {"pods": len(pieces), **({"other_pending": others} if others else {})}
        notes = {"other Pending pod(s), not GPU pods (--all-pods lists them)": others} if others else {}
        # each field of every piece, in C (_Piece is a tuple): findings, row, text, wide
        section = Section(
            "pods",
            tuple(map(_ROW, pieces)),
            tuple(map(_TEXT, pieces)),
            tuple(chain.from_iterable(map(_WIDE, pieces))),
        )
        findings = tuple(chain.from_iterable(map(_FINDINGS, pieces)))
        return Result("pending", findings, (section,), counts=counts, notes=notes, graded=True)


CHECK: Check = Check(
    "pending",
    ("Node", "Pod", *DRA_KINDS, *NFD_KINDS, "NodePool", "NodeClaim", *AUTOSCALER_KINDS),
    ("Node", "Pod"),
    _run,
    "why each Pending pod fits no node",
    reasons=lambda: {**placement.REASONS, **pending.REASONS, **autoscale.REASONS},
    caveats=_caveats,
    pieces=_Pieces,
)
