"""The ``health`` check, defined once: GPUs lost, unhealthy devices, health conditions and taints, node by node.

A node's findings read the node, the pods bound to it that report a device not
Healthy (``allocatedResourcesStatus``), the DRA claims' device conditions on
it, and the clock where a health agent's condition has an age. The device
conditions whose node the input does not hold are one piece of their own,
remade with any node's (a node added or deleted may place them).
"""

from __future__ import annotations

from typing import Any

from gpulabel.checks.engine.definition import Check, CheckOptions, Fleet, ObjectKey, graded
from gpulabel.checks.health import rules as health
from gpulabel.k8s.dra.objects import DRA_KINDS, DeviceCondition
from gpulabel.model.cluster import KIND, ClusterState, Pod
from gpulabel.model.findings import Finding, Result

__all__ = ["CHECK"]


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    found = health.health(state, opts.now, opts.stuck_after, opts.health_conditions, opts.health_taints)
    return Result("health", tuple(found))


def _reported_on(pod: Pod | None) -> tuple[str, ...]:
    """The node whose health findings a pod's device reports (allocatedResourcesStatus) are part of."""
    return (pod.node_name,) if pod is not None and pod.device_health and pod.node_name else ()


class _Pieces:
    """Each node's health findings; a node's change, a report of a pod bound to it, and (every time) a node
    with a health agent's condition remake its own; a DRA object's change remakes every node's. A pod a claim
    with device conditions is reserved for places the claim's devices when no slice does: its binding remakes
    the nodes it leaves and joins. Which node each claim's device conditions are on (and those on no node the
    input holds) is kept until a DRA object, such a pod or the set of nodes changes."""

    def __init__(self, check: Check) -> None:
        self.check, self.table = check, check.reasons()
        self.found: dict[str, list[Finding]] = {}
        self.unplaced: list[Finding] = []  # device conditions on a node the input does not hold
        self.everything = True
        self.dirty: set[str] = set()
        self.timed: set[str] = set()  # nodes with a health agent's condition (its age is read)
        self.reserved: frozenset[str] = frozenset()  # pods (namespace/name) claims with device conditions are for
        self.claims: dict[str, list[tuple[str, DeviceCondition]]] = {}  # claims_by_node, kept
        self.placed = False  # claims, unplaced and reserved hold: no DRA object, reserved pod or node set changed

    def touched(self, kind: str, key: ObjectKey, old: Any | None, new: Any | None) -> None:
        if kind == "Node":
            for node in (old, new):
                if node is not None:
                    self.dirty.add(node.name)
                    self.timed.discard(node.name)
            if new is not None and new.other_conditions:
                self.timed.add(new.name)
            if old is None or new is None:  # a node joins or leaves: a device condition's node may be there now
                self.placed = False
        elif kind == "Pod":
            for pod in (old, new):
                self.dirty.update(_reported_on(pod))  # the devices it reports on its node
                if pod is not None and pod.ref in self.reserved:
                    self.dirty.add(pod.node_name)  # where its claim's devices are, when no slice says
                    self.placed = False
        elif KIND[kind].field == "dra":
            self.everything = True  # claims' device conditions

    def result(self, fleet: Fleet, opts: CheckOptions) -> Result:
        remake = self.everything
        if remake:
            self.found, redo = {}, set(fleet.names)
            self.timed = {n for n, node in fleet.nodes.items() if node.other_conditions}
        else:
            redo = self.dirty | self.timed
        self.everything, self.dirty = False, set()
        if redo or remake or not self.placed:
            self._remake(redo, remake, fleet, opts)
        # only the nodes with a finding, not a lookup per node (fleet.names is sorted: the same order)
        findings = tuple(f for n in sorted(self.found) for f in self.found[n])
        return Result("health", (*findings, *self.unplaced), graded=True)

    def _remake(self, redo: set[str], remake: bool, fleet: Fleet, opts: CheckOptions) -> None:
        """The findings of the nodes ``redo``; where the device conditions are, first, when it may have moved."""
        table = health.condition_table(opts.health_conditions)
        taints = (*health.DEFAULT_HEALTH_TAINTS, *opts.health_taints)
        if remake or not self.placed:  # device conditions by node, and those on nodes not there
            self.claims = health.claims_by_node(fleet.state)
            self.unplaced = graded(
                self.check, health.unplaced_claim_findings(fleet.state, self.claims, table, fleet.nodes), self.table
            )
            self.reserved = _reserved(fleet.state)
            self.placed = True
        claims = self.claims
        for name in redo:
            self.found.pop(name, None)
            node = fleet.nodes.get(name)
            if node is None:
                continue
            pods = [p for p in (fleet.pods[k] for k in fleet.bound(name)) if p.device_health and not p.terminal]
            found = health.node_health(node, pods, claims.get(name, ()), table, taints, opts.now, opts.stuck_after)
            if found:
                self.found[name] = graded(self.check, found, self.table)


def _reserved(state: ClusterState) -> frozenset[str]:
    return frozenset(
        f"{c.namespace}/{p}" for c in state.dra.claims if c.device_condition_list() for p in c.reserved_for
    )


CHECK: Check = Check(
    "health",
    ("Node", "Pod", *DRA_KINDS),
    ("Node",),
    _run,
    "GPUs lost (capacity minus allocatable), unhealthy devices, GPU health conditions and taints",
    reasons=lambda: health.REASONS,
    pieces=_Pieces,
)
