"""``gpulabel explain pod/NS/NAME``: why one pod runs where it does, or why it waits, step by step.

The steps, in the order a pod meets them:

1. ``pod``: its phase, its node, the GPUs it asks for;
2. ``nodes``: where it fits now, in ``pending``'s words (its findings for the pod: a reason per group of
   nodes, and the scheduler's message gpulabel predicts), or the node it is bound to (``explain node/NAME``
   walks that node's chain);
3. ``autoscaler`` (only where the input has Karpenter NodePools, or Cluster Autoscaler's status or Events, and
   the pod fits no node): the autoscaler's verdict (:func:`gpulabel.checks.pending.autoscale.pod_verdict`, the
   pod's Events read as ``pending`` reads them), worded as ``pending``'s finding
   (:func:`~gpulabel.checks.pending.autoscale.verdict_words`): the node on its way (``waiting``), the
   NodePool that would make a node (``ok``), why no autoscaler will, with the fix (``broken``), or, where
   Cluster Autoscaler said nothing of the pod lately, not known (``waiting``). Where a node is on its way or a
   NodePool would make one, the ``nodes`` step is ``waiting``, not ``broken``.

Pure: the state, the pod and ``pending``'s findings for it in; the steps out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from gpulabel.checks.pending.autoscale import REASONS as AUTOSCALE_REASONS
from gpulabel.checks.pending.autoscale import AutoscaleVerdict, pod_verdict, verdict_words
from gpulabel.model import gpustack as G
from gpulabel.model.cluster import ClusterState, Pod
from gpulabel.model.findings import Cell, Finding
from gpulabel.model.severity import at_or_above

__all__ = ["PodStep", "explain_pod"]

_STATUS = {"coming": "waiting", "can": "ok", "none": "broken", "unknown": "waiting"}


@dataclass(frozen=True, slots=True)
class PodStep:
    name: str
    status: str  # ok | waiting (not yet: a node on its way) | broken
    evidence: str
    findings: tuple[Finding, ...] = ()
    verdict: AutoscaleVerdict | None = None  # the autoscaler step's

    def lines(self) -> list[str]:
        out = [f"{self.status:<7} {self.name}: {self.evidence}"]
        for f in self.findings:
            what = " ".join(p for p in (f.reason, *f.args) if p)
            count = f" {f.count} node(s)" if f.count else ""
            out.append(f"          {f.severity} {f.check} {what}{count}" + (f" ({f.detail})" if f.detail else ""))
        return out

    def row(self) -> dict[str, Cell]:
        v = self.verdict
        row: dict[str, Cell] = {
            "link": self.name,
            "status": self.status,
            "evidence": self.evidence,
            "findings": tuple(f"{f.check} {f.reason}" for f in self.findings),
        }
        if v is not None:  # the words are pending's finding's (its detail: Karpenter's reason and the fix)
            detail = verdict_words(v)[2]
            row |= {"verdict": v.kind, "nodepool": v.nodepool or None, "nodeclaim": v.nodeclaim or None}
            row["detail"] = detail
        return row


def _requests(pod: Pod) -> str:
    asked = [f"{r} {n}" for r, n in sorted(G.gpu_resources(pod.requests).items()) if n]
    return ", ".join(asked) or "no GPU"


def _pod_step(pod: Pod) -> PodStep:
    where = f"bound to node {pod.node_name}" if pod.node_name else "not bound to a node"
    status = "ok" if pod.node_name else "waiting"
    return PodStep("pod", status, f"{pod.phase}, {where}; requests {_requests(pod)}")


def _nodes_step(state: ClusterState, pod: Pod, own: tuple[Finding, ...], predicted: str) -> PodStep:
    if pod.node_name:
        return PodStep("nodes", "ok", f"runs on {pod.node_name}: explain node/{pod.node_name} walks its chain")
    nodes = len(state.nodes)
    if any(f.reason == "fits" for f in own):
        return PodStep("nodes", "ok", f"a node of {nodes} passes every filter: the scheduler has yet to bind it", own)
    said = f"; gpulabel predicts: {predicted}" if predicted else ""
    status = "broken" if any(at_or_above(f.severity, "warning") for f in own) else "waiting"
    return PodStep("nodes", status, f"fits none of {nodes} node(s){said}", own)


def _autoscaler_step(
    state: ClusterState, pod: Pod, said: Sequence[Finding], now: datetime | None = None
) -> PodStep | None:
    """The autoscaler's verdict, where ``pending`` gave one for the pod (an autoscaler in the input, no node
    fits), judged at ``now`` as ``pending`` judged it."""
    if not said:
        return None
    v = pod_verdict(state, pod, now)
    if v is None:  # pending had an autoscaler, the state has none: not the same input
        return None
    _, args, _ = verdict_words(v)
    pools = ", ".join(p.name for p in state.karpenter.nodepools)
    none = (
        "Cluster Autoscaler will not make a node for it (its NotTriggerScaleUp Event)"
        if v.autoscaler == "cluster-autoscaler"
        else f"no Karpenter NodePool will make a node for it (NodePools: {pools})"
    )
    head = {
        "coming": f"the node on its way is late ({' '.join(args)})"
        if v.late
        else f"a node is on its way ({' '.join(args)})",
        "can": f"Karpenter would make a node from NodePool {v.nodepool}",
        "none": none,
        "unknown": "Cluster Autoscaler said nothing of the pod lately: whether it will make a node is not known",
    }[v.kind]
    return PodStep("autoscaler", _STATUS[v.kind], head, tuple(said), v)


def explain_pod(
    state: ClusterState, pod: Pod, findings: Sequence[Finding], predicted: str = "", now: datetime | None = None
) -> list[PodStep]:
    """The pod's steps. ``findings``: ``pending``'s findings for the pod (none for a bound pod); ``predicted``:
    the scheduler message gpulabel predicts for it (``pending``'s ``pods`` row); ``now``: the time ``pending``
    judged at (the autoscalers' Events and a NodeClaim's age)."""
    own = tuple(f for f in findings if f.reason not in AUTOSCALE_REASONS)
    said = [f for f in findings if f.reason in AUTOSCALE_REASONS]
    nodes = _nodes_step(state, pod, own, predicted)
    auto = None if pod.node_name else _autoscaler_step(state, pod, said, now)
    if auto is None:
        return [_pod_step(pod), nodes]
    known = auto.verdict is not None and auto.verdict.kind != "unknown"
    if known and auto.status != "broken" and nodes.status == "broken":  # a node is on its way, or a NodePool makes one
        nodes = replace(nodes, status="waiting")
    return [_pod_step(pod), nodes, auto]
