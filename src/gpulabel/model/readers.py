"""The API's JSON (a live LIST or a snapshot file) into records, every field read with its type.

An object that fits its shape (:mod:`gpulabel.model.shapes`) is read without a check per field; any
other is read by the checking reader, which names the file, the object and the field of a wrong one.
"""

from __future__ import annotations

import sys
from typing import Any, TypeGuard

from gpulabel.errors import SnapshotError
from gpulabel.k8s.resources import QuantityError, node_amounts, pod_requests, scheduler_amounts
from gpulabel.k8s.taints import Taint
from gpulabel.model.asks import asked, gpu_resources, shared_requests
from gpulabel.model.fields import Fields, interned
from gpulabel.model.gpusight import sight_of
from gpulabel.model.podspec import COMPILED_FIELDS, Shared, compiled, kept
from gpulabel.model.records import (
    JSON,
    KUBELET_CONDITIONS,
    DaemonSet,
    DeviceHealth,
    Node,
    NodeCondition,
    Pod,
    RuntimeClass,
)
from gpulabel.model.redaction import redact_text
from gpulabel.model.shapes import NODE_SHAPE, POD_SHAPE, SCHEDULING_FIELDS, fits
from gpulabel.model.terminations import container_messages

__all__ = [
    "Quantities",
    "Requests",
    "cluster_policy_from_json",
    "daemonset_from_json",
    "node_from_json",
    "pod_from_json",
    "runtime_class_from_json",
]


def _said(message: str) -> str:
    """A message the cluster wrote (a pod's status message, a node condition's), redacted as every quoted line is:
    checks quote it."""
    return redact_text(message) if message else ""


def _meta(obj: JSON, where: str) -> JSON:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise SnapshotError(where, f"{obj.get('kind')} has no metadata")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise SnapshotError(where, f"{obj.get('kind')} has no metadata.name")
    return meta


_MANAGED_STRINGS = ("manager", "operation", "time", "apiVersion", "fieldsType", "subresource")


def _managed_ok(entry: Any) -> bool:
    """Whether one managedFields entry is well typed (the common case, checked without building paths)."""
    if not _strings_in([entry], _MANAGED_STRINGS):
        return False
    fields = entry.get("fieldsV1")
    if fields is None:
        return True
    if type(fields) is not dict:
        return False
    meta = fields.get("f:metadata")
    return meta is None or (type(meta) is dict and (meta.get("f:labels") is None or type(meta["f:labels"]) is dict))


def _writes_labels(entry: Any) -> bool:
    """Whether a managedFields entry owns a label (the only entries a check reads: who wrote a label, and when)."""
    fields = entry.get("fieldsV1") if type(entry) is dict else None
    meta = fields.get("f:metadata") if type(fields) is dict else None
    return type(meta) is dict and bool(meta.get("f:labels"))


def _label_entries(entries: Any) -> tuple[JSON, ...]:
    """The entries that own labels. The others (the kubelet's status writes) move their ``time`` at every
    status heartbeat; kept, they would make a heartbeat a changed record, and an evaluation, for nothing a check
    reads (bench/README.md, live round three)."""
    return tuple(e for e in entries or () if _writes_labels(e))


def _managed_fields(f: Fields, value: Any) -> tuple[JSON, ...]:
    """``metadata.managedFields``: the entries that own labels, each as the API server stores it (every entry is
    checked)."""
    if value is None:
        return ()
    if type(value) is list and all(_managed_ok(e) for e in value):
        return _label_entries(value)
    entries = f.items(value, "metadata.managedFields")
    for i, entry in enumerate(entries):
        path = f"metadata.managedFields[{i}]"
        for key in ("manager", "operation", "time", "apiVersion", "fieldsType", "subresource"):
            f.string(entry.get(key), f"{path}.{key}")
        fields = f.mapping(entry.get("fieldsV1"), f"{path}.fieldsV1")
        meta = f.mapping(fields.get("f:metadata"), f"{path}.fieldsV1.f:metadata")
        f.mapping(meta.get("f:labels"), f"{path}.fieldsV1.f:metadata.f:labels")
    return _label_entries(entries)


