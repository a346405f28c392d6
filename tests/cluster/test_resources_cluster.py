"""NodeResourcesFit against the real scheduler: random allocatable, random requests, pods already running.

Each example makes kwok nodes with random ``status.allocatable`` (cpu, memory,
pods, ``nvidia.com/gpu``, sometimes ``nvidia.com/mig-1g.5gb``), binds random
pods to them directly (``spec.nodeName``, the scheduler only counts them), then
creates a batch of random pods (GPU/cpu/memory requests and limits, init
containers, sidecars, a RuntimeClass with overhead, node selectors, a taint
or two) in one ``kubectl apply``. The scheduler takes them in creation order,
so gpulabel replays that order: before each pod it predicts from the nodes and
every pod bound so far; a bound pod must land inside gpulabel's fit set, a
Pending pod must have an empty fit set and exactly the scheduler's message.

The nodes are the example's own: each carries a NoSchedule taint with the
example's name that only its pods tolerate, so no other file's pod (a CronJob's,
a Deployment's, a DaemonSet's) lands on them while the scheduler decides, which
the replay, reading the pods once they have settled, could not see.
"""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from labcluster_support import LabCluster, delete_pods_now, no_pod_going, node_is_ready, wait_for
from live_snapshot import live_equals_snapshot

from gpulabel.checks.placement.fit import predict
from gpulabel.cluster.client import KubeClient
from gpulabel.model.cluster import Pod, node_from_json, pod_from_json

PODS_PER_EXAMPLE = 60
NODES_PER_EXAMPLE = 8
RUNTIME_CLASS = "restest-overhead"
OWN = "example.com/restest"  # the label and the taint that make an example's nodes its own


def own_taint(run: str) -> dict[str, str]:
    return {"key": OWN, "value": run, "effect": "NoSchedule"}


def random_allocatable(rng: random.Random) -> dict[str, str]:
    alloc = {
        "cpu": rng.choice(["2", "4", "3500m", "8"]),
        "memory": rng.choice(["4Gi", "8Gi", "16Gi"]),
        "pods": rng.choice(["4", "10", "110", "110"]),
    }
    if rng.random() < 0.8:
        alloc["nvidia.com/gpu"] = rng.choice(["0", "1", "2", "4", "8", "8"])
    if rng.random() < 0.25:
        alloc["nvidia.com/mig-1g.5gb"] = rng.choice(["0", "7", "14"])
    return alloc


def node_object(name: str, run: str, rng: random.Random, alloc: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"taints": [own_taint(run)]}
    if rng.random() < 0.15:
        spec["taints"].append({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, OWN: run, "pool": rng.choice("ab")},
        },
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def random_resources(rng: random.Random, big: bool = False) -> dict[str, Any]:
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    if rng.random() < 0.7:
        requests["cpu"] = rng.choice(["100m", "500m", "1", "1500m", "3"] + (["6"] if big else []))
    if rng.random() < 0.6:
        requests["memory"] = rng.choice(["256Mi", "1Gi", "3Gi", "0.5Gi"] + (["12Gi"] if big else []))
    if rng.random() < 0.6:
        limits["nvidia.com/gpu"] = rng.choice(["1", "1", "2", "3", "4", "8"])  # requests default to limits
    if rng.random() < 0.15:
        limits["nvidia.com/mig-1g.5gb"] = rng.choice(["1", "3", "8"])
    out: dict[str, Any] = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


def random_pod_spec(rng: random.Random, run: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "example.com/train:1", "resources": random_resources(rng)}],
        "nodeSelector": {OWN: run},
        "tolerations": [{**own_taint(run), "operator": "Equal"}],
    }
    if rng.random() < 0.25:
        spec["containers"].append(
            {"name": "second", "image": "example.com/x:1", "resources": {"requests": {"cpu": "250m"}}}
        )
    if rng.random() < 0.2:
        spec["initContainers"] = [
            {"name": "init", "image": "example.com/i:1", "resources": random_resources(rng, big=True)}
        ]
    if rng.random() < 0.15:
        sidecar = {
            "name": "sidecar",
            "image": "example.com/s:1",
            "restartPolicy": "Always",
            "resources": {"requests": {"cpu": rng.choice(["200m", "1"]), "memory": "512Mi"}},
        }
        spec["initContainers"] = [sidecar, *spec.get("initContainers", [])]
    if rng.random() < 0.15:
        spec["runtimeClassName"] = RUNTIME_CLASS
    if rng.random() < 0.3:
        spec["nodeSelector"]["pool"] = rng.choice("ab")
    if rng.random() < 0.2:
        spec["tolerations"].append({"key": "dedicated", "operator": "Exists"})
    return spec


