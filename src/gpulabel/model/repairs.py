"""What to do about a GPU health finding: one repair line per reason, by Xid where one is known.

The actions are NVIDIA's Xid catalogue's (docs.nvidia.com/deploy/xid-errors, "Xid catalog"), as
docs/runbook.md's GPULabelGPUUnhealthy section words them; a health condition with no Xid in its reason or
message sends the reader to its publisher (the condition table's ``source``). Every line ends with the
runbook section, so ``-o wide``, ``explain``, JSON and the report carry both: the repair goes into the
finding's ``detail`` after ``; repair: ``, as upgrade's label repairs do (``checks/upgrade/rules.py``).

:func:`cordon_cause` ties a cordon to the driver upgrade or the health agent that made it, when one did.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from gpulabel.model.findings import Finding
from gpulabel.model.gpustack import DRIVER_UPGRADE_STATE, UPGRADE_IN_PROGRESS
from gpulabel.model.records import Node

__all__ = ["RUNBOOK", "XID_ACTIONS", "cordon_cause", "health_repair", "with_repairs", "xid_of"]

RUNBOOK = "docs/runbook.md#gpulabelgpuunhealthy"
CATALOGUE = "NVIDIA's Xid catalogue"

# Xid -> (what it is, what to do); the codes docs/runbook.md names, from NVIDIA's Xid catalogue
XID_ACTIONS: Mapping[int, tuple[str, str]] = {
    79: (
        "the GPU fell off the bus",
        "cordon and drain the node, then reboot or power-cycle it; falls off again: RMA it",
    ),
    48: ("double-bit ECC error", "drain the GPU's pods, reset the GPU (nvidia-smi -r) or reboot; repeated: RMA it"),
    95: ("uncontained ECC error", "drain the GPU's pods, reset the GPU (nvidia-smi -r) or reboot; repeated: RMA it"),
    94: ("contained ECC error", "restart the application that hit it; reset the GPU (nvidia-smi -r) when convenient"),
    63: (
        "row remapping pending",
        "drain the GPU's pods and reset the GPU (nvidia-smi -r): the remap takes effect then",
    ),
    64: ("row remapping failed", "drain the node and RMA the GPU"),
}
_XID = re.compile(r"\bxids?[\s_:=-]*(\d{1,3})\b", re.IGNORECASE)
_RESTART_PLUGIN = (
    "once the GPU is healthy, restart the device plugin's pod on the node (it keeps a device it marked "
    "unhealthy out of allocatable until it restarts)"
)


def xid_of(texts: Iterable[str]) -> int | None:
    """The first Xid named in ``texts`` (``reason=XID79``, ``Xid 79``, ``xid-error 48``), or None."""
    for text in texts:
        found = _XID.search(text)
        if found:
            return int(found[1])
    return None


def _by_xid(xid: int | None, where: str) -> str:
    """The catalogue's action for ``xid`` (named where it was read), or how to find the Xid."""
    if xid is None:
        return f"find the Xid (dmesg | grep -i xid on the node) and act as {CATALOGUE} says"
    if xid in XID_ACTIONS:
        what, action = XID_ACTIONS[xid]
        return f"Xid {xid} ({what}, {where}): {action}"
    return f"Xid {xid} ({where}): act as {CATALOGUE} says for it"


def health_repair(finding: Finding, xid: int | None, xid_from: str, sources: Mapping[str, str]) -> str:
    """The repair line of a health finding (``""`` for a reason without one). ``xid``: the Xid the node's
    health conditions name (``xid_from``: which), for the findings that do not carry one themselves;
    ``sources``: condition type -> its publisher."""
    own = xid_of((*finding.args, finding.detail))
    if own is not None:
        xid, xid_from = own, "its own reason"
    reason = finding.reason
    if reason in ("gpus-lost", "device-unhealthy"):
        return f"{_by_xid(xid, xid_from)}; {_RESTART_PLUGIN}"
    if reason == "condition":
        kind = finding.args[0].split("=", 1)[0] if finding.args else ""
        if own is not None:
            return _by_xid(own, "its reason")
        source = sources.get(kind, "the agent that publishes it (the config's health.conditions)")
        return f"follow the runbook of {source} for {kind}; {_by_xid(None, '')}"
    if reason in ("device-unknown", "condition-unknown", "claim-device-unknown"):
        return "the publisher cannot tell: check its agent's pod on the node, and nvidia-smi -q there"
    if reason == "health-taint":
        taint = finding.args[0].split(":", 1)[0].split("=", 1)[0] if finding.args else "KEY"
        return (
            f"a health agent's quarantine: repair what its condition names ({_by_xid(xid, xid_from)}); the agent "
            f"lifts the taint, or once the GPU is healthy: kubectl taint node {finding.node} {taint}-"
        )
    if reason == "claim-device-not-ready":
        return "the DRA driver marked the device not ready: drain the pods holding the claim, then reset or replace it"
    return ""


def with_repairs(findings: Sequence[Finding], sources: Mapping[str, str]) -> list[Finding]:
    """``findings`` (one node's health findings, or findings about no node) with their repair line after
    ``; repair: `` in the detail, then ``; runbook: `` and the runbook section. A lost or unhealthy device and a health
    taint take the Xid a condition of the same node names."""
    xid, kind = None, ""
    for f in findings:
        found = xid_of((*f.args, f.detail)) if f.reason == "condition" and f.args else None
        if found is not None:
            xid, kind = found, f.args[0].split("=", 1)[0]
            break
    where = f"from the node's {kind} condition" if kind else ""
    out = []
    for f in findings:
        line = health_repair(f, xid, where, sources)
        out.append(replace(f, detail=f"{f.detail}; repair: {line}; runbook: {RUNBOOK}") if line else f)
    return out


def cordon_cause(node: Node, findings: Iterable[Finding]) -> str:
    """Who cordoned ``node``, when the input tells: the driver upgrade (its state label in a cordoning step)
    or a health agent (a health condition or taint among the node's ``findings``); ``""`` otherwise."""
    if not node.unschedulable:
        return ""
    state = node.labels.get(DRIVER_UPGRADE_STATE, "")
    if state in UPGRADE_IN_PROGRESS and state != "upgrade-required":
        return f"cordoned by the GPU Operator's driver upgrade ({DRIVER_UPGRADE_STATE}={state}): it uncordons when done"
    for f in findings:
        if f.check == "health" and f.reason in ("condition", "health-taint"):
            said = " ".join(f.args)
            return f"cordoned while the health agent says {said}: repair it as the health link says, then uncordon"
    return ""
