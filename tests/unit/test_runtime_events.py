"""The runtime check's Warning Events: workload controllers' FailedCreate and the kubelet's FailedCreatePodSandBox.

Each message is the real text its writer prints:

- ``Error creating: %v`` (Kubernetes v1.37.2 ``pkg/controller/controller_utils.go``, reason ``FailedCreate``)
  around the RuntimeClass admission plugin's ``pod rejected: RuntimeClass %q not found``
  (``plugin/pkg/admission/runtimeclass/admission.go``) as ``admission.NewForbidden`` words it (``pods "%s" is
  forbidden: ...``, the pod's generateName when it has no name yet: ``apiserver/pkg/admission/errors.go``).
  The DaemonSet form is the one labcluster's real API server and DaemonSet controller wrote
  (tests/cluster/test_runtime_cluster.py).
- ``Failed to create pod sandbox: %v`` (``pkg/kubelet/kuberuntime/kuberuntime_manager.go``, reason
  ``FailedCreatePodSandBox``) around the gRPC status of containerd's ``failed to get sandbox runtime: no runtime
  for %q is configured`` (containerd ``internal/cri/config/config.go``, wrapped in ``sandbox_run.go``) or CRI-O's
  ``failed to find runtime handler %s from runtime list %v`` (cri-o ``internal/oci/oci.go``
  ``ValidateRuntimeHandler``).

The twins: the same Events when the class exists by now, when the pod is gone or finished, for a class that is
not the GPU stack's, Normal Events, and other reasons raise nothing.
"""

from __future__ import annotations

from typing import Any

from gpulabel.checks.registry import BUILTIN, run_check
from gpulabel.checks.runtime.events import refused_class, sandbox_handler
from gpulabel.model.cluster import ClusterState
from tests.unit.test_runtime import node, pod, runtime_class

REFUSED_RS = 'Error creating: pods "train-7d9f8c5b4-" is forbidden: pod rejected: RuntimeClass "nvidia" not found'
REFUSED_DS = 'Error creating: pods "needs-nvidia-" is forbidden: pod rejected: RuntimeClass "nvidia" not found'
CONTAINERD = (
    "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: "
    'no runtime for "nvidia" is configured'
)
CRIO = (
    "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to find runtime handler nvidia "
    "from runtime list map[crun:0xc0004d2000 runc:0xc0004d2140]"
)


def event(
    kind: str, name: str, reason: str, message: str, kind_type: str = "Warning", count: int = 3
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.1800c0ffee", "namespace": "ml"},
        "involvedObject": {"kind": kind, "namespace": "ml", "name": name},
        "type": kind_type,
        "reason": reason,
        "message": message,
        "count": count,
        "lastTimestamp": "2026-12-04T19:00:00Z",
    }


def found(*objects: dict[str, Any]) -> list[tuple[str, str, str, str, tuple[str, ...]]]:
    """The runtime check's findings; a pod without GPUs is always there (the check needs pods in the input)."""
    state = ClusterState.from_objects([("test", o) for o in (*objects, pod("web-0", runtime=None, gpu=False))])
    result = run_check("runtime", state, BUILTIN.options())
    return [(f.reason, f.node, f.pod, f.daemonset, f.args) for f in result.findings]


def test_the_messages_are_read_as_their_writers_print_them() -> None:
    assert refused_class(REFUSED_RS) == ("train-7d9f8c5b4-", "nvidia")
    assert sandbox_handler(CONTAINERD) == sandbox_handler(CRIO) == "nvidia"
    assert refused_class('Error creating: pods "x-" is forbidden: exceeded quota: gpu, requested: ...') is None
    assert (
        sandbox_handler("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network")
        is None
    )


def test_a_replicaset_refused_for_a_missing_class_is_named_from_its_event() -> None:
    klass = runtime_class("runc-other", "runc")
    got = found(klass, node(), event("ReplicaSet", "train-7d9f8c5b4", "FailedCreate", REFUSED_RS))
    assert got == [("runtime-class-missing", "", "", "", ("nvidia", "ReplicaSet/ml/train-7d9f8c5b4"))]
    objects = (klass, pod("web-0", runtime=None, gpu=False), event("Job", "j", "FailedCreate", REFUSED_RS))
    state = ClusterState.from_objects([("t", o) for o in objects])
    (f,) = run_check("runtime", state, BUILTIN.options()).findings
    assert f.severity == "error" and f.args == ("nvidia", "Job/ml/j")
    assert "FailedCreate Event (3x" in f.detail and 'RuntimeClass "nvidia" not found' in f.detail


