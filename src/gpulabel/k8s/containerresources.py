"""A container's ``resources`` as the API server checks them, message for message.

Upstream (k8s.io/kubernetes v1.37.2): ``pkg/apis/core/validation/validation.go``
``validateResourceRequirements`` (through ``ValidateContainerResourceRequirements``),
``ValidateContainerResourceName``, ``validateResourceName``,
``ValidateResourceQuantityValue``; the predicates of ``pkg/apis/core/helper``
(``IsExtendedResourceName``, ``IsNativeResource``, ``IsOvercommitAllowed``,
``IsIntegerResourceName``); and ``Quantity.String()`` of
``apimachinery/pkg/api/resource`` (the canonical form the messages print).

A Pod is validated after defaulting: a limit without a request makes the
request equal to it (``SetDefaults_Pod``), so ``nvidia.com/gpu: "0.5"`` under
``limits`` is reported on both maps; a pod template (a Deployment's) is not
defaulted, and is reported once. Checked per resource: the name, a
negative quantity, a fraction of an integer resource (extended resources
must be whole), and a request against its limit (extended resources and
hugepages may not overcommit: request equal to limit, and a request needs a
limit). Not checked: hugepage sizes, ``resources.claims``, pod-level
``spec.resources``. Go walks the two maps in random order; this walks them in
document order, which agrees whenever a map holds at most one bad entry.
Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from gpulabel.k8s import field
from gpulabel.k8s.labels import key_errors
from gpulabel.k8s.quantity import parse
from gpulabel.k8s.resources import QuantityError, parse_quantity

__all__ = ["defaulted_requests", "quantity_string", "resource_requirements_errors"]

_STANDARD_CONTAINER = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD = _STANDARD_CONTAINER | {
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "requests.storage",
}
_INTEGER = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_HUGEPAGES = "hugepages-"
_NEGATIVE = "must be greater than or equal to 0"


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_hugepages(name: str) -> bool:
    return name.startswith(_HUGEPAGES)


def _is_extended(name: str) -> bool:
    """``IsExtendedResourceName``: not native, not ``requests.``, and a qualified name once prefixed so."""
    return not _is_native(name) and not name.startswith("requests.") and not key_errors("requests." + name)


def _overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not _is_hugepages(name)


def _is_integer(name: str) -> bool:
    return name in _INTEGER or _is_extended(name)


def _name_errors(name: str, path: str) -> list[str]:
    """``ValidateContainerResourceName``."""
    # validateResourceName: a qualified name, and an unprefixed one must be standard
    out = [field.invalid(path, field.Named(name), m) for m in key_errors(name)]
    standard = name in _STANDARD or name.startswith(("hugepages-", "requests.hugepages-"))
    if not out and "/" not in name and not standard:
        out.append(field.invalid(path, field.Named(name), "must be a standard resource type or fully qualified"))
    # ValidateContainerResourceName goes on whatever validateResourceName found
    if "/" not in name:
        if not (name in _STANDARD_CONTAINER or _is_hugepages(name)):
            out.append(field.invalid(path, field.Named(name), "must be a standard resource for containers"))
    elif not _is_native(name) and not _is_extended(name):
        out.append(field.invalid(path, field.Named(name), "doesn't follow extended resource name standard"))
    return out


def quantity_string(text: str) -> str:
    """``Quantity.String()`` of a parsed quantity: ``"0.5"`` -> ``500m``, ``"2048Mi"`` -> ``2Gi``."""
    return str(parse(text))


def _text(value: Any) -> str:
    """The text ``Quantity.UnmarshalJSON`` parses (JSON null is the zero quantity)."""
    if value is None:
        return "0"
    return (value if isinstance(value, str) else json.dumps(value)).strip()


def _quantity_errors(name: str, text: str, path: str) -> list[str]:
    """``ValidateResourceQuantityValue``."""
    value = parse_quantity(text)
    out = []
    if value < 0:
        out.append(field.invalid(path, quantity_string(text), _NEGATIVE))
    if _is_integer(name) and (value * 1000) % 1000 != 0:
        out.append(field.invalid(path, quantity_string(text), "must be an integer"))
    return out


def defaulted_requests(resources: Mapping[str, Any]) -> dict[str, Any]:
    """``requests`` after ``SetDefaults_Pod``: each limit without a request becomes the request."""
    limits = resources.get("limits")
    requests = resources.get("requests")
    out = dict(requests) if isinstance(requests, dict) else {}
    if isinstance(limits, dict):
        for name, value in limits.items():
            out.setdefault(name, value)
    return out


def resource_requirements_errors(resources: Any, path: str, *, defaults: bool = True) -> list[str]:
    """``validateResourceRequirements`` for a container's ``resources`` (already decoded).

    ``defaults``: a Pod's container, whose requests the server first defaults
    from its limits; a pod template's containers are validated as written.
    Quantities that do not parse are decoding errors, found before this runs.
    """
    if not isinstance(resources, dict):
        return []
    limits = {str(k): _text(v) for k, v in (resources.get("limits") or {}).items()}
    written = resources.get("requests")
    given: dict[str, Any] = written if isinstance(written, dict) else {}
    requests = {str(k): _text(v) for k, v in (defaulted_requests(resources) if defaults else given).items()}
    lim_path, req_path = f"{path}.limits", f"{path}.requests"
    out: list[str] = []
    try:
        for name, text in limits.items():
            here = f"{lim_path}[{name}]"
            out.extend(_name_errors(name, here))
            out.extend(_quantity_errors(name, text, here))
        for name, text in requests.items():
            here = f"{req_path}[{name}]"
            out.extend(_name_errors(name, here))
            out.extend(_quantity_errors(name, text, here))
            if name in limits:
                value, limit = parse_quantity(text), parse_quantity(limits[name])
                shown, limit_shown = quantity_string(text), quantity_string(limits[name])
                if value != limit and not _overcommit_allowed(name):
                    out.append(field.invalid(req_path, shown, f"must be equal to {name} limit of {limit_shown}"))
                elif value > limit:
                    out.append(
                        field.invalid(req_path, shown, f"must be less than or equal to {name} limit of {limit_shown}")
                    )
            elif not _overcommit_allowed(name):
                out.append(field.required(lim_path, "Limit must be set for non overcommitable resources"))
    except QuantityError:  # decoding refuses these first
        return out
    return out
