"""``explain workload/NS/NAME``: a Kueue Workload from its queue to its pods' nodes (``checks/queues/explain.py``),
its pods' findings those of ``pending`` and ``queues`` on the same input."""

from __future__ import annotations

import difflib
from dataclasses import replace

from gpulabel.app.checks import LIVE_PODS, Verdict, judge
from gpulabel.app.session import Outcome, Session
from gpulabel.checks.registry import CheckOptions, run_check
from gpulabel.errors import InputError
from gpulabel.model.findings import Result, Section

__all__ = ["run_explain_workload"]


def run_explain_workload(session: Session, ref: str, opts: CheckOptions, verdict: Verdict) -> Outcome:
    """The Workload's links; exit 1 when a finding of its pods is at or above the fail level. An unknown
    Workload is one line (with the nearest name of its namespace when one is close)."""
    from gpulabel.checks.queues.explain import workload_links, workload_pods
    from gpulabel.k8s.dra.objects import DRA_KINDS
    from gpulabel.k8s.karpenter.objects import KARPENTER_KINDS
    from gpulabel.model.kueue import KUEUE_KINDS
    from gpulabel.model.severity import fails

    state = session.state(["Node", "Pod", *DRA_KINDS, *KUEUE_KINDS, *KARPENTER_KINDS], pod_field_selector=LIVE_PODS)
    wl = state.kueue.workloads.get(ref)
    if wl is None:
        if "Workload" not in state.kinds:
            raise InputError(f"workload/{ref}", "not found: the input has no Kueue Workloads")
        namespace = ref.partition("/")[0]
        names = [w.name for w in state.kueue.workloads.values() if w.namespace == namespace]
        near = difflib.get_close_matches(ref.partition("/")[2], names, 1, 0.75)
        raise InputError(
            f"workload/{ref}", f"not found (did you mean workload/{namespace}/{near[0]}?)" if near else "not found"
        )
    pods = {f"{p.namespace}/{p.name}" for p in workload_pods(state, wl)}
    mine = replace(opts, namespace=wl.namespace)
    judged = [
        f
        for name in ("pending", "queues")
        for f in judge(run_check(name, state, mine), state, replace(verdict, baseline=None)).result.findings
        if f.pod in pods
    ]
    links = workload_links(state, wl, judged)
    first = next((link.name for link in links if link.status == "broken"), None)
    flavors = sorted({f for a in wl.assignments for f in a.flavors.values()})
    state_word = "admitted" if wl.admitted else "quota reserved" if wl.condition("QuotaReserved") else "not admitted"
    where = f" by ClusterQueue {wl.cluster_queue}" if wl.cluster_queue else ""
    to = f" to flavor(s) {', '.join(flavors)}" if flavors else ""
    head = f"workload/{wl.ref}: {state_word}{where}{to}; " + (
        f"first broken link: {first}" if first else "no link broken"
    )
    text = [head]
    for link in links:
        text.extend(link.lines())
    fields = {
        "workload": wl.ref,
        "cluster_queue": wl.cluster_queue or None,
        "local_queue": wl.queue or None,
        "admitted": wl.admitted,
        "flavors": ",".join(flavors) or None,  # a top-level array would be a section: comma-joined
        "first_broken": first,
    }
    result = Result(
        "explain", (), (Section("links", tuple(link.row() for link in links), tuple(text)),), ok="", fields=fields
    )
    return Outcome(result, 1 if fails(judged, verdict.fail_level) else 0)
