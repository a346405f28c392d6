"""A node changed in place: which Pending pods its column re-judges (each pod against that one node), for the
pods no kept row tells (with claims or DeviceClass-backed requests, or ``--per-node``).

A Pending pod's piece of the pending result (its findings, row and lines;
``checks/pending/rules.py``) is made from its verdict on every node, in the nodes'
order: the grouped findings count the nodes per reason, name a few and take
the detail from the group's closest node (``shortfall``); ``--per-node`` gives
one finding per node; the scheduler's message counts the nodes per filter
reason, and preemption reads ``cap.lowest_priority < priority`` on the nodes
that only lack resources (``placement.scheduler_message``). So when one node
changes in place (its labels, taints, ``unschedulable`` or allocatable; its
name, hence its place in the order, the same), a pod's piece can change only
if its verdict on that node changed, or that node's preemption answer did.
:meth:`Columns.flipped` computes both before and after, for that node alone,
with placement's own code (``place`` over a one-node index: the verdict a full
run gives the node, since a full run evaluates each group of equal nodes
once), and re-judges only the pods where one differs.

What pending reads across nodes besides the verdicts is checked too:

- which pods are GPU pods (``pending.GpuPods``: the resources GPU nodes
  advertise and the label keys only GPU nodes carry): where the changed node's
  label keys, ``gpu.present``, resource names or GPU-node status differ, every
  Pending pod is re-judged;
- NFD hints (``nfdrules.label_hints``, every node's labels): with NodeFeature
  or NodeFeatureRule objects present, every Pending pod is re-judged;
- pods with ``resourceClaims`` or a request a DeviceClass backs (DRA reads every
  node's capacity): always re-judged, as :func:`~gpulabel.checks.pending.scope.flips` says.

The pods a kept spec row tells (``checks/pending/specrows.py``) are not judged here:
their rows' cells of the changed node are recomputed and their pieces told again
from the rows. A node that joins or leaves changes every pod's counts: the pods
judged here are all judged again then.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from gpulabel.checks.operands.standalone import gpu_node
from gpulabel.checks.placement.fit import NodeIndex, place
from gpulabel.k8s.nodeaffinity import PodRequirements, Result
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node, NodeCapacity, Pod

__all__ = ["Columns", "node_verdict"]

Key = tuple[str, str]


def node_verdict(req: PodRequirements, node: Node, cap: NodeCapacity | None, pod: Pod) -> tuple[Result, bool]:
    """The pod's verdict on ``node`` as ``pending_pods`` computes it (``place`` with the pod's requests), and
    whether preemption could find a victim there (a bound pod of lower priority)."""
    index = NodeIndex((node,), {node.name: cap} if cap is not None else None)
    result = place(req, index, full=True, request=pod.requests)[0]
    return result, cap is not None and cap.lowest_priority < pod.priority


def _gpu_view(node: Node) -> tuple[Any, ...]:
    """What ``pending.GpuPods`` reads of a node (which pods count as GPU pods)."""
    return (
        frozenset(node.labels),
        node.labels.get(V.GPU_PRESENT),
        frozenset(node.amounts or ()),
        gpu_node(node),
    )


class Columns:
    """The nodes changed in place since the last assess (each as it was before), and the pods to re-judge."""

    def __init__(self) -> None:
        self._old: dict[str, Node] = {}  # node name -> its record before the batch
        self._caps: dict[str, NodeCapacity | None] = {}  # ... and its capacity then

    def changed(self, old: Node) -> None:
        """``old`` (the record kept before this event) changed in place: the first record of the batch counts."""
        self._old.setdefault(old.name, old)

    def before(self, capacities: Mapping[str, NodeCapacity]) -> None:
        """Keep the changed nodes' capacities as they were before the batch (call before they are refreshed)."""
        self._caps = {name: capacities.get(name) for name in self._old}

    def clear(self) -> None:
        self._old, self._caps = {}, {}

    def flipped(
        self,
        pods: Mapping[Key, Pod],
        pending: Collection[Key],
        nodes: Mapping[str, Node],
        capacities: Mapping[str, NodeCapacity],
        state: ClusterState,
    ) -> set[Key] | None:
        """The Pending pods (``pending`` keys of ``pods``) whose piece may differ now that the changed nodes are
        ``nodes``' records with ``capacities``; ``None``: every Pending pod must be re-judged."""
        if not self._old:
            return set()
        if state.nfd.rules or state.nfd.nodefeatures:
            return None
        changed: list[tuple[Node, NodeCapacity | None, Node, NodeCapacity | None]] = []
        for name, old in self._old.items():
            new = nodes.get(name)
            if new is None or _gpu_view(old) != _gpu_view(new):
                return None
            changed.append((old, self._caps.get(name), new, capacities.get(name)))
        backed = state.dra.extended
        out: set[Key] = set()
        # pods of one compiled spec (model/podspec.py), pin, requests and priority: one answer
        verdicts: dict[tuple[Any, ...], bool] = {}
        for key in pending:
            pod = pods[key]
            if pod.spec.resource_claims or any(r in backed for r in pod.requests):
                out.add(key)
                continue
            same = (pod.spec, pod.pinned, id(pod.requests), pod.priority)
            flip = verdicts.get(same)
            if flip is None:
                req = pod.requirements
                flip = verdicts[same] = any(
                    node_verdict(req, old, old_cap, pod) != node_verdict(req, new, new_cap, pod)
                    for old, old_cap, new, new_cap in changed
                )
            if flip:
                out.add(key)
        return out