# One load's table of the equal parts of its records (model/podspec.py): a node pool's nodes have one
# allocatable and one capacity (with their amounts), and most have the same taints and conditions;
# replicas and daemon pods share their compiled spec, requests, conditions, labels and owners.
Quantities = Shared
Requests = Shared


def node_from_json(obj: JSON, where: str = "", shared: Quantities | None = None) -> Node:
    """A Node record: read without checks where the object fits NODE_SHAPE, else field by field (the error).

    Nodes read with the same ``shared`` table share equal ``allocatable``, ``amounts`` and ``capacity``.
    """
    if fits(obj, NODE_SHAPE):
        node = _fitting_node(obj, {} if shared is None else shared)
        if node is not None:
            return node
    return _checked_node(obj, where)


def _fitting_node(obj: JSON, shared: Quantities) -> Node | None:
    """The record of a node that fits NODE_SHAPE; None where the checking reader must look (its quantities)."""
    meta = obj["metadata"]
    name = meta["name"]
    if not name:
        return None
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    raw = status.get("allocatable")
    allocatable: dict[str, str] | None = None
    amounts: dict[str, int] | None = None
    if raw is not None:
        key = ("allocatable", tuple(raw.items()))
        known = shared.get(key)
        if known is None:
            try:
                known = shared[key] = (interned(raw), node_amounts(raw))
            except QuantityError:
                return None
        allocatable, amounts = known
    raw = status.get("capacity")
    key = ("capacity", tuple(raw.items()) if raw else ())
    capacity = shared.get(key)
    if capacity is None:
        capacity = shared[key] = (interned(raw), None)
    taints = tuple(
        Taint(t.get("key") or "", t.get("value") or "", t.get("effect") or "") for t in spec.get("taints") or ()
    )
    conditions = {c.get("type") or "": c.get("status") or "" for c in status.get("conditions") or ()}
    return Node(
        name=sys.intern(name),
        labels=interned(meta.get("labels")),
        annotations=interned(meta.get("annotations")),
        taints=kept(shared, ("taints", taints), taints) if taints else (),
        unschedulable=spec.get("unschedulable") or False,
        conditions=kept(shared, ("node-conditions", *conditions.items()), conditions),
        managed_fields=_label_entries(meta.get("managedFields")),
        allocatable=allocatable,
        capacity=capacity[0],
        amounts=amounts,
        other_conditions=_other_conditions(status.get("conditions")),
        runtime_handlers=_handlers(status.get("runtimeHandlers")),
    )


def _checked_node(obj: JSON, where: str) -> Node:
    meta = _meta(obj, where)
    name = meta["name"]
    f = Fields(f"{where} (node {name})" if where else f"node {name}")
    spec = f.mapping(obj.get("spec"), "spec")
    status = f.mapping(obj.get("status"), "status")
    taints = []
    for i, t in enumerate(f.items(spec.get("taints"), "spec.taints")):
        path = f"spec.taints[{i}]"
        taints.append(
            Taint(
                f.string(t.get("key"), f"{path}.key"),
                f.string(t.get("value"), f"{path}.value"),
                f.string(t.get("effect"), f"{path}.effect"),
            )
        )
    raw_conditions = status.get("conditions")
    conditions: dict[str, str] = {}
    if _strings_in(raw_conditions, ("type", "status")):
        for c in raw_conditions:
            conditions[c.get("type") or ""] = c.get("status") or ""
    else:
        for i, c in enumerate(f.items(raw_conditions, "status.conditions")):
            path = f"status.conditions[{i}]"
            conditions[f.string(c.get("type"), f"{path}.type")] = f.string(c.get("status"), f"{path}.status")
    allocatable: dict[str, str] | None = None
    amounts: dict[str, int] | None = None
    if status.get("allocatable") is not None:
        allocatable = f.str_map(_quantities(status.get("allocatable")), "status.allocatable")
        try:
            amounts = node_amounts(allocatable)
        except QuantityError as err:
            raise SnapshotError(f.here, f"status.allocatable: {err}") from None
    return Node(
        name=name,
        labels=f.str_map(meta.get("labels"), "metadata.labels"),
        annotations=f.str_map(meta.get("annotations"), "metadata.annotations"),
        taints=tuple(taints),
        unschedulable=f.boolean(spec.get("unschedulable"), "spec.unschedulable"),
        conditions=conditions,
        managed_fields=_managed_fields(f, meta.get("managedFields")),
        allocatable=allocatable,
        capacity=f.str_map(_quantities(status.get("capacity")), "status.capacity"),
        amounts=amounts,
        other_conditions=_other_conditions(raw_conditions),
        runtime_handlers=_handlers(status.get("runtimeHandlers")),
    )


