"""The checks' results cut into the pieces an event can change: per node, per pod, and the fleet's tables.

Every function here runs the checks' own code (the per-node functions, or a
check on a *part* of the state) and cuts the findings by the node or pod they
name; :class:`~gpulabel.checks.incremental.IncrementalEvaluator` keeps the
pieces and puts them back together in the order a full run gives them (nodes
by name, pods in the state's order).

What each check's finding depends on (read from the checks; the agreement test
over random event sequences holds each claim):

- audit, sharing: the node's labels (and allocatable) alone;
- upgrade, mig: the node, the ClusterPolicy's MIG strategy, and ``now`` where
  a state's age is read (:func:`timed`);
- capacity: the node, the operands disabled (flags, ClusterPolicy) and whether
  the GPU Operator manages the cluster (a ClusterPolicy, or any node with a
  deploy label: the only input that spans nodes);
- operands (and the standalone device plugins): the node, the DaemonSet pods
  aimed at it, every DaemonSet and ClusterPolicy; its ``daemonsets`` table
  counts over every node (:class:`Accounts` keeps each node's share);
- pending: each Pending pod against every node and every bound pod (what is
  free where), the DRA and NFD objects;
- hazards: each bound pod against its node; a pod whose node no longer matches
  also counts the other nodes that would take it (so every node);
- nfd: every node and the NFD objects (rerun whole).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gpulabel.checks.audit import audit_node
from gpulabel.checks.capacity import capacity_node
from gpulabel.checks.eviction import noexecute_findings
from gpulabel.checks.mig import mig_node
from gpulabel.checks.mig import reads_clock as mig_reads_clock
from gpulabel.checks.operands import (
    check_operands,
    daemonset_requirements,
    untolerated_taints,
)
from gpulabel.checks.pending import hazards, pending_result
from gpulabel.checks.registry import CheckOptions
from gpulabel.checks.sharing import sharing_node
from gpulabel.checks.standalone import standalone_findings
from gpulabel.checks.upgrade import reads_clock as upgrade_reads_clock
from gpulabel.checks.upgrade import upgrade_node
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, DaemonSet, Node, NodeCapacity, Pod
from gpulabel.model.findings import Cell, Finding, Section
from gpulabel.model.operands import labelled_for

__all__ = [
    "NODE_CHECKS",
    "Accounts",
    "KnownCapacities",
    "PodPiece",
    "hazard_pieces",
    "node_capacity",
    "node_pieces",
    "operand_pieces",
    "operands_section",
    "pending_pieces",
    "placement_view",
    "timed",
]

NODE_CHECKS = ("audit", "sharing", "upgrade", "mig", "capacity")  # findings from one node's record alone


def node_pieces(
    node: Node, opts: CheckOptions, now: datetime, strategy: str | None, off: frozenset[str], operator: bool
) -> dict[str, list[Finding]]:
    """The node's findings of each check in :data:`NODE_CHECKS` (what each check's loop gives for it)."""
    return {
        "audit": audit_node(node, opts.strict) if node.labels.get(V.GPU_PRESENT) == "true" else [],
        "sharing": sharing_node(node),
        "upgrade": upgrade_node(node, now, opts.stuck_after),
        "mig": mig_node(node, now, opts.stuck_after, strategy),
        "capacity": capacity_node(node, off, operator),
    }


def timed(node: Node) -> bool:
    """Whether upgrade's or mig's findings for the node read ``now`` (a state's age): rerun at every assess.
    Each check says so itself (``reads_clock``), beside the code that reads the age."""
    return mig_reads_clock(node) or upgrade_reads_clock(node)


def placement_view(node: Node) -> tuple[Any, ...]:
    """What placement reads of a node (pending's and hazards' verdicts on every node): a change here reruns them."""
    return (
        node.labels,
        node.taints,
        node.unschedulable,
        node.amounts,
        node.allocatable,
    )


def operand_pieces(
    nodes: Sequence[Node], pods: Sequence[Pod], state: ClusterState, opts: CheckOptions, gated: Sequence[DaemonSet]
) -> tuple[dict[str, list[Finding]], dict[str, list[Finding]]]:
    """The operands check's findings for ``nodes`` (sorted by name), given the DaemonSet pods aimed at them:
    ``(operands per node, standalone per node)``. Every DaemonSet and ClusterPolicy of ``state`` is read;
    ``gated``: the DaemonSets an operand's deploy label gates (the rest may be standalone device plugins);
    the second holds the NoExecute taints' findings too."""
    part = ClusterState(
        nodes=tuple(nodes),
        pods=tuple(pods),
        daemonsets=state.daemonsets,
        cluster_policies=state.cluster_policies,
        source=state.source,
        kinds=state.kinds,
    )
    report = check_operands(part, opts.disabled, opts.operator_namespace)
    # after the standalone plugins' findings, as the registered check puts them: the NoExecute taints
    others = (*standalone_findings(part, gated), *noexecute_findings(part, opts.operator_namespace))
    return _by_node(report.findings), _by_node(others)


def _by_node(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in findings:
        out.setdefault(f.node, []).append(f)
    return out


@dataclass
class Accounts:
    """The operands check's ``daemonsets`` table (per operand DaemonSet: the nodes labelled for it, the
    ones whose taints it does not tolerate), kept as each node's share so that a node's change costs one node."""

    by_operand: dict[str, list[DaemonSet]]
    labelled: dict[str, int] = field(default_factory=dict)  # operand -> nodes labelled for it
    excluded: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # DaemonSet ref -> node -> taints
    shares: dict[str, tuple[tuple[str, ...], dict[str, list[str]]]] = field(default_factory=dict)
    _reqs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._reqs = {ds.ref: daemonset_requirements(ds) for dss in self.by_operand.values() for ds in dss}

    def _share(self, node: Node) -> tuple[tuple[str, ...], dict[str, list[str]]]:
        labelled: list[str] = []
        excluded: dict[str, list[str]] = {}
        for name, dss in self.by_operand.items():
            if not labelled_for(name, node.labels):
                continue
            labelled.append(name)
            for ds in dss:
                taints = untolerated_taints(ds, node, self._reqs[ds.ref])
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


def operands_section(accounts: Accounts) -> Section:
    """The ``daemonsets`` section as the operands check writes it."""
    rows: list[dict[str, Cell]] = []
    wide: list[str] = []
    for name, dss in sorted(accounts.by_operand.items()):
        for ds in dss:
            excluded = accounts.excluded.get(ds.ref, {})
            shown = tuple(f"{n} untolerated-taint {','.join(t)}" for n, t in sorted(excluded.items()))
            labelled, desired = accounts.labelled.get(name, 0), ds.status.get("desiredNumberScheduled")
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


class KnownCapacities(ClusterState):
    """A part of the state whose :meth:`capacities` (what each node has free, from every bound pod) are
    given: the evaluator keeps them node by node, so pending reads them without walking every pod."""

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
        )
        object.__setattr__(part, "known", known)
        return part


def node_capacity(node: Node, pods: Sequence[Pod]) -> NodeCapacity | None:
    """What ``ClusterState.capacities`` says of ``node``, given its bound non-terminal ``pods`` in the state order."""
    if node.amounts is None:
        return None
    return NodeCapacity.of(node.amounts, [p.requests for p in pods], [p.priority for p in pods])


@dataclass(frozen=True, slots=True)
class PodPiece:
    """One Pending pod's part of the pending result: its findings, its row and its lines."""

    findings: tuple[Finding, ...]
    row: Mapping[str, Any]
    text: str
    wide: tuple[str, ...]


def pending_pieces(part: ClusterState, opts: CheckOptions) -> dict[str, PodPiece]:
    """pending on ``part`` (every node and what is free on it, the Pending pods to judge), cut per pod (by ref).

    A Pending pod's verdicts read the nodes, what the bound pods use of them (``part.capacities()``)
    and the DRA and NFD objects, never another Pending pod, so the pods of ``part`` are judged as in a
    full run."""
    result = pending_result(
        part, opts.namespace, per_node=opts.per_node, all_pods=opts.all_pods, nfd_config=opts.nfd_config
    )
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
        out[ref] = PodPiece(tuple(found.get(ref, ())), row, text, tuple(wide.get(ref, ())))
    return out


def hazard_pieces(part: ClusterState, opts: CheckOptions) -> dict[str, list[Finding]]:
    """hazards on ``part`` (every node, the bound pods to judge), cut per pod (by ref)."""
    out: dict[str, list[Finding]] = {}
    for f in hazards(part, opts.namespace):
        out.setdefault(f.pod, []).append(f)
    return out
