"""The GPU stack beyond the basic GFD labels: sharing, MIG, driver upgrades, advertised devices.

Facts (REFERENCE section 11, issue 15): GFD writes ``gpu.replicas`` (1 without
sharing) and ``gpu.sharing-strategy`` (``none`` | ``time-slicing`` | ``mps``) and
appends ``-SHARED`` to the product when replicas > 1 unless the resource is
renamed to ``nvidia.com/gpu.shared``; with MIG ``single`` the ``gpu.*`` labels
describe MIG devices (``<model>-MIG-INVALID`` with count 0 when the GPUs cannot
form one profile), with ``mixed`` each profile has ``nvidia.com/mig-<profile>.*``
labels and its own resource. mig-manager drives ``mig.config.state``; the driver
upgrade controller drives ``gpu-driver-upgrade-state``; both pause operands by
setting their deploy labels to ``paused-for-*``. The device plugin advertises
count x replicas devices in ``status.allocatable``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime

from gpulabel.model.cluster import Node

__all__ = [
    "DEPLOY_VALUES",
    "DRIVER_UPGRADE_STATE",
    "GPU_REPLICAS",
    "GPU_RESOURCE",
    "MIG_CAPABLE",
    "MIG_CONFIG",
    "MIG_CONFIG_STATE",
    "MIG_IN_PROGRESS",
    "MIG_STRATEGY",
    "PAUSED_FOR_DRIVER_UPGRADE",
    "PAUSED_FOR_MIG_CHANGE",
    "SHARED_RESOURCE",
    "SHARING_STRATEGY",
    "UPGRADE_IN_PROGRESS",
    "driver_major",
    "gpu_resources",
    "label_age",
    "lost_gpus",
    "mig_device_labels",
    "mig_enabled",
    "mig_profile_counts",
    "overdue",
    "parse_time",
    "whole_number",
]

GPU_RESOURCE = "nvidia.com/gpu"
SHARED_RESOURCE = "nvidia.com/gpu.shared"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"

GPU_REPLICAS = "nvidia.com/gpu.replicas"
SHARING_STRATEGY = "nvidia.com/gpu.sharing-strategy"
SHARING_STRATEGIES = ("none", "time-slicing", "mps")
MIG_CAPABLE = "nvidia.com/mig.capable"
MIG_STRATEGY = "nvidia.com/mig.strategy"
MIG_CONFIG = "nvidia.com/mig.config"
MIG_CONFIG_STATE = "nvidia.com/mig.config.state"
MIG_DISABLED = "all-disabled"
MIG_STATES = ("pending", "rebooting", "success", "failed")
MIG_IN_PROGRESS = ("pending", "rebooting")  # mig-manager is changing the layout
MPS_CAPABLE = "nvidia.com/mps.capable"
DEVICE_PLUGIN_CONFIG = "nvidia.com/device-plugin.config"
GFD_TIMESTAMP = "nvidia.com/gfd.timestamp"
DRIVER_MAJOR = ("nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver.major")

DRIVER_UPGRADE_STATE = "nvidia.com/gpu-driver-upgrade-state"
UPGRADE_IN_PROGRESS = (
    "upgrade-required",
    "cordon-required",
    "wait-for-jobs-required",
    "pod-deletion-required",
    "drain-required",
    "node-maintenance-required",
    "post-maintenance-required",
    "pod-restart-required",
    "validation-required",
    "uncordon-required",
)
UPGRADE_DONE, UPGRADE_FAILED = "upgrade-done", "upgrade-failed"

PAUSED_FOR_MIG_CHANGE = "paused-for-mig-change"
PAUSED_FOR_DRIVER_UPGRADE = "paused-for-driver-upgrade"
DEPLOY_VALUES = ("true", "false", "pre-installed", PAUSED_FOR_MIG_CHANGE, PAUSED_FOR_DRIVER_UPGRADE, "")

_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_MIG_COUNT = re.compile(r"nvidia\.com/mig-(.+)\.count")


def whole_number(value: str | None) -> int | None:
    """A label value made of ASCII digits only, as a number; ``None`` otherwise."""
    return int(value) if value is not None and _DIGITS.fullmatch(value) else None


def gpu_resources(allocatable: Mapping[str, int] | None) -> dict[str, int]:
    """The GPU devices a node advertises: ``nvidia.com/gpu``, ``nvidia.com/gpu.shared``, ``nvidia.com/mig-*``."""
    return {
        k: v
        for k, v in (allocatable or {}).items()
        if k in (GPU_RESOURCE, SHARED_RESOURCE) or k.startswith(MIG_RESOURCE_PREFIX)
    }


def mig_device_labels(labels: Mapping[str, str]) -> list[tuple[str, str]]:
    """The labels of MIG devices (key ``nvidia.com/mig-<profile>.<attribute>``), in the labels' order."""
    if "nvidia.com/mig-" not in "\n".join(labels):
        return []  # no key has the prefix (most nodes): one join and one search in C, not a test per label
    return [(k, v) for k, v in labels.items() if k.startswith("nvidia.com/mig-")]