def _text(value: Any) -> str:
    return value if type(value) is str else ""


def _handlers(raw: Any) -> tuple[str, ...]:
    """``status.runtimeHandlers[].name`` (core/v1 ``NodeRuntimeHandler``), read as the container states are:
    entries of another shape are skipped, so both readers give the same."""
    return tuple(sys.intern(n) for h in _dicts(raw) if (n := _text(h.get("name"))))


def _other_conditions(raw: Any) -> tuple[NodeCondition, ...]:
    """The conditions the kubelet does not set, whole, their messages redacted (the health check quotes them).
    Both readers call this on what they accepted (type and status are strings there); a reason, message or time
    that is not a string is read as absent."""
    if type(raw) is not list:
        return ()
    return tuple(
        NodeCondition(
            c.get("type") or "",
            c.get("status") or "",
            _text(c.get("reason")),
            _said(_text(c.get("message"))),
            _text(c.get("lastTransitionTime")),
        )
        for c in raw
        if type(c) is dict and (c.get("type") or "") not in KUBELET_CONDITIONS
    )


def _strings_in(value: Any, keys: tuple[str, ...]) -> TypeGuard[list[JSON]]:
    """Whether ``value`` is a list of mappings whose ``keys`` are strings or absent: then no field error is possible."""
    if type(value) is not list:
        return False
    for item in value:
        if type(item) is not dict:
            return False
        for key in keys:
            v = item.get(key)
            if v is not None and type(v) is not str:
                return False
    return True


def _quantities(value: Any) -> Any:
    # YAML snapshots may carry quantities as numbers (pods: 110); the API writes strings.
    if isinstance(value, dict):
        return {k: str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for k, v in value.items()}
    return value


# What the checks read of a pod's condition (Pod.ready, Pod.condition_message); its times are dropped, so
# the equal conditions of many pods are one.
_CONDITION_FIELDS = ("type", "status", "reason", "message")


def _conditions(raw: Any, table: Shared | None) -> dict[str, JSON]:
    """``status.conditions`` by type, each cut to what the checks read (the reader checked their types; a
    null field is left out, as an absent one), a message redacted; one dict per load for the pods whose
    conditions say the same, found by content before any is built (so each distinct message is redacted once)."""
    if not raw:
        return {}
    key = ("conditions", *(tuple(map(c.get, _CONDITION_FIELDS)) for c in raw))
    if table is not None:
        known: dict[str, JSON] | None = table.get(key)
        if known is not None:
            return known
    out = {
        c.get("type") or "": {k: v for k, v in zip(_CONDITION_FIELDS, fields, strict=True) if v is not None}
        for c, fields in zip(raw, key[1:], strict=True)
    }
    for cond in out.values():
        message = cond.get("message")
        if message and type(message) is str:  # the scheduler's text: pending and the operands check quote it
            cond["message"] = redact_text(message)
    same: dict[str, JSON] = kept(table, key, out)
    return same


