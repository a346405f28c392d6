"""The ``cudaskew`` check, defined once: GPU pods failing on a driver older than their image's CUDA.

Rerun whole when a Node or Pod changes (:func:`~gpulabel.checks.engine.definition.whole`): correct, not
incremental (the selector it proposes is matched against every node). Only a change of what it reads reruns
it: a bound pod's with container messages (before or after), and, while such a pod exists, a node's labels or
amounts.
"""

from __future__ import annotations

from gpulabel.checks.cudaskew import rules
from gpulabel.checks.engine.definition import Check, CheckOptions, whole
from gpulabel.model.cluster import ClusterState, Node, Pod
from gpulabel.model.findings import Result

__all__ = ["CHECK"]

_KINDS = ("Node", "Pod")


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    return Result("cudaskew", tuple(rules.cudaskew(state, opts.namespace)))


def _pod_view(pod: Pod) -> object:
    """What :func:`rules.cudaskew` reads of a pod (``None``: not bound, or no container message)."""
    return (pod.ref, pod.node_name, pod.messages) if pod.node_name and pod.messages else None


def _node_view(node: Node) -> object:
    return (node.labels, node.amounts)


CHECK: Check = Check(
    "cudaskew",
    _KINDS,
    _KINDS,
    _run,
    "pods failing because the node's driver supports an older CUDA than their image needs",
    reasons=lambda: rules.REASONS,
    pieces=whole(_KINDS, {"Pod": _pod_view, "Node": _node_view}, pods_needed=True),
)
