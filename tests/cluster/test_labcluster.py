"""What the real control plane does with GPU node labels (docs/labels.md, docs/scheduling.md, docs/api.md).

Every test here talks to labcluster: real kube-apiserver validation, the real
kube-scheduler and DaemonSet controller, kwok standing in for kubelets.
Nodes are cluster-scoped and the cluster is shared, so each test names its
nodes uniquely and scopes its pods and DaemonSets to them with a label.
"""

from __future__ import annotations

import copy
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from labcluster_support import LabCluster, node_is_ready, wait_for

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
LAB_EXAMPLE = REPO / "examples" / "lab-cluster.yaml"
LAB_NODES = ("lab-node-0", "lab-node-1", "lab-node-2")
SCOPE = "gpulabel.test/scope"

# Used when examples/lab-cluster.yaml is not there: the same three nodes.
FALLBACK_LAB_LABELS: dict[str, dict[str, str]] = {
    "lab-node-0": {
        "nvidia.com/gpu.present": "true",
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
        "nvidia.com/gpu.count": "4",
        "nvidia.com/gpu.memory": "40537",
    },
    "lab-node-1": {
        "nvidia.com/gpu.present": "true",
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-A10",
        "nvidia.com/gpu.count": "2",
        "nvidia.com/gpu.memory": "22731",
    },
    "lab-node-2": {"feature.node.kubernetes.io/kernel-version.major": "6"},
}

OPERANDS = ("driver", "container-toolkit", "device-plugin", "gpu-feature-discovery", "dcgm-exporter")


def lab_nodes() -> list[dict[str, Any]]:
    """The lab's Node objects, stripped to what a client may create."""
    if LAB_EXAMPLE.exists():
        docs = [d for d in yaml.safe_load_all(LAB_EXAMPLE.read_text()) if d]
        items = [i for d in docs for i in (d.get("items", [d]) if d.get("kind") == "List" else [d])]
        nodes: list[dict[str, Any]] = [
            i for i in items if i.get("kind") == "Node" and i["metadata"]["name"] in LAB_NODES
        ]
    else:
        nodes = [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": dict(lbl)}}
            for n, lbl in FALLBACK_LAB_LABELS.items()
        ]
    out: list[dict[str, Any]] = []
    for node in nodes:
        meta = node["metadata"]
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": meta["name"],
                    "labels": dict(meta.get("labels", {})),
                    "annotations": dict(meta.get("annotations", {})),
                },
                "spec": copy.deepcopy(node.get("spec") or {}),
            }
        )
    assert sorted(n["metadata"]["name"] for n in out) == list(LAB_NODES)
    return out


@pytest.fixture(scope="module")
def lab(labcluster: LabCluster) -> Iterator[str]:
    """lab-node-0..2 from examples/lab-cluster.yaml, Ready; yields their scope label value."""
    scope = f"lab-{uuid.uuid4().hex[:6]}"
    nodes = lab_nodes()
    for node in nodes:
        node["metadata"]["labels"][SCOPE] = scope
    labcluster.kubectl("delete", "node", *LAB_NODES, "--ignore-not-found")
    labcluster.apply(*nodes)

    def all_ready() -> bool:
        return all(node_is_ready(labcluster.get("node", name)) for name in LAB_NODES)

    wait_for(all_ready, timeout=60, message="for the lab nodes to become Ready")
    yield scope
    labcluster.kubectl("delete", "node", *LAB_NODES, "--wait=false", "--ignore-not-found")


def node_labels(cluster: LabCluster, name: str) -> dict[str, str]:
    return cluster.get("node", name)["metadata"].get("labels", {})  # type: ignore[no-any-return]


def pod_manifest(name: str, ns: str, scope: str, terms: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            # The scope label keeps other tests' nodes out; the affinity is what is under test.
            "nodeSelector": {SCOPE: scope},
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
            },
            "containers": [{"name": "main", "image": "registry.example/app:1"}],
            "terminationGracePeriodSeconds": 0,
        },
    }


def running_node(cluster: LabCluster, ns: str, pod: str, timeout: float = 60) -> str:
    """Wait for the pod to be Running; return the node the scheduler chose."""

    def check() -> str | None:
        obj = cluster.get("pod", pod, "-n", ns)
        return obj["spec"].get("nodeName") if obj["status"].get("phase") == "Running" else None

    return wait_for(check, timeout=timeout, message=f"for pod {ns}/{pod} to run")


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == type_), None)


# --- API-server validation -------------------------------------------------


def test_invalid_label_value_is_rejected_by_the_api_server(labcluster: LabCluster, lab: str) -> None:
    before = node_labels(labcluster, "lab-node-1")["nvidia.com/gpu.product"]
    patch = '{"metadata":{"labels":{"nvidia.com/gpu.product":"NVIDIA A100-SXM4-40GB"}}}'
    proc = labcluster.kubectl("patch", "node", "lab-node-1", "-p", patch, check=False)
    assert proc.returncode != 0
    assert "a valid label must be an empty string or consist of alphanumeric characters" in proc.stderr
    assert "NVIDIA A100-SXM4-40GB" in proc.stderr
    assert node_labels(labcluster, "lab-node-1")["nvidia.com/gpu.product"] == before == "NVIDIA-A10"


