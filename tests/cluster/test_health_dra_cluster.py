"""A DRA device condition on a node the cluster does not have, against the real API server.

The API server takes a ResourceSlice whose ``spec.nodeName`` names no Node (it does not check; a slice
left by a deleted node looks the same) and a ResourceClaim whose status allocates that slice's device and
carries the driver's ``Ready=False`` condition (``status.devices[].conditions``, written through the
status subresource as a driver would). ``check`` said nothing of it before (``health: OK``); it now says
it once, about no node, naming the slice and the node, live and on a ``gpulabel snapshot`` alike, and
not with ``-l`` (its left-out nodes are not in the input by choice).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from draobjects_path import draobjects as dra  # bench/draobjects.py, shared with the unit tests
from gpulabel_run import gpulabel
from labcluster_support import LabCluster

from gpulabel.cluster.client import KubeClient

RES = "/apis/resource.k8s.io/v1"
D = dra.DRIVER


def device_findings(kubeconfig: Path, *args: str, device: str) -> list[dict[str, Any]]:
    done = gpulabel(kubeconfig, "check", "-o", "json", *args)
    assert done.returncode in (0, 1), done.stderr
    found = json.loads(done.stdout)["findings"]
    return [f for f in found if f["check"] == "health" and (f.get("args") or [""])[0] == device]


def test_a_device_condition_on_a_node_the_cluster_does_not_have_is_said_live_and_in_a_snapshot(
    labcluster: LabCluster, make_node: Any, ns: str, tmp_path: Path
) -> None:
    client = KubeClient(str(labcluster.kubeconfig))
    tag = ns[-5:]
    here, gone = f"hd-{tag}", f"hd-{tag}-gone"
    make_node(here, {"health-dra": tag})
    slice_name = f"{gone}-{D}"
    body = dra.resource_slice(slice_name, [{"name": "gpu-0"}], node=gone)
    client.request("POST", f"{RES}/resourceslices", body=json.dumps(body).encode(), content_type="application/json")
    try:
        claim = {
            "apiVersion": dra.RESOURCE,
            "kind": "ResourceClaim",
            "metadata": {"name": "train-gpu", "namespace": ns},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": D}}]}},
        }
        path = f"{RES}/namespaces/{ns}/resourceclaims"
        made = client.request("POST", path, body=json.dumps(claim).encode(), content_type="application/json")
        result = {"request": "gpu", "driver": D, "pool": gone, "device": "gpu-0"}
        ready = {
            "type": "Ready",
            "status": "False",
            "reason": "XID79",
            "message": "fallen off the bus",
            "lastTransitionTime": "2026-12-01T08:00:00Z",
        }
        made["status"] = {
            "allocation": {"devices": {"results": [result]}},
            "devices": [{"driver": D, "pool": gone, "device": "gpu-0", "conditions": [ready]}],
        }
        kept = client.request(
            "PUT", f"{path}/train-gpu/status", body=json.dumps(made).encode(), content_type="application/json"
        )
        assert kept["status"]["devices"][0]["conditions"][0]["status"] == "False"  # the API server took it

        device = f"{D}/{gone}/gpu-0"
        live = device_findings(labcluster.kubeconfig, device=device)
        assert live == [
            {
                "check": "health",
                "reason": "claim-device-not-ready",
                "severity": "error",
                "args": [device, "Ready=False", f"{ns}/train-gpu", f"slice={slice_name}", f"node={gone}"],
                "detail": f"XID79: fallen off the bus; ResourceSlice {slice_name} puts the device on node {gone}, "
                "which is not in the input",
            }
        ]
        snapshot = tmp_path / "snapshot.json"
        done = gpulabel(labcluster.kubeconfig, "snapshot", "-o", str(snapshot))
        assert done.returncode == 0, done.stderr
        offline = gpulabel(labcluster.kubeconfig, "check", "-o", "json", "--snapshot", str(snapshot))
        assert [
            f for f in json.loads(offline.stdout)["findings"] if f["check"] == "health" and f["args"][0] == device
        ] == live
        assert device_findings(labcluster.kubeconfig, "-l", f"health-dra={tag}", device=device) == []
    finally:
        client.request("DELETE", f"{RES}/resourceslices/{slice_name}", expected=(404,))