def test_a_daemonset_named_from_its_template_is_not_named_again_from_its_event() -> None:
    from tests.objects import daemonset

    spec = {"runtimeClassName": "nvidia", "containers": [{"name": "c", "image": "cuda"}]}
    ds = daemonset("ml", "needs-nvidia", "uid-1", spec)
    got = found(runtime_class("runc-other", "runc"), ds, event("DaemonSet", "needs-nvidia", "FailedCreate", REFUSED_DS))
    assert got == [("runtime-class-missing", "", "", "ml/needs-nvidia", ("nvidia",))]
    # its template not in the input (or changed since): the Event names it
    got = found(runtime_class("runc-other", "runc"), event("DaemonSet", "needs-nvidia", "FailedCreate", REFUSED_DS))
    assert got == [("runtime-class-missing", "", "", "ml/needs-nvidia", ("nvidia", "DaemonSet/ml/needs-nvidia"))]


def test_a_sandbox_failure_names_the_pod_and_its_node_for_containerd_and_cri_o() -> None:
    # the node reports no handlers (before 1.30, or a runtime that does not say): only the Event tells
    for message in (CONTAINERD, CRIO):
        got = found(
            runtime_class(),
            node(handlers=()),
            pod("train-0"),
            event("Pod", "train-0", "FailedCreatePodSandBox", message),
        )
        assert got == [("runtime-handler-missing", "gpu-1", "ml/train-0", "", ("nvidia", "nvidia"))], message
    # no runtimeClassName: the runtime's default handler is nvidia (the toolkit set it as default) and is gone
    got = found(
        runtime_class(),
        node(handlers=()),
        pod("train-0", runtime=None),
        event("Pod", "train-0", "FailedCreatePodSandBox", CONTAINERD),
    )
    assert got == [("runtime-handler-missing", "gpu-1", "ml/train-0", "", ("(default)", "nvidia"))]


def test_a_pod_the_node_status_convicts_is_not_named_twice() -> None:
    got = found(
        runtime_class(),
        node(handlers=("runc",)),
        pod("train-0"),
        event("Pod", "train-0", "FailedCreatePodSandBox", CONTAINERD),
    )
    assert got == [("runtime-handler-missing", "gpu-1", "ml/train-0", "", ("nvidia", "nvidia"))]


def test_the_healthy_twins_raise_nothing() -> None:
    # the class exists by now: the refusal is stale
    assert found(runtime_class(), node(), event("ReplicaSet", "train-7d9f8c5b4", "FailedCreate", REFUSED_RS)) == []
    # a class that is not the GPU stack's: gpulabel cannot tell whether the workload uses GPUs
    kata = REFUSED_RS.replace('"nvidia"', '"kata"')
    assert found(runtime_class(), node(), event("ReplicaSet", "web-1", "FailedCreate", kata)) == []
    # the pod is gone, or finished
    assert found(runtime_class(), node(handlers=()), event("Pod", "gone", "FailedCreatePodSandBox", CONTAINERD)) == []
    done = pod("train-0", phase="Failed")
    assert (
        found(runtime_class(), node(handlers=()), done, event("Pod", "train-0", "FailedCreatePodSandBox", CONTAINERD))
        == []
    )
    # a Normal Event and other reasons are not read as refusals
    normal = event("ReplicaSet", "train-7d9f8c5b4", "FailedCreate", REFUSED_RS, kind_type="Normal")
    other = event("ReplicaSet", "train-7d9f8c5b4", "SuccessfulCreate", "Created pod: train-7d9f8c5b4-x2x9z", "Normal")
    assert found(runtime_class("runc-other", "runc"), node(), other) == []
    assert found(runtime_class("runc-other", "runc"), node(), normal) == []
    # a runc pod's sandbox failing for its own handler on a node without GPUs asked for: not the GPU stack's
    web = pod("web-1", runtime="gvisor", gpu=False)
    runsc = CONTAINERD.replace('"nvidia"', '"runsc"')
    assert (
        found(
            runtime_class("gvisor", "runsc"),
            node(handlers=()),
            web,
            event("Pod", "web-1", "FailedCreatePodSandBox", runsc),
        )
        == []
    )


def cluster_policy(cdi: dict[str, Any], runtime_class_name: str | None = None) -> dict[str, Any]:
    """A ClusterPolicy (nvidia.com/v1) with the newest operator's ``spec.cdi`` fields (enabled, default,
    nriPluginEnabled: ``api/nvidia/v1/clusterpolicy_types.go`` ``CDIConfigSpec`` at a22dbf6)."""
    spec: dict[str, Any] = {"cdi": cdi}
    if runtime_class_name:
        spec["operator"] = {"runtimeClass": runtime_class_name}
    return {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": spec,
    }


