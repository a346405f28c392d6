"""``monitor --event-evidence``: a node's Warning Event says why its root cause's operand pod fails.

A subclass of the controller's Event planner (no change to ``controller/``): the message of a node's
Warning Event gets ``; why: <cause> [<signature>]`` from the blamed pod's log tail and Events, read live
when the Event's series starts. The metrics are untouched: their ``reason`` labels stay the checks'
bounded reasons, and the signature in the message is a bounded id too.
"""

from __future__ import annotations

from collections.abc import Callable

from gpulabel.checks.engine.assessment import Assessment
from gpulabel.checks.engine.rootcause import Cause
from gpulabel.checks.explain.evidence import blamed, diagnose
from gpulabel.cluster.client import KubeClient
from gpulabel.controller.events import NOTE_LIMIT, EventKey, EventPlanner, Plan
from gpulabel.controller.grace import Grace
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Finding
from gpulabel.model.redaction import redact_line

__all__ = ["ExplainingPlanner", "live_explainer"]


def live_explainer(client: KubeClient, warn: Callable[[str], None]) -> Callable[[Cause, ClusterState], str]:
    """For the monitor: the cause of a node's root cause, read live (each blamed pod's tail and Events, bounded)."""
    from gpulabel.cluster.evidence import EvidenceLimits, collect_evidence

    said: set[str] = set()

    def why(cause: Cause, state: ClusterState) -> str:
        blames = blamed(state, [cause.finding])
        if not blames:
            return ""
        evidence = collect_evidence(client, blames[:1], EvidenceLimits(tail_lines=50, total_bytes=256 * 1024))
        for u in evidence.unread:
            if u.split(":")[0] not in said:
                said.add(u.split(":")[0])
                warn(f"evidence: {redact_line(u)}")
        return diagnose(blames[0], evidence).summary()

    return why


class ExplainingPlanner(EventPlanner):
    """The monitor's Event planner, whose node Warning messages end with the cause of the node's root cause
    (``; why: <cause> [<signature>]``). It asks ``why`` only when an Event's series starts (its message is kept
    for the series), so a lasting problem costs one read. Metrics are untouched: their labels stay the checks'
    bounded reasons."""

    def __init__(self, why: Callable[[Cause, ClusterState], str], grace: Grace | None = None) -> None:
        super().__init__(grace=grace)
        self._why = why
        self._state: ClusterState | None = None

    def plan(self, previous: Assessment | None, current: Assessment) -> Plan:
        self._state = current.state
        return super().plan(previous, current)

    def _note(self, key: EventKey, findings: list[Finding], cause: Cause | None, warned: str = "") -> str:
        text = super()._note(key, findings, cause, warned)
        if cause is None or key.type != "Warning" or key.regarding.kind != "Node" or self._state is None:
            return text
        said = self._why(cause, self._state)
        return f"{text}; why: {said}"[:NOTE_LIMIT] if said else text
