"""The shapes of a Pod and a Node as the readers take them: each field read, with its JSON type.

An object that fits its shape (checked by msgspec, in C, without building
anything the readers keep) is read with no check per field: nearly every
object the API server writes does. One that does not fit is read the
checking way (:class:`gpulabel.model.fields.Fields`), which names the file,
the object and the field of the first wrong one, or reads it after all where
only the shape is stricter than the API (a YAML key that is a number, a
quantity written as a number): a shape never lets through what the checking
reader refuses, and both readers make the same record of an object both take
(tests/unit/test_shapes.py).
"""

from __future__ import annotations

from typing import Any

import msgspec

from gpulabel.k8s.podvalidation import decoding_types

__all__ = ["NODE_SHAPE", "POD_SHAPE", "SCHEDULING_FIELDS", "fits"]

_OptStr = str | None


class _Owner(msgspec.Struct):
    kind: _OptStr = None
    uid: _OptStr = None


class _PodCondition(msgspec.Struct):
    type: _OptStr = None
    status: _OptStr = None
    reason: _OptStr = None
    message: _OptStr = None


class _PodMeta(msgspec.Struct):
    name: str
    namespace: _OptStr = None
    labels: dict[str, str] | None = None
    ownerReferences: list[_Owner] | None = None


# What the checks read of a pod's spec; containers, volumes and the rest are
# dropped when a pod is loaded, which keeps 150,000 pods in memory affordable.
SCHEDULING_FIELDS = (
    "nodeName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "hostNetwork",
    "schedulingGates",
    "resourceClaims",
    "preemptionPolicy",
)

# the kept fields the API server's decoding checks (nodeName among them), typed as it decodes them:
# a pod that fits decodes, so its kept fields need no decode_error
_PodSpec: Any = msgspec.defstruct("PodSpecShape", [(n, t, None) for n, t in decoding_types(SCHEDULING_FIELDS)])


class _PodStatus(msgspec.Struct):
    phase: _OptStr = None
    reason: _OptStr = None
    message: _OptStr = None
    conditions: list[_PodCondition] | None = None
    resourceClaimStatuses: list[dict[str, Any]] | None = None


_Pod: Any = msgspec.defstruct(
    "PodShape", [("metadata", _PodMeta), ("spec", _PodSpec | None, None), ("status", _PodStatus | None, None)]
)


class _FieldsMeta(msgspec.Struct):
    labels: dict[str, Any] | None = msgspec.field(default=None, name="f:labels")


class _FieldsV1(msgspec.Struct):
    metadata: _FieldsMeta | None = msgspec.field(default=None, name="f:metadata")


class _ManagedEntry(msgspec.Struct):
    manager: _OptStr = None
    operation: _OptStr = None
    time: _OptStr = None
    apiVersion: _OptStr = None
    fieldsType: _OptStr = None
    subresource: _OptStr = None
    fieldsV1: _FieldsV1 | None = None


class _NodeMeta(msgspec.Struct):
    name: str
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    managedFields: list[_ManagedEntry] | None = None


class _TaintShape(msgspec.Struct):
    key: _OptStr = None
    value: _OptStr = None
    effect: _OptStr = None


class _NodeSpec(msgspec.Struct):
    taints: list[_TaintShape] | None = None
    unschedulable: bool | None = None


class _NodeCondition(msgspec.Struct):
    type: _OptStr = None
    status: _OptStr = None


class _NodeStatus(msgspec.Struct):
    conditions: list[_NodeCondition] | None = None
    allocatable: dict[str, str] | None = None
    capacity: dict[str, str] | None = None


class _Node(msgspec.Struct):
    metadata: _NodeMeta
    spec: _NodeSpec | None = None
    status: _NodeStatus | None = None


POD_SHAPE: type[msgspec.Struct] = _Pod
NODE_SHAPE: type[msgspec.Struct] = _Node


def fits(obj: Any, shape: type[msgspec.Struct]) -> bool:
    """Whether every field ``shape`` names has its type in ``obj`` (absent and null fields fit)."""
    try:
        msgspec.convert(obj, shape)
    except msgspec.ValidationError:
        return False
    return True