def _labels(raw: Any, table: Shared | None) -> dict[str, str]:
    """A pod's label map with its keys and values interned, one copy per load (a workload's pods carry the
    same): looked up by the items as read, so only the first pod of each interns them."""
    if not raw:
        return {}
    if table is None:
        return interned(raw)
    key = ("labels", *raw.items())
    known: dict[str, str] | None = table.get(key)
    if known is None:
        known = kept(table, key, interned(raw))
    return known


def _owners(owners: tuple[tuple[str, str], ...], table: Shared | None) -> tuple[tuple[str, str], ...]:
    same: tuple[tuple[str, str], ...] = kept(table, ("owners", owners), owners) if owners else owners
    return same


def _decode_pod_spec(f: Fields, spec: JSON, path: str) -> JSON:
    """The pod spec's fields placement reads, decoded as the API server decodes them; returns them."""
    from gpulabel.k8s.podvalidation import decode_error

    kept = {k: spec[k] for k in SCHEDULING_FIELDS if k in spec}  # the rest is dropped unread
    if kept and (detail := decode_error(kept, path)) is not None:
        raise SnapshotError(f.here, detail)
    return kept


def pod_from_json(obj: JSON, where: str = "", shared: Shared | None = None) -> Pod:
    """A Pod record, its spec compiled; pods read with the same ``shared`` table share their equal parts.

    Read without checks where the object fits POD_SHAPE, else field by field (which names what is wrong).
    """
    if fits(obj, POD_SHAPE):
        pod = _fitting_pod(obj, shared)
        if pod is not None:
            return pod
    return _checked_pod(obj, where, shared)


def _fitting_pod(obj: JSON, shared: Shared | None) -> Pod | None:
    """The record of a pod that fits POD_SHAPE (so its kept fields decode); None where the checking reader
    must look (its quantities)."""
    meta = obj["metadata"]
    name = meta["name"]
    if not name:
        return None
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    podspec, pinned = compiled({k: spec[k] for k in COMPILED_FIELDS if k in spec}, shared)
    node_name = sys.intern(spec.get("nodeName") or "")
    try:
        requests, gpu_resources, sights = asked(spec, status, bool(node_name), shared)
    except QuantityError:
        return None
    priority = spec.get("priority")
    waiting, restarts = _container_state(status)
    annotations = meta.get("annotations")
    return Pod(
        namespace=meta.get("namespace") or "default",
        name=name,
        node_name=node_name,
        phase=status.get("phase") or "Pending",
        labels=_labels(meta.get("labels"), shared),
        conditions=_conditions(status.get("conditions"), shared),
        owners=_owners(
            tuple((o.get("kind") or "", o.get("uid") or "") for o in meta.get("ownerReferences") or ()), shared
        ),
        spec=podspec,
        pinned=sys.intern(pinned),
        claim_statuses=tuple(status.get("resourceClaimStatuses") or ()),
        requests=requests,
        priority=priority if isinstance(priority, int) and not isinstance(priority, bool) else 0,
        waiting=waiting,
        restarts=restarts,
        gpu_resources=gpu_resources,
        device_health=_device_health(status),
        status_reason=sys.intern(status.get("reason") or ""),
        status_message=_said(status.get("message") or ""),
        runtime_class=sys.intern(_text(spec.get("runtimeClassName"))),
        sight=(sight_of(annotations, None) + sights) if annotations else sights,
        messages=container_messages(status),
        uid=meta.get("uid") or "",
    )


