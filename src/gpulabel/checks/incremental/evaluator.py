"""IncrementalEvaluator: the records, what each event touched, and the pieces of every check's result."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from gpulabel.checks.assessment import Accepted, Assessment, ObjectKey, judged
from gpulabel.checks.health import DEFAULT_HEALTH_TAINTS, claims_by_node, condition_table, node_health
from gpulabel.checks.incremental.columns import Columns
from gpulabel.checks.incremental.pieces import (
    NODE_CHECKS,
    Accounts,
    KnownCapacities,
    PodPiece,
    hazard_pieces,
    node_capacity,
    node_pieces,
    operand_pieces,
    operands_section,
    pending_pieces,
    placement_view,
    timed,
)
from gpulabel.checks.incremental.scope import flips
from gpulabel.checks.mig import cluster_mig_strategy
from gpulabel.checks.operands import (
    disabled_by_cluster_policy,
    operand_daemonsets,
    operand_of_daemonset,
    target_node,
)
from gpulabel.checks.registry import (
    Check,
    CheckOptions,
    mig_caveats,
    operands_caveats,
    pending_caveats,
    skip_reason,
    stuck_detection_caveats,
)
from gpulabel.checks.verdict import grade
from gpulabel.k8s.dra.plugin import DraState
from gpulabel.k8s.nfd.objects import NfdState
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import KIND, ClusterState, DaemonSet, Node, NodeCapacity, Pod
from gpulabel.model.findings import Finding, Result, Section

__all__ = ["IncrementalEvaluator"]

_SPECIAL = frozenset({*NODE_CHECKS, "operands", "pending", "hazards", "health"})
_WHOLE = {"nfd": frozenset({"Node", "NodeFeature", "NodeFeatureRule"})}  # rerun whole when these kinds change


def _daemon(pod: Pod) -> bool:
    return any(kind == "DaemonSet" for kind, _ in pod.owners)


def _unbound(pod: Pod | None) -> bool:
    return pod is not None and pod.phase == "Pending" and not pod.node_name


def _reported_on(pod: Pod | None) -> tuple[str, ...]:
    """The node whose health findings a pod's device reports (allocatedResourcesStatus) are part of."""
    return (pod.node_name,) if pod is not None and pod.device_health and pod.node_name else ()


def _use(pod: Pod | None) -> tuple[Any, ...] | None:
    """What a pod takes of its node as pending's placement counts it (bound and not terminal)."""
    if pod is None or not pod.node_name or pod.terminal:
        return None
    return (pod.node_name, pod.requests, pod.priority)


def _ds_view(ds: DaemonSet) -> tuple[Any, ...]:
    """What the operand findings read of a DaemonSet (its status only feeds the daemonsets table)."""
    return (ds.namespace, ds.name, ds.uid, ds.template_spec, ds.selector)


def _policy_view(policy: Mapping[str, Any]) -> Any:
    """What the checks read of a ClusterPolicy: its spec (the operator rewrites its status as operands change)."""
    return policy.get("spec")


