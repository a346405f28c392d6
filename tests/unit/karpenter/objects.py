"""NodePools and NodeClaims as ``kubectl get -o json`` prints them, in the shape of Karpenter v1.14.1's
``pkg/apis/v1`` types (its CRDs: ``kwok/charts/crds/karpenter.sh_nodepools.yaml``, ``..._nodeclaims.yaml``)."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]


def nodepool(
    name: str,
    requirements: list[JSON] | None = None,
    labels: dict[str, str] | None = None,
    taints: list[JSON] | None = None,
    startup_taints: list[JSON] | None = None,
    limits: dict[str, Any] | None = None,
    resources: dict[str, str] | None = None,
) -> JSON:
    spec: JSON = {
        "requirements": requirements if requirements is not None else [],
        "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
        "expireAfter": "720h",
    }
    if taints:
        spec["taints"] = taints
    if startup_taints:
        spec["startupTaints"] = startup_taints
    template: JSON = {"spec": spec}
    if labels:
        template["metadata"] = {"labels": labels}
    out: JSON = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name, "resourceVersion": "1", "generation": 1},
        "spec": {
            "template": template,
            "disruption": {"consolidateAfter": "0s", "consolidationPolicy": "WhenEmptyOrUnderutilized"},
        },
        "status": {
            "nodes": 0,
            "resources": resources or {"cpu": "0", "memory": "0", "nodes": "0", "pods": "0"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "Ready",
                    "message": "",
                    "lastTransitionTime": "2026-12-04T10:00:00Z",
                    "observedGeneration": 1,
                }
            ],
        },
    }
    if limits:
        out["spec"]["limits"] = limits
    return out


def nodeclaim(name: str, pool: str, node: str = "", initialized: str = "True", reason: str = "Initialized") -> JSON:
    """A NodeClaim of ``pool``, launched and registered as ``node`` (none: still launching)."""
    conditions = [
        {"type": "Launched", "status": "True", "reason": "Launched", "message": ""},
        {"type": "Registered", "status": "True" if node else "Unknown", "reason": "Registered", "message": ""},
        {"type": "Initialized", "status": initialized, "reason": reason, "message": ""},
    ]
    for c in conditions:
        c["lastTransitionTime"] = "2026-12-04T10:00:05Z"
    if initialized != "True":
        conditions[2]["message"] = 'Resource "nvidia.com/gpu" was requested but not registered'
    status: JSON = {"conditions": conditions, "capacity": {"cpu": "32", "nvidia.com/gpu": "8"}}
    status["allocatable"] = {"cpu": "31500m", "nvidia.com/gpu": "8" if initialized == "True" else "0"}
    if node:
        status |= {"nodeName": node, "providerID": f"kwok://{node}"}
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "name": name,
            "labels": {"karpenter.sh/nodepool": pool, "node.kubernetes.io/instance-type": "gpu-8x"},
            "creationTimestamp": "2026-12-04T10:00:00Z",
            "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": pool, "uid": "u1"}],
        },
        "spec": {
            "requirements": [
                {"key": "karpenter.sh/nodepool", "operator": "In", "values": [pool]},
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["gpu-8x"]},
            ],
            "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "8", "pods": "2"}},
            "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
            "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
        },
        "status": status,
    }
