"""``unrequested``: running pods that see a GPU node's GPUs without asking the scheduler for any.

The scheduler counts the GPUs a pod requests (``nvidia.com/*`` resources, or ResourceClaims); a pod that
requests none can still see GPUs through NVIDIA's container stack (:mod:`gpulabel.model.gpusight`: the
``NVIDIA_VISIBLE_DEVICES`` variable, a privileged container, the ``cdi.k8s.io/`` annotations naming NVIDIA
CDI devices). Those GPUs are then in use outside the scheduler's count: the scheduler and quotas hand them
to other pods too (REFERENCE section 19: k8s-device-plugin#1605, #1596).

The GPU stack's own operands see every GPU on purpose (the device plugin and the validator set
``NVIDIA_VISIBLE_DEVICES=all``; the driver, toolkit, DCGM, MIG manager and the DRA driver's kubelet plugin
run privileged). They are known by the DaemonSet that owns their pod, as gpulabel knows operands elsewhere:
the GPU Operator's by the deploy label its template requires (``operand_of_daemonset``), the device-plugin
chart's, GFD's and NVIDIA's DRA driver's by what their containers run (``standalone_kind``), and DCGM and
dcgm-exporter run on their own by their NVIDIA images (:data:`MONITOR_IMAGES`). Never by a pod's name.

One warning per pod (Running, bound to a GPU node, requesting no GPU), naming each way it sees GPUs.
Without DaemonSets in the input a DaemonSet's pod cannot be told from an operand and is left out (the
caveat says so). What is not modelled is in :mod:`gpulabel.model.gpusight`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gpulabel.checks.operands.daemonsets import operand_of_daemonset
from gpulabel.checks.operands.standalone import gpu_node, standalone_kind
from gpulabel.model.cluster import ClusterState, DaemonSet, Node, Pod
from gpulabel.model.findings import Finding
from gpulabel.model.gpusight import Seen, seen
from gpulabel.model.severity import Reason

__all__ = [
    "MONITOR_IMAGES",
    "NO_DAEMONSETS",
    "REASONS",
    "Unrequested",
    "operand_daemonsets",
    "unrequested",
    "use",
    "uses",
]

# NVIDIA's DCGM and dcgm-exporter images (nvcr.io/nvidia/cloud-native/dcgm, nvcr.io/nvidia/k8s/dcgm-exporter),
# which see every GPU to monitor it when run without the operator
MONITOR_IMAGES = ("nvidia/cloud-native/dcgm", "nvidia/k8s/dcgm-exporter")
NO_DAEMONSETS = (
    "DaemonSets not in the input: pods a DaemonSet owns are not judged (they may be the GPU stack's operands)"
)

REASONS: dict[str, Reason] = {
    "gpus-unrequested": Reason(
        "warning",
        "a running pod on a GPU node requests no GPU but sees GPUs (NVIDIA_VISIBLE_DEVICES, privileged, CDI "
        "annotations): they are in use outside the scheduler's count",
    ),
}


@dataclass(frozen=True, slots=True)
class Unrequested:
    """A pod that sees GPUs it did not request, on its node: ``devices`` ``"all"`` or how many at most."""

    pod: Pod
    seen: tuple[Seen, ...]

    @property
    def devices(self) -> str:
        counts = [s.devices for s in self.seen]
        return "all" if "all" in counts else str(max(int(c) for c in counts))


def _monitor(ds: DaemonSet) -> bool:
    containers = ds.template_spec.get("containers")
    if not isinstance(containers, list):
        return False
    return any(
        isinstance(c, Mapping) and any(i in str(c.get("image") or "") for i in MONITOR_IMAGES) for c in containers
    )


def operand_daemonsets(daemonsets: Iterable[DaemonSet]) -> tuple[frozenset[str], frozenset[str]]:
    """The uids of the DaemonSets that run the GPU stack's operands, and of every DaemonSet."""
    every = tuple(daemonsets)
    ours = {ds.uid for ds in every if operand_of_daemonset(ds) is not None or standalone_kind(ds) or _monitor(ds)}
    return frozenset(ours), frozenset(ds.uid for ds in every)


def asks(pod: Pod) -> bool:
    """Whether the pod requests GPUs (extended resources or claims): what it sees, it asked for."""
    return bool(pod.gpu_resources or pod.spec.resource_claims)


def use(
    pod: Pod, nodes: Mapping[str, Node], operands: frozenset[str], daemonsets: frozenset[str] | None
) -> Unrequested | None:
    """The pod's unrequested sight of GPUs, or ``None``: not Running, not on a GPU node, requesting GPUs, an
    operand's, or a DaemonSet's pod when ``daemonsets`` is ``None`` (the input has none)."""
    if pod.phase != "Running" or not pod.sight or asks(pod):
        return None
    node = nodes.get(pod.node_name)
    if node is None or not gpu_node(node):
        return None
    owned = [uid for kind, uid in pod.owners if kind == "DaemonSet"]
    if owned and (daemonsets is None or any(uid in operands for uid in owned)):
        return None
    found = seen(pod.sight)
    return Unrequested(pod, tuple(found)) if found else None


def uses(state: ClusterState, namespace: str | None = None) -> list[Unrequested]:
    """Every pod's unrequested sight, in the state's order."""
    operands, every = operand_daemonsets(state.daemonsets)
    daemonsets = every if "DaemonSet" in state.kinds else None
    nodes = {n.name: n for n in state.nodes}
    out = []
    for pod in state.pods:
        if namespace is None or pod.namespace == namespace:
            found = use(pod, nodes, operands, daemonsets)
            if found is not None:
                out.append(found)
    return out


def _finding(u: Unrequested) -> Finding:
    ways = "; ".join(s.how for s in u.seen)
    detail = (
        f"requests no GPU, yet sees {u.devices} of the node's GPUs: {ways}. The scheduler and quotas count none "
        "of them, so they give the same GPUs to pods that ask. Request them (resources.limits nvidia.com/gpu, "
        "or a ResourceClaim), or drop the variable/annotation/privileged (NVIDIA_VISIBLE_DEVICES=void hides "
        "them where the image sets it)"
    )
    args = tuple(sorted({s.sight.way for s in u.seen}))
    return Finding("unrequested", "gpus-unrequested", node=u.pod.node_name, pod=u.pod.ref, args=args, detail=detail)


def unrequested(state: ClusterState, namespace: str | None = None) -> list[Finding]:
    """One warning per pod that sees GPUs it did not request."""
    return [_finding(u) for u in uses(state, namespace)]
