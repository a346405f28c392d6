"""IncrementalEvaluator: the records, a few indexes every check may read, and each check's keeper of pieces.

It knows no check by name: every change goes to every check's keeper
(:meth:`gpulabel.checks.engine.definition.Pieces.touched`), and each check's result is
what its keeper answers (:meth:`~gpulabel.checks.engine.definition.Pieces.result`),
with the check's own caveats, in the registry's order.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from gpulabel.checks.engine.definition import Check, CheckOptions, Fleet, Pieces, caveated, skip_reason
from gpulabel.checks.engine.incremental.nodeparts import NodeParts
from gpulabel.checks.engine.judging import Accepted, Assessment, KeptJudgment, ObjectKey
from gpulabel.k8s.dra.plugin import DraState
from gpulabel.k8s.karpenter.objects import KarpenterState
from gpulabel.k8s.nfd.objects import NfdState
from gpulabel.model.chunks import SIZE, Chunks
from gpulabel.model.cluster import KIND, ClusterState, Node, Pod
from gpulabel.model.findings import Result
from gpulabel.model.kueue import KueueState

__all__ = ["IncrementalEvaluator"]


class IncrementalEvaluator:
    """An :class:`~gpulabel.checks.engine.judging.Evaluator` that reruns only what the events since the last
    :meth:`assess` touched, and answers exactly what
    :class:`~gpulabel.checks.engine.assessment.FullEvaluator` answers."""

    def __init__(self, opts: CheckOptions, accepted: Accepted | None = None, source: str = "") -> None:
        self.opts = opts
        self.accepted = accepted or Accepted()
        self.source = source
        self.records: dict[str, dict[ObjectKey, Any]] = {}  # as FullEvaluator keeps them: the same order
        # indexes
        self._nodes: dict[str, Node] = {}
        self._names: list[str] = []  # sorted: the state's node order
        # the state's nodes in that order, in parts: a node's change remakes the part it falls in (nodeparts.py)
        self._node_parts = NodeParts(SIZE)
        self._seq: dict[ObjectKey, int] = {}  # a pod's place in the pod store's order
        self._next = 0
        self._bound: dict[str, dict[ObjectKey, None]] = {}  # node -> the pods bound to it
        self._dra: DraState | None = None
        self._nfd: NfdState | None = None
        self._kueue: KueueState | None = None
        self._karpenter: KarpenterState | None = None
        self._keepers: dict[str, Pieces] = {}  # each check's pieces; none yet: made whole at the next assess
        self._judgment = KeptJudgment(self.accepted)  # each check's judged result, each node's root cause
        self._changed: set[str] = set()  # the nodes whose record changed since the last assess
        # DaemonSets', ClusterPolicies', Events' ... tuple (by the state's field) until a kind of it changes
        self._tuples: dict[str, tuple[Any, ...]] = {}
        # the pods in parts of chunks.SIZE by their place (_seq), each part's tuple until one of its pods changes:
        # the state's pods are those tuples (model/chunks.py), so a pod's change remakes one part, not every pod's
        self._parts: list[dict[ObjectKey, Pod]] = []
        self._made: list[tuple[Pod, ...] | None] = []
        self._pods: Chunks[Pod] | None = None

    # -- the Evaluator protocol ---------------------------------------------------------------------------------

    def reset(self, kind: str, records: Iterable[tuple[ObjectKey, Any]]) -> None:
        if kind not in KIND:
            raise KeyError(kind)
        self.records[kind] = dict(records)
        self._reindex(kind)
        self._keepers = {}
        self._judgment = KeptJudgment(self.accepted)
        self._tuples.pop(KIND[kind].field, None)

    def apply(self, kind: str, key: ObjectKey, record: Any | None) -> bool:
        if kind not in KIND:
            raise KeyError(kind)
        known = kind in self.records
        store = self.records.setdefault(kind, {})
        old = store.get(key)
        if record is None:
            store.pop(key, None)
        else:
            store[key] = record
        self._tuples.pop(KIND[kind].field, None)
        if not known:  # a kind new to the state: what is skipped and every caveat may change
            self._reindex(kind)
            self._keepers = {}
            return True
        if (old is None and record is None) or (old is not None and old == record):
            return False
        if kind == "Node":
            self._node_changed(old, record)
        elif kind == "Pod":
            self._pod_changed(key, old, record)
        elif KIND[kind].field == "dra":
            self._dra = None
        elif KIND[kind].field == "nfd":
            self._nfd = None
        elif KIND[kind].field == "kueue":
            self._kueue = None
        elif KIND[kind].field == "karpenter":
            self._karpenter = None
        for keeper in self._keepers.values():
            keeper.touched(kind, key, old, record)
        return True

    def assess(self, at: float) -> Assessment:
        """Ages (stuck states) are measured at ``at``; the pieces that read the clock are remade every time."""
        opts = replace(self.opts, now=datetime.fromtimestamp(at, UTC))
        state = self._state()
        fleet = Fleet(state, self._nodes, self._names, self.records.get("Pod", {}), self._seq.__getitem__, self._on)
        parts = [self._part(c, fleet, opts) for c in opts.registry]
        changed, self._changed = self._changed, set()
        judged_result, causes = self._judgment.judged(parts, self._nodes, changed)
        return Assessment(judged_result, causes, state, at)

    def _part(self, check: Check, fleet: Fleet, opts: CheckOptions) -> Result:
        why = skip_reason(check, fleet.state)
        if why:
            self._keepers.pop(check.name, None)  # made whole again when it runs
            return Result(check.name, skipped=why)
        keeper = self._keepers.get(check.name)
        if keeper is None:
            keeper = self._keepers[check.name] = check.keeper()
        result = keeper.result(fleet, opts)
        kept = getattr(keeper, "caveats", None)  # the check's caveats from what its keeper keeps (the same rule)
        if kept is None:
            return caveated(result, check, fleet.state, opts)
        caveats = kept(fleet, opts)
        return replace(result, caveats=caveats) if caveats else result

    # -- indexes --------------------------------------------------------------------------------------------------

    def _on(self, name: str) -> list[ObjectKey]:
        """The pods bound to node ``name``, in the state's order."""
        return sorted(self._bound.get(name, ()), key=self._seq.__getitem__)

    def _reindex(self, kind: str) -> None:
        store = self.records[kind]
        if kind == "Node":
            self._nodes = {node.name: node for node in store.values()}
            self._names = sorted(self._nodes)
            self._node_parts = NodeParts(SIZE)
            self._node_parts.fill(self._nodes[n] for n in self._names)
        elif kind == "Pod":
            self._seq = {key: i for i, key in enumerate(store)}
            self._next = len(store)
            self._parts, self._made, self._pods = [], [], None
            for i, (key, pod) in enumerate(store.items()):
                self._part_of(i)[key] = pod
            self._bound = {}
            for key, pod in store.items():
                if pod.node_name:
                    self._bound.setdefault(pod.node_name, {})[key] = None
        elif KIND[kind].field == "dra":
            self._dra = None
        elif KIND[kind].field == "nfd":
            self._nfd = None
        elif KIND[kind].field == "kueue":
            self._kueue = None
        elif KIND[kind].field == "karpenter":
            self._karpenter = None

    def _node_changed(self, old: Node | None, new: Node | None) -> None:
        names, parts = self._names, self._node_parts
        self._changed.update(n.name for n in (old, new) if n is not None)
        if old is not None:
            del self._nodes[old.name]
            if new is None or new.name != old.name:
                del names[bisect.bisect_left(names, old.name)]
                parts.drop(old.name)
        if new is not None:
            if old is None or new.name != old.name:
                bisect.insort(names, new.name)
            parts.put(new)
            self._nodes[new.name] = new

    def _part_of(self, seq: int) -> dict[ObjectKey, Pod]:
        """The part of the pods holding place ``seq`` (made if new), its tuple to be made again."""
        i = seq // SIZE
        while len(self._parts) <= i:
            self._parts.append({})
            self._made.append(None)
        self._made[i] = self._pods = None
        return self._parts[i]

    def _pod_changed(self, key: ObjectKey, old: Pod | None, new: Pod | None) -> None:
        if old is None:
            self._seq[key] = self._next
            self._next += 1
        elif old.node_name:
            self._bound[old.node_name].pop(key, None)
        part = self._part_of(self._seq[key])
        if new is None:
            del self._seq[key], part[key]
        else:
            part[key] = new
            if new.node_name:
                self._bound.setdefault(new.node_name, {})[key] = None

    def _pod_chunks(self) -> Chunks[Pod]:
        """The state's pods: the parts by place, each made again only if a pod in it changed."""
        if self._pods is None:
            made: list[tuple[Pod, ...]] = []
            for i, part in enumerate(self._parts):
                kept = self._made[i]
                if kept is None:
                    kept = self._made[i] = tuple(part.values())
                made.append(kept)
            self._pods = Chunks(made)
        return self._pods

    def _state(self) -> ClusterState:
        """The records as one ClusterState, equal to FullEvaluator's (built without sorting every node again)."""

        def records(field: str) -> list[Any]:
            return [r for k, store in self.records.items() if KIND[k].field == field for r in store.values()]

        if self._dra is None:
            self._dra = DraState.from_objects(records("dra"))
        if self._nfd is None:
            self._nfd = NfdState.of_records(records("nfd"))
        if self._kueue is None:
            self._kueue = KueueState.of_records(records("kueue"))
        if self._karpenter is None:
            self._karpenter = KarpenterState.of_records(records("karpenter"))
        tuples = self._tuples  # by the state's field: several rows (the Events read in part) fill one
        for name in (
            "daemonsets",
            "cluster_policies",
            "runtime_classes",
            "events",
            "autoscaler",
            "nvidia_drivers",
            "gpu_clusters",
        ):
            if name not in tuples:
                tuples[name] = tuple(records(name))
        return ClusterState(
            nodes=self._node_parts.chunks(),
            pods=self._pod_chunks(),
            daemonsets=tuples["daemonsets"],
            cluster_policies=tuples["cluster_policies"],
            runtime_classes=tuples["runtime_classes"],
            nvidia_drivers=tuple(sorted(tuples["nvidia_drivers"], key=lambda d: d.name)),
            gpu_clusters=tuple(sorted(tuples["gpu_clusters"], key=lambda g: g.name)),
            events=tuples["events"],
            autoscaler=tuples["autoscaler"],
            source=self.source,
            kinds=frozenset(KIND[k].object_kind for k in self.records),
            dra=self._dra,
            nfd=self._nfd,
            kueue=self._kueue,
            karpenter=self._karpenter,
        )
