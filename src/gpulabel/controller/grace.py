"""How long a finding must hold before ``gpulabel monitor`` writes its Warning Event, per reason.

node-problem-detector separates a temporary problem (an Event) from a lasting one (a
condition); a monitor that writes a Warning for every finding it sees for a moment floods a
cluster on every scale-up: a GPU node joining passes through operand pods not yet created or
not yet Ready, GFD's labels not yet written, Pending pods whose affinity no node matches yet.
So a Warning is written only once its finding has held for its *grace*:

- ``FAULT`` (5 s) for what nothing in a join or rollout passes through: an untolerated
  NoExecute taint, a cordon, a malformed label, a failed MIG layout or upgrade;
- ``SETTLE`` (1 min) for an operand pod missing (``operands``/``missing``: a deleted pod is made
  again by the DaemonSet controller within seconds, but a joining node gets its operands' pods
  one DaemonSet at a time: 20 nodes joining labcluster took up to 22 s) or running before its
  prerequisite (``out-of-order``: a rollout restarts them in any order);
- ``TRANSITION`` (2 min) for what a joining node or a rollout shows until it settles: operand
  pods starting, GFD's labels not yet there, NFD's labels before the operator's, a node not yet
  Ready, Pending pods (their affinity, taints, capacity) while nodes join;
- ``operands``/``not-ready`` 5 min: a driver pod compiles and loads its module for minutes.

Metrics are not delayed: ``gpulabel_problem`` shows a finding at once (it is ``check``'s
answer); ``gpulabel_events_pending`` counts the Warnings waiting out their grace. Every value
is overridable (``--event-grace CHECK/REASON=DURATION``; ``default=DURATION`` for the reasons not in
``DEFAULTS``; ``all=DURATION`` for every reason not named,
read by ``app.monitor.parse_graces``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["DEFAULTS", "FAULT", "NO_GRACE", "SETTLE", "TRANSITION", "Grace"]

FAULT = 5.0
SETTLE = 60.0
TRANSITION = 120.0

# (check, reason) -> seconds; a reason not here gets Grace.default (FAULT)
DEFAULTS: Mapping[tuple[str, str], float] = {
    ("operands", "missing"): SETTLE,
    ("operands", "out-of-order"): SETTLE,
    ("operands", "not-ready"): 300.0,
    ("operands", "unexpected"): TRANSITION,  # a pod still terminating after its deploy label went
    ("operands", "empty-deploy"): TRANSITION,  # the operator writes the value after the key
    ("audit", "missing"): TRANSITION,  # GFD labels a node once its pod runs there
    ("capacity", "missing"): TRANSITION,  # NFD labels first, the operator after
    ("capacity", "no-allocatable"): TRANSITION,  # the device plugin registers after it starts
    # a cloud's GPU node installs its driver after it joins (GKE repairs a node only after 15 minutes of it)
    ("capacity", "cloud-gpus-not-allocatable"): 600.0,
    ("capacity", "node-not-ready"): TRANSITION,  # a node joins NotReady
    ("capacity", "unlabelled-gpus"): TRANSITION,
    ("capacity", "allocatable-mismatch"): TRANSITION,  # sharing relabelled, the plugin restarting
    ("nfd", "nfd-missing"): TRANSITION,  # nfd-worker labels a joining node after its first scan
    **{
        (check, reason): TRANSITION
        for check in ("pending", "hazards")
        for reason in (
            "unschedulable",
            "node-name",
            "untolerated-taint",
            "node-selector",
            "affinity",
            "insufficient",
            "claim",
        )
    },
}


@dataclass(frozen=True, slots=True)
class Grace:
    """Seconds a finding of (check, reason) must hold before its Warning Event is written."""

    overrides: Mapping[tuple[str, str], float] = field(default_factory=dict)
    default: float = FAULT  # a reason neither in ``overrides`` nor in ``table``
    table: Mapping[tuple[str, str], float] = field(default_factory=lambda: DEFAULTS)

    def seconds(self, check: str, reason: str) -> float:
        key = (check, reason)
        if key in self.overrides:
            return self.overrides[key]
        return self.table.get(key, self.default)


NO_GRACE = Grace(default=0.0, table={})  # every finding's Warning at once (``--event-grace all=0s``; tests)