# --- Scheduler: required node affinity --------------------------------------

AFFINITY_CASES: dict[str, tuple[list[dict[str, Any]], set[str]]] = {
    "in": (
        [{"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-A10"]}]}],
        {"lab-node-1"},
    ),
    # NotIn alone would also match the CPU node (label absent); Exists in the same term excludes it.
    "exists-and-notin": (
        [
            {
                "matchExpressions": [
                    {"key": "nvidia.com/gpu.present", "operator": "Exists"},
                    {"key": "nvidia.com/gpu.product", "operator": "NotIn", "values": ["NVIDIA-A10"]},
                ]
            }
        ],
        {"lab-node-0"},
    ),
    "notin-alone-matches-absent-label": (
        [
            {
                "matchExpressions": [
                    {
                        "key": "nvidia.com/gpu.product",
                        "operator": "NotIn",
                        "values": ["NVIDIA-A10", "NVIDIA-A100-SXM4-40GB"],
                    }
                ]
            }
        ],
        {"lab-node-2"},
    ),
    "gt": (
        [{"matchExpressions": [{"key": "nvidia.com/gpu.count", "operator": "Gt", "values": ["3"]}]}],
        {"lab-node-0"},
    ),
    # Terms are ORed: either node may be chosen, never lab-node-0.
    "two-terms-ored": (
        [
            {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-A10"]}]},
            {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "DoesNotExist"}]},
        ],
        {"lab-node-1", "lab-node-2"},
    ),
}


def test_required_node_affinity_lands_where_the_scheduler_puts_it(labcluster: LabCluster, lab: str, ns: str) -> None:
    labcluster.apply(*(pod_manifest(f"p-{case}", ns, lab, terms) for case, (terms, _) in AFFINITY_CASES.items()))
    placed = {case: running_node(labcluster, ns, f"p-{case}") for case in AFFINITY_CASES}
    for case, (_, allowed) in AFFINITY_CASES.items():
        assert placed[case] in allowed, f"{case}: landed on {placed[case]}, expected one of {allowed}"


def test_removing_a_required_label_keeps_running_pods_and_blocks_new_ones(
    labcluster: LabCluster, lab: str, ns: str
) -> None:
    terms = AFFINITY_CASES["in"][0]
    labcluster.apply(pod_manifest("first", ns, lab, terms))
    assert running_node(labcluster, ns, "first") == "lab-node-1"

    labcluster.kubectl("label", "node", "lab-node-1", "nvidia.com/gpu.product-")
    try:
        labcluster.apply(pod_manifest("second", ns, lab, terms))

        def unschedulable() -> dict[str, Any] | None:
            cond = condition(labcluster.get("pod", "second", "-n", ns), "PodScheduled")
            return cond if cond and cond["status"] == "False" else None

        cond = wait_for(unschedulable, timeout=60, message="for the second pod to be found unschedulable")
        assert cond["reason"] == "Unschedulable"
        assert "didn't match Pod's node affinity/selector" in cond["message"]
        time.sleep(2)  # IgnoredDuringExecution: nothing evicts the first pod
        first = labcluster.get("pod", "first", "-n", ns)
        assert first["status"]["phase"] == "Running"
        assert first["spec"]["nodeName"] == "lab-node-1"
        second = labcluster.get("pod", "second", "-n", ns)
        assert second["status"]["phase"] == "Pending"
        assert not second["spec"].get("nodeName")
    finally:
        labcluster.kubectl("label", "node", "lab-node-1", "nvidia.com/gpu.product=NVIDIA-A10", "--overwrite")


# --- DaemonSet controller -----------------------------------------------------


def daemonset(operand: str, ns: str, scope: str) -> dict[str, Any]:
    name = f"nvidia-{operand}-daemonset"
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "nodeSelector": {f"nvidia.com/gpu.deploy.{operand}": "true", SCOPE: scope},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [{"name": operand, "image": f"nvcr.io/nvidia/{operand}:test"}],
                    "terminationGracePeriodSeconds": 0,
                },
            },
        },
    }


