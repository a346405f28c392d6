"""Workload manifests for ``gpulabel place``: read, check as the API server would, parse once.

A manifest file holds JSON or (multi-document) YAML, each document an object or
a ``List``; Pods and the pod templates of Deployments, ReplicaSets,
StatefulSets, DaemonSets, Jobs and CronJobs are taken, other kinds (a Service
next to its Deployment) are skipped. A document the server would refuse stops
the run with the server's own message and field path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpulabel.errors import ManifestError, SnapshotError
from gpulabel.k8s.dra.objects import DRA_KINDS
from gpulabel.k8s.nodeaffinity import PodRequirements, compile_pod_spec
from gpulabel.k8s.podvalidation import (
    WORKLOAD_KINDS,
    decode_error,
    decode_message,
    invalid_message,
    pod_spec_of,
)
from gpulabel.k8s.workloads import workload_errors

__all__ = ["Workload", "load_workloads", "workload_from_object", "workloads_from_bytes"]

_MAX_MANIFEST_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class Workload:
    kind: str
    namespace: str
    name: str
    where: str
    requirements: PodRequirements
    requests: Mapping[str, int] = field(default_factory=dict)  # in the scheduler's units, defaults applied
    resource_claims: tuple[dict[str, Any], ...] = ()  # spec.resourceClaims, for DRA placement
    # the pod template's spec as written: what an autoscaler's verdict reads (place -o wide, with NodePools)
    spec: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "namespace": self.namespace, "name": self.name, "source": self.where}


def workload_from_object(obj: dict[str, Any], where: str) -> Workload:
    """Check one workload object as the API server would, then parse its node selection."""
    kind = str(obj.get("kind") or "")
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    name = str(meta.get("name") or meta.get("generateName") or "")
    namespace = str(meta.get("namespace") or "default")
    path, spec = pod_spec_of(obj)
    if (detail := decode_error(spec, path)) is not None:
        raise ManifestError(where, decode_message(kind, str(obj.get("apiVersion") or "v1"), detail))
    if errors := workload_errors(obj):
        raise ManifestError(where, invalid_message(kind, name, errors))
    spec = spec if isinstance(spec, dict) else {}
    from gpulabel.k8s.resources import QuantityError, apply_request_defaults, pod_requests, scheduler_amounts

    try:
        requests = scheduler_amounts(pod_requests(apply_request_defaults(spec)))
    except QuantityError as err:
        text = str(err)
        raise ManifestError(where, path + text[4:] if text.startswith("spec.") else text) from None
    requirements = compile_pod_spec(spec, path, daemonset=kind == "DaemonSet")
    claims = tuple(c for c in spec.get("resourceClaims") or () if isinstance(c, dict))
    return Workload(kind, namespace, name, where, requirements, requests, claims, spec)


def workloads_from_bytes(
    data: bytes, where: str, dra_objects: list[tuple[str, dict[str, Any]]] | None = None
) -> list[Workload]:
    """Every workload in one file's bytes, in order; DRA objects (claims, templates, classes) go to ``dra_objects``."""
    from gpulabel.cluster.snapshot import iter_objects, read_documents

    try:
        docs = read_documents(data, where)
        found: list[tuple[str, dict[str, Any]]] = []
        for n, doc in enumerate(docs):
            found.extend(iter_objects(doc, where if len(docs) == 1 else f"{where}: document {n + 1}"))
    except SnapshotError as err:
        raise ManifestError(err.where, err.message) from None
    if dra_objects is not None:
        dra_objects.extend((w, obj) for w, obj in found if obj.get("kind") in DRA_KINDS)
    return _workloads(found)


def _workloads(found: list[tuple[str, dict[str, Any]]]) -> list[Workload]:
    """Each workload object checked and parsed; objects equal but for their metadata are checked and parsed once.

    What ``workload_from_object`` checks and parses is the object without its ``metadata``
    (the name appears only in a refusal, and the first refusal ends the run), so a copy
    shares the first one's requirements and requests: ``place`` then places the shape once.
    """
    import dataclasses

    import orjson

    shapes: dict[bytes, Workload] = {}
    out: list[Workload] = []
    for where, obj in found:
        if obj.get("kind") not in WORKLOAD_KINDS:
            continue
        try:
            key = orjson.dumps({k: v for k, v in obj.items() if k != "metadata"}, option=orjson.OPT_SORT_KEYS)
        except (TypeError, orjson.JSONEncodeError):  # a YAML value JSON cannot hold (a date): no sharing
            key = b""
        first = shapes.get(key) if key else None
        if first is None:
            first = workload_from_object(obj, where)
            if key:
                shapes[key] = first
            out.append(first)
            continue
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        name = str(meta.get("name") or meta.get("generateName") or "")
        namespace = str(meta.get("namespace") or "default")
        out.append(dataclasses.replace(first, name=name, namespace=namespace, where=where))
    return out


def _read(path: str) -> bytes:
    from gpulabel.cluster.inputs import max_input_bytes, read_input  # bounded; FIFOs and devices handled

    return read_input(path, ManifestError, limit=min(_MAX_MANIFEST_BYTES, max_input_bytes()))


def load_workloads(paths: Iterable[str], dra_objects: list[tuple[str, dict[str, Any]]] | None = None) -> list[Workload]:
    """Read every manifest file (``-`` is stdin); at least one workload must be found.

    ResourceClaims, ResourceClaimTemplates and DeviceClasses in the files are
    appended to ``dra_objects`` (given), for placing the workloads that use them.
    """
    out: list[Workload] = []
    names = list(paths)
    for path in names:
        where = "<stdin>" if path == "-" else path
        out.extend(workloads_from_bytes(_read(path), where, dra_objects))
    if not out:
        kinds = ", ".join(WORKLOAD_KINDS)
        raise ManifestError(", ".join(names), f"no workload found: place takes {kinds}")
    return out
