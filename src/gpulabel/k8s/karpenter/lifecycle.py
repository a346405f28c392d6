"""A NodeClaim's life as Karpenter times and judges it (sigs.k8s.io/karpenter v1.14.1,
``pkg/controllers/nodeclaim/lifecycle/``): the conditions it passes, how long Karpenter waits for them, and what
keeps it from ``Initialized``.

- ``liveness.go``: ``LaunchTimeout = time.Minute * 5`` (a NodeClaim not ``Launched`` by then is deleted) and
  ``registrationTimeout = time.Minute * 15`` (one not ``Registered`` 15 minutes after its ``Registered``
  condition was first written, which is when the NodeClaim is made, is deleted and made again). Nothing times
  ``Initialized``: a NodeClaim registered whose node never initializes stays, its node taking no pod that
  needs what it lacks.
- ``initialization.go`` ``Initialization.Reconcile``: ``Initialized`` once the node is Ready, its startup taints
  and Karpenter's known ephemeral taints are gone, every resource the NodeClaim requested
  (``spec.resources.requests``, a quantity above 0) is above 0 in the node's ``status.allocatable``
  (``RequestedResourcesRegistered``: "kubelet will zero out both the capacity and allocatable for an extended
  resource on startup ... then the device plugin hasn't registered it yet"), and the DRA drivers it expects have
  published; until then the condition is Unknown with a reason (``ResourceNotRegistered``: ``Resource
  "nvidia.com/gpu" was requested but not registered``). The node is then labelled ``karpenter.sh/initialized``
  (``registration.go`` wrote ``karpenter.sh/registered`` before).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gpulabel.k8s.karpenter.objects import INITIALIZED_LABEL, REGISTERED_LABEL, NodeClaim
from gpulabel.k8s.quantity import parse_quantity

__all__ = [
    "LAUNCH_TIMEOUT",
    "REGISTRATION_TIMEOUT",
    "STAGES",
    "Unready",
    "UnreadyClaims",
    "age",
    "initialized",
    "initializing",
    "unready_claims",
    "waiting",
]

LAUNCH_TIMEOUT = 5 * 60.0  # liveness.go LaunchTimeout
REGISTRATION_TIMEOUT = 15 * 60.0  # liveness.go registrationTimeout
STAGES = ("Launched", "Registered", "Initialized")  # pkg/apis/v1/nodeclaim_status.go, in the order passed


def initialized(claim: NodeClaim) -> bool:
    cond = claim.condition("Initialized")
    return cond is not None and cond.status == "True"


def waiting(claim: NodeClaim) -> str:
    """The first of Launched, Registered, Initialized the NodeClaim has not reached (True); ``""``: none."""
    for stage in STAGES:
        cond = claim.condition(stage)
        if cond is None or cond.status != "True":
            return stage
    return ""


def age(created: str, now: datetime) -> float | None:
    """Seconds from ``created`` (a creationTimestamp as written) to ``now``; ``None`` when it is not a time."""
    try:
        when = datetime.fromisoformat(created.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (now - (when if when.tzinfo is not None else when.replace(tzinfo=UTC))).total_seconds()


def initializing(labels: Mapping[str, str]) -> bool:
    """A node Karpenter registered and has not initialized (by the labels it writes on both)."""
    return REGISTERED_LABEL in labels and INITIALIZED_LABEL not in labels


@dataclass(frozen=True, slots=True)
class Unready:
    """A NodeClaim ``Registered`` and not ``Initialized``, as a node's checks read it: its name, NodePool,
    creationTimestamp, the resources it requested above 0 (``(name, quantity)``, as written) and its
    ``Initialized`` condition's reason and message."""

    name: str
    nodepool: str
    created: str
    requested: tuple[tuple[str, str], ...]
    reason: str = ""
    message: str = ""
    capacity: tuple[tuple[str, str], ...] = ()  # status.capacity: what its instance type has, as written

    def unregistered(self, allocatable: Mapping[str, int] | None) -> list[tuple[str, str]]:
        """The requested resources the node's ``allocatable`` has none of (``RequestedResourcesRegistered``):
        ``(name, quantity requested)``; none when the node's allocatable is not in the input."""
        if allocatable is None:
            return []
        return [(name, qty) for name, qty in self.requested if not allocatable.get(name, 0)]


@dataclass(frozen=True, slots=True)
class UnreadyClaims:
    """The :class:`Unready` NodeClaims by the node they became (a node check's context: compared by value)."""

    items: tuple[tuple[str, Unready], ...] = ()
    by_node: Mapping[str, Unready] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_node", dict(self.items))

    def get(self, node: str) -> Unready | None:
        return self.by_node.get(node)


def _requested(claim: NodeClaim) -> tuple[tuple[str, str], ...]:
    out = []
    for name, qty in sorted(claim.requests.items()):
        try:
            positive = parse_quantity(qty) > 0
        except ValueError:
            positive = False
        if positive:
            out.append((name, qty))
    return tuple(out)


def unready_claims(claims: tuple[NodeClaim, ...]) -> UnreadyClaims:
    """The NodeClaims registered as a node and not Initialized, by that node."""
    out = []
    for claim in claims:
        registered = claim.condition("Registered")
        if initialized(claim) or registered is None or registered.status != "True" or not claim.node_name:
            continue
        cond = claim.condition("Initialized")
        unready = Unready(
            claim.name,
            claim.nodepool,
            claim.created,
            _requested(claim),
            cond.reason if cond is not None else "",
            cond.message if cond is not None else "",
            tuple(sorted(claim.capacity.items())),
        )
        out.append((claim.node_name, unready))
    return UnreadyClaims(tuple(sorted(out, key=lambda x: x[0])))
