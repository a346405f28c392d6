"""Nodes and pods for the pending check's incremental tests (``test_incremental_scope``, ``test_incremental_columns``).

Nodes advertise 64 CPUs, 256Gi and 110 pods and, when given, ``nvidia.com/gpu``; pods request GPUs, bound
and running or Pending and unscheduled, with a priority and an optional nodeSelector.
"""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]


def node(name: str, gpus: str | None, labels: JSON, spec: JSON | None = None) -> JSON:
    """Node ``name`` with ``labels``, ``spec``, and ``gpus`` allocatable GPUs (None: it advertises none)."""
    amounts = {"cpu": "64", "memory": "256Gi", "pods": "110"} | ({"nvidia.com/gpu": gpus} if gpus else {})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec or {},
        "status": {"allocatable": amounts, "capacity": amounts},
    }


def pod(name: str, gpus: int, node: str = "", priority: int = 0, selector: JSON | None = None) -> JSON:
    """Pod ``ml/name`` requesting ``gpus`` GPUs (0: no request): Running on ``node``, or Pending when none."""
    resources = {"requests": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    spec: JSON = {"priority": priority, "containers": [{"name": "c", "resources": resources}]}
    if selector:
        spec["nodeSelector"] = selector
    if node:
        spec["nodeName"] = node
        status: JSON = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    else:
        status = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "message": ""}]}
    meta = {"name": name, "namespace": "ml", "uid": f"uid-{name}", "ownerReferences": []}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}