def test_gpu_operator_daemonsets_follow_deploy_labels_and_taints(
    labcluster: LabCluster, make_node: Any, ns: str
) -> None:
    node = f"ds-{ns}"[:63]
    make_node(node, labels={SCOPE: ns})
    labcluster.apply(*(daemonset(op, ns, ns) for op in OPERANDS))

    def ds_status() -> dict[str, dict[str, Any]]:
        items = labcluster.get("daemonsets", "-n", ns)["items"]
        return {i["metadata"]["name"].removeprefix("nvidia-").removesuffix("-daemonset"): i for i in items}

    def pods_by_operand() -> dict[str, list[dict[str, Any]]]:
        items = labcluster.get("pods", "-n", ns)["items"]
        return {op: [p for p in items if p["metadata"]["labels"]["app"] == f"nvidia-{op}-daemonset"] for op in OPERANDS}

    def desired() -> dict[str, int] | None:
        st = ds_status()
        if len(st) < len(OPERANDS) or any(
            s.get("status", {}).get("observedGeneration") != s["metadata"]["generation"] for s in st.values()
        ):
            return None
        return {op: s["status"].get("desiredNumberScheduled", 0) for op, s in st.items()}

    assert wait_for(desired, message="for the DaemonSets to be observed") == dict.fromkeys(OPERANDS, 0)

    # Labelling the node schedules one pod per operand, and kwok runs them.
    labcluster.kubectl("label", "node", node, *(f"nvidia.com/gpu.deploy.{op}=true" for op in OPERANDS))

    def all_running() -> bool:
        pods = pods_by_operand()
        return all(
            len(p) == 1 and p[0]["spec"]["nodeName"] == node and p[0]["status"].get("phase") == "Running"
            for p in pods.values()
        )

    wait_for(all_running, timeout=90, message="for one Running pod per operand", interval=0.5)
    wait_for(
        lambda: all(s["status"].get("numberReady") == 1 for s in ds_status().values()),
        timeout=60,
        message="for numberReady=1",
    )

    # Removing a deploy label deletes that operand's pod only.
    labcluster.kubectl("label", "node", node, "nvidia.com/gpu.deploy.driver-")
    wait_for(lambda: not pods_by_operand()["driver"], timeout=60, message="for the driver pod to go")
    assert all(len(p) == 1 for op, p in pods_by_operand().items() if op != "driver")

    def driver_dropped() -> dict[str, int] | None:
        d = desired()
        return d if d and d["driver"] == 0 else None

    assert wait_for(driver_dropped)["dcgm-exporter"] == 1

    # A taint the DaemonSets tolerate changes nothing.
    labcluster.kubectl("taint", "node", node, "nvidia.com/gpu=present:NoSchedule")
    time.sleep(1)
    one_each = {**dict.fromkeys(OPERANDS, 1), "driver": 0}
    assert wait_for(desired) == one_each

    # A node with every deploy label but an untolerated NoSchedule taint gets
    # no pods and is silently left out of desiredNumberScheduled.
    tainted = f"ds-tainted-{ns}"[:63]
    make_node(
        tainted,
        labels={SCOPE: ns, **{f"nvidia.com/gpu.deploy.{op}": "true" for op in OPERANDS}},
        taints=[{"key": "gpulabel.test/maintenance", "value": "true", "effect": "NoSchedule"}],
    )
    time.sleep(2)
    assert wait_for(desired) == one_each
    assert not [p for ps in pods_by_operand().values() for p in ps if p["spec"]["nodeName"] == tainted]

    # Tainting the node that already runs the pods: they keep running (only
    # NoExecute evicts) and the node drops out of desiredNumberScheduled at the
    # DaemonSets' next sync. v1.37's node-update handler does not enqueue them
    # for this case (shouldRun flips, shouldContinueRunning does not), so poke
    # them with an annotation.
    labcluster.kubectl("taint", "node", node, "gpulabel.test/maintenance=true:NoSchedule")
    labcluster.kubectl("annotate", "daemonsets", "--all", "-n", ns, "gpulabel.test/poke=1")
    assert wait_for(
        lambda: (d := desired()) is not None and not any(d.values()),
        timeout=60,
        message=lambda: f"for desiredNumberScheduled to drop to 0: {desired()}",
    )
    pods = pods_by_operand()
    assert all(len(pods[op]) == 1 and pods[op][0]["status"]["phase"] == "Running" for op in OPERANDS if op != "driver")


# --- Scale ---------------------------------------------------------------------


def test_bulk_nodes_become_ready(labcluster: LabCluster) -> None:
    count, tag = 200, uuid.uuid4().hex[:6]
    prefix = f"bulk-{tag}-"
    start = time.monotonic()
    try:
        printed = labcluster.create_nodes(
            count, prefix, {"gpulabel.test/bulk": tag, "nvidia.com/gpu.present": "false"}, timeout=300
        )
        elapsed = time.monotonic() - start
        nodes = labcluster.get("nodes", "-l", f"gpulabel.test/bulk={tag}")["items"]
        assert len(nodes) == count
        assert all(node_is_ready(n) for n in nodes)
        assert {n["metadata"]["name"] for n in nodes} == {f"{prefix}{i}" for i in range(count)}
        print(f"{count} nodes Ready in {elapsed:.1f}s: {printed}")
    finally:
        labcluster.kubectl("delete", "nodes", "-l", f"gpulabel.test/bulk={tag}", "--wait=false")
