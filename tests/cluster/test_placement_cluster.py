"""place, pending, hazards against the real scheduler and API server.

Differential: node label sets, taints and affinity specs drawn by hypothesis (through
``st.randoms``, so a failure is shrunk and replayed). For every pod,
gpulabel's fit set is empty exactly when the real scheduler leaves the pod Pending, and
otherwise contains the node the scheduler chose; the predicted Pending message is the
scheduler's. Validation likewise: random specs go to the API server (dry run), and
gpulabel accepts exactly what the server accepts, with the same messages.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

from gpulabel_run import gpulabel
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from labcluster_support import LabCluster, delete_pods_now, wait_for

from gpulabel.checks.placement.fit import predict
from gpulabel.cluster.client import KubeClient
from gpulabel.k8s.podvalidation import validate_pod_spec
from gpulabel.model.cluster import node_from_json

KEYS = ["example.com/gpu", "example.com/count", "example.com/zone"]
VALUES = {
    "example.com/gpu": ["a100", "h100", "l4"],
    "example.com/count": ["1", "4", "8", "eight", "0010", "0x10", "99999999999999999999"],
    "example.com/zone": ["z1", "z2"],
}
OPS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]


def random_labels(rng: random.Random) -> dict[str, str]:
    return {k: rng.choice(VALUES[k]) for k in KEYS if rng.random() < 0.7}


def random_expression(rng: random.Random, valid: bool = True) -> dict[str, Any]:
    key = rng.choice(KEYS)
    op = rng.choice(OPS)
    expr: dict[str, Any] = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        expr["values"] = rng.sample(VALUES[key], rng.randint(1, 2))
    elif op in ("Gt", "Lt"):
        expr["values"] = [rng.choice(["0", "3", "5", "10", "eight", "+4"])]
    if not valid:
        broken = rng.choice(["no-values", "values-on-exists", "two-ints", "bad-op", "bad-key"])
        if broken == "no-values":
            expr["operator"], expr["values"] = rng.choice(["In", "NotIn", "Gt"]), []
        elif broken == "values-on-exists":
            expr["operator"], expr["values"] = "Exists", ["x"]
        elif broken == "two-ints":
            expr["operator"], expr["values"] = "Gt", ["1", "2"]
        elif broken == "bad-op":
            expr["operator"] = "Near"
        else:
            expr["key"] = "example.com/bad key"
    return expr


def random_spec(rng: random.Random, run: str, valid: bool = True) -> dict[str, Any]:
    terms = []
    for _ in range(rng.randint(1, 3)):
        exprs = [random_expression(rng) for _ in range(rng.randint(0 if rng.random() < 0.1 else 1, 3))]
        terms.append({"matchExpressions": exprs})
    if not valid:
        terms[0]["matchExpressions"] = [*terms[0]["matchExpressions"], random_expression(rng, valid=False)]
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "example.com/app:1"}],
        "nodeSelector": {"example.com/difftest": run},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}},
    }
    if rng.random() < 0.3:
        spec["tolerations"] = [
            rng.choice(
                [
                    {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
                    {"key": "dedicated", "operator": "Exists"},
                    {"operator": "Exists"},
                    {"key": "dedicated", "value": "other"},
                ]
            )
        ]
    return spec


def server_validation(client: KubeClient, ns: str, name: str, spec: dict[str, Any]) -> list[str]:
    body = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}).encode()
    status, data = client.request_raw(
        "POST", f"/api/v1/namespaces/{ns}/pods", query=[("dryRun", "All")], body=body, content_type="application/json"
    )
    if status < 300:
        return []
    assert status == 422, data[:400]
    causes = json.loads(data)["details"]["causes"]
    return sorted(f"{c['field']}: {c['message']}" for c in causes)


CLUSTER_SETTINGS = {
    "derandomize": True,
    "deadline": None,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}


def test_validation_agrees_with_the_api_server(labcluster: LabCluster, ns: str) -> None:
    """200 random pod specs: gpulabel's validation and the API server's give the same messages.

    The coverage (both verdicts seen) is asserted here, by the test that ran
    the cases, so it holds alone, with -k and in any order.
    """
    client = KubeClient(str(labcluster.kubeconfig))
    seen = {"specs": 0, "rejected": 0}

    @settings(max_examples=200, **CLUSTER_SETTINGS)  # type: ignore[arg-type]
    @given(rng=st.randoms(use_true_random=False), valid=st.booleans())
    def agrees(rng: random.Random, valid: bool) -> None:
        spec = random_spec(rng, "v", valid=valid)
        theirs = server_validation(client, ns, f"v{seen['specs']}", spec)
        seen["specs"] += 1
        seen["rejected"] += bool(theirs)
        assert sorted(validate_pod_spec(spec)) == theirs, spec["affinity"]

    agrees()
    print(f"\n{seen['specs']} pod specs, {seen['rejected']} rejected by the API server")
    assert seen["specs"] >= 100
    assert 20 < seen["rejected"] < seen["specs"] - 20


def test_place_agrees_with_the_real_scheduler(labcluster: LabCluster, make_node: Any) -> None:
    """3 x 10 random nodes and 50 random pods each: every bound pod inside gpulabel's fit set, every
    Pending pod with an empty one and the scheduler's message; both outcomes seen (asserted here)."""
    seen = {"pods": 0, "pending": 0}

    # no shrinking: each example creates ten nodes and fifty pods; a failure prints its pods instead
    @settings(max_examples=3, phases=[Phase.explicit, Phase.reuse, Phase.generate], **CLUSTER_SETTINGS)  # type: ignore[arg-type]
    @given(rng=st.randoms(use_true_random=False))
    def agrees(rng: random.Random) -> None:
        run = f"r{rng.randint(0, 10**9)}"
        ns = f"diff-{run}"
        labcluster.kubectl("create", "namespace", ns)
        wait_for(lambda: labcluster.kubectl("get", "serviceaccount", "default", "-n", ns, check=False).returncode == 0)
        names = []
        for i in range(10):
            labels = {**random_labels(rng), "example.com/difftest": run}
            taints = [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}] if i % 4 == 3 else None
            name = f"diff-{run}-{i}"
            make_node(name, labels, taints=taints, unschedulable=(i == 9))
            names.append(name)
        client = KubeClient(str(labcluster.kubeconfig))
        nodes = [node_from_json(n) for n in client.list("Node")[0]]
        specs: list[dict[str, Any]] = []
        while len(specs) < 50:
            spec = random_spec(rng, run)
            if not validate_pod_spec(spec):
                specs.append(spec)
        for i, spec in enumerate(specs):
            body = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"}, "spec": spec}).encode()
            client.request("POST", f"/api/v1/namespaces/{ns}/pods", body=body, content_type="application/json")

        def settled() -> list[dict[str, Any]] | None:
            pods = client.list("Pod", namespace=ns)[0]
            done = [
                p
                for p in pods
                if p["spec"].get("nodeName")
                or any(
                    c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
                    for c in p.get("status", {}).get("conditions", [])
                )
            ]
            return pods if len(done) == len(specs) else None

        pods = wait_for(settled, timeout=120, interval=1, message="for every pod to be bound or Unschedulable")
        mismatches = []
        pending = 0
        for pod in pods:
            i = int(pod["metadata"]["name"][1:])
            prediction = predict(specs[i], nodes)
            bound = pod["spec"].get("nodeName")
            if bound:
                if bound not in prediction.feasible:
                    mismatches.append((i, "bound outside the fit set", bound, prediction.feasible))
            else:
                pending += 1
                message = next(c["message"] for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
                if prediction.feasible:
                    mismatches.append((i, "Pending but gpulabel found nodes", prediction.feasible, message))
                elif prediction.message != message:
                    mismatches.append((i, "different Pending message", prediction.message, message))
        delete_pods_now(labcluster, ns)  # before make_node deletes their nodes
        labcluster.kubectl("delete", "namespace", ns, "--wait=false")
        seen["pods"] += len(specs)
        seen["pending"] += pending
        assert mismatches == []

    agrees()
    print(f"\n{seen['pods']} pods on random nodes: {seen['pending']} Pending, 0 mismatches")
    assert seen["pods"] >= 150
    assert 10 < seen["pending"] < seen["pods"] - 10


def test_the_lab_story_hazards_then_pending(labcluster: LabCluster, ns: str, make_node: Any) -> None:
    make_node(
        "story-node-1",
        {"feature.node.kubernetes.io/custom-gpu-training": "true", "nvidia.com/gpu.product": "NVIDIA-A10"},
    )
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "feature.node.kubernetes.io/custom-gpu-training", "operator": "Exists"},
                            {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-A10"]},
                        ]
                    }
                ]
            }
        }
    }

    def pod(name: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"affinity": affinity, "containers": [{"name": "train", "image": "example.com/t:1"}]},
        }

    labcluster.apply(pod("train-a"))
    wait_for(lambda: labcluster.get("pod", "train-a", "-n", ns)["status"].get("phase") == "Running", timeout=60)
    assert labcluster.get("pod", "train-a", "-n", ns)["spec"]["nodeName"] == "story-node-1"
    clean = gpulabel(labcluster.kubeconfig, "hazards", "-n", ns)
    assert (clean.returncode, clean.stdout) == (0, "OK\n")

    labcluster.kubectl("label", "node", "story-node-1", "feature.node.kubernetes.io/custom-gpu-training-")
    time.sleep(1)
    assert labcluster.get("pod", "train-a", "-n", ns)["status"]["phase"] == "Running"  # IgnoredDuringExecution
    hazards = gpulabel(labcluster.kubeconfig, "hazards", "-n", ns, "--fail-level", "warning")
    assert hazards.returncode == 1  # a hazard is a warning
    assert hazards.stdout == (
        f"{ns}/train-a story-node-1 affinity term[0] feature.node.kubernetes.io/custom-gpu-training Exists\n"
    )
    labcluster.apply(pod("train-b"))
    wait_for(
        lambda: any(
            c.get("reason") == "Unschedulable"
            for c in labcluster.get("pod", "train-b", "-n", ns)["status"].get("conditions", [])
        ),
        timeout=60,
    )
    # train-b selects no GPU label nor asks for a GPU: --all-pods, and a Pending pod is a warning
    pending = gpulabel(
        labcluster.kubeconfig, "pending", "-n", ns, "--per-node", "--all-pods", "--fail-level", "warning"
    )
    assert pending.returncode == 1
    lines = pending.stdout.splitlines()
    assert f"{ns}/train-b story-node-1 affinity term[0] feature.node.kubernetes.io/custom-gpu-training Exists" in lines
    assert any(line.startswith(f"{ns}/train-b scheduler: 0/") for line in lines)
