"""The ``operands`` check, defined once: operands missing, not ready, out of order or unexpected, per node.

Its findings (with the standalone device plugins' and the NoExecute taints')
read the node, the DaemonSet pods aimed at it, every DaemonSet and
ClusterPolicy; its ``daemonsets`` table counts over every node
(:class:`Accounts` keeps each node's share, so a node's change costs one node).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gpulabel.checks import operands
from gpulabel.checks.definition import Check, CheckOptions, Fleet, ObjectKey, graded
from gpulabel.checks.eviction import noexecute_findings
from gpulabel.checks.standalone import standalone_findings
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, DaemonSet, Node, Pod
from gpulabel.model.findings import Cell, Finding, Result, Section
from gpulabel.model.operands import labelled_for

__all__ = ["CHECK", "Accounts"]


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    result = operands.operands_result(state, opts.disabled, opts.operator_namespace)
    gated = [ds for ds in state.daemonsets if operands.operand_of_daemonset(ds)]
    found = [*result.findings, *standalone_findings(state, gated), *noexecute_findings(state, opts.operator_namespace)]
    order = {n.name: i for i, n in enumerate(state.nodes)}
    findings = tuple(sorted(found, key=lambda f: order.get(f.node, len(order))))  # by node, each node's as found
    return replace(result, findings=findings)


def _caveats(state: ClusterState, opts: CheckOptions) -> tuple[str, ...]:
    """With operand DaemonSets but no ClusterPolicy and no --disabled, every operand counts as on."""
    gated = any(operands.operand_of_daemonset(ds) for ds in state.daemonsets)
    if "ClusterPolicy" not in state.kinds and not opts.disabled and gated:
        return ("no ClusterPolicy in the input: every operand counts as enabled (--disabled says otherwise)",)
    return ()


def _daemon(pod: Pod) -> bool:
    return any(kind == "DaemonSet" for kind, _ in pod.owners)


def _deployed(node: Node) -> bool:
    return any(k.startswith(V.DEPLOY_PREFIX) for k in node.labels)


def _ds_view(ds: DaemonSet) -> tuple[Any, ...]:
    """What the operand findings read of a DaemonSet (its status only feeds the daemonsets table)."""
    return (ds.namespace, ds.name, ds.uid, ds.template_spec, ds.selector)


def _policy_view(policy: Mapping[str, Any]) -> Any:
    """What the checks read of a ClusterPolicy: its spec (the operator rewrites its status as operands change)."""
    return policy.get("spec")


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
    excluded: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # DaemonSet ref -> node -> taints
    shares: dict[str, tuple[tuple[str, ...], dict[str, list[str]]]] = field(default_factory=dict)
    reqs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.reqs = {ds.ref: operands.daemonset_requirements(ds) for dss in self.by_operand.values() for ds in dss}

    def _share(self, node: Node) -> tuple[tuple[str, ...], dict[str, list[str]]]:
        labelled: list[str] = []
        excluded: dict[str, list[str]] = {}
        for name, dss in self.by_operand.items():
            if not labelled_for(name, node.labels):
                continue
            labelled.append(name)
            for ds in dss:
                taints = operands.untolerated_taints(ds, node, self.reqs[ds.ref])
                if taints:
                    excluded[ds.ref] = taints
        return tuple(labelled), excluded

    def put(self, name: str, node: Node | None) -> None:
        """The node ``name`` is now ``node`` (``None``: gone)."""
        old = self.shares.pop(name, None)
        if old is not None:
            for operand in old[0]:
                self.labelled[operand] -= 1
            for ref in old[1]:
                del self.excluded[ref][name]
        if node is None:
            return
        share = self._share(node)
        if share[0]:
            self.shares[name] = share
            for operand in share[0]:
                self.labelled[operand] = self.labelled.get(operand, 0) + 1
            for ref, taints in share[1].items():
                self.excluded.setdefault(ref, {})[name] = taints

    def section(self) -> Section:
        """The ``daemonsets`` section as :func:`gpulabel.checks.operands.operands_result` writes it."""
        rows: list[dict[str, Cell]] = []
        wide: list[str] = []
        for name, dss in sorted(self.by_operand.items()):
            for ds in dss:
                excluded = self.excluded.get(ds.ref, {})
                shown = tuple(f"{n} untolerated-taint {','.join(t)}" for n, t in sorted(excluded.items()))
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


class _Pieces:
    """Each node's findings and share of the table: a node's change, or a DaemonSet pod's aimed at it, remakes
    that node's; a DaemonSet's or the ClusterPolicy's spec, the operands disabled or whether the GPU Operator
    manages the cluster (a deploy label anywhere) remake every node's."""

    def __init__(self, check: Check) -> None:
        self.check, self.table = check, check.reasons()
        self.found: dict[str, list[Finding]] = {}
        self.others: dict[str, list[Finding]] = {}
        self.accounts: Accounts | None = None
        self.daemonsets: tuple[dict[str, list[DaemonSet]], list[DaemonSet]] | None = None
        self.aimed: dict[str, dict[ObjectKey, None]] = {}  # node -> the DaemonSet pods aimed at it
        self.deployed: set[str] = set()  # nodes with a deploy label
        self.context: tuple[Any, ...] | None = None
        self.everything = True
        self.dirty: set[str] = set()

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
                if pod is not None and _daemon(pod) and operands.target_node(pod):
                    self.dirty.add(operands.target_node(pod))  # the operands of the node it is aimed at
            if old is not None and _daemon(old):
                self.aimed.get(operands.target_node(old), {}).pop(key, None)
            if new is not None and _daemon(new):
                self.aimed.setdefault(operands.target_node(new), {})[key] = None
        elif kind == "DaemonSet":
            self.daemonsets = None
            if old is None or new is None or _ds_view(old) != _ds_view(new):
                self.everything = True
        elif kind == "ClusterPolicy" and (old is None or new is None or _policy_view(old) != _policy_view(new)):
            self.everything = True

    def _start(self, fleet: Fleet) -> None:
        self.aimed, self.deployed = {}, set()
        for key, pod in fleet.pods.items():
            if _daemon(pod):
                self.aimed.setdefault(operands.target_node(pod), {})[key] = None
        self.deployed = {n for n, node in fleet.nodes.items() if _deployed(node)}

    def result(self, fleet: Fleet, opts: CheckOptions) -> Result:
        state = fleet.state
        if self.accounts is None:
            self._start(fleet)
        policies = state.cluster_policies
        context = (
            frozenset(set(opts.disabled) | operands.disabled_by_cluster_policy(policies)),
            bool(policies) or bool(self.deployed),
        )
        everything = self.everything or self.accounts is None or context != self.context
        self.context, self.everything = context, False
        if self.daemonsets is None or everything:
            gated = [ds for ds in state.daemonsets if operands.operand_of_daemonset(ds)]
            self.daemonsets = (operands.operand_daemonsets(state, opts.operator_namespace), gated)
        by_operand, gated = self.daemonsets
        if everything or self.accounts is None:
            names: Sequence[str] = fleet.names
            pods: Sequence[Pod] = state.pods
            self.found, self.others, self.accounts = {}, {}, Accounts(by_operand)
        else:
            names = sorted(self.dirty)
            keys = sorted({k for n in names for k in self.aimed.get(n, ())}, key=fleet.order)
            pods = [fleet.pods[k] for k in keys]
            self.accounts.by_operand = by_operand  # the same DaemonSets (else everything reruns), their status now
        self.dirty = set()
        if names:
            present = [fleet.nodes[n] for n in names if n in fleet.nodes]
            found, others = _node_findings(present, pods, state, opts, gated)
            for name in names:
                for kept, new in ((self.found, found), (self.others, others)):
                    kept.pop(name, None)
                    if new.get(name):
                        kept[name] = graded(self.check, new[name], self.table)
                self.accounts.put(name, fleet.nodes.get(name))
        # by node (the nodes' order), each node's operands then the rest, as the full run sorts them
        shown = sorted({*self.found, *self.others}, key=lambda n: (n not in fleet.nodes, n))
        findings = tuple(f for n in shown for f in (*self.found.get(n, ()), *self.others.get(n, ())))
        return Result("operands", findings, (self.accounts.section(),), graded=True)


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
