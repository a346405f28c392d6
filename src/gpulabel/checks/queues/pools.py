"""A flavor whose nodes an autoscaler makes on demand: the Karpenter NodePools that would make a node for it.

A pod admitted to a flavor carries the flavor's ``nodeLabels`` as its nodeSelector and the flavor's tolerations
(Kueue v0.17.0 ``pkg/podset/podset.go`` ``FromAssignment``). When no node has them yet, Karpenter decides
whether a NodePool makes one, by its own rules (:mod:`gpulabel.k8s.karpenter.scheduling`, sigs.k8s.io/karpenter
v1.14.1): only dynamic, Ready NodePools not being deleted take part (``Provisioner.NewScheduler``); a pool takes
the pod when its template's taints are tolerated and its requirements (template labels and requirements, each
``In``) are compatible with the nodeSelector, a key the provider knows before launch (``WellKnownLabels``) being
allowed undefined, any other key having to be in the template (``nodeclaim.go`` ``CanAdd``). A label GFD or NFD
writes only after boot (``nvidia.com/gpu.product``, ``feature.node.kubernetes.io/*``) is on no provider's list, so a
pool whose template does not carry it never takes the pod: ``label "K" does not have known values``.

How many GPUs a pool may still add is its ``spec.limits`` of the GPU resource less its ``status.resources``
(``scheduler.go`` ``updateRemainingResources``; ``None``: no limit on that resource); a pool whose ``nodes``
limit is used up adds none (``limit_error``). What a real cloud's instance types hold is not known here, so a
pool with room is taken to be able to make GPU nodes the flavor selects, as its template says.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from gpulabel.k8s.karpenter.objects import NodePool
from gpulabel.k8s.karpenter.providers import AWS, AZURE, CORE, GCP, Provider, kwok
from gpulabel.k8s.karpenter.scheduling import PodTerms, limit_error, nodepool_error, order_by_weight
from gpulabel.k8s.nodeaffinity import PodRequirements
from gpulabel.k8s.quantity import parse_quantity

__all__ = ["Pools", "pools_for", "provider_of"]

# a NodePool's nodeClassRef group -> the Karpenter build that serves it (k8s/karpenter/providers.py)
_BY_GROUP = {"karpenter.k8s.aws": AWS, "karpenter.azure.com": AZURE, "karpenter.k8s.gcp": GCP}


def provider_of(pool: NodePool) -> Provider:
    """The provider whose keys the pool's nodes are known by: its NodeClass's group (the core's where unknown)."""
    group = pool.node_class[0]
    if group == "karpenter.kwok.sh":
        return kwok()
    return _BY_GROUP.get(group, CORE)


@dataclass(frozen=True, slots=True)
class Pools:
    """The NodePools that would make a node for a flavor's pods, with the GPUs each may still add (``None``:
    no limit on the resource), and why each other dynamic pool would not (Karpenter's words)."""

    takers: tuple[tuple[NodePool, int | None], ...] = ()
    refusals: tuple[tuple[NodePool, str], ...] = ()

    @property
    def names(self) -> str:
        return ", ".join(p.name for p, _ in self.takers)

    def room(self) -> int | None:
        """The GPUs the takers may still add together; ``None``: at least one has no limit on them."""
        rooms = [r for _, r in self.takers]
        return None if any(r is None for r in rooms) else sum(r for r in rooms if r is not None)


def _room(pool: NodePool, resource: str) -> int | None:
    if limit_error(pool, pool.resources, None) is not None:
        return 0  # its nodes limit is used up
    if resource not in pool.limits:
        return None
    left = parse_quantity(pool.limits[resource]) - parse_quantity(pool.resources.get(resource, "0"))
    return max(0, int(left // Fraction(1)))


def pools_for(req: PodRequirements, pools: Iterable[NodePool], resource: str) -> Pools:
    """The pools (heaviest first, Karpenter's order) that take a pod whose nodeSelector and tolerations are
    ``req``'s (a flavor's: :func:`~gpulabel.checks.queues.rules.flavor_requirements`), and those that refuse it."""
    dynamic: Sequence[NodePool] = order_by_weight(p for p in pools if p.replicas is None and p.ready and not p.deleting)
    pod = PodTerms(node_selector=req.node_selector, tolerations=req.tolerations)
    takers, refusals = [], []
    for pool in dynamic:
        err = nodepool_error(pool, pod, provider_of(pool))
        if err is None:
            takers.append((pool, _room(pool, resource)))
        else:
            refusals.append((pool, err))
    return Pools(tuple(takers), tuple(refusals))
