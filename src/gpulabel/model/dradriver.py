"""NVIDIA's DRA driver for GPUs as gpulabel recognises it in a cluster: its kubelet plugin DaemonSet.

Facts from the driver's Helm chart (``deployments/helm/<chart>/`` in NVIDIA/k8s-dra-driver-gpu, since
moved to kubernetes-sigs/dra-driver-nvidia-gpu; read at tag v25.12.0 and at the commit of 2026-05-15):

- The chart was named ``nvidia-dra-driver-gpu`` (up to v25.12.0, image ``nvcr.io/nvidia/k8s-dra-driver-gpu``)
  and is now ``dra-driver-nvidia-gpu`` (image ``registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu``).
- ``templates/kubeletplugin.yaml``: one DaemonSet ``<chart name>-kubelet-plugin`` whose pods carry the
  selector label ``<chart name>-component: kubelet-plugin``; its containers are ``compute-domains``
  (running ``compute-domain-kubelet-plugin``, when ``resources.computeDomains.enabled``) and ``gpus``
  (running ``gpu-kubelet-plugin``, when ``resources.gpus.enabled``), each with a gRPC startup and
  liveness probe (ports 51515, 51516), so a pod is Ready only once its plugins answer.
- ``values.yaml`` ``kubeletPlugin.affinity``: a required node affinity whose terms (ORed) each ask one
  label: up to v25.12.0 ``feature.node.kubernetes.io/pci-10de.present=true``,
  ``feature.node.kubernetes.io/cpu-model.vendor_id=NVIDIA`` (Tegra) or ``nvidia.com/gpu.present=true``;
  commit 5f8e399a (2026-05-11, "Include upstream NFD GPU labels", fixing kubernetes-sigs/dra-driver-nvidia-gpu
  issue 1084) adds ``pci-0302_10de.present`` and ``pci-0300_10de.present``. NFD's own default labels a PCI
  device ``pci-<class>_<vendor>`` (the GPU Operator configures NFD to label ``pci-<vendor>``), so with
  upstream NFD and without the operator's ``gpu.present`` the older chart's plugin never lands on a GPU
  node: no ResourceSlices, no DRA GPUs there. ``kubeletPlugin.tolerations`` was ``[]`` up to v25.12.0 and
  is now ``nvidia.com/gpu:NoSchedule`` (Exists).

gpulabel carries these facts over, not the chart: it recognises the DaemonSet by the plugin its
containers run (or, failing that, by the chart's DaemonSet names) and judges it with the DaemonSet
controller's own node selection (``checks/operands/dradriver.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "CHART_NAMES",
    "DAEMONSETS",
    "GPU_DRIVER",
    "GPU_PLUGIN",
    "OPERAND",
    "plugin_containers",
]

CHART_NAMES = ("nvidia-dra-driver-gpu", "dra-driver-nvidia-gpu")
DAEMONSETS = tuple(f"{c}-kubelet-plugin" for c in CHART_NAMES)
GPU_PLUGIN = "gpu-kubelet-plugin"  # the binary of the chart's ``gpus`` container
COMPUTE_DOMAIN_PLUGIN = "compute-domain-kubelet-plugin"  # the ``compute-domains`` container's
GPU_DRIVER = "gpu.nvidia.com"  # the driver name its ResourceSlices publish
OPERAND = "dra-kubelet-plugin"  # how findings name it (the operand column)
_IMAGES = ("k8s-dra-driver-gpu", "dra-driver-nvidia-gpu")


def _runs(container: Mapping[str, Any]) -> str:
    words = " ".join(str(w) for w in (*(container.get("command") or ()), *(container.get("args") or ())))
    if COMPUTE_DOMAIN_PLUGIN in words:
        return COMPUTE_DOMAIN_PLUGIN
    if GPU_PLUGIN in words:
        return GPU_PLUGIN
    return ""


def plugin_containers(name: str, spec: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The plugins a DaemonSet's pod template runs if it is the DRA driver's kubelet plugin, else ``None``.

    By what its containers run (``gpu-kubelet-plugin``, ``compute-domain-kubelet-plugin``); a container of
    the driver's image named ``gpus``/``compute-domains``, or a DaemonSet named as the chart names it, counts
    too (a wrapper script may hide the binary's name).
    """
    runs: list[str] = []
    named = name in DAEMONSETS
    for c in spec.get("containers") or ():
        if not isinstance(c, Mapping):
            continue
        what = _runs(c)
        ours = named or any(i in str(c.get("image") or "") for i in _IMAGES)
        if not what and ours:
            what = {"gpus": GPU_PLUGIN, "compute-domains": COMPUTE_DOMAIN_PLUGIN}.get(str(c.get("name")), "")
        if what:
            runs.append(what)
    return tuple(runs) if runs else None
