"""Two claims on one GPU, with the real scheduler: a node whose allocatable has ``nvidia.com/gpu`` (what a
device plugin leaves; kwok keeps the status a Node is created with) and a ``gpu.nvidia.com`` ResourceSlice
publishing the same two GPUs. gpulabel names the node before any pod exists; then the scheduler binds two pods
requesting ``nvidia.com/gpu: 1`` and two pods with a ResourceClaim of one device each to it: four GPU
consumers on a node with two GPUs. ``gpus`` counts the two GPUs once (the class row's devices are ``twice``).

The same node shows what labcluster cannot: kubelet admission. A pod bound by hand (``spec.nodeName``, no
scheduler) asking for more ``nvidia.com/gpu`` than the node has is rejected by a real kubelet
(``OutOfnvidia.com/gpu``, ``pkg/kubelet/lifecycle/predicate.go``); kwok runs it, so the admission check's
messages are tested from the kubelet's source in the unit tests, not here.
"""

from __future__ import annotations

import json
from typing import Any

from draobjects_path import draobjects as dra  # bench/draobjects.py, shared with the unit tests
from gpulabel_run import gpulabel
from labcluster_support import LabCluster, gpu_node_manifest, node_is_ready, wait_for

from gpulabel.cluster.client import KubeClient

RES = "/apis/resource.k8s.io/v1"
D = dra.DRIVER


def create(client: KubeClient, path: str, obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = client.request("POST", path, body=json.dumps(obj).encode(), content_type="application/json")
    return out


def stack_findings(labcluster: LabCluster) -> list[dict[str, Any]]:
    done = gpulabel(labcluster.kubeconfig, "check", "-o", "json", "--fail-level", "error")
    assert done.returncode in (0, 1), done.stderr
    return [f for f in json.loads(done.stdout)["findings"] if f["check"] == "stack"]


def test_the_scheduler_binds_more_gpu_consumers_than_gpus_where_gpulabel_said_it_would(
    labcluster: LabCluster, ns: str
) -> None:
    client = KubeClient(str(labcluster.kubeconfig))
    tag = ns[-5:]
    node = f"twice-{tag}"
    cls = f"twice-{tag}.nvidia.com"
    made: list[str] = []
    labcluster.apply(gpu_node_manifest(node, {"nvidia.com/gpu.present": "true"}, gpus=2))
    made.append(f"/api/v1/nodes/{node}")
    try:
        wait_for(lambda: node_is_ready(labcluster.get("node", node)), timeout=60, message=f"node {node} Ready")
        klass = dra.device_class(
            cls, f'device.driver == "{D}"', f'device.attributes["{D}"].?probe.orValue("") == "{tag}"'
        )
        create(client, f"{RES}/deviceclasses", klass)
        made.append(f"{RES}/deviceclasses/{cls}")
        devices = [
            {"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"}, "probe": {"string": tag}}} for i in range(2)
        ]
        create(client, f"{RES}/resourceslices", dra.resource_slice(f"{node}-{D}", devices, node=node, pool=node))
        made.append(f"{RES}/resourceslices/{node}-{D}")

        # before any pod: gpulabel names the node, both offers and what to turn off
        (finding,) = [f for f in stack_findings(labcluster) if f.get("node") == node]
        assert (finding["reason"], finding["severity"], finding["args"]) == (
            "offered-twice",
            "error",
            ["nvidia.com/gpu", D],
        )
        assert "nvidia.com/gpu=2 from the device plugin and gpu.nvidia.com publishes 2 device(s)" in finding["detail"]

        pin = {"kubernetes.io/hostname": node}
        template = dra.claim_template("one-gpu", dra.claim_spec([dra.request("gpu", dra.exactly(cls))]), ns)
        create(client, f"{RES}/namespaces/{ns}/resourceclaimtemplates", template)
        for i in range(2):
            plugin_pod = dra.dra_pod(f"plugin-{i}", [], ns, pin)
            del plugin_pod["spec"]["resourceClaims"]
            plugin_pod["spec"]["containers"][0]["resources"] = {
                "requests": {"nvidia.com/gpu": "1"},
                "limits": {"nvidia.com/gpu": "1"},
            }
            create(client, f"/api/v1/namespaces/{ns}/pods", plugin_pod)
            create(
                client,
                f"/api/v1/namespaces/{ns}/pods",
                dra.dra_pod(f"claim-{i}", [("gpu", "template", "one-gpu")], ns, pin),
            )

        def bound() -> list[str] | None:
            pods = client.request("GET", f"/api/v1/namespaces/{ns}/pods")["items"]
            on = sorted(p["metadata"]["name"] for p in pods if p["spec"].get("nodeName") == node)
            return on if len(on) == 4 else None

        on_node = wait_for(bound, timeout=90, message="four GPU consumers bound to the node")
        assert on_node == ["claim-0", "claim-1", "plugin-0", "plugin-1"]  # 4 consumers, 2 GPUs
        claims = client.request("GET", f"{RES}/namespaces/{ns}/resourceclaims")["items"]
        allocated = sorted(
            r["device"]
            for c in claims
            for r in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", [])
        )
        assert allocated == ["gpu-0", "gpu-1"]  # the DRA allocator gave out both GPUs the plugin also gave out

        # gpus counts the node's GPUs once: its class row says its two devices are the plugin's GPUs (twice)
        listed = json.loads(gpulabel(labcluster.kubeconfig, "gpus", "-o", "json").stdout)
        (row,) = [r for r in listed["deviceclasses"] if r["deviceclass"] == cls]
        assert (row["devices"], row["twice"], row["allocated"], row["free"]) == (2, 2, 2, 0), row

        # kwok admits anything: a pod bound past the node's allocatable runs (a real kubelet rejects it)
        over = dra.dra_pod("over", [], ns)
        del over["spec"]["resourceClaims"]
        over["spec"]["nodeName"] = node
        over["spec"]["containers"][0]["resources"] = {
            "requests": {"nvidia.com/gpu": "3"},
            "limits": {"nvidia.com/gpu": "3"},
        }
        create(client, f"/api/v1/namespaces/{ns}/pods", over)
        phase = wait_for(
            lambda: (
                client.request("GET", f"/api/v1/namespaces/{ns}/pods/over").get("status", {}).get("phase")
                not in (None, "Pending")
                and client.request("GET", f"/api/v1/namespaces/{ns}/pods/over")["status"]["phase"]
            ),
            timeout=60,
            message="pod over leaves Pending",
        )
        assert phase == "Running"
    finally:
        labcluster.kubectl("delete", "pods", "--all", "-n", ns, "--grace-period=0", "--force", check=False)
        for path in reversed(made):
            client.request_raw("DELETE", path)
