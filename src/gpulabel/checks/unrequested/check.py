"""The ``unrequested`` check, defined once: running pods that see GPUs without requesting them.

Rerun whole when a Node, Pod or DaemonSet changes (:func:`~gpulabel.checks.engine.definition.whole`):
correct, not incremental. Only a change of what it reads reruns it: a pod's that runs, sees GPUs and asks for
none (before or after), a node's GPU-ness, and, while such a pod exists, a DaemonSet's.
"""

from __future__ import annotations

from gpulabel.checks.engine.definition import Check, CheckOptions, whole
from gpulabel.checks.operands.standalone import gpu_node
from gpulabel.checks.unrequested import rules
from gpulabel.model.cluster import ClusterState, Node, Pod
from gpulabel.model.findings import Result

__all__ = ["CHECK"]

_KINDS = ("Node", "Pod", "DaemonSet")


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    return Result("unrequested", tuple(rules.unrequested(state, opts.namespace)))


def _pod_view(pod: Pod) -> object:
    """What :func:`rules.use` reads of a pod that may see GPUs unasked (``None``: not one)."""
    if pod.phase != "Running" or not pod.sight or rules.asks(pod):
        return None
    return (pod.ref, pod.node_name, pod.sight, pod.owners)


def _node_view(node: Node) -> object:
    return gpu_node(node)


def _caveats(state: ClusterState, opts: CheckOptions) -> tuple[str, ...]:
    return () if "DaemonSet" in state.kinds else (rules.NO_DAEMONSETS,)


CHECK: Check = Check(
    "unrequested",
    _KINDS,
    ("Node", "Pod"),
    _run,
    "running pods on GPU nodes that see GPUs without requesting them (NVIDIA_VISIBLE_DEVICES, privileged, CDI)",
    reasons=lambda: rules.REASONS,
    caveats=_caveats,
    pieces=whole(_KINDS, {"Pod": _pod_view, "Node": _node_view}, pods_needed=True),
)
