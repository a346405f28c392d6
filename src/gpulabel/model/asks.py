"""What a pod's containers ask, read once per load for the pods that ask the same (model/readers.py).

A workload's replicas and a DaemonSet's pods have the same containers: their requests (``pod_requests``, the
scheduler's amounts), their nvidia.com resources and the ways they see GPUs are made once per load and shared,
unless a pod's status can change what the scheduler counts (a bound pod with a resize in its status).
"""

from __future__ import annotations

from gpulabel.k8s.resources import pod_requests, scheduler_amounts
from gpulabel.model.gpusight import Sight, sight_of
from gpulabel.model.podspec import Shared, kept
from gpulabel.model.records import JSON

__all__ = ["asked", "gpu_resources", "shared_requests"]


def shared_requests(requests: dict[str, int], table: Shared | None) -> dict[str, int]:
    """One dict per distinct request within a load: replicas and daemon pods ask for the same,
    150,000 pods hold a few hundred. ``table`` belongs to one load (None: no sharing)."""
    shared: dict[str, int] = kept(table, ("requests", *sorted(requests.items())), requests)
    return shared


def gpu_resources(spec: JSON) -> tuple[str, ...]:
    """The nvidia.com resources the containers (init ones too) request or limit, other than "0", sorted."""
    found: set[str] = set()
    for key in ("containers", "initContainers"):
        listed = spec.get(key)
        if not isinstance(listed, list):
            continue
        for c in listed:
            res = c.get("resources") if isinstance(c, dict) else None
            if not res or not isinstance(res, dict):
                continue
            for part in ("requests", "limits"):
                amounts = res.get(part)
                if not amounts or not isinstance(amounts, dict):
                    continue
                for k, v in amounts.items():
                    name = k if type(k) is str else str(k)
                    if name.startswith("nvidia.com/") and (v if type(v) is str else str(v)) != "0":
                        found.add(name)
    return tuple(sorted(found)) if found else ()


_Asked = tuple[dict[str, int], tuple[str, ...], tuple[Sight, ...]]


def asked(spec: JSON, status: JSON, bound: bool, table: Shared | None) -> _Asked:
    """What a pod's containers ask: the scheduler's requests, the nvidia.com resources, the ways its containers
    see GPUs (``sight_of`` without the annotations). Read once per load for the pods whose containers, pod-level
    resources and overhead are the same (a workload's replicas, a DaemonSet's pods), found by their text,
    when the status cannot change the requests (not bound, or no resize in it); else read for this pod alone."""
    key = _ask_key(spec, status, bound) if table is not None else None
    if table is not None and key is not None:
        known: _Asked | None = table.get(key)
        if known is not None:
            return known
    made = (
        shared_requests(scheduler_amounts(pod_requests(spec, status, bound=bound)), table),
        gpu_resources(spec),
        sight_of(None, spec),
    )
    if key is None:
        return made
    same: _Asked = kept(table, key, made)
    return same


def _ask_key(spec: JSON, status: JSON, bound: bool) -> tuple[str, str] | None:
    """The key of what :func:`asked` reads of a pod; None where its status may count (``pod_requests``: a bound
    pod with allocated or actuated resources, or a resize pending)."""
    if bound:
        if "allocatedResources" in status or "resources" in status:
            return None
        for part in ("initContainerStatuses", "containerStatuses"):
            listed = status.get(part)
            for cs in listed if type(listed) is list else ():
                if type(cs) is not dict or "allocatedResources" in cs or "resources" in cs:
                    return None
        conditions = status.get("conditions")
        for c in conditions if type(conditions) is list else ():
            if type(c) is not dict or c.get("type") == "PodResizePending":
                return None
    # repr, not JSON text: a YAML snapshot's values (a date, NaN) have JSON texts that other values share
    text = repr((spec.get("containers"), spec.get("initContainers"), spec.get("resources"), spec.get("overhead")))
    return ("asked", text)
