"""``place``: which nodes each workload in the manifests can be scheduled on, and why not the others.

With ``explain`` (every output but text and name), each verdict carries every
failing filter, and a workload that fits nowhere gets advice: a label change
that makes it fit on a node by every filter, or why no single one does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gpulabel.app.session import Outcome, Session

__all__ = ["PlaceOptions", "run_place"]


@dataclass(frozen=True, slots=True)
class PlaceOptions:
    manifests: tuple[str, ...]  # files; - is stdin
    explain: bool = False  # every failing filter per node, and the advice
    per_node: bool = False  # one verdict per node instead of one per group of nodes with the same verdict
    now: datetime | None = None  # when a NodeClaim's age is judged (--at; None: the run's time)


def run_place(session: Session, opts: PlaceOptions) -> Outcome:
    """Every workload against every node; exit 0 when each fits some node, 1 otherwise, 2 when the input holds no
    node (app/selected.py)."""
    from gpulabel.checks.pending.placeview import place_result
    from gpulabel.cluster.manifests import load_workloads
    from gpulabel.k8s.karpenter.objects import KARPENTER_KINDS

    dra_objects: list[tuple[str, dict[str, Any]]] = []
    workloads = load_workloads(opts.manifests, dra_objects)
    # Karpenter's NodePools and NodeClaims: which NodePool would make a node for a workload that fits none
    # (-o wide and structured output: checks/pending/placeview.py)
    karpenter = KARPENTER_KINDS if opts.explain else ()
    # claims, or extended resources (a domain-qualified name) that a DeviceClass may back
    if any(w.resource_claims or any("/" in r for r in w.requests) for w in workloads):
        import dataclasses

        from gpulabel.k8s.dra.objects import DRA_KINDS

        state = session.state(["Node", "Pod", *DRA_KINDS, *karpenter])
        ns = next((w.namespace for w in workloads if w.resource_claims), "default")
        state = dataclasses.replace(state, dra=state.dra.with_objects(dra_objects, ns))
    else:
        from gpulabel.k8s.nfd.objects import NFD_KINDS

        # NodeFeatureRules explain a missing feature.node.kubernetes.io label (-o wide and structured output)
        state = session.state(["Node", "Pod", *(NFD_KINDS if opts.explain else ()), *karpenter])
    from datetime import UTC

    now = opts.now or datetime.now(UTC)  # a NodeClaim's age (the autoscaler's verdict, -o wide)
    result, all_fit = place_result(state, workloads, full=opts.explain, per_node=opts.per_node, now=now)
    from gpulabel.app.selected import refuse_empty

    return refuse_empty(Outcome(result, 0 if all_fit else 1), session.source, state)
