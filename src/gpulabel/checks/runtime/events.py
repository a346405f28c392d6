"""What the Warning Events say about the runtime handler, joined to the workload, the pod and the node.

Two lines are matched, each as its writer prints it (Kubernetes v1.37.2 unless named):

- A workload controller's ``FailedCreate`` (``pkg/controller/controller_utils.go``: ``Error creating: %v``; the
  ReplicaSet, Job, DaemonSet and StatefulSet controllers create pods through it) whose error is the RuntimeClass
  admission plugin's refusal (``plugin/pkg/admission/runtimeclass/admission.go``: ``pod rejected: RuntimeClass
  %q not found``, wrapped by ``admission.NewForbidden`` as ``pods "<name or generateName>" is forbidden: ...``).
  The Event names the controller, not its template, so only the GPU stack's classes (``nvidia``, and the
  operator's ``nvidia-cdi``/``nvidia-legacy``: names starting ``nvidia``) are said: gpulabel cannot tell whether
  another class's workload uses GPUs. A DaemonSet whose template names the class is said from its template
  (:mod:`.rules`), not twice; a class that exists by now makes the Event stale, and it is not said.
- The kubelet's ``FailedCreatePodSandBox`` on a pod (``pkg/kubelet/kuberuntime/kuberuntime_manager.go``:
  ``Failed to create pod sandbox: %v``) whose runtime error is containerd's (``internal/cri/config``:
  ``no runtime for %q is configured``, wrapped as ``failed to get sandbox runtime: ...``) or CRI-O's
  (``internal/oci/oci.go`` ``ValidateRuntimeHandler``: ``failed to find runtime handler %s from runtime list
  %v``). The pod must still be there and not finished; its node is the pod's. A pod the node's
  ``status.runtimeHandlers`` already convicts (:mod:`.rules`) is not said twice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from gpulabel.checks.runtime.policy import policy_note
from gpulabel.model.cluster import ClusterState, Pod
from gpulabel.model.evidence import EventNote
from gpulabel.model.findings import Finding
from gpulabel.model.records import JSON

__all__ = ["CONTROLLERS", "event_findings", "refused_class", "sandbox_handler"]

# the kinds whose controllers create pods through controller_utils' PodControl (FailedCreate)
CONTROLLERS = ("ReplicaSet", "Job", "DaemonSet", "StatefulSet", "ReplicationController")
_REFUSED = re.compile(r'pods "([^"]*)" is forbidden: pod rejected: RuntimeClass "([^"]+)" not found')
_CONTAINERD = re.compile(r'no runtime for "([^"]+)" is configured')
_CRIO = re.compile(r"failed to find runtime handler (\S+) from runtime list")


def refused_class(message: str) -> tuple[str, str] | None:
    """``(pod name or generateName, RuntimeClass)`` of a FailedCreate message the RuntimeClass plugin refused."""
    m = _REFUSED.search(message)
    return (m.group(1), m.group(2)) if m else None


def sandbox_handler(message: str) -> str | None:
    """The runtime handler a FailedCreatePodSandBox message says the runtime has no configuration for."""
    m = _CONTAINERD.search(message) or _CRIO.search(message)
    return m.group(1) if m else None


def _gpu_class(name: str) -> bool:
    return name.startswith("nvidia")


def _refusals(
    events: Iterable[EventNote],
    classes: Mapping[str, str],
    templated: set[tuple[str, str]],
    policies: Sequence[JSON],
) -> list[Finding]:
    seen: dict[tuple[str, str, str, str], EventNote] = {}
    for e in events:
        if e.type != "Warning" or e.reason != "FailedCreate" or e.kind not in CONTROLLERS:
            continue
        refused = refused_class(e.message)
        if refused is None or not _gpu_class(refused[1]) or refused[1] in classes:
            continue
        if e.kind == "DaemonSet" and (f"{e.namespace}/{e.name}", refused[1]) in templated:
            continue
        key = (e.kind, e.namespace, e.name, refused[1])
        if key not in seen or e.time > seen[key].time:
            seen[key] = e
    out = []
    for (kind, ns, name, klass), e in sorted(seen.items()):
        known = ", ".join(sorted(classes)) or "none"
        detail = (
            f"{kind} {ns}/{name} cannot create its pods: its FailedCreate Event ({e.count}x, last {e.time or '?'}) "
            f"says {e.message!r}; no RuntimeClass {klass} exists (RuntimeClasses: {known}): create it (the GPU "
            "Operator makes nvidia unless it runs in NRI mode) or drop runtimeClassName from its pod template "
            "(or from the webhook that adds it) where CDI or NRI injects the GPUs" + policy_note(klass, policies)
        )
        where = f"{kind}/{ns}/{name}"
        ds = f"{ns}/{name}" if kind == "DaemonSet" else ""
        out.append(Finding("runtime", "runtime-class-missing", daemonset=ds, args=(klass, where), detail=detail))
    return out


def _sandboxes(
    events: Iterable[EventNote], pods: Mapping[tuple[str, str], Pod], classes: Mapping[str, str], said: set[str]
) -> list[Finding]:
    seen: dict[tuple[str, str], tuple[EventNote, str]] = {}
    for e in events:
        if e.type != "Warning" or e.reason != "FailedCreatePodSandBox" or e.kind != "Pod":
            continue
        handler = sandbox_handler(e.message)
        pod = pods.get((e.namespace, e.name))
        if handler is None or pod is None or pod.terminal or not pod.node_name or pod.ref in said:
            continue
        if not (pod.gpu_resources or pod.spec.resource_claims or _gpu_class(handler)):
            continue
        key = (e.namespace, e.name)
        if key not in seen or e.time > seen[key][0].time:
            seen[key] = (e, handler)
    out = []
    for (ns, name), (e, handler) in sorted(seen.items()):
        pod = pods[(ns, name)]
        klass = pod.runtime_class or "(default)"
        detail = (
            ("no runtimeClassName: the runtime's default handler; " if not pod.runtime_class else "")
            + f"the kubelet on {pod.node_name} cannot create the pod's sandbox: its FailedCreatePodSandBox Event "
            f"({e.count}x, last {e.time or '?'}) says {e.message!r}; the node's container runtime has no handler "
            f"{handler}: configure it there (the GPU Operator's container toolkit writes it; check its pod on "
            "the node) or give the pod a RuntimeClass whose handler the node has"
        )
        if pod.runtime_class and pod.runtime_class in classes and classes[pod.runtime_class] != handler:
            detail += f" (RuntimeClass {pod.runtime_class} now asks for {classes[pod.runtime_class]})"
        out.append(
            Finding(
                "runtime",
                "runtime-handler-missing",
                node=pod.node_name,
                pod=pod.ref,
                args=(klass, handler),
                detail=detail,
            )
        )
    return out


def event_findings(
    state: ClusterState, classes: Mapping[str, str], earlier: Iterable[Finding], namespace: str | None = None
) -> list[Finding]:
    """The controllers' refusals, then the pods' sandbox failures, less what ``earlier`` findings already say."""
    earlier = list(earlier)
    templated = {(f.daemonset, f.args[0]) for f in earlier if f.daemonset and f.args}
    said = {f.pod for f in earlier if f.pod}
    events = [e for e in state.events if namespace is None or e.namespace == namespace]
    pods = {(p.namespace, p.name): p for p in state.pods}
    return _refusals(events, classes, templated, state.cluster_policies) + _sandboxes(events, pods, classes, said)
