"""Scripted DRA probes against the real scheduler: binding conditions (the test plays the driver that
sets them), extended resources backed by a DeviceClass, and a claim allocated on another node.

Each probe asks gpulabel (the CLI, against the live cluster) and compares with what the scheduler
did: a pod waiting in PreBind is ``binding-wait`` until the test sets its device's condition, then
binds; a failure condition is ``binding-failed``; a pod asking for an extended resource no node
advertises binds through the claim the scheduler makes, or stays Pending where ``pending`` says why;
a pod sharing a claim allocated on another node is ``elsewhere`` with the scheduler's message.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from draobjects_path import draobjects as dra  # bench/draobjects.py, shared with the unit tests
from gpulabel_run import gpulabel
from labcluster_support import LabCluster, wait_for

from gpulabel.checks.dra.rules import pod_claim_verdicts
from gpulabel.cluster.client import KubeClient
from gpulabel.model.cluster import ClusterState

RES = "/apis/resource.k8s.io/v1"
D = dra.DRIVER


def create(client: KubeClient, path: str, obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = client.request("POST", path, body=json.dumps(obj).encode(), content_type="application/json")
    return out


def pending_doc(labcluster: LabCluster, ns: str) -> dict[str, Any]:
    done = gpulabel(labcluster.kubeconfig, "pending", "-n", ns, "-o", "json", "--fail-level", "error")
    assert done.returncode in (0, 1), done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def claim_reasons(doc: dict[str, Any], ns: str, pod: str) -> list[tuple[str, str]]:
    return [
        (f["args"][0], f["args"][-1])
        for f in doc["findings"]
        if f.get("pod") == f"{ns}/{pod}" and f["reason"] == "claim"
    ]


def pod_of(client: KubeClient, ns: str, name: str) -> dict[str, Any]:
    out: dict[str, Any] = client.request("GET", f"/api/v1/namespaces/{ns}/pods/{name}")
    return out


def scheduled_message(pod: dict[str, Any]) -> str:
    return next(
        (c.get("message", "") for c in pod.get("status", {}).get("conditions", []) if c["type"] == "PodScheduled"), ""
    )


def set_condition(client: KubeClient, ns: str, claim: str, device: str, pool: str, ctype: str) -> dict[str, Any]:
    path = f"{RES}/namespaces/{ns}/resourceclaims/{claim}"
    current = client.request("GET", path)
    current["status"]["devices"] = [
        {
            "driver": D,
            "pool": pool,
            "device": device,
            "conditions": [
                {
                    "type": ctype,
                    "status": "True",
                    "reason": "Probe",
                    "message": "set by the test",
                    "lastTransitionTime": "2026-12-01T00:00:00Z",
                }
            ],
        }
    ]
    out: dict[str, Any] = client.request(
        "PUT", f"{path}/status", body=json.dumps(current).encode(), content_type="application/json"
    )
    return out


def verdicts_now(client: KubeClient, ns: str, pod: str, claim: dict[str, Any], node: str) -> list[str]:
    """gpulabel's claim verdicts for the pod on the node, on the cluster as it is now, ``claim`` as the PUT
    returned it."""
    objects: list[tuple[str, dict[str, Any]]] = [("n", {**n, "kind": "Node"}) for n in client.list("Node")[0]]
    objects.append(("p", {**client.request("GET", f"/api/v1/namespaces/{ns}/pods/{pod}"), "kind": "Pod"}))
    for kind, plural in (("ResourceSlice", "resourceslices"), ("DeviceClass", "deviceclasses")):
        objects.extend((kind, {**o, "kind": kind}) for o in client.request("GET", f"{RES}/{plural}")["items"])
    objects.append(("c", {**claim, "kind": "ResourceClaim"}))
    state = ClusterState.from_objects(objects)
    verdicts = pod_claim_verdicts(state, state.pods[0], [n for n in state.nodes if n.name == node])
    return sorted({v.reason for vs in verdicts.values() for v in vs})


def test_binding_conditions_extended_resources_and_claims_elsewhere(
    labcluster: LabCluster, make_node: Any, ns: str, tmp_path: Path
) -> None:
    client = KubeClient(str(labcluster.kubeconfig))
    tag = ns[-5:]
    n1, n2 = f"bind-{tag}-a", f"bind-{tag}-b"
    made: list[str] = []
    for name in (n1, n2):
        make_node(name, {"dra-binding": tag})
    cls = f"bind-{tag}.example.com"
    ext = f"example.com/gpu-{tag}"
    klass = dra.device_class(cls, f'device.driver == "{D}"', f'device.attributes["{D}"].?probe.orValue("") == "{tag}"')
    klass["spec"]["extendedResourceName"] = ext
    create(client, f"{RES}/deviceclasses", klass)
    made.append(f"{RES}/deviceclasses/{cls}")

    def gpu(name: str, **extra: Any) -> dict[str, Any]:
        return {"name": name, "attributes": {"probe": {"string": tag}}, **extra}

    waiting = gpu("waits", bindingConditions=["Attached"], bindingFailureConditions=["AttachFailed"])
    plain = [gpu("g0"), gpu("g1")]
    failing = {
        "name": "fails",
        "attributes": {"probe": {"string": f"{tag}-fail"}},
        "bindingConditions": ["Attached"],
        "bindingFailureConditions": ["AttachFailed"],
    }
    fail_class = dra.device_class(
        f"fail-{tag}.example.com", f'device.attributes["{D}"].?probe.orValue("") == "{tag}-fail"'
    )
    create(client, f"{RES}/deviceclasses", fail_class)
    made.append(f"{RES}/deviceclasses/fail-{tag}.example.com")
    for s in (
        dra.resource_slice(f"{n1}-fail", [failing], node=n1, pool=f"{n1}-fail"),
        dra.resource_slice(f"{n1}-bind", [waiting], node=n1, pool=f"{n1}-bind"),
        dra.resource_slice(f"{n2}-plain", plain, node=n2, pool=f"{n2}-plain"),
    ):
        create(client, f"{RES}/resourceslices", s)
        made.append(f"{RES}/resourceslices/{s['metadata']['name']}")
    try:
        # 1. binding conditions: allocated, waiting in PreBind until the driver (this test) says Attached
        spec = dra.claim_spec([dra.request("r", dra.exactly(cls))])
        create(client, f"{RES}/namespaces/{ns}/resourceclaims", dra.claim("w", spec, ns))
        create(
            client,
            f"/api/v1/namespaces/{ns}/pods",
            dra.dra_pod("w", [("gpu", "claim", "w")], ns, {"kubernetes.io/hostname": n1}),
        )

        def allocated(name: str) -> dict[str, Any] | None:
            c: dict[str, Any] = client.request("GET", f"{RES}/namespaces/{ns}/resourceclaims/{name}")
            return c if (c.get("status") or {}).get("allocation") else None

        wait_for(lambda: allocated("w"), timeout=30, message="claim w allocated")
        assert not pod_of(client, ns, "w")["spec"].get("nodeName")  # PreBind: not bound yet
        assert claim_reasons(pending_doc(labcluster, ns), ns, "w") == [("w", "binding-wait")]
        set_condition(client, ns, "w", "waits", f"{n1}-bind", "Attached")
        wait_for(lambda: pod_of(client, ns, "w")["spec"].get("nodeName"), timeout=60, message="pod w bound")

        # 1b. a binding failure condition: gpulabel says binding-failed on that state; the pod does not bind
        spec = dra.claim_spec([dra.request("r", dra.exactly(f"fail-{tag}.example.com"))])
        create(client, f"{RES}/namespaces/{ns}/resourceclaims", dra.claim("f", spec, ns))
        pod = dra.dra_pod("f", [("gpu", "claim", "f")], ns, {"kubernetes.io/hostname": n1})
        create(client, f"/api/v1/namespaces/{ns}/pods", pod)
        wait_for(lambda: allocated("f"), timeout=30, message="claim f allocated")
        failed = set_condition(client, ns, "f", "fails", f"{n1}-fail", "AttachFailed")
        assert verdicts_now(client, ns, "f", failed, n1) == ["binding-failed"]
        time.sleep(8)  # the scheduler checks the conditions every few seconds: it gives up on this device
        assert not pod_of(client, ns, "f")["spec"].get("nodeName")

        # 2. extended resources: no node advertises example.com/gpu-<tag>; DRA allocates it through the class
        def ext_pod(name: str, amount: str) -> dict[str, Any]:
            pod = dra.dra_pod(name, [], ns, {"dra-binding": tag})
            del pod["spec"]["resourceClaims"]
            pod["spec"]["containers"][0]["resources"] = {"requests": {ext: amount}, "limits": {ext: amount}}
            return pod

        for name, amount in (("ext2", "2"), ("ext1", "1")):
            pod = ext_pod(name, amount)
            manifest = tmp_path / f"{name}.json"
            manifest.write_text(json.dumps(pod))
            placed = gpulabel(labcluster.kubeconfig, "place", str(manifest), "--per-node", "-o", "json")
            assert placed.returncode in (0, 1), placed.stderr
            rows = [v for v in json.loads(placed.stdout)["nodes"] if v["node"] in (n1, n2)]
            verdicts = {v["node"]: v["fits"] for v in rows}
            create(client, f"/api/v1/namespaces/{ns}/pods", pod)

            def settled(n: str = name) -> dict[str, Any] | None:
                p = pod_of(client, ns, n)
                return p if p["spec"].get("nodeName") or scheduled_message(p) else None

            final = wait_for(settled, timeout=60, message=f"pod {name} settled")
            bound = final["spec"].get("nodeName")
            if name == "ext2":  # n2's two devices; n1's only device is taken
                assert verdicts == {n1: False, n2: True} and bound == n2, (rows, bound)
            else:  # nothing left: Pending, and pending says why on both nodes
                assert verdicts == {n1: False, n2: False} and not bound, (verdicts, bound)
                reasons = claim_reasons(pending_doc(labcluster, ns), ns, name)
                assert {r for _, r in reasons} == {"allocated"}, reasons
        made_claims = client.request("GET", f"{RES}/namespaces/{ns}/resourceclaims")["items"]
        assert any(
            c["metadata"].get("annotations", {}).get("resource.kubernetes.io/extended-resource-claim") == "true"
            for c in made_claims
        )
        # gpus counts the resource through the class's devices (no node advertises it): all three allocated, as
        # the scheduler found (ext1 Pending), ext2's 2 requested, ext1's 1 pending
        listed = json.loads(gpulabel(labcluster.kubeconfig, "gpus", "-o", "json").stdout)
        (row,) = [r for r in listed.get("extended") or () if r["extended"] == ext]
        assert (row["deviceclass"], row["devices"], row["free"]) == (cls, 3, 0), row
        assert (row["requested"], row["pending"]) == (2, 1), row

        # 3. a claim allocated on n1 (pod w's), asked for by a pod pinned to n2: not available there
        pod = dra.dra_pod("elsewhere", [("gpu", "claim", "w")], ns, {"kubernetes.io/hostname": n2})
        create(client, f"/api/v1/namespaces/{ns}/pods", pod)
        final = wait_for(lambda: scheduled_message(pod_of(client, ns, "elsewhere")) or None, timeout=30, message="x")
        doc = pending_doc(labcluster, ns)
        entry = next(p for p in doc["pods"] if p["pod"] == f"{ns}/elsewhere")
        assert entry["predicted_message"] == final, (entry["predicted_message"], final)
    finally:
        for path in reversed(made):
            client.request_raw("DELETE", path)
