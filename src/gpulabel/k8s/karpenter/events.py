"""Karpenter's pod Events, read back: a NodeClaim nominated for the pod, or why no NodePool took it.

Upstream: sigs.k8s.io/karpenter v1.14.1 ``pkg/controllers/provisioning/scheduling/events.go``
(``NominatePodEvent``: Normal ``Nominated``, ``Pod should schedule on: nodeclaim/<name>[, node/<name>]``;
``PodFailedToScheduleEvent``: Warning ``FailedScheduling``, ``Failed to schedule pod, <error>``, the error of every
NodePool joined by ``"; "`` by multierr), with reasons from ``pkg/events/reason.go``, recorded by the component
``karpenter``. The scheduler's own ``FailedScheduling`` Events (component ``default-scheduler``) are not these.

A NodePool's error may hold ``"; "`` of its own (several taints or conflicts), so the text is not split into
NodePools; what the later verdict needs is read out of it: the label keys no template knows, the taints not
tolerated, the NodePools whose limits stopped it, and whether it was refused for DRA claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpulabel.k8s.karpenter.scheduling import DRA_IGNORED

__all__ = ["COMPONENT", "FailedToSchedule", "Nominated", "pod_event"]

COMPONENT = "karpenter"
_NOMINATED = "Pod should schedule on: "
_FAILED = "Failed to schedule pod, "
_UNKNOWN_KEY = re.compile(r'label "((?:[^"\\]|\\.)*)" does not have known values')
_TAINT = re.compile(r"did not tolerate taint \(taint=([^)]*)\)")
_LIMITED = re.compile(
    r"(?:all available instance types exceed limits|node limits have been exhausted) for nodepool \(NodePool=([^)]*)\)"
)


@dataclass(frozen=True, slots=True)
class Nominated:
    nodeclaim: str  # "" when Karpenter nominated an existing node
    node: str  # "" while the NodeClaim has no node


@dataclass(frozen=True, slots=True)
class FailedToSchedule:
    text: str  # after "Failed to schedule pod, "

    @property
    def unknown_keys(self) -> tuple[str, ...]:
        """The keys of ``label "K" does not have known values`` (each once, in order)."""
        return tuple(dict.fromkeys(m[1] for m in _UNKNOWN_KEY.finditer(self.text)))

    @property
    def taints(self) -> tuple[str, ...]:
        """The taints (``key=value:Effect``) some NodePool's template has and the pod does not tolerate."""
        return tuple(dict.fromkeys(m[1] for m in _TAINT.finditer(self.text)))

    @property
    def limited(self) -> tuple[str, ...]:
        """The NodePools whose limits left no instance type or no node."""
        return tuple(dict.fromkeys(m[1] for m in _LIMITED.finditer(self.text)))

    @property
    def dra(self) -> bool:
        """Refused for its ResourceClaims (``IGNORE_DRA_REQUESTS``, the default)."""
        return self.text == DRA_IGNORED


def pod_event(component: str, reason: str, message: str) -> Nominated | FailedToSchedule | None:
    """A pod Event (its reporting component, reason and message) as Karpenter wrote it, or ``None``."""
    if component != COMPONENT:
        return None
    if reason == "Nominated" and message.startswith(_NOMINATED):
        parts = dict(p.split("/", 1) for p in message[len(_NOMINATED) :].split(", ") if "/" in p)
        return Nominated(parts.get("nodeclaim", ""), parts.get("node", ""))
    if reason == "FailedScheduling" and message.startswith(_FAILED):
        return FailedToSchedule(message[len(_FAILED) :])
    return None
