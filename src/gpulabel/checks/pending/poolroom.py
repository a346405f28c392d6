"""GPUs each Karpenter NodePool may still add under its limits (``gpus``' ``nodepools`` section).

Karpenter's own count (sigs.k8s.io/karpenter v1.14.1): a NodePool's room is ``spec.limits`` less the capacity
of the pool's state nodes (``pkg/controllers/provisioning/scheduling/scheduler.go`` ``NewScheduler`` starts
from ``np.Spec.Limits``, ``updateRemainingResources`` subtracts ``node.Capacity()`` of every node labelled
``karpenter.sh/nodepool``). A state node is a Node, or a NodeClaim that has a ``providerID`` (launched:
``pkg/controllers/state/cluster.go`` ``UpdateNodeClaim``; a NodeClaim not yet launched is no state node and
counts nothing). Its capacity (``statenode.go`` ``Capacity``) is the Node's, with any zero quantity taken
from its NodeClaim while it is not initialized, or the NodeClaim's alone before its Node exists.

What gpulabel cannot know it says: a NodePool with no ``nvidia.com/gpu`` limit is ``unbounded`` when it has no
limit at all, and ``unknown`` when another limit (``cpu``, ``nodes``...) bounds its GPUs through instance types
gpulabel does not know; a NodeClaim not yet launched has no capacity yet (``launching``); a NodePool Karpenter
makes no node from (static, not Ready, being deleted: ``Provisioner.NewScheduler``) adds none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from gpulabel.errors import QuantityError
from gpulabel.k8s.karpenter.objects import INITIALIZED_LABEL, NODEPOOL_LABEL, NodeClaim, NodePool
from gpulabel.k8s.quantity import parse_quantity
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Cell, Section

__all__ = ["PoolRoom", "nodepool_rooms", "rooms_section"]

GPU = "nvidia.com/gpu"


@dataclass(frozen=True, slots=True)
class PoolRoom:
    """One NodePool's GPUs: ``limit`` (``spec.limits``; ``None``: no GPU limit), ``used`` (its state nodes'
    capacity, as Karpenter counts it), ``status`` (``status.resources`` as Karpenter last wrote it), ``launching``
    (NodeClaims not yet launched, their GPUs not known), ``may_add`` (``limit - used``, at least 0; ``None``:
    ``room`` says why not known or not bounded), ``room``: ``limit``, ``unbounded``, ``unknown`` or
    ``no pods`` (a NodePool Karpenter makes no node from), and ``why``."""

    nodepool: str
    limit: int | None
    used: int
    status: int | None
    launching: int
    may_add: int | None
    room: str
    why: str

    def line(self) -> str:
        limit = "none" if self.limit is None else str(self.limit)
        status = "-" if self.status is None else str(self.status)
        add = str(self.may_add) if self.may_add is not None else self.room
        why = f" ({self.why})" if self.why else ""
        return (
            f"nodepool={self.nodepool} gpu_limit={limit} used={self.used} status={status} "
            f"launching={self.launching} may_add={add}{why}"
        )

    def cells(self) -> dict[str, Cell]:
        return {
            "nodepool": self.nodepool,
            "gpu_limit": self.limit,
            "used": self.used,
            "status": self.status,
            "launching": self.launching,
            "may_add": self.may_add,
            "room": self.room,
            "why": self.why or None,
        }


def _gpus(raw: str | None) -> int:
    """A GPU quantity as written (absent, or not a quantity: 0, as Karpenter's ResourceList reads nothing)."""
    if not raw:
        return 0
    try:
        return math.floor(parse_quantity(str(raw)))
    except (QuantityError, ValueError):
        return 0


def _used(state: ClusterState, resource: str) -> dict[str, int]:
    """Each NodePool's GPUs in its state nodes, as ``statenode.go`` ``Capacity`` counts them."""
    claims_by_node = {c.node_name: c for c in state.karpenter.nodeclaims if c.node_name}
    node_names = set()
    used: dict[str, int] = {}
    for node in state.nodes:
        node_names.add(node.name)
        pool = node.labels.get(NODEPOOL_LABEL, "")
        if not pool:
            continue
        gpus = _gpus(node.capacity.get(resource))
        claim = claims_by_node.get(node.name)
        if gpus == 0 and claim is not None and node.labels.get(INITIALIZED_LABEL) != "true":
            gpus = _gpus(claim.capacity.get(resource))  # a zero the NodeClaim's capacity overrides
        used[pool] = used.get(pool, 0) + gpus
    for claim in state.karpenter.nodeclaims:
        if claim.provider_id and claim.node_name not in node_names and claim.nodepool:
            used[claim.nodepool] = used.get(claim.nodepool, 0) + _gpus(claim.capacity.get(resource))
    return used


def _launching(claims: Sequence[NodeClaim], pool: str) -> int:
    return sum(1 for c in claims if c.nodepool == pool and not c.provider_id)


def _room(pool: NodePool, used: int, resource: str) -> tuple[int | None, str, str]:
    if pool.replicas is not None or pool.deleting or not pool.ready:
        why = "static (spec.replicas)" if pool.replicas is not None else "being deleted" if pool.deleting else ""
        return 0, "no pods", f"Karpenter makes no node for pods from it: {why or 'not Ready'}"
    if resource in pool.limits:
        return max(_gpus(pool.limits[resource]) - used, 0), "limit", ""
    if not pool.limits:
        return None, "unbounded", f"no spec.limits: Karpenter sets no bound on its {resource}"
    others = ", ".join(sorted(pool.limits))
    return None, "unknown", f"no {resource} limit; its {others} limit bounds its GPUs through instance types not known"


def nodepool_rooms(state: ClusterState, resource: str = GPU) -> list[PoolRoom]:
    """One :class:`PoolRoom` per NodePool, by name; none without NodePools."""
    pools = state.karpenter.nodepools
    if not pools:
        return []
    used = _used(state, resource)
    out = []
    for pool in sorted(pools, key=lambda p: p.name):
        n = used.get(pool.name, 0)
        status = _gpus(pool.resources[resource]) if resource in pool.resources else None
        limit = _gpus(pool.limits[resource]) if resource in pool.limits else None
        may_add, room, why = _room(pool, n, resource)
        launching = _launching(state.karpenter.nodeclaims, pool.name)
        if launching and room == "limit":
            why = f"less the GPUs of {launching} NodeClaim(s) not yet launched: not known until they are"
        out.append(PoolRoom(pool.name, limit, n, status, launching, may_add, room, why))
    return out


def rooms_section(state: ClusterState, resource: str = GPU) -> tuple[Section, ...]:
    """The ``nodepools`` section (one row and line per NodePool), or none without NodePools."""
    rooms = nodepool_rooms(state, resource)
    if not rooms:
        return ()
    return (Section("nodepools", tuple(r.cells() for r in rooms), tuple(r.line() for r in rooms)),)