class IncrementalEvaluator:
    """An :class:`~gpulabel.checks.assessment.Evaluator` that reruns only what the events since the last
    :meth:`assess` touched, and answers exactly what :class:`~gpulabel.checks.assessment.FullEvaluator` answers."""

    def __init__(self, opts: CheckOptions, accepted: Accepted | None = None, source: str = "") -> None:
        self.opts = opts
        self.accepted = accepted or Accepted()
        self.source = source
        self.records: dict[str, dict[ObjectKey, Any]] = {}  # as FullEvaluator keeps them: the same order
        # indexes
        self._nodes: dict[str, Node] = {}
        self._names: list[str] = []  # sorted: the state's node order
        self._seq: dict[ObjectKey, int] = {}  # a pod's place in the pod store's order
        self._next = 0
        self._aimed: dict[str, dict[ObjectKey, None]] = {}  # node -> the pods bound (or pinned) to it
        self._pending_keys: set[ObjectKey] = set()  # unbound Pending pods
        self._deploy_nodes: set[str] = set()  # nodes with a deploy label (the GPU Operator manages the cluster)
        self._timed: set[str] = set()  # nodes whose upgrade/mig findings read the time
        self._dra: DraState | None = None
        self._nfd: NfdState | None = None
        # pieces
        self._found: dict[str, dict[str, list[Finding]]] = {c: {} for c in (*NODE_CHECKS, "operands", "standalone")}
        self._accounts: Accounts | None = None
        self._operand_daemonsets: tuple[dict[str, list[DaemonSet]], list[DaemonSet]] | None = None
        self._pending: dict[ObjectKey, PodPiece] = {}
        self._capacities: dict[str, NodeCapacity] = {}  # as ClusterState.capacities() says, node by node
        self._capacities_dirty: set[str] = set()
        self._use_nodes: set[str] = set()  # nodes whose bound pods' use changed: pending re-judges what may flip
        self._columns = Columns()  # scale2: nodes changed in place: pending re-judges what may differ on them
        self._hazards: dict[ObjectKey, list[Finding]] = {}
        # health, per node: the node, the pods bound to it that report a device not Healthy, the DRA claims
        self._health: dict[str, list[Finding]] = {}
        self._health_dirty: set[str] = set()
        self._health_all = True
        self._health_timed: set[str] = set()  # nodes with a health agent's condition (its age is read)
        self._whole: dict[str, Result] = {}
        self._context: tuple[Any, ...] | None = None
        self._tables: dict[str, Any] = {}  # each check's reason table, for grading the pieces as they are made
        # what the events since the last assess touched
        self._everything = True
        self._all_nodes = True
        self._dirty_nodes: set[str] = set()
        self._pending_all = True
        self._dirty_pending: set[ObjectKey] = set()
        self._hazards_all = True
        self._dirty_hazards: set[ObjectKey] = set()
        self._changed_kinds: set[str] = set()

    # -- the Evaluator protocol ---------------------------------------------------------------------------------

    def reset(self, kind: str, records: Iterable[tuple[ObjectKey, Any]]) -> None:
        if kind not in KIND:
            raise KeyError(kind)
        self.records[kind] = dict(records)
        self._reindex(kind)
        self._everything = True

    def apply(self, kind: str, key: ObjectKey, record: Any | None) -> None:
        if kind not in KIND:
            raise KeyError(kind)
        known = kind in self.records
        store = self.records.setdefault(kind, {})
        old = store.get(key)
        if record is None:
            store.pop(key, None)
        else:
            store[key] = record
        if not known:  # a kind new to the state: what is skipped and every caveat may change
            self._reindex(kind)
            self._everything = True
            return
        if (old is None and record is None) or (old is not None and old == record):
            return
        self._changed_kinds.add(kind)
        field = KIND[kind].field
        if kind == "Node":
            self._node_changed(old, record)
        elif kind == "Pod":
            self._pod_changed(key, old, record)
        elif kind == "DaemonSet":
            if old is None or record is None or _ds_view(old) != _ds_view(record):
                self._all_nodes = True
        elif kind == "ClusterPolicy":
            if old is None or record is None or _policy_view(old) != _policy_view(record):
                self._all_nodes = True
        elif field == "dra":
            self._dra = None
            self._pending_all = True
            self._health_all = True  # claims' device conditions
        elif field == "nfd":
            self._nfd = None
            self._pending_all = True

    def assess(self, at: float) -> Assessment:
        """Ages (stuck states) are measured at ``at``; the time-dependent pieces are rerun every time."""
        opts = replace(self.opts, now=datetime.fromtimestamp(at, UTC))
        state = self._state()
        self._refresh(state, opts)
        parts = tuple(self._part(c, state, opts) for c in opts.registry)
        result = Result("check", tuple(f for p in parts for f in p.findings), parts=parts, graded=True)
        judged_result, causes = judged(result, state, self.accepted)
        return Assessment(judged_result, causes, state, at)

    # -- indexes --------------------------------------------------------------------------------------------------

    def _reindex(self, kind: str) -> None:
        store = self.records[kind]
        if kind == "Node":
            self._nodes = {}
            self._deploy_nodes, self._timed = set(), set()
            for node in store.values():
                self._index_node(node)
            self._names = sorted(self._nodes)
        elif kind == "Pod":
            self._seq = {key: i for i, key in enumerate(store)}
            self._next = len(store)
            self._aimed, self._pending_keys = {}, set()
            for key, pod in store.items():
                self._aimed.setdefault(target_node(pod), {})[key] = None
                if _unbound(pod):
                    self._pending_keys.add(key)
        elif KIND[kind].field == "dra":
            self._dra = None
        elif KIND[kind].field == "nfd":
            self._nfd = None

    def _index_node(self, node: Node) -> None:
        self._nodes[node.name] = node
        if any(k.startswith(V.DEPLOY_PREFIX) for k in node.labels):
            self._deploy_nodes.add(node.name)
        if timed(node):
            self._timed.add(node.name)
        if node.other_conditions:
            self._health_timed.add(node.name)

    def _unindex_node(self, name: str) -> None:
        del self._nodes[name]
        self._deploy_nodes.discard(name)
        self._timed.discard(name)
        self._health_timed.discard(name)

    def _node_changed(self, old: Node | None, new: Node | None) -> None:
        self._health_dirty.update(n.name for n in (old, new) if n is not None)
        if old is not None:
            self._unindex_node(old.name)
            self._dirty_nodes.add(old.name)
            if new is None or new.name != old.name:
                del self._names[bisect.bisect_left(self._names, old.name)]
        if new is not None:
            if old is None or new.name != old.name:
                bisect.insort(self._names, new.name)
            self._index_node(new)
            self._dirty_nodes.add(new.name)
        if old is None or new is None or placement_view(old) != placement_view(new):
            if old is not None and new is not None and old.name == new.name:  # scale2: the node's column only
                self._columns.changed(old)
            else:
                self._pending_all = True  # every Pending pod is judged on every node
            self._capacities_dirty.update(n.name for n in (old, new) if n is not None)
            for node in (old, new):
                if node is not None:
                    self._dirty_hazards.update(self._aimed.get(node.name, ()))
            # a pod whose node no longer matches counts the other nodes that would take it
            self._dirty_hazards.update(
                k for k, fs in self._hazards.items() if any(f.fits_elsewhere is not None for f in fs)
            )

    def _pod_changed(self, key: ObjectKey, old: Pod | None, new: Pod | None) -> None:
        if old is None:
            self._seq[key] = self._next
            self._next += 1
        else:
            self._aimed[target_node(old)].pop(key, None)
        if new is None:
            del self._seq[key]
        else:
            self._aimed.setdefault(target_node(new), {})[key] = None
        for pod in (old, new):
            self._health_dirty.update(_reported_on(pod))  # the devices it reports on its node
        for pod in (old, new):
            if pod is not None and _daemon(pod) and target_node(pod):
                self._dirty_nodes.add(target_node(pod))  # the operands of the node it is aimed at
        if _unbound(old) or _unbound(new):
            self._dirty_pending.add(key)
        if _unbound(new):
            self._pending_keys.add(key)
        else:
            self._pending_keys.discard(key)
        if _use(old) != _use(new):  # what is free on its node(s) changed: only pods whose verdict may flip there
            names = {p.node_name for p in (old, new) if p is not None and p.node_name}
            self._capacities_dirty.update(names)
            self._use_nodes.update(names)
        if (old is not None and old.node_name) or (new is not None and new.node_name):
            self._dirty_hazards.add(key)

    def _state(self) -> ClusterState:
        """The records as one ClusterState, equal to FullEvaluator's (built without sorting every node again)."""

        def records(field: str) -> list[Any]:
            return [r for k, store in self.records.items() if KIND[k].field == field for r in store.values()]

        if self._dra is None:
            self._dra = DraState.from_objects(records("dra"))
        if self._nfd is None:
            self._nfd = NfdState.of_records(records("nfd"))
        return ClusterState(
            nodes=tuple(self._nodes[n] for n in self._names),
            pods=tuple(self.records.get("Pod", {}).values()),
            daemonsets=tuple(self.records.get("DaemonSet", {}).values()),
            cluster_policies=tuple(self.records.get("ClusterPolicy", {}).values()),
            source=self.source,
            kinds=frozenset(self.records),
            dra=self._dra,
            nfd=self._nfd,
        )

    # -- rerunning the pieces --------------------------------------------------------------------------------------

    def _refresh(self, state: ClusterState, opts: CheckOptions) -> None:
        policies = state.cluster_policies
        off = frozenset(set(opts.disabled) | disabled_by_cluster_policy(policies))
        operator = bool(policies) or bool(self._deploy_nodes)
        strategy = cluster_mig_strategy(policies)
        if (off, operator, strategy) != self._context:
            self._context = (off, operator, strategy)
            self._all_nodes = True
        if self._everything:
            self._all_nodes = self._pending_all = self._hazards_all = True
            self._changed_kinds = set(KIND)
        everything = self._all_nodes
        if everything:
            for c in NODE_CHECKS:
                self._found[c] = {}
        redo = set(self._names) if everything else self._dirty_nodes | self._timed
        for name in redo:
            for c in NODE_CHECKS:
                self._found[c].pop(name, None)
            node = self._nodes.get(name)
            if node is not None:
                for c, found in node_pieces(node, opts, opts.now, strategy, off, operator).items():
                    if found:
                        self._found[c][name] = self._graded(c, found, opts)
        self._refresh_operands(state, opts, everything)
        self._refresh_pending(state, opts)
        self._refresh_hazards(state, opts)
        self._refresh_health(state, opts, everything)
        for name, kinds in _WHOLE.items():
            if kinds & self._changed_kinds:
                self._whole.pop(name, None)
        self._everything = self._all_nodes = self._pending_all = self._hazards_all = False
        self._dirty_nodes, self._dirty_pending, self._dirty_hazards, self._changed_kinds = set(), set(), set(), set()

    def _refresh_health(self, state: ClusterState, opts: CheckOptions, everything: bool) -> None:
        if everything or self._health_all:
            self._health, redo = {}, set(self._names)
        else:
            redo = self._health_dirty | self._health_timed
        self._health_all, self._health_dirty = False, set()
        if not redo:
            return
        store = self.records.get("Pod", {})
        claims = claims_by_node(state)
        table = condition_table(opts.health_conditions)
        for name in redo:
            self._health.pop(name, None)
            node = self._nodes.get(name)
            if node is None:
                continue
            keys = sorted(self._aimed.get(name, ()), key=self._seq.__getitem__)
            pods = [p for p in (store[k] for k in keys) if p.device_health and p.node_name == name and not p.terminal]
            taints = (*DEFAULT_HEALTH_TAINTS, *opts.health_taints)
            found = node_health(node, pods, claims.get(name, ()), table, taints, opts.now, opts.stuck_after)
            if found:
                self._health[name] = self._graded("health", found, opts)

    def _refresh_operands(self, state: ClusterState, opts: CheckOptions, everything: bool) -> None:
        if self._operand_daemonsets is None or "DaemonSet" in self._changed_kinds:
            gated = [ds for ds in state.daemonsets if operand_of_daemonset(ds)]
            self._operand_daemonsets = (operand_daemonsets(state, opts.operator_namespace), gated)
        by_operand = self._operand_daemonsets[0]
        if everything or self._accounts is None:
            names: list[str] = list(self._names)
            pods: tuple[Pod, ...] | list[Pod] = state.pods
            self._found["operands"], self._found["standalone"] = {}, {}
            self._accounts = Accounts(by_operand)
        else:
            names = sorted(self._dirty_nodes)
            keys = sorted({k for n in names for k in self._aimed.get(n, ())}, key=self._seq.__getitem__)
            store = self.records.get("Pod", {})
            pods = [p for p in (store[k] for k in keys) if _daemon(p)]
            self._accounts.by_operand = by_operand  # the same DaemonSets (else everything reruns), their status now
        if not names:
            return
        present = [self._nodes[n] for n in names if n in self._nodes]
        operands, standalone = operand_pieces(present, pods, state, opts, self._operand_daemonsets[1])
        for name in names:
            for check, found in (("operands", operands), ("standalone", standalone)):
                self._found[check].pop(name, None)
                if found.get(name):
                    self._found[check][name] = self._graded("operands", found[name], opts)
            self._accounts.put(name, self._nodes.get(name))

    def _refresh_capacities(self, state: ClusterState) -> None:
        store = self.records.get("Pod", {})
        if self._everything:
            self._capacities = state.capacities()
        else:
            for name in self._capacities_dirty:
                self._capacities.pop(name, None)
                node = self._nodes.get(name)
                if node is None:
                    continue
                keys = sorted(self._aimed.get(name, ()), key=self._seq.__getitem__)
                pods = [p for p in (store[k] for k in keys) if p.node_name == name and not p.terminal]
                cap = node_capacity(node, pods)
                if cap is not None:
                    self._capacities[name] = cap
        self._capacities_dirty = set()

    def _refresh_pending(self, state: ClusterState, opts: CheckOptions) -> None:
        store = self.records.get("Pod", {})
        before = {n: self._capacities.get(n) for n in self._use_nodes}
        self._columns.before(self._capacities)  # scale2
        self._refresh_capacities(state)
        self._use_nodes = set()
        if not self._pending_all:
            self._dirty_pending |= self._flipped(before, state)
            # scale2: the nodes changed in place re-judge the pods whose verdict on them may differ (columns.py)
            column = self._columns.flipped(store, self._pending_keys, self._nodes, self._capacities, state)
            self._pending_all = column is None
            self._dirty_pending |= column or set()
        self._columns.clear()
        if self._pending_all:
            judged_keys = self._pending_keys
            self._pending = {}
        else:
            for key in self._dirty_pending:
                self._pending.pop(key, None)
            judged_keys = self._dirty_pending & self._pending_keys
        if not judged_keys:
            return  # no Pending pod to judge
        pods = tuple(store[k] for k in sorted(judged_keys, key=self._seq.__getitem__))
        part = KnownCapacities.of(state, pods, self._capacities)
        by_ref = {store[k].ref: k for k in judged_keys}
        for ref, piece in pending_pieces(part, opts).items():
            self._pending[by_ref[ref]] = replace(piece, findings=tuple(self._graded("pending", piece.findings, opts)))

    def _flipped(self, before: Mapping[str, NodeCapacity | None], state: ClusterState) -> set[ObjectKey]:
        """The Pending pods whose verdict may differ on a node whose capacity went from ``before`` to now."""
        changed = [(old, new) for n, old in before.items() if old != (new := self._capacities.get(n))]
        if not changed:
            return set()
        store = self.records.get("Pod", {})
        backed = state.dra.extended
        return {k for k in self._pending_keys if any(flips(store[k], old, new, backed) for old, new in changed)}

    def _refresh_hazards(self, state: ClusterState, opts: CheckOptions) -> None:
        store = self.records.get("Pod", {})
        if self._hazards_all:
            part, keys = state, list(store)
            self._hazards = {}
        else:
            for key in self._dirty_hazards:
                self._hazards.pop(key, None)
            keys = sorted((k for k in self._dirty_hazards if k in store), key=self._seq.__getitem__)
            if not keys:
                return
            part = replace(state, pods=tuple(store[k] for k in keys))
        by_ref = {store[k].ref: k for k in keys}
        for ref, found in hazard_pieces(part, opts).items():
            self._hazards[by_ref[ref]] = self._graded("hazards", found, opts)

    # -- putting each check's result together ---------------------------------------------------------------------

    def _graded(self, check: str, findings: Iterable[Finding], opts: CheckOptions) -> list[Finding]:
        """A piece's findings with their severities, as ``run_check`` grades the check's whole result."""
        table = self._tables.get(check)
        if table is None:
            table = self._tables[check] = opts.registry.named(check).reasons()
        return list(grade(Result(check, tuple(findings)), table).findings)

    def _part(self, check: Check, state: ClusterState, opts: CheckOptions) -> Result:
        why = skip_reason(check, state)
        if why:
            return Result(check.name, skipped=why)
        if check.name in _SPECIAL:  # the pieces are graded already
            return replace(self._raw(check, state, opts), graded=True)
        return grade(self._raw(check, state, opts), check.reasons())

    def _by_node(self, check: str) -> tuple[Finding, ...]:
        found = self._found[check]
        return tuple(f for name in sorted(found) for f in found[name])

    def _raw(self, check: Check, state: ClusterState, opts: CheckOptions) -> Result:
        """The check's result before grading, as its registered ``run`` gives it on the whole state."""
        name = check.name
        if name not in _SPECIAL:
            if name not in _WHOLE:
                return check.run(state, opts)  # a check this evaluator does not know: every time
            if name not in self._whole:
                self._whole[name] = check.run(state, opts)
            return self._whole[name]
        if name in ("audit", "sharing", "capacity"):
            return Result(name, self._by_node(name))
        if name == "upgrade":
            return Result(name, self._by_node(name), caveats=stuck_detection_caveats(state))
        if name == "mig":
            return Result(name, self._by_node(name), caveats=mig_caveats(state))
        if name == "operands":
            return self._operands(state, opts)
        if name == "health":
            return Result(name, tuple(f for n in self._names for f in self._health.get(n, ())))
        if name == "pending":
            return self._pending_result(state, opts)
        found = tuple(f for k in sorted(self._hazards, key=self._seq.__getitem__) for f in self._hazards[k])
        return Result("hazards", found)

    def _operands(self, state: ClusterState, opts: CheckOptions) -> Result:
        assert self._accounts is not None and self._operand_daemonsets is not None
        gated = self._operand_daemonsets[1]
        caveats = operands_caveats(bool(gated), state, opts)
        # by node (the nodes' order), each node's operands then the rest, as the registered check sorts them
        operands, others = self._found["operands"], self._found["standalone"]
        names = sorted({*operands, *others}, key=lambda n: (n not in self._nodes, n))
        findings = tuple(f for n in names for f in (*operands.get(n, ()), *others.get(n, ())))
        return Result("operands", findings, (operands_section(self._accounts),), caveats=caveats)

    def _pending_result(self, state: ClusterState, opts: CheckOptions) -> Result:
        store = self.records.get("Pod", {})
        pieces = [self._pending[k] for k in sorted(self._pending, key=self._seq.__getitem__)]
        others = 0
        if not opts.all_pods:
            ns = opts.namespace
            others = sum(1 for k in self._pending_keys if not ns or store[k].namespace == ns) - len(pieces)
        counts = {"pods": len(pieces), **({"other_pending": others} if others else {})}
        notes = {"other Pending pod(s), not GPU pods (--all-pods lists them)": others} if others else {}
        section = Section(
            "pods",
            tuple(p.row for p in pieces),
            tuple(p.text for p in pieces),
            tuple(line for p in pieces for line in p.wide),
        )
        findings = tuple(f for p in pieces for f in p.findings)
        result = Result("pending", findings, (section,), counts=counts, notes=notes)
        claims = any(store[k].spec.get("resourceClaims") for k in self._pending_keys)
        caveats = pending_caveats(claims, state)
        return replace(result, caveats=caveats) if caveats else result