def details(*objects: dict[str, Any]) -> list[str]:
    state = ClusterState.from_objects([("t", o) for o in (*objects, pod("web-0", runtime=None, gpu=False))])
    return [f.detail for f in run_check("runtime", state, BUILTIN.options()).findings]


def test_the_cluster_policys_nri_plugin_says_why_the_class_is_missing_and_which_fix() -> None:
    refused = event("ReplicaSet", "train-7d9f8c5b4", "FailedCreate", REFUSED_RS)
    klass = runtime_class("runc-other", "runc")
    (nri,) = details(klass, cluster_policy({"enabled": True, "nriPluginEnabled": True}), refused)
    assert "spec.cdi.nriPluginEnabled: true, so the operator creates no RuntimeClass nvidia" in nri
    assert "drop runtimeClassName (or the admission webhook that adds it)" in nri
    (bad,) = details(klass, cluster_policy({"enabled": False, "nriPluginEnabled": True}), refused)
    assert "spec.cdi.enabled: false, which the operator refuses with NRI" in bad
    (no_nri,) = details(klass, cluster_policy({"enabled": True}), node(), pod("train-0"))
    assert "does not run the NRI plugin: the operator should have created it" in no_nri
    # the policy names another class for the operator: it says nothing about nvidia
    (other,) = details(klass, cluster_policy({"nriPluginEnabled": True}, "nvidia-cdi"), refused)
    assert "ClusterPolicy" not in other


def test_a_role_that_may_not_list_events_gets_an_answer_without_them(tmp_path: Any, monkeypatch: Any) -> None:
    """A read-only role from before Events were read: the LIST of Events is forbidden (403); the load goes on
    without them (Event not among the kinds read, as a snapshot without Events); any other kind's 403 stays an
    error."""
    import json

    import pytest

    from gpulabel.cluster.client import KubeClient
    from gpulabel.cluster.live import load_cluster
    from gpulabel.errors import ClusterError
    from tests.objects import kubeconfig

    forbidden = {"/api/v1/events"}

    def server(method: str, path: str, query: Any = (), **_: object) -> tuple[int, bytes]:
        if path in forbidden:
            return 403, json.dumps({"kind": "Status", "message": f"{path} is forbidden", "code": 403}).encode()
        return 200, json.dumps({"items": [], "metadata": {"resourceVersion": "7"}}).encode()

    client = KubeClient(kubeconfig(tmp_path))
    monkeypatch.setattr(client, "request_raw", server)
    state = load_cluster(client, ["Node", "Pod", "Event"])
    assert state.kinds == {"Node", "Pod"} and state.events == ()
    forbidden.add("/api/v1/pods")
    with pytest.raises(ClusterError):
        load_cluster(client, ["Node", "Pod", "Event"])


def test_a_quoted_event_message_holds_no_planted_secret() -> None:
    """``check -o wide`` prints the finding's detail, which quotes the Event: it is redacted when read
    (model/evidence.py event_from_json), as the evidence path redacts it, so pasted output leaks nothing."""
    secret = "pl4nted-in-sandbox-event"
    message = f"{CONTAINERD} (pulling https://ci:{secret}@registry.example.com/pause)"
    objects = (
        runtime_class(),
        node(handlers=()),
        pod("train-0"),
        event("Pod", "train-0", "FailedCreatePodSandBox", message),
    )
    state = ClusterState.from_objects([("t", o) for o in (*objects, pod("web-0", runtime=None, gpu=False))])
    (f,) = run_check("runtime", state, BUILTIN.options()).findings
    assert f.reason == "runtime-handler-missing" and "<redacted>" in f.detail and secret not in f.detail


def test_a_pods_status_and_container_messages_are_redacted_when_read() -> None:
    from gpulabel.model.readers import pod_from_json

    secret = "pl4nted-in-status"
    obj = pod("train-0")
    obj["status"] = {
        "phase": "Pending",
        "message": f"Pod was rejected: sh -c 'login --password {secret}'",
        "containerStatuses": [
            {
                "name": "c",
                "state": {"waiting": {"reason": "RunContainerError", "message": f"token={secret} refused"}},
            }
        ],
    }
    p = pod_from_json(obj)
    said = " ".join((p.status_message, *p.messages))
    assert said.count("<redacted>") == 2 and secret not in said
