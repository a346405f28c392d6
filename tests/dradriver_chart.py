"""The kubelet plugin DaemonSet of NVIDIA's DRA driver chart, as its templates render it (facts, not the chart).

``templates/kubeletplugin.yaml`` and ``values.yaml`` of ``deployments/helm/nvidia-dra-driver-gpu`` at tag
v25.12.0 (and ``dra-driver-nvidia-gpu`` after commit 5f8e399a, 2026-05-11, which adds the class-qualified
NFD labels to the affinity): the names, the selector label, the ``gpus``/``compute-domains`` containers and
what they run, the startup probes, the node affinity terms and the tolerations. Shared by the unit tests and
the labcluster test, so both judge the same DaemonSet.
"""

from __future__ import annotations

from typing import Any

NS = "nvidia-dra-driver-gpu"

_TERMS_V25_12 = (
    ("feature.node.kubernetes.io/pci-10de.present", "true"),
    ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),
    ("nvidia.com/gpu.present", "true"),
)
_TERMS_FIXED = (
    ("feature.node.kubernetes.io/pci-10de.present", "true"),
    ("feature.node.kubernetes.io/pci-0302_10de.present", "true"),
    ("feature.node.kubernetes.io/pci-0300_10de.present", "true"),
    ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),
    ("nvidia.com/gpu.present", "true"),
)


def _container(name: str, binary: str, image: str, port: int) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "command": ["bash", "-c"],
        "args": [f"{binary} -v $(LOG_VERBOSITY)"],
        "env": [{"name": "LOG_VERBOSITY", "value": "4"}, {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}],
        "securityContext": {"privileged": True},
        "startupProbe": {
            "grpc": {"port": port, "service": "liveness"},
            "failureThreshold": 600,
            "periodSeconds": 1,
            "timeoutSeconds": 10,
        },
    }


def kubelet_plugin(fixed: bool = False, gpus: bool = True, namespace: str = NS) -> dict[str, Any]:
    """The DaemonSet: the v25.12.0 chart's (``fixed``: the renamed chart's, with the class-qualified terms)."""
    chart = "dra-driver-nvidia-gpu" if fixed else "nvidia-dra-driver-gpu"
    image = (
        "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v26.4.0"
        if fixed
        else "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0"
    )
    terms = [
        {"matchExpressions": [{"key": k, "operator": "In", "values": [v]}]}
        for k, v in (_TERMS_FIXED if fixed else _TERMS_V25_12)
    ]
    selector = {f"{chart}-component": "kubelet-plugin"}
    containers = [_container("compute-domains", "compute-domain-kubelet-plugin", image, 51515)]
    if gpus:
        containers.append(_container("gpus", "gpu-kubelet-plugin", image, 51516))
    spec: dict[str, Any] = {
        "priorityClassName": "system-node-critical",
        "serviceAccountName": f"{chart}-service-account-kubeletplugin",
        "initContainers": [
            {"name": "init-container", "image": image, "command": ["bash", "/usr/bin/kubelet-plugin-prestart.sh"]}
        ],
        "containers": containers,
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}},
    }
    if fixed:
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    labels = {"app.kubernetes.io/name": chart, "app.kubernetes.io/instance": chart, **selector}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": f"{chart}-kubelet-plugin", "namespace": namespace, "labels": labels},
        "spec": {
            "selector": {"matchLabels": selector},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}},
            "template": {"metadata": {"labels": labels}, "spec": spec},
        },
    }
