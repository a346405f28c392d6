"""The ``operands`` check, defined once: operands missing, not ready, out of order or unexpected, per node.

Its findings (with the standalone device plugins' and the NoExecute taints')
read the node, the DaemonSet pods aimed at it, every DaemonSet and
ClusterPolicy; its ``daemonsets`` table counts over every node
(:class:`Accounts` keeps each node's share, so a node's change costs one node).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gpulabel.checks.engine.definition import Check, CheckOptions, Fleet, ObjectKey, graded
from gpulabel.checks.operands import daemonsets
from gpulabel.checks.operands import rules as operands
from gpulabel.checks.operands.eviction import noexecute_findings
from gpulabel.checks.operands.standalone import standalone_findings
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, DaemonSet, Node, Pod
from gpulabel.model.findings import Cell, Finding, Result, Section
from gpulabel.model.operands import deploy_key, labelled_for

__all__ = ["CHECK", "Accounts"]


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    result = operands.operands_result(state, opts.disabled, opts.operator_namespace)
    gated = [ds for ds in state.daemonsets if daemonsets.operand_of_daemonset(ds)]
    found = [*result.findings, *standalone_findings(state, gated), *noexecute_findings(state, opts.operator_namespace)]
    order = {n.name: i for i, n in enumerate(state.nodes)}
    findings = tuple(sorted(found, key=lambda f: order.get(f.node, len(order))))  # by node, each node's as found
    return replace(result, findings=findings)


def _caveats(state: ClusterState, opts: CheckOptions) -> tuple[str, ...]:
    """With operand DaemonSets but no ClusterPolicy and no --disabled, every operand counts as on."""
    gated = any(daemonsets.operand_of_daemonset(ds) for ds in state.daemonsets)
    if "ClusterPolicy" not in state.kinds and not opts.disabled and gated:
        return ("no ClusterPolicy in the input: every operand counts as enabled (--disabled says otherwise)",)
    return ()


def _daemon(pod: Pod) -> bool:
    return any(kind == "DaemonSet" for kind, _ in pod.owners)


def _deployed(node: Node) -> bool:
    return any(k.startswith(V.DEPLOY_PREFIX) for k in node.labels)


def _owner_uids(pod: Pod) -> tuple[str, ...]:
    return tuple(uid for kind, uid in pod.owners if kind == "DaemonSet")


def _ds_view(ds: DaemonSet) -> tuple[Any, ...]:
    """What the operand findings read of a DaemonSet (its status only feeds the daemonsets table)."""
    return (ds.namespace, ds.name, ds.uid, ds.template_spec, ds.selector)


def _by_node(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in findings:
        out.setdefault(f.node, []).append(f)
    return out


def _node_findings(
    nodes: Sequence[Node], pods: Sequence[Pod], state: ClusterState, opts: CheckOptions, gated: Sequence[DaemonSet]
) -> tuple[dict[str, list[Finding]], dict[str, list[Finding]]]:
    """The findings for ``nodes`` (sorted by name), given the DaemonSet pods aimed at them: ``(operands per
    node, the rest per node)``; every DaemonSet and ClusterPolicy of ``state`` is read; ``gated``: the
    DaemonSets an operand's deploy label gates (the rest may be standalone device plugins)."""
    part = ClusterState(
        nodes=tuple(nodes),
        pods=tuple(pods),
        daemonsets=state.daemonsets,
        cluster_policies=state.cluster_policies,
        source=state.source,
        kinds=state.kinds,
    )
    report = operands.check_operands(part, opts.disabled, opts.operator_namespace)
    # after the standalone plugins' findings, as the full run puts them: the NoExecute taints
    others = (*standalone_findings(part, gated), *noexecute_findings(part, opts.operator_namespace))
    return _by_node(report.findings), _by_node(others)


