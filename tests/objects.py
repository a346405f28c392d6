"""Builders for Kubernetes objects as the API returns them, for tests on snapshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def kubeconfig(tmp_path: Path, server: str = "https://127.0.0.1:6443") -> str:
    """A kubeconfig file with one context (a token user) for ``server``, written in ``tmp_path``; its path."""
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: '{server}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    return str(path)


def node(
    name: str,
    labels: dict[str, str] | None = None,
    *,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    ready: bool = True,
    annotations: dict[str, str] | None = None,
    managed_fields: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": dict(labels or {})}
    if annotations:
        meta["annotations"] = annotations
    if managed_fields:
        meta["managedFields"] = managed_fields
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta,
        "spec": spec,
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


GPU_LABELS = {
    "nvidia.com/gpu.present": "true",
    "feature.node.kubernetes.io/pci-10de.present": "true",
    "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
    "nvidia.com/gpu.count": "4",
    "nvidia.com/gpu.memory": "40537",
}


def gpu_node(name: str, **overrides: str | None) -> dict[str, Any]:
    """A healthy GPU node; ``key=None`` in overrides removes a label (keys use __ for / and _ for .)."""
    labels = dict(GPU_LABELS)
    for k, v in overrides.items():
        if v is None:
            labels.pop(k, None)
        else:
            labels[k] = v
    return node(name, labels)


def pod(
    namespace: str,
    name: str,
    node_name: str = "",
    *,
    phase: str = "Running",
    ready: bool = True,
    spec: dict[str, Any] | None = None,
    owner_uid: str = "",
    labels: dict[str, str] | None = None,
    conditions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": owner_uid}]
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    if node_name:
        body["nodeName"] = node_name
    body.update(spec or {})
    if conditions is None:
        conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": body,
        "status": {"phase": phase, "conditions": conditions},
    }


def daemonset(
    namespace: str, name: str, uid: str, pod_spec: dict[str, Any], status: dict[str, int] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace, "uid": uid},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec},
        },
        "status": status or {},
    }


def as_list(*items: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": list(items)}


# -- node selection (place, pending, hazards) ------------------------------------------


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    """One ``matchExpressions``/``matchFields`` entry; no values leaves ``values`` out."""
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def term(*expressions: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if expressions:
        out["matchExpressions"] = list(expressions)
    if fields:
        out["matchFields"] = fields
    return out


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    """A pod spec fragment: required node affinity with these ORed terms."""
    return {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
        }
    }


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict[str, str]:
    out = {"key": key, "effect": effect}
    if value:
        out["value"] = value
    return out


def toleration(key: str = "", operator: str = "", value: str = "", effect: str = "", **extra: Any) -> dict[str, Any]:
    """A toleration; empty fields are left out, as a user would leave them out."""
    out: dict[str, Any] = {
        k: v for k, v in (("key", key), ("operator", operator), ("value", value), ("effect", effect)) if v
    }
    out.update(extra)
    return out


def nodefeaturerule(name: str, labels: dict[str, str], *match: dict[str, Any]) -> dict[str, Any]:
    """A NodeFeatureRule of one rule (named ``name``) that sets ``labels`` when every ``match`` feature matches."""
    return {
        "apiVersion": "nfd.k8s-sigs.io/v1alpha1",
        "kind": "NodeFeatureRule",
        "metadata": {"name": name},
        "spec": {"rules": [{"name": name, "labels": labels, "matchFeatures": list(match)}]},
    }