def pod_object(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def settled(pod: dict[str, Any]) -> bool:
    return bool(pod["spec"].get("nodeName")) or any(
        c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
        for c in pod.get("status", {}).get("conditions", [])
    )


CLUSTER_SETTINGS = {
    "derandomize": True,
    "deadline": None,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}


def ensure_runtime_class(labcluster: LabCluster) -> None:
    labcluster.apply(
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": RUNTIME_CLASS},
            "handler": "runc",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "128Mi"}},
        }
    )


def _one_example(labcluster: LabCluster, seed: int, seen: dict[str, int]) -> None:
    """Eight random nodes, some running pods, sixty random pods: gpulabel's fit set and message per pod."""
    # One seed drives everything (st.randoms with hundreds of draws trips hypothesis' large-example check).
    rng = random.Random(seed)
    ensure_runtime_class(labcluster)
    # another file's pods still going (a node deleted before its pods) would make the scheduler retry
    # this example's Pending pods, their messages then counting pods bound after them
    wait_for(lambda: no_pod_going(labcluster), timeout=150, interval=2, message="for other files' pods to go")
    run = f"r{rng.randint(0, 10**9)}-{uuid.uuid4().hex[:4]}"  # hypothesis replays a failing seed: fresh names
    ns = f"res-{run}"
    labcluster.kubectl("create", "namespace", ns)
    wait_for(lambda: labcluster.kubectl("get", "serviceaccount", "default", "-n", ns, check=False).returncode == 0)
    names = [f"res-{run}-{i}" for i in range(NODES_PER_EXAMPLE)]
    allocs = {n: random_allocatable(rng) for n in names}
    labcluster.apply(*(node_object(n, run, rng, allocs[n]) for n in names))
    client = KubeClient(str(labcluster.kubeconfig))
    try:

        def ready() -> bool:
            mine = [n for n in client.list("Node")[0] if n["metadata"]["name"] in allocs]
            return len(mine) == len(names) and all(node_is_ready(n) for n in mine)

        wait_for(ready, timeout=90, message="for the nodes to become Ready")
        # Pods already running: bound by name, so the scheduler only counts them (some overcommit).
        running = []
        for name in names:
            for j in range(rng.choice([0, 0, 1, 2, 3])):
                spec = {
                    "nodeName": name,
                    "containers": [{"name": "c", "image": "x", "resources": random_resources(rng)}],
                }
                running.append(pod_object(f"run-{name.rsplit('-', 1)[1]}-{j}", spec))
        if running:
            labcluster.kubectl(
                "apply", "-n", ns, "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": running})
            )
        specs = [random_pod_spec(rng, run) for _ in range(PODS_PER_EXAMPLE)]
        batch = [pod_object(f"p{i:03d}", spec) for i, spec in enumerate(specs)]
        labcluster.kubectl(
            "apply", "-n", ns, "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": batch})
        )

        def all_settled() -> list[dict[str, Any]] | None:
            pods = [p for p in client.list("Pod", namespace=ns)[0] if p["metadata"]["name"].startswith("p")]
            return pods if len(pods) == len(specs) and all(settled(p) for p in pods) else None

        pods = wait_for(all_settled, timeout=180, interval=1, message="for every pod to be bound or Unschedulable")
        pods.sort(key=lambda p: p["metadata"]["name"])
        nodes = [node_from_json(n) for n in client.list("Node")[0]]
        nodes.sort(key=lambda n: n.name)
        everything = client.list("Pod")[0]
        # The scheduler saw every pod outside this batch from the start: the running ones on these nodes (no
        # other file's pod tolerates their taint), other namespaces' pods on the other nodes.
        bound: list[Pod] = [
            pod_from_json(p)
            for p in everything
            if p["spec"].get("nodeName")
            and not (p["metadata"]["namespace"] == ns and p["metadata"]["name"].startswith("p"))
            and p.get("status", {}).get("phase") not in ("Succeeded", "Failed")
        ]
        mismatches = []
        for pod in pods:
            name = pod["metadata"]["name"]
            seen["overhead"] += bool(pod["spec"].get("overhead"))  # set by the RuntimeClass admission plugin
            seen["sidecars"] += any(c.get("restartPolicy") == "Always" for c in pod["spec"].get("initContainers", []))
            prediction = predict(pod["spec"] | {"nodeName": ""}, nodes, bound)
            target = pod["spec"].get("nodeName")
            if target:
                seen["bound"] += 1
                if target not in prediction.feasible:
                    mismatches.append((name, "bound outside the fit set", target, prediction.results[target].reason))
                bound.append(pod_from_json(pod))
                continue
            seen["pending"] += 1
            message = next(c["message"] for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
            seen["gpu_messages"] += "Insufficient nvidia.com/gpu" in message
            seen["too_many_pods"] += "Too many pods" in message
            if prediction.feasible:
                mismatches.append((name, "Pending but gpulabel found nodes", prediction.feasible, message))
            elif prediction.message != message:
                mismatches.append((name, "different Pending message", prediction.message, message))
        seen["pods"] += len(pods)
        # the taint keeps other files' pods off these nodes; one that tolerates everything would show here
        foreign = [
            f"{p['metadata']['namespace']}/{p['metadata']['name']} on {p['spec']['nodeName']}"
            for p in everything
            if p["spec"].get("nodeName") in allocs and p["metadata"]["namespace"] != ns
        ]
        report = {"mismatches": mismatches, "allocatable": allocs, "other files' pods on these nodes": foreign}
        assert mismatches == [], json.dumps(report, indent=1, default=str)
        # every read-only command says live what it says on a snapshot of this moment
        work = labcluster.dir / f"moment-{run}"
        work.mkdir()
        manifest = work / "manifest.json"
        manifest.write_text(json.dumps(pod_object("probe", random_pod_spec(rng, run)) | {"kind": "Pod"}))
        compared = live_equals_snapshot(
            labcluster.kubeconfig, work, namespace=ns, node=names[0], manifest=str(manifest), expression="true"
        )
        seen["commands"] += compared["commands"]
    finally:
        delete_pods_now(labcluster, ns)  # before their nodes
        labcluster.kubectl("delete", "namespace", ns, "--wait=false")
        labcluster.kubectl("delete", "node", *names, "--wait=false", "--ignore-not-found")


def test_resource_fit_agrees_with_the_real_scheduler(labcluster: LabCluster) -> None:
    """NodeResourcesFit on 4 x 60 random pods; the coverage is asserted here, by the test that ran the cases."""
    seen = dict.fromkeys(
        ("pods", "pending", "bound", "gpu_messages", "too_many_pods", "overhead", "sidecars", "commands"), 0
    )

    # no shrinking: each example creates eight nodes and sixty pods; a failure prints its pods and seed instead
    @settings(max_examples=4, phases=[Phase.explicit, Phase.reuse, Phase.generate], **CLUSTER_SETTINGS)  # type: ignore[arg-type]
    @given(seed=st.integers(0, 2**32 - 1))
    def agrees(seed: int) -> None:
        _one_example(labcluster, seed, seen)

    agrees()
    print(
        f"\n{seen['pods']} random pods: {seen['bound']} bound, {seen['pending']} Pending "
        f"({seen['gpu_messages']} with Insufficient nvidia.com/gpu, {seen['too_many_pods']} with Too many pods), "
        f"0 disagreements; {seen['overhead']} with overhead, {seen['sidecars']} with sidecars; "
        f"{seen['commands']} read-only commands live = on a snapshot of the moment"
    )
    assert seen["pods"] >= 200
    assert seen["pending"] > 20 and seen["bound"] > 20
    assert seen["gpu_messages"] > 5 and seen["overhead"] > 5 and seen["sidecars"] > 5
    assert seen["commands"] >= 4 * 28
