"""``gpus``: the fleet inventory, per kind of node (or per ``--by`` label value and product)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpulabel.app.session import Outcome, Session

if TYPE_CHECKING:
    from gpulabel.app.fleet import Member
    from gpulabel.app.fleetreport import FleetCheck

__all__ = ["GpusOptions", "run_fleet_gpus", "run_gpus"]


@dataclass(frozen=True, slots=True)
class GpusOptions:
    by: str | None = None  # a node label to group by (a pool), with the product
    namespace: str | None = None  # only the pods of this namespace count as requesting
    health_conditions: Mapping[str, str] = dataclasses.field(default_factory=dict)  # the config's health.conditions


def run_gpus(session: Session, opts: GpusOptions) -> Outcome:
    """One row per group, then the totals; informational: exit 0 (2 when the input selects nothing: app/selected.py)."""
    from gpulabel.checks.health.inventory import check_by, inventory_result

    check_by(opts.by)  # before anything is read
    from gpulabel.app.selected import EMPTY_EXIT, nothing_selected
    from gpulabel.checks.queues.usage import BY_CLUSTERQUEUE, BY_FLAVOR
    from gpulabel.k8s.dra.objects import DRA_KINDS
    from gpulabel.k8s.karpenter.objects import KARPENTER_KINDS

    if opts.by in (BY_FLAVOR, BY_CLUSTERQUEUE):
        return _run_queue_gpus(session, opts, opts.by)

    # DRA devices count per DeviceClass; DaemonSets tell the GPU stack's operands from pods that see GPUs unasked;
    # Karpenter's NodePools and NodeClaims: the GPUs each NodePool may still add (checks/pending/poolroom.py)
    state = session.state(["Node", "Pod", "DaemonSet", *DRA_KINDS, *KARPENTER_KINDS])
    empty = nothing_selected(session.source, state, opts.namespace)
    if opts.namespace:
        state = dataclasses.replace(state, pods=tuple(p for p in state.pods if p.namespace == opts.namespace))
    from gpulabel.checks.health.rules import condition_table

    outcome = Outcome(inventory_result(state, opts.by, condition_table(opts.health_conditions)))
    return outcome if empty is None else dataclasses.replace(outcome, code=EMPTY_EXIT, warnings=(empty,))


def _run_queue_gpus(session: Session, opts: GpusOptions, by: str) -> Outcome:
    """``gpus --by flavor|clusterqueue``: Kueue's GPU quota, what it admitted, and the flavors' nodes' GPUs. The
    namespace narrows the Workloads counted, not the nodes' requested GPUs (the nodes are every pod's)."""
    from gpulabel.checks.health.rules import condition_table
    from gpulabel.checks.queues.usage import queue_result
    from gpulabel.k8s.karpenter.objects import KARPENTER_KINDS
    from gpulabel.model.kueue import KUEUE_KINDS

    state = session.state(["Node", "Pod", *KUEUE_KINDS, *KARPENTER_KINDS])
    if opts.namespace:
        kueue = state.kueue
        workloads = {k: w for k, w in kueue.workloads.items() if w.namespace == opts.namespace}
        state = dataclasses.replace(state, kueue=dataclasses.replace(kueue, workloads=workloads))
    return Outcome(queue_result(state, by, condition_table(opts.health_conditions)))


def run_fleet_gpus(members: Sequence[Member], opts: GpusOptions) -> FleetCheck:
    """``gpus`` on each cluster of a fleet (``--cluster NAME=SNAPSHOT``, ``--context`` repeated), a few at once,
    as ``check`` over a fleet: one inventory per cluster, each warning naming its cluster."""
    from gpulabel.app.fleet import in_parallel
    from gpulabel.app.fleetreport import FleetCheck

    said: list[str] = []  # the sessions' warnings (a snapshot's duplicates), from every thread

    def one(m: Member) -> tuple[str, Outcome]:
        return m.name, run_gpus(Session(m.source, lambda text: said.append(f"cluster {m.name}: {text}")), opts)

    outcomes = in_parallel(members, one)
    return FleetCheck(tuple(outcomes), (*said, *(f"cluster {name}: {w}" for name, o in outcomes for w in o.warnings)))