@dataclass
class Accounts:
    """The ``daemonsets`` table (per operand DaemonSet: the nodes labelled for it, the ones whose taints it
    does not tolerate), kept as each node's share."""

    by_operand: dict[str, list[DaemonSet]]
    labelled: dict[str, int] = field(default_factory=dict)  # operand -> nodes labelled for it
    shares: dict[str, tuple[tuple[str, ...], dict[str, list[str]]]] = field(default_factory=dict)
    reqs: dict[str, Any] = field(default_factory=dict)
    made: Section | None = None  # the section, while no share and no DaemonSet changes
    # DaemonSet ref -> its excluded nodes' names and lines, sorted by name: a node's change moves its own line
    lines: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.reqs = {ds.ref: daemonsets.daemonset_requirements(ds) for dss in self.by_operand.values() for ds in dss}

    def _share(self, node: Node) -> tuple[tuple[str, ...], dict[str, list[str]]]:
        labelled: list[str] = []
        excluded: dict[str, list[str]] = {}
        for name, dss in self.by_operand.items():
            if not labelled_for(name, node.labels):
                continue
            labelled.append(name)
            for ds in dss:
                taints = daemonsets.untolerated_taints(ds, node, self.reqs[ds.ref])
                if taints:
                    excluded[ds.ref] = taints
        return tuple(labelled), excluded

    def put(self, name: str, node: Node | None) -> None:
        """The node ``name`` is now ``node`` (``None``: gone)."""
        old = self.shares.pop(name, None)
        share = self._share(node) if node is not None else None
        if old == (share if share is not None and share[0] else None):
            if old is not None:
                self.shares[name] = old
            return
        self.made = None
        if old is not None:
            for operand in old[0]:
                self.labelled[operand] -= 1
            for ref in old[1]:
                self._line(ref, name, None)
        if share is None:
            return
        if share[0]:
            self.shares[name] = share
            for operand in share[0]:
                self.labelled[operand] = self.labelled.get(operand, 0) + 1
            for ref, taints in share[1].items():
                self._line(ref, name, taints)

    def _line(self, ref: str, name: str, taints: list[str] | None) -> None:
        """Node ``name``'s line among DaemonSet ``ref``'s excluded nodes: ``taints`` (``None``: no longer)."""
        names, lines = self.lines.setdefault(ref, ([], []))
        i = bisect.bisect_left(names, name)
        if i < len(names) and names[i] == name:
            del names[i], lines[i]
        if taints is not None:
            names.insert(i, name)
            lines.insert(i, f"{name} untolerated-taint {','.join(taints)}")

    def use(self, by_operand: dict[str, list[DaemonSet]]) -> None:
        """The operands' DaemonSets now (the same ones, their status may have changed)."""
        if by_operand is not self.by_operand:
            self.by_operand, self.made = by_operand, None

    def section(self) -> Section:
        """The ``daemonsets`` section as :func:`gpulabel.checks.operands.rules.operands_result` writes it."""
        if self.made is None:
            self.made = self._section()
        return self.made

    def _section(self) -> Section:
        rows: list[dict[str, Cell]] = []
        wide: list[str] = []
        for name, dss in sorted(self.by_operand.items()):
            for ds in dss:
                shown = tuple(self.lines.get(ds.ref, ((), ()))[1])
                labelled, desired = self.labelled.get(name, 0), ds.status.get("desiredNumberScheduled")
                rows.append(
                    {
                        "daemonset": ds.ref,
                        "operand": name,
                        "labelled_nodes": labelled,
                        "desired_number_scheduled": desired,
                        "excluded": shown,
                    }
                )
                line = f"# {ds.ref} operand={name} labelled={labelled} desired={desired}"
                wide.append(line + (f" excluded: {'; '.join(shown)}" if shown else ""))
        return Section("daemonsets", tuple(rows), (), tuple(wide))


@dataclass
class _Setting:
    """A switch setting (operands off) left for another: its findings per node, and the nodes changed since."""

    found: dict[str, list[Finding]]
    others: dict[str, list[Finding]]
    stale: set[str] = field(default_factory=set)

    def note(self, names: Iterable[str]) -> None:
        """``names`` changed (a node, or a DaemonSet pod aimed at it): remade when this setting is back."""
        self.stale.update(names)


