"""``explain pod/NS/NAME``: one pod's way to a node (``checks/explain/pod.py``), its findings ``pending``'s on the
same input, and, where Karpenter NodePools or Cluster Autoscaler are, the autoscaler's verdict on it."""

from __future__ import annotations

import difflib
from dataclasses import replace

from gpulabel.app.checks import LIVE_PODS, Verdict, judge
from gpulabel.app.session import Outcome, Session
from gpulabel.checks.registry import CheckOptions, run_check
from gpulabel.errors import InputError
from gpulabel.model.findings import Finding, Result, Section

__all__ = ["run_explain_pod"]


def run_explain_pod(session: Session, ref: str, opts: CheckOptions, verdict: Verdict) -> Outcome:
    """The pod's steps; exit 1 when a finding ``pending`` has for it is at or above the fail level. An unknown pod
    is one line (with the nearest name of its namespace when one is close)."""
    from gpulabel.checks.explain.pod import explain_pod
    from gpulabel.k8s.dra.objects import DRA_KINDS
    from gpulabel.k8s.karpenter.objects import KARPENTER_KINDS
    from gpulabel.model.cluster import AUTOSCALER_KINDS
    from gpulabel.model.severity import fails

    kinds = ["Node", "Pod", *DRA_KINDS, *KARPENTER_KINDS, *AUTOSCALER_KINDS]
    state = session.state(kinds, pod_field_selector=LIVE_PODS)
    namespace, _, name = ref.partition("/")
    # live lists no finished pod (LIVE_PODS): a snapshot's is left out too, so both say the same
    pods = [p for p in state.pods if p.namespace == namespace and p.phase not in ("Succeeded", "Failed")]
    pod = next((p for p in pods if p.name == name), None)
    if pod is None:
        near = difflib.get_close_matches(name, [p.name for p in pods], 1, 0.75)
        hint = f" (did you mean pod/{namespace}/{near[0]}?)" if near else " (a finished pod is not read)"
        raise InputError(f"pod/{ref}", f"not found{hint}")
    findings: list[Finding] = []
    predicted = ""
    if not pod.node_name:  # pending judges it: every Pending pod of its namespace, GPU or not (--all-pods)
        mine = replace(opts, namespace=namespace, all_pods=True)
        judged = judge(run_check("pending", state, mine), state, replace(verdict, baseline=None)).result
        findings = [f for f in judged.findings if f.pod == pod.ref]
        rows = next((s.rows for s in judged.sections if s.name == "pods"), ())
        predicted = next((str(r.get("predicted_message") or "") for r in rows if r.get("pod") == pod.ref), "")
    steps = explain_pod(state, pod, findings, predicted, opts.now)
    first = next((s.name for s in steps if s.status == "broken"), None)
    head = (
        f"pod/{pod.ref}: {pod.phase}"
        + (f" on {pod.node_name}" if pod.node_name else "")
        + "; "
        + (f"first broken step: {first}" if first else "no step broken")
    )
    text = [head]
    for step in steps:
        text.extend(step.lines())
    auto = next((s.verdict for s in steps if s.verdict is not None), None)
    fields = {
        "pod": pod.ref,
        "phase": pod.phase,
        "node": pod.node_name or None,
        "autoscaler": auto.kind if auto is not None else None,
        "first_broken": first,
    }
    result = Result(
        "explain", (), (Section("links", tuple(s.row() for s in steps), tuple(text)),), ok="", fields=fields
    )
    return Outcome(result, 1 if fails(findings, verdict.fail_level) else 0)
