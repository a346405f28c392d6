"""``runtime``: GPU pods and DaemonSets whose RuntimeClass, or its handler on their node, is missing.

A pod's ``spec.runtimeClassName`` names a RuntimeClass (node.k8s.io/v1), whose ``handler`` the kubelet asks
the container runtime for when it creates the pod's sandbox. The GPU Operator creates the ``nvidia``
RuntimeClass (handler ``nvidia``) and configures the runtime for it; in its NRI mode it creates none, and
admission webhooks of some schedulers still add ``runtimeClassName: nvidia`` to GPU pods (REFERENCE section
19: gpu-operator#1876, #2115). Two failures follow:

- ``runtime-class-missing``: the RuntimeClass does not exist. The API server's RuntimeClass admission plugin
  refuses to create such a pod (``pod rejected: RuntimeClass "nvidia" not found``), so a workload controller's
  pods are never made (its FailedCreate Events say so): a DaemonSet whose template names it is said here; a
  running pod named one that was deleted since (a switch to NRI), and its replacements will be refused.
- ``runtime-handler-missing``: the class exists but the pod's node reports runtime handlers
  (``status.runtimeHandlers``, Kubernetes 1.30+) without its handler: the kubelet's sandbox creation fails
  (``FailedCreatePodSandBox``, the runtime's ``no runtime for "nvidia" is configured``). A node that reports
  no handlers is not judged.

GPU pods are those requesting an ``nvidia.com/`` resource or with ResourceClaims; terminal pods are left out.
The workload controllers' ``FailedCreate`` and the kubelet's ``FailedCreatePodSandBox`` Warning Events name
what the objects alone cannot (a ReplicaSet or Job refused, a node whose runtime lacks a handler it does not
report): :mod:`.events` joins them to the pod and the node. Without RuntimeClasses in the input (a snapshot
that holds none) nothing is said, and the caveat says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpulabel.checks.runtime.events import event_findings
from gpulabel.checks.runtime.policy import policy_note
from gpulabel.model.cluster import ClusterState, DaemonSet, Node, Pod
from gpulabel.model.findings import Finding
from gpulabel.model.records import JSON
from gpulabel.model.severity import Reason

__all__ = ["NO_CLASSES", "REASONS", "runtime"]

NO_CLASSES = "RuntimeClasses not in the input: runtimeClassName not checked (capture with gpulabel snapshot)"
REASONS: dict[str, Reason] = {
    "runtime-class-missing": Reason(
        "error",
        "a GPU pod or DaemonSet names a RuntimeClass that does not exist: the API server refuses its new pods",
    ),
    "runtime-handler-missing": Reason(
        "error",
        "a GPU pod's node reports runtime handlers without its RuntimeClass's handler: its sandbox cannot be made",
    ),
}


def _gpu_pod(pod: Pod) -> bool:
    return not pod.terminal and bool(pod.gpu_resources or pod.spec.resource_claims)


def _missing(name: str, classes: Mapping[str, str], policies: Sequence[JSON] = ()) -> str:
    known = ", ".join(sorted(classes)) or "none"
    return (
        f"runtimeClassName {name} but no RuntimeClass {name} exists (RuntimeClasses: {known}): the API server "
        f'refuses new pods naming it (RuntimeClass "{name}" not found); create it (the GPU Operator makes nvidia '
        "unless it runs in NRI mode) or drop runtimeClassName where CDI or NRI injects the GPUs"
        + policy_note(name, policies)
    )


def _pod_findings(
    pod: Pod, classes: Mapping[str, str], nodes: Mapping[str, Node], policies: Sequence[JSON]
) -> list[Finding]:
    name = pod.runtime_class
    if name not in classes:
        detail = _missing(name, classes, policies)
        return [
            Finding("runtime", "runtime-class-missing", node=pod.node_name, pod=pod.ref, args=(name,), detail=detail)
        ]
    node = nodes.get(pod.node_name)
    handler = classes[name]
    if node is None or not node.runtime_handlers or handler in node.runtime_handlers:
        return []
    detail = (
        f"RuntimeClass {name} asks for handler {handler}; the node's runtime reports {', '.join(node.runtime_handlers)}"
        f" (status.runtimeHandlers): the kubelet cannot create the pod's sandbox (FailedCreatePodSandBox: no runtime "
        f'for "{handler}" is configured); configure the handler on the node (the GPU Operator\'s container toolkit) '
        "or keep the pod off it"
    )
    return [
        Finding("runtime", "runtime-handler-missing", node=node.name, pod=pod.ref, args=(name, handler), detail=detail)
    ]


def _daemonset_finding(ds: DaemonSet, classes: Mapping[str, str], policies: Sequence[JSON]) -> list[Finding]:
    name = ds.template_spec.get("runtimeClassName")
    if not isinstance(name, str) or not name or name in classes:
        return []
    detail = _missing(name, classes, policies) + "; the DaemonSet controller's FailedCreate Events say the same"
    return [Finding("runtime", "runtime-class-missing", daemonset=ds.ref, args=(name,), detail=detail)]


def runtime(state: ClusterState, namespace: str | None = None) -> list[Finding]:
    """The DaemonSets' findings, then the GPU pods' in the state's order, then what the Warning Events add
    (:mod:`.events`); none without RuntimeClasses."""
    if "RuntimeClass" not in state.kinds:
        return []
    classes = {c.name: c.handler for c in state.runtime_classes}
    nodes = {n.name: n for n in state.nodes}
    policies = state.cluster_policies
    found = [f for ds in state.daemonsets for f in _daemonset_finding(ds, classes, policies)]
    for pod in state.pods:
        if pod.runtime_class and _gpu_pod(pod) and (namespace is None or pod.namespace == namespace):
            found.extend(_pod_findings(pod, classes, nodes, policies))
    return found + event_findings(state, classes, found, namespace)
