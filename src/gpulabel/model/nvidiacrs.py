"""The GPU Operator's newer custom resources: NVIDIADriver (one per node pool) and GPUCluster (the DRA stack).

Both are cluster-scoped ``nvidia.com/v1alpha1`` kinds. What gpulabel keeps of them, and the rules it follows,
are the operator's own (``github.com/NVIDIA/gpu-operator``, release v26.7.0 = a22dbf6 for these files; the
2025-09-17 pseudo-version labcluster runs where it differs, named as such):

- ``api/nvidia/v1alpha1/nvidiadriver_types.go``: ``spec.default`` (v26.7.0; the fallback driver of GPU nodes no
  other NVIDIADriver selects, which a CEL rule forbids a nodeSelector), ``spec.nodeSelector`` (``GetNodeSelector``:
  absent means ``nvidia.com/gpu.present=true``), ``status.state`` (``ready``, ``notReady``, ``disabled``) and
  ``status.conditions`` (``Ready`` and ``Error``, ``internal/conditions/nvidiadriver.go``).
- ``api/nvidia/v1alpha1/gpucluster_types.go``: ``status.state`` and ``status.conditions`` alike.

Records are immutable; :func:`nvidia_driver_from_json` and :func:`gpu_cluster_from_json` are the readers.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass

from gpulabel.errors import SnapshotError
from gpulabel.model.fields import Fields
from gpulabel.model.records import JSON

__all__ = [
    "DRIVER_OWNER_LABEL",
    "CrCondition",
    "GpuCluster",
    "NvidiaDriver",
    "gpu_cluster_from_json",
    "nvidia_driver_from_json",
    "selects",
]

# internal/consts/consts.go NVIDIADriverOwnerLabel (v26.7.0): the operator routes each GPU node to one NVIDIADriver
DRIVER_OWNER_LABEL = "nvidia.com/gpu-operator.driver.owner"
# nvidiadriver_types.go GetNodeSelector: a driver without spec.nodeSelector selects every GPU node
_ALL_GPU_NODES: Mapping[str, str] = {"nvidia.com/gpu.present": "true"}


@dataclass(frozen=True, slots=True)
class CrCondition:
    """One of ``status.conditions`` (metav1.Condition): its type, status, reason and message."""

    type: str
    status: str
    reason: str
    message: str


def _error(conditions: tuple[CrCondition, ...]) -> CrCondition | None:
    """The ``Error`` condition when it is ``True`` (``internal/conditions``: set with the failing reason)."""
    return next((c for c in conditions if c.type == "Error" and c.status == "True"), None)


@dataclass(frozen=True, slots=True)
class NvidiaDriver:
    """An NVIDIADriver: its name, whether it is the default (fallback) one, its node selector as written
    (``None``: absent), whether it is being deleted, and its status."""

    name: str
    default: bool = False
    node_selector: Mapping[str, str] | None = None
    deleting: bool = False
    state: str = ""
    conditions: tuple[CrCondition, ...] = ()

    @property
    def selector(self) -> Mapping[str, str]:
        """``GetNodeSelector``: the selector as written, or ``nvidia.com/gpu.present=true`` when absent."""
        return _ALL_GPU_NODES if self.node_selector is None else self.node_selector

    @property
    def error(self) -> CrCondition | None:
        return _error(self.conditions)


@dataclass(frozen=True, slots=True)
class GpuCluster:
    """A GPUCluster (the operator's DRA stack; its CRD pins one name): its name and status."""

    name: str
    state: str = ""
    conditions: tuple[CrCondition, ...] = ()

    @property
    def error(self) -> CrCondition | None:
        return _error(self.conditions)


def selects(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """``labels.SelectorFromSet(selector).Matches(labels)``: every key of the selector with its exact value (an
    empty selector matches every node)."""
    return all(labels.get(k) == v for k, v in selector.items())


def _meta(obj: JSON, where: str, kind: str) -> tuple[JSON, Fields]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise SnapshotError(where, f"{obj.get('kind')} has no metadata.name")
    here = f"{kind} {meta['name']}"
    return meta, Fields(f"{where} ({here})" if where else here)


def _conditions(f: Fields, status: JSON) -> tuple[CrCondition, ...]:
    out = []
    for i, c in enumerate(f.items(status.get("conditions"), "status.conditions")):
        at = f"status.conditions[{i}]"
        out.append(
            CrCondition(
                sys.intern(f.string(c.get("type"), f"{at}.type")),
                sys.intern(f.string(c.get("status"), f"{at}.status")),
                sys.intern(f.string(c.get("reason"), f"{at}.reason")),
                f.string(c.get("message"), f"{at}.message"),
            )
        )
    return tuple(out)


def nvidia_driver_from_json(obj: JSON, where: str = "") -> NvidiaDriver:
    """An NVIDIADriver record (``nvidia.com/v1alpha1``)."""
    meta, f = _meta(obj, where, "nvidiadriver")
    spec = f.mapping(obj.get("spec"), "spec")
    status = f.mapping(obj.get("status"), "status")
    raw = spec.get("nodeSelector")
    return NvidiaDriver(
        name=sys.intern(meta["name"]),
        default=f.boolean(spec.get("default"), "spec.default"),
        node_selector=None if raw is None else f.str_map(raw, "spec.nodeSelector"),
        deleting=bool(meta.get("deletionTimestamp")),
        state=sys.intern(f.string(status.get("state"), "status.state")),
        conditions=_conditions(f, status),
    )


def gpu_cluster_from_json(obj: JSON, where: str = "") -> GpuCluster:
    """A GPUCluster record (``nvidia.com/v1alpha1``)."""
    meta, f = _meta(obj, where, "gpucluster")
    status = f.mapping(obj.get("status"), "status")
    return GpuCluster(
        name=sys.intern(meta["name"]),
        state=sys.intern(f.string(status.get("state"), "status.state")),
        conditions=_conditions(f, status),
    )