class _Pieces:
    """Each node's findings and share of the table: a node's change, or a DaemonSet pod's aimed at it, remakes
    that node's; a DaemonSet's spec, whether the GPU Operator manages the cluster (a deploy label anywhere) or
    what the ClusterPolicy says of workload configs remake every node's. The operands switched off (flags,
    ClusterPolicy) changing remakes only the nodes whose findings read whether those are off
    (:meth:`_switched`), and the table not at all (it reads no switch); the findings of the last few switch
    settings are kept, so switching back to one remakes only the nodes changed since it was left."""

    KEPT_SETTINGS = 2  # switch settings whose findings are kept besides the current one

    def __init__(self, check: Check) -> None:
        self.check, self.table = check, check.reasons()
        self.found: dict[str, list[Finding]] = {}
        self.others: dict[str, list[Finding]] = {}
        self.accounts: Accounts | None = None
        self.daemonsets: tuple[dict[str, list[DaemonSet]], list[DaemonSet]] | None = None
        self.aimed: dict[str, dict[ObjectKey, None]] = {}  # node -> the DaemonSet pods aimed at it
        self.owned: dict[str, dict[ObjectKey, str]] = {}  # DaemonSet uid -> its pods -> the node each is aimed at
        self.deployed: set[str] = set()  # nodes with a deploy label
        self.context: tuple[Any, ...] | None = None
        # other switch settings (operands off) -> their findings per node, and the nodes changed since
        self.settings: dict[frozenset[str], _Setting] = {}
        self.everything = True
        self.dirty: set[str] = set()
        self.shown: tuple[Finding, ...] | None = None  # every node's findings in order, while none changes
        self.absent: set[str] = set()  # the nodes with findings that are not in the state (shown last)

    def touched(self, kind: str, key: ObjectKey, old: Any | None, new: Any | None) -> None:
        if kind == "Node":
            for node in (old, new):
                if node is not None:
                    self.dirty.add(node.name)
                    self.deployed.discard(node.name)
            if new is not None and _deployed(new):
                self.deployed.add(new.name)
        elif kind == "Pod":
            for pod in (old, new):
                if pod is not None and _daemon(pod) and daemonsets.target_node(pod):
                    self.dirty.add(daemonsets.target_node(pod))  # the operands of the node it is aimed at
            if old is not None and _daemon(old):
                self.aimed.get(daemonsets.target_node(old), {}).pop(key, None)
                for uid in _owner_uids(old):
                    self.owned.get(uid, {}).pop(key, None)
            if new is not None and _daemon(new):
                self._aim(key, new)
        elif kind == "DaemonSet":
            self.daemonsets = None
            if old is None or new is None or _ds_view(old) != _ds_view(new):
                self.everything = True
        # a ClusterPolicy's spec is read through the context (``result``): what it switches off, its workloads

    def _aim(self, key: ObjectKey, pod: Pod) -> None:
        target = daemonsets.target_node(pod)
        self.aimed.setdefault(target, {})[key] = None
        for uid in _owner_uids(pod):
            self.owned.setdefault(uid, {})[key] = target

    def _start(self, fleet: Fleet) -> None:
        self.aimed, self.owned, self.deployed = {}, {}, set()
        for key, pod in fleet.pods.items():
            if _daemon(pod):
                self._aim(key, pod)
        self.deployed = {n for n, node in fleet.nodes.items() if _deployed(node)}

    def _switched(self, switched: frozenset[str], fleet: Fleet, by_operand: Mapping[str, list[DaemonSet]]) -> set[str]:
        """The nodes whose findings read whether an operand of ``switched`` is off: the operands a node's
        findings speak of are those with its deploy label on the node or a pod of its DaemonSets there
        (``check_operands``), and each reads ``off`` for itself and for what it needs."""
        reading = daemonsets.reading_off(switched)
        keys = {deploy_key(name) for name in reading}
        out = {name for name, node in fleet.nodes.items() if not keys.isdisjoint(node.labels)}
        for name in reading:
            for ds in by_operand.get(name, ()):
                out.update(self.owned.get(ds.uid, {}).values())
        out.discard("")  # a pod aimed at no node
        return out

    def result(self, fleet: Fleet, opts: CheckOptions) -> Result:
        state = fleet.state
        if self.accounts is None:
            self._start(fleet)
        policies = state.cluster_policies
        off = frozenset(set(opts.disabled) | daemonsets.disabled_by_cluster_policy(policies))
        context = (off, bool(policies) or bool(self.deployed), daemonsets.policy_reading(policies))
        everything = self.everything or self.accounts is None or self.context is None
        switch = not everything and context != self.context
        if switch and self.context is not None and context[1:] != self.context[1:]:
            everything, switch = True, False
        was = self.context
        self.context, self.everything = context, False
        if self.daemonsets is None or everything:
            gated = [ds for ds in state.daemonsets if daemonsets.operand_of_daemonset(ds)]
            self.daemonsets = (daemonsets.operand_daemonsets(state, opts.operator_namespace), gated)
        by_operand, gated = self.daemonsets
        changed = self.dirty
        if everything or self.accounts is None:
            names: Sequence[str] = fleet.names
            pods: Sequence[Pod] = state.pods
            self.found, self.others, self.accounts, self.settings = {}, {}, Accounts(by_operand), {}
            changed = set(names)
        else:
            for setting in self.settings.values():
                setting.note(self.dirty)
            redo = set(self.dirty)
            if switch and was is not None:
                self.settings[was[0]] = left = _Setting(self.found, self.others)
                left.note(self.dirty)
                seen = self.settings.pop(off, None)
                if seen is not None:  # a setting seen before: its findings, but for the nodes changed since
                    self.found, self.others = seen.found, seen.others
                    redo |= seen.stale
                else:
                    self.found, self.others = dict(self.found), dict(self.others)
                    redo |= self._switched(was[0] ^ off, fleet, by_operand)
                while len(self.settings) > self.KEPT_SETTINGS:
                    del self.settings[next(iter(self.settings))]
            names = sorted(redo)
            keys = sorted({k for n in names for k in self.aimed.get(n, ())}, key=fleet.order)
            pods = [fleet.pods[k] for k in keys]
            self.accounts.use(by_operand)  # the same DaemonSets (else everything reruns), their status now
        self.dirty = set()
        if everything or switch:
            self.shown = None
        if names:
            self._remake(names, pods, fleet, opts, gated)
        for name in changed:  # the table's share reads the node alone, never a switch
            self.accounts.put(name, fleet.nodes.get(name))
        return Result("operands", self._shown(fleet), (self.accounts.section(),), graded=True)

    def _remake(
        self, names: Sequence[str], pods: Sequence[Pod], fleet: Fleet, opts: CheckOptions, gated: Sequence[DaemonSet]
    ) -> None:
        """The findings of the nodes ``names``, given the DaemonSet pods aimed at them."""
        present = [fleet.nodes[n] for n in names if n in fleet.nodes]
        found, others = _node_findings(present, pods, fleet.state, opts, gated)
        for name in names:
            if name not in fleet.nodes or name in self.absent:  # the order reads whether it is there
                self.shown = None
            for kept, new in ((self.found, found), (self.others, others)):
                before = kept.pop(name, None)
                if new.get(name):
                    kept[name] = graded(self.check, new[name], self.table)
                if kept.get(name) != before:
                    self.shown = None

    def _shown(self, fleet: Fleet) -> tuple[Finding, ...]:
        """By node (the nodes' order), each node's operands then the rest, as the full run sorts them; made
        again only when a node's findings changed."""
        if self.shown is None:
            nodes, found, others = fleet.nodes, self.found, self.others
            names = sorted({*found, *others})
            self.absent = {n for n in names if n not in nodes}
            order = [n for n in names if n in nodes] + [n for n in names if n in self.absent]
            self.shown = tuple(itertools.chain.from_iterable(found.get(n, []) + others.get(n, []) for n in order))
        return self.shown


CHECK: Check = Check(
    "operands",
    ("Node", "DaemonSet", "ClusterPolicy", "Pod"),
    ("Node", "DaemonSet", "Pod"),
    _run,
    "operands missing, not ready, out of order or unexpected, per node",
    reasons=lambda: operands.REASONS,
    caveats=_caveats,
    pieces=_Pieces,
)