def mig_profile_counts(labels: Mapping[str, str]) -> dict[str, str]:
    """``profile -> count label value`` for the MIG ``mixed`` labels ``nvidia.com/mig-<profile>.count``."""
    out = {}
    for key, value in mig_device_labels(labels):
        m = _MIG_COUNT.fullmatch(key)
        if m is not None:
            out[m.group(1)] = value
    return dict(sorted(out.items()))


def mig_enabled(labels: Mapping[str, str]) -> bool:
    """MIG mode is on: MIG devices are labelled, or a layout other than all-disabled was applied."""
    if "-MIG-" in labels.get("nvidia.com/gpu.product", ""):
        return True
    if any((whole_number(v) or 0) > 0 for v in mig_profile_counts(labels).values()):
        return True
    config = labels.get(MIG_CONFIG)
    return (
        config is not None
        and config != MIG_DISABLED
        and labels.get(MIG_CAPABLE) == "true"
        and labels.get(MIG_CONFIG_STATE) == "success"
    )


def driver_major(labels: Mapping[str, str]) -> str:
    for key in DRIVER_MAJOR:
        if key in labels:
            return labels[key]
    return ""


def parse_time(text: str) -> datetime | None:
    """An RFC 3339 time as the API writes it (``2026-11-28T16:42:10Z``), or ``None``."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def label_age(node: Node, key: str, now: datetime) -> float | None:
    """Seconds since ``key`` was last written (managedFields), or ``None`` when the node does not say."""
    written = node.label_time(key)
    when = parse_time(written) if written else None
    return None if when is None else (now - when).total_seconds()


def overdue(age: float | None, stuck_after: float) -> str:
    """How late a state that should pass is: ``stuck`` past ``stuck_after`` seconds, ``slow`` past half of it,
    ``""`` otherwise or when its age is unknown (a node without managedFields is never called stuck)."""
    if age is None or age <= stuck_after / 2:
        return ""
    return "stuck" if age > stuck_after else "slow"


def format_age(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 86400:
        return f"{seconds // 86400}d{seconds % 86400 // 3600}h"
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60}m"
    return f"{seconds // 60}m" + (f"{seconds % 60}s" if seconds % 60 else "")


def lost_gpus(node: Node) -> dict[str, tuple[int, int]]:
    """``resource -> (lost, capacity)`` for each GPU resource whose capacity exceeds its allocatable while
    the plugin still advertises some of its devices. Allocatable 0 is not a loss of devices but of the
    plugin: the kubelet marks every device of a stopped or unregistered plugin unhealthy for its grace
    period (pkg/kubelet/cm/devicemanager, markResourceUnhealthy), which capacity's no-allocatable says."""
    if node.amounts is None:
        return {}
    advertised = gpu_resources(node.amounts)
    out = {}
    for resource, raw in node.capacity.items():
        if resource not in (GPU_RESOURCE, SHARED_RESOURCE) and not resource.startswith(MIG_RESOURCE_PREFIX):
            continue
        cap = whole_number(str(raw).strip())
        got = advertised.get(resource, 0)
        if cap is not None and cap > got > 0:
            out[resource] = (cap - got, cap)
    return out
