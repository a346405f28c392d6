"""RuntimeClasses with the real API server: a pod naming a missing RuntimeClass is refused (the RuntimeClass
admission plugin, ``plugin/pkg/admission/runtimeclass/admission.go`` v1.37.2: ``pod rejected: RuntimeClass %q
not found``), so a DaemonSet whose template names one never gets a pod (the DaemonSet controller's FailedCreate
Events carry the refusal) and gpulabel names the DaemonSet from its template; a Deployment's ReplicaSet, whose
template gpulabel does not read, is named from its FailedCreate Event, live and from a snapshot; a GPU pod whose
class exists but whose node reports runtime handlers without the class's handler is named with its node.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpulabel_run import gpulabel
from labcluster_support import LabCluster, gpu_node_manifest, node_is_ready, wait_for

from gpulabel.cluster.client import KubeClient
from gpulabel.errors import ClusterError


def runtime_findings(labcluster: LabCluster) -> list[dict[str, Any]]:
    done = gpulabel(labcluster.kubeconfig, "check", "-o", "json", "--fail-level", "error")
    assert done.returncode in (0, 1), done.stderr
    return [f for f in json.loads(done.stdout)["findings"] if f["check"] == "runtime"]


def test_a_missing_runtime_class_and_a_missing_handler(labcluster: LabCluster, ns: str, tmp_path: Path) -> None:
    client = KubeClient(str(labcluster.kubeconfig))
    tag = ns[-5:]
    node, missing, present = f"rt-{tag}", f"nvidia-missing-{tag}", f"nvidia-{tag}"
    manifest = gpu_node_manifest(node, {"rt": tag}, gpus=1)
    manifest["status"]["runtimeHandlers"] = [{"name": "runc"}, {"name": ""}]
    labcluster.apply(manifest)
    made = [f"/api/v1/nodes/{node}"]
    try:

        def ready_node() -> dict[str, Any] | None:
            n: dict[str, Any] = labcluster.get("node", node)
            return n if node_is_ready(n) else None

        ready = wait_for(ready_node, timeout=60, message=f"node {node} Ready")
        assert [h["name"] for h in ready["status"].get("runtimeHandlers", [])] == ["runc", ""], ready["status"]
        gpu = {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}
        container = {"name": "c", "image": "cuda", "resources": gpu}

        # 1. the API server refuses a pod naming a RuntimeClass that does not exist
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "refused", "namespace": ns},
            "spec": {"runtimeClassName": missing, "containers": [container]},
        }
        try:
            client.request(
                "POST", f"/api/v1/namespaces/{ns}/pods", body=json.dumps(pod).encode(), content_type="application/json"
            )
            raise AssertionError("the API server created a pod naming a missing RuntimeClass")
        except ClusterError as err:
            assert f'pod rejected: RuntimeClass "{missing}" not found' in str(err), str(err)

        # 2. a DaemonSet naming it: its pods are refused (FailedCreate); gpulabel names it from its template
        ds = {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "needs-nvidia", "namespace": ns},
            "spec": {
                "selector": {"matchLabels": {"app": "needs-nvidia"}},
                "template": {
                    "metadata": {"labels": {"app": "needs-nvidia"}},
                    "spec": {"runtimeClassName": missing, "nodeSelector": {"rt": tag}, "containers": [container]},
                },
            },
        }
        labcluster.apply(ds)

        def failed_create() -> str | None:
            events = labcluster.get("events", "-n", ns)["items"]
            return next((e["message"] for e in events if e.get("reason") == "FailedCreate"), None)

        message = wait_for(failed_create, timeout=60, message="the DaemonSet controller's FailedCreate Event")
        assert f'pod rejected: RuntimeClass "{missing}" not found' in message, message
        assert (
            f'Error creating: pods "needs-nvidia-" is forbidden: pod rejected: RuntimeClass "{missing}" not found'
            == (message)
        ), message  # the form tests/unit/test_runtime_events.py reads
        found = [f for f in runtime_findings(labcluster) if f.get("daemonset") == f"{ns}/needs-nvidia"]
        assert [(f["reason"], f["args"]) for f in found] == [("runtime-class-missing", [missing])]

        # 2b. a Deployment naming it: gpulabel never sees its pods' template, only its ReplicaSet's FailedCreate Event
        gpu_class = f"nvidia-gone-{tag}"  # the GPU stack's names start nvidia: only those are said from an Event
        template = {"runtimeClassName": gpu_class, "nodeSelector": {"rt": tag}, "containers": [container]}
        deploy = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "trainer", "namespace": ns},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "trainer"}},
                "template": {"metadata": {"labels": {"app": "trainer"}}, "spec": template},
            },
        }
        labcluster.apply(deploy)

        def replicaset_refused() -> dict[str, Any] | None:
            events = labcluster.get("events", "-n", ns)["items"]
            return next(
                (
                    e
                    for e in events
                    if e.get("reason") == "FailedCreate" and e["involvedObject"]["kind"] == "ReplicaSet"
                ),
                None,
            )

        refusal = wait_for(replicaset_refused, timeout=90, message="the ReplicaSet controller's FailedCreate Event")
        rs = refusal["involvedObject"]["name"]
        assert refusal["message"] == (
            f'Error creating: pods "{rs}-" is forbidden: pod rejected: RuntimeClass "{gpu_class}" not found'
        ), refusal["message"]
        found = [f for f in runtime_findings(labcluster) if f["args"][:1] == [gpu_class]]
        assert [(f["reason"], f["severity"], f["args"]) for f in found] == [
            ("runtime-class-missing", "error", [gpu_class, f"ReplicaSet/{ns}/{rs}"])
        ], found
        # the same from a snapshot: the Warning Events are captured with the other kinds
        snap = tmp_path / "runtime.json"
        done = gpulabel(labcluster.kubeconfig, "snapshot", "-o", str(snap))
        assert done.returncode == 0, done.stderr
        done = gpulabel(labcluster.kubeconfig, "check", "--snapshot", str(snap), "-o", "json", "--fail-level", "error")
        assert done.returncode == 1, done.stderr
        again = [
            f for f in json.loads(done.stdout)["findings"] if f["check"] == "runtime" and f["args"][:1] == [gpu_class]
        ]
        assert [f["args"] for f in again] == [[gpu_class, f"ReplicaSet/{ns}/{rs}"]]

        # 3. the class exists, the node's runtime reports no handler of it: the pod and its node are named
        klass = {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": present},
            "handler": present,
        }
        labcluster.apply(klass)
        made.append(f"/apis/node.k8s.io/v1/runtimeclasses/{present}")
        bound = {**pod, "metadata": {"name": "no-handler", "namespace": ns}}
        bound["spec"] = {"runtimeClassName": present, "nodeName": node, "containers": [container]}
        labcluster.apply(bound)
        found = [f for f in runtime_findings(labcluster) if f.get("pod") == f"{ns}/no-handler"]
        assert [(f["reason"], f["node"], f["args"]) for f in found] == [
            ("runtime-handler-missing", node, [present, present])
        ], found
    finally:
        labcluster.kubectl(
            "delete", "deployments,daemonsets,pods", "--all", "-n", ns, "--grace-period=0", "--force", check=False
        )
        for path in reversed(made):
            client.request_raw("DELETE", path)
