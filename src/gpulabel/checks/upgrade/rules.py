"""``gpulabel upgrade``: is a driver upgrade wedged, and are operands left paused?

The driver upgrade controller walks ``nvidia.com/gpu-driver-upgrade-state``
from ``upgrade-required`` to ``upgrade-done`` (or ``upgrade-failed``), pausing
operands with ``paused-for-driver-upgrade``; mig-manager pauses them with
``paused-for-mig-change`` while ``mig.config.state`` is ``pending`` or
``rebooting``. A pause left behind keeps an operand off the node for good, and
the GPU Operator keeps any deploy-label value it does not know, so a typo
disables the operand silently.

gpulabel repairs nothing here. Where one label change is the documented
recovery, the finding carries it (``repair``, shown in ``-o wide``):
``upgrade-failed`` -> set the state back to ``upgrade-required`` (after fixing
the cause); ``paused-stuck`` -> set the deploy label back to ``true`` (nothing
is working on the node); ``bad-value`` -> the value it was clearly meant to be
(``True`` -> ``true``) and nothing for anything else.
"""

from __future__ import annotations

from datetime import datetime

from gpulabel.model import gpustack as G
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding, label_finding
from gpulabel.model.severity import Reason

__all__ = ["REASONS", "managed", "reads_clock", "repair_command", "stuck_detection_caveats", "upgrade", "upgrade_node"]

REASONS: dict[str, Reason] = {
    "upgrade-failed": Reason("error", "the driver upgrade failed on this node"),
    "stuck": Reason("error", "a driver upgrade state other than done or failed older than --stuck-after"),
    "slow": Reason(
        "warning",
        "a driver upgrade state other than done or failed, or a pause after its change ended, "
        "for more than half of --stuck-after",
    ),
    "paused-stuck": Reason(
        "error",
        "an operand paused for a MIG change or driver upgrade that ended longer than --stuck-after ago (or at a "
        "time the input does not say)",
    ),
    "bad-value": Reason(
        "error", "a deploy-label value the GPU Operator does not know (the operand silently stays off)"
    ),
}


def repair_command(node: str, key: str, value: str) -> str:
    return f"kubectl label node {node} {key}={value} --overwrite"


def _finding(node: Node, key: str, reason: str, detail: str, repair: str | None = None) -> Finding:
    if repair is not None:
        detail = f"{detail}; repair: {repair_command(node.name, key, repair)}"
    return label_finding("upgrade", reason, node, key, detail)


def _left_behind(node: Node, key: str, why: str, age: float | None, stuck_after: float) -> list[Finding]:
    """A pause whose change has ended ``age`` seconds ago: nothing yet (the operator un-pauses), ``slow``
    past half of ``stuck_after``, ``paused-stuck`` past it or when the end's time is unknown."""
    late = G.overdue(age, stuck_after)
    if age is None or late == "stuck":
        return [_finding(node, key, "paused-stuck", why, repair="true")]
    if late:
        return [_finding(node, key, late, f"{why} for {G.format_age(age)} (--stuck-after {G.format_age(stuck_after)})")]
    return []


_PAUSES = (G.PAUSED_FOR_MIG_CHANGE, G.PAUSED_FOR_DRIVER_UPGRADE)


def reads_clock(node: Node) -> bool:
    """Whether :func:`upgrade_node`'s findings for ``node`` depend on the time: the age of an upgrade in
    progress, or of the change a paused deploy label waits for."""
    labels = node.labels
    if labels.get(G.DRIVER_UPGRADE_STATE) in G.UPGRADE_IN_PROGRESS:
        return True
    return any(v in _PAUSES and k.startswith(V.DEPLOY_PREFIX) for k, v in labels.items())


def upgrade_node(node: Node, now: datetime, stuck_after: float) -> list[Finding]:
    labels = node.labels
    found: list[Finding] = []
    state = labels.get(G.DRIVER_UPGRADE_STATE)
    if state == G.UPGRADE_FAILED:
        found.append(
            _finding(
                node,
                G.DRIVER_UPGRADE_STATE,
                "upgrade-failed",
                "the driver upgrade controller gave up on this node; once the cause is fixed, "
                "upgrade-required starts it again",
                repair="upgrade-required",
            )
        )
    elif state in G.UPGRADE_IN_PROGRESS:
        age = G.label_age(node, G.DRIVER_UPGRADE_STATE, now)
        if age is not None and (late := G.overdue(age, stuck_after)):
            found.append(
                _finding(
                    node,
                    G.DRIVER_UPGRADE_STATE,
                    late,
                    f"{state} for {G.format_age(age)} (--stuck-after {G.format_age(stuck_after)})",
                )
            )
    mig_working = labels.get(G.MIG_CONFIG_STATE) in G.MIG_IN_PROGRESS
    upgrading = state in G.UPGRADE_IN_PROGRESS
    for key in sorted([k for k in labels if k.startswith(V.DEPLOY_PREFIX)]):
        value = labels[key]
        if value == G.PAUSED_FOR_MIG_CHANGE and not mig_working:
            mig_state = labels.get(G.MIG_CONFIG_STATE, "absent")
            why = f"{value} but {G.MIG_CONFIG_STATE} is {mig_state}: mig-manager is not changing this node"
            found.extend(_left_behind(node, key, why, G.label_age(node, G.MIG_CONFIG_STATE, now), stuck_after))
        elif value == G.PAUSED_FOR_DRIVER_UPGRADE and not upgrading:
            why = f"{value} but {G.DRIVER_UPGRADE_STATE} is {state or 'absent'}: no upgrade in progress"
            age = G.label_age(node, G.DRIVER_UPGRADE_STATE, now) if state else None
            found.extend(_left_behind(node, key, why, age, stuck_after))
        elif value not in G.DEPLOY_VALUES:
            meant = value.lower() if value.lower() in ("true", "false", "pre-installed") else None
            found.append(
                _finding(
                    node,
                    key,
                    "bad-value",
                    f"{value!r} is not true, false, pre-installed, {G.PAUSED_FOR_MIG_CHANGE} or "
                    f"{G.PAUSED_FOR_DRIVER_UPGRADE}: the operator keeps it and the operand stays off",
                    repair=meant,
                )
            )
    return found


def upgrade(state: ClusterState, now: datetime, stuck_after: float) -> list[Finding]:
    """Every node's driver-upgrade and deploy-label findings, by node."""
    return [f for node in state.nodes for f in upgrade_node(node, now, stuck_after)]


def managed(node: Node) -> bool:
    """Whether the node says when its labels were written (managedFields): the fleet fact stuck detection needs."""
    return bool(node.managed_fields)


def stuck_detection_caveats(state: ClusterState, managed: bool) -> tuple[str, ...]:
    """Stuck detection (upgrade's and mig's) reads when labels were written (managedFields); without any
    (``managed``: some node has them), it is said to be off."""
    if state.nodes and not managed:
        return ("stuck detection skipped (no managedFields: capture with gpulabel snapshot or --show-managed-fields)",)
    return ()