def _checked_pod(obj: JSON, where: str, shared: Shared | None) -> Pod:
    meta = _meta(obj, where)
    f = Fields(f"{where} (pod {meta['name']})" if where else f"pod {meta['name']}")
    spec = f.mapping(obj.get("spec"), "spec")
    status = f.mapping(obj.get("status"), "status")
    podspec, pinned = compiled(_decode_pod_spec(f, spec, "spec"), shared)
    raw_conditions = status.get("conditions")
    if not _strings_in(raw_conditions, _CONDITION_FIELDS) and raw_conditions is not None:
        for i, c in enumerate(f.items(raw_conditions, "status.conditions")):
            path = f"status.conditions[{i}]"
            for key in ("status", "message", "reason", "type"):
                f.string(c.get(key), f"{path}.{key}")
    conditions = _conditions(raw_conditions, shared)
    raw_owners = meta.get("ownerReferences")
    owners = []
    if _strings_in(raw_owners, ("kind", "uid")):
        owners = [(o.get("kind") or "", o.get("uid") or "") for o in raw_owners]
    elif raw_owners is not None:
        for i, o in enumerate(f.items(raw_owners, "metadata.ownerReferences")):
            path = f"metadata.ownerReferences[{i}]"
            owners.append((f.string(o.get("kind"), f"{path}.kind"), f.string(o.get("uid"), f"{path}.uid")))
    node_name = f.string(spec.get("nodeName"), "spec.nodeName")
    try:
        requests = shared_requests(scheduler_amounts(pod_requests(spec, status, bound=bool(node_name))), shared)
    except QuantityError as err:
        raise SnapshotError(f.here, str(err)) from None
    priority = spec.get("priority")
    waiting, restarts = _container_state(status)
    return Pod(
        namespace=f.string(meta.get("namespace"), "metadata.namespace") or "default",
        name=meta["name"],
        node_name=sys.intern(node_name),
        phase=f.string(status.get("phase"), "status.phase") or "Pending",
        labels=_labels(f.str_map(meta.get("labels"), "metadata.labels"), shared),
        conditions=conditions,
        owners=_owners(tuple(owners), shared),
        spec=podspec,
        pinned=sys.intern(pinned),
        claim_statuses=tuple(f.items(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses")),
        requests=requests,
        priority=priority if isinstance(priority, int) and not isinstance(priority, bool) else 0,
        waiting=waiting,
        restarts=restarts,
        gpu_resources=gpu_resources(spec),
        device_health=_device_health(status),
        status_reason=sys.intern(f.string(status.get("reason"), "status.reason")),
        status_message=_said(f.string(status.get("message"), "status.message")),
        runtime_class=sys.intern(_text(spec.get("runtimeClassName"))),
        sight=sight_of(meta.get("annotations"), spec),
        messages=container_messages(status),
        uid=f.string(meta.get("uid"), "metadata.uid"),
    )


def _dicts(value: Any) -> list[JSON]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _container_state(status: JSON) -> tuple[str, int]:
    """The reason a pod's containers wait (init containers first, as kubectl shows it) and its restarts."""
    inits = _dicts(status.get("initContainerStatuses"))
    mains = _dicts(status.get("containerStatuses"))
    restarts = sum(int(c.get("restartCount") or 0) for c in inits + mains if isinstance(c.get("restartCount"), int))
    for i, c in enumerate(inits):
        state = c.get("state") or {}
        waiting = state.get("waiting") if isinstance(state, dict) else None
        if isinstance(waiting, dict) and waiting.get("reason") not in (None, "", "PodInitializing"):
            return f"Init:{waiting['reason']}", restarts
        terminated = state.get("terminated") if isinstance(state, dict) else None
        if not (isinstance(terminated, dict) and terminated.get("exitCode") == 0):
            return f"Init:{i}/{len(inits)}", restarts
    for c in mains:
        state = c.get("state") or {}
        waiting = state.get("waiting") if isinstance(state, dict) else None
        if isinstance(waiting, dict) and waiting.get("reason"):
            return str(waiting["reason"]), restarts
    return "", restarts


def _device_health(status: JSON) -> tuple[DeviceHealth, ...]:
    """The devices the kubelet reports not ``Healthy`` in ``allocatedResourcesStatus`` (KEP-4680; core/v1
    ``ContainerStatus.AllocatedResourcesStatus`` -> ``ResourceStatus{name, resources[]: ResourceHealth{
    resourceID, health}}``), of init and app containers. Read as the container states are (entries of
    another shape are skipped), so both readers give the same."""
    found = []
    for key in ("initContainerStatuses", "containerStatuses"):
        for c in _dicts(status.get(key)):
            for entry in _dicts(c.get("allocatedResourcesStatus")):
                for r in _dicts(entry.get("resources")):
                    health = _text(r.get("health"))
                    if health and health != "Healthy":
                        found.append(
                            DeviceHealth(
                                _text(c.get("name")), _text(entry.get("name")), _text(r.get("resourceID")), health
                            )
                        )
    return tuple(found)


def _selector(f: Fields, value: Any, path: str) -> JSON:
    selector = f.mapping(value, path)
    f.str_map(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(f.items(selector.get("matchExpressions"), f"{path}.matchExpressions")):
        epath = f"{path}.matchExpressions[{i}]"
        f.string(expr.get("key"), f"{epath}.key")
        f.string(expr.get("operator"), f"{epath}.operator")
        f.strings(expr.get("values"), f"{epath}.values")
    return selector


def daemonset_from_json(obj: JSON, where: str = "") -> DaemonSet:
    meta = _meta(obj, where)
    f = Fields(f"{where} (daemonset {meta['name']})" if where else f"daemonset {meta['name']}")
    spec = f.mapping(obj.get("spec"), "spec")
    template = f.mapping(spec.get("template"), "spec.template")
    if template.get("spec") is None:
        raise SnapshotError(f.here, "spec.template.spec is missing")
    tspec = f.mapping(template.get("spec"), "spec.template.spec")
    _decode_pod_spec(f, tspec, "spec.template.spec")
    status = f.mapping(obj.get("status"), "status")
    counts = {}
    for key, value in status.items():
        if key in _DAEMONSET_COUNTS:
            number = f.integer(value, f"status.{key}")
            if number is not None:
                counts[key] = number
    return DaemonSet(
        namespace=f.string(meta.get("namespace"), "metadata.namespace") or "default",
        name=meta["name"],
        uid=f.string(meta.get("uid"), "metadata.uid"),
        template_spec=tspec,
        status=counts,
        selector=_selector(f, spec.get("selector"), "spec.selector"),
    )


def cluster_policy_from_json(obj: JSON, where: str = "") -> JSON:
    """A ClusterPolicy is kept as the API gives it; the sections gpulabel reads must be mappings."""
    meta = _meta(obj, where)
    f = Fields(f"{where} (clusterpolicy {meta['name']})" if where else f"clusterpolicy {meta['name']}")
    spec = f.mapping(obj.get("spec"), "spec")
    for section, part in spec.items():
        if isinstance(part, dict) and "enabled" in part and not isinstance(part["enabled"], bool | None):
            raise f.fail(f"spec.{section}.enabled", part["enabled"], "a boolean")
    return obj


# DaemonSetStatus's integer fields (apps/v1), the ones the checks may read.
_DAEMONSET_COUNTS = frozenset(
    {
        "currentNumberScheduled",
        "desiredNumberScheduled",
        "numberAvailable",
        "numberMisscheduled",
        "numberReady",
        "numberUnavailable",
        "observedGeneration",
        "updatedNumberScheduled",
        "collisionCount",
    }
)


def runtime_class_from_json(obj: JSON, where: str = "") -> RuntimeClass:
    """A RuntimeClass record: its name and ``handler`` (a string, required by the API)."""
    meta = _meta(obj, where)
    f = Fields(f"{where} (runtimeclass {meta['name']})" if where else f"runtimeclass {meta['name']}")
    return RuntimeClass(sys.intern(meta["name"]), sys.intern(f.string(obj.get("handler"), "handler")))
