"""Kueue objects as the API server returns them (kueue.x-k8s.io v1beta2 unless told), and GPU nodes, for tests."""

from __future__ import annotations

from typing import Any

from tests import objects as O

JSON = dict[str, Any]
GROUP = "kueue.x-k8s.io"
PODSET = "kueue.x-k8s.io/podset"


def flavor(
    name: str,
    labels: dict[str, str] | None = None,
    *,
    taints: list[JSON] | None = None,
    tolerations: list[JSON] | None = None,
    topology: str = "",
    version: str = "v1beta2",
) -> JSON:
    spec: JSON = {}
    if labels:
        spec["nodeLabels"] = labels
    if taints:
        spec["nodeTaints"] = taints
    if tolerations:
        spec["tolerations"] = tolerations
    if topology:
        spec["topologyName"] = topology
    return {"apiVersion": f"{GROUP}/{version}", "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def cluster_queue(
    name: str,
    quotas: dict[str, dict[str, Any]],
    *,
    cohort: str = "",
    version: str = "v1beta2",
    usage: JSON | None = None,
) -> JSON:
    """``quotas``: flavor -> {resource: nominal quota}, in one resource group covering every resource named."""
    covered = sorted({r for q in quotas.values() for r in q})
    flavors = [
        {"name": f, "resources": [{"name": r, "nominalQuota": q[r]} for r in covered if r in q]}
        for f, q in quotas.items()
    ]
    spec: JSON = {"resourceGroups": [{"coveredResources": covered, "flavors": flavors}], "namespaceSelector": {}}
    if cohort:
        spec["cohortName" if version == "v1beta2" else "cohort"] = cohort
    obj: JSON = {"apiVersion": f"{GROUP}/{version}", "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}
    if usage:
        obj["status"] = {
            "flavorsUsage": [
                {"name": f, "resources": [{"name": r, "total": t} for r, t in rs.items()]} for f, rs in usage.items()
            ]
        }
    return obj


def local_queue(namespace: str, name: str, cq: str) -> JSON:
    return {
        "apiVersion": f"{GROUP}/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {"clusterQueue": cq},
    }


def topology(name: str, levels: list[str]) -> JSON:
    return {
        "apiVersion": f"{GROUP}/v1beta2",
        "kind": "Topology",
        "metadata": {"name": name},
        "spec": {"levels": [{"nodeLabel": lv} for lv in levels]},
    }


def workload(
    namespace: str,
    name: str,
    queue: str,
    *,
    gpus: int = 1,
    count: int = 1,
    tolerations: list[JSON] | None = None,
    admitted_to: tuple[str, str] | None = None,
    owner_uid: str = "",
) -> JSON:
    """One pod set ``main``; ``admitted_to``: (ClusterQueue, flavor of nvidia.com/gpu), with the conditions."""
    container = {"name": "c", "image": "x", "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}
    spec: JSON = {"containers": [container]}
    if tolerations:
        spec["tolerations"] = tolerations
    obj: JSON = {
        "apiVersion": f"{GROUP}/v1beta2",
        "kind": "Workload",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {"queueName": queue, "podSets": [{"name": "main", "count": count, "template": {"spec": spec}}]},
    }
    if owner_uid:
        obj["metadata"]["ownerReferences"] = [
            {"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": owner_uid, "controller": True}
        ]
    if admitted_to is not None:
        cq, fl = admitted_to
        obj["status"] = {
            "admission": {
                "clusterQueue": cq,
                "podSetAssignments": [{"name": "main", "flavors": {"nvidia.com/gpu": fl}, "count": count}],
            },
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "QuotaReserved",
                    "message": f"Quota reserved in ClusterQueue {cq}",
                },
                {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted"},
            ],
        }
    return obj


def gpu_node(
    name: str, product: str, gpus: int = 8, *, labels: dict[str, str] | None = None, taints: list[JSON] | None = None
) -> JSON:
    """A Ready node GFD labelled, advertising ``gpus`` nvidia.com/gpu (``tests.objects.node`` with allocatable)."""
    all_labels = {
        "kubernetes.io/hostname": name,
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.count": str(gpus),
        **(labels or {}),
    }
    obj = O.node(name, all_labels, taints=taints)
    amounts = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    obj["status"].update(allocatable=amounts, capacity=dict(amounts))
    return obj


def job_pod(
    namespace: str,
    name: str,
    owner_uid: str,
    node_selector: dict[str, str],
    *,
    gpus: int = 1,
    tolerations: list[JSON] | None = None,
    podset: str = "main",
    node: str = "",
) -> JSON:
    """A Job's pod as Kueue let it start: the flavor's labels in its nodeSelector; Pending unless on ``node``."""
    container = {"name": "c", "image": "x", "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}
    spec: JSON = {"containers": [container], "nodeSelector": node_selector}
    if tolerations:
        spec["tolerations"] = tolerations
    phase = "Running" if node else "Pending"
    obj = O.pod(namespace, name, node, phase=phase, spec=spec, owner_uid=owner_uid, labels={PODSET: podset})
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": owner_uid}]
    return obj
