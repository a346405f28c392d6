"""A ResourceSlice's spec as the API server validates it on create, message for message.

Upstream (k8s.io/kubernetes v1.37.2, ``pkg/apis/resource/validation/validation.go``):
``validateResourceSliceSpec`` with ``validateDriverName``
(``corevalidation.ValidateCSIDriverName``), ``validateResourcePool``,
``validatePoolName`` and ``validateNodeName``; the node selector through
``corevalidation.ValidateNodeSelector``. In its order: the driver (required,
at most 63 bytes, a DNS subdomain once lowercased), the pool (a name of
DNS-subdomain parts, ``resourceSliceCount`` above zero, ``generation`` not
negative), then exactly one of ``nodeName``, ``nodeSelector`` (with exactly
one term), ``allNodes``, ``perDeviceNodeSelection`` (a false or empty one is
itself invalid), and not both ``sharedCounters`` and ``devices``.

Not checked: the devices themselves (attributes, capacities, counters,
taints) and object metadata beyond a name. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpulabel.k8s import field
from gpulabel.k8s.gostr import go_quote
from gpulabel.k8s.labels import dns1123_subdomain_errors
from gpulabel.k8s.podvalidation import node_name_errors, node_selector_errors

__all__ = ["resource_slice_errors", "slice_invalid_message"]

_DRIVER_MAX = 63
_POOL_NAME_MAX = 253
_ONE_OF = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"


def _too_long(path: str, limit: int) -> str:
    return f"{path}: Too long: may not be more than {limit} bytes"


def _driver_errors(driver: str, path: str) -> list[str]:
    if not driver:
        return [field.required(path)]
    out = [_too_long(path, _DRIVER_MAX)] if len(driver.encode()) > _DRIVER_MAX else []
    # util/validation's IsDNS1123Subdomain says "characters"
    out.extend(field.invalid(path, driver, m) for m in dns1123_subdomain_errors(driver.lower(), unit="characters"))
    return out


def _pool_errors(pool: Mapping[str, Any], path: str) -> list[str]:
    out: list[str] = []
    name = pool.get("name") or ""
    npath = f"{path}.name"
    if not isinstance(name, str) or not name:
        out.append(field.required(npath))
    else:
        if len(name.encode()) > _POOL_NAME_MAX:
            out.append(_too_long(npath, _POOL_NAME_MAX))
        for part in name.split("/"):
            out.extend(field.invalid(npath, part, m) for m in dns1123_subdomain_errors(part))
    count = pool.get("resourceSliceCount") or 0
    if isinstance(count, int) and count <= 0:
        out.append(field.invalid(f"{path}.resourceSliceCount", count, "must be greater than zero"))
    generation = pool.get("generation") or 0
    if isinstance(generation, int) and generation < 0:
        out.append(field.invalid(f"{path}.generation", generation, "must be greater than or equal to zero"))
    return out


def _selector_type_error(selector: Mapping[str, Any], path: str) -> str:
    """The first field of a node selector that is not of its type (the server would not decode it), or ``""``."""
    terms = selector.get("nodeSelectorTerms")
    if terms is None:
        return ""
    if not isinstance(terms, list):
        return f"{path}.nodeSelectorTerms: must be a list"
    for i, term in enumerate(terms):
        if not isinstance(term, dict):
            return f"{path}.nodeSelectorTerms[{i}]: must be an object"
        for part in ("matchExpressions", "matchFields"):
            reqs = term.get(part)
            if reqs is None:
                continue
            if not isinstance(reqs, list):
                return f"{path}.nodeSelectorTerms[{i}].{part}: must be a list"
            for j, rq in enumerate(reqs):
                here = f"{path}.nodeSelectorTerms[{i}].{part}[{j}]"
                if not isinstance(rq, dict):
                    return f"{here}: must be an object"
                for name in ("key", "operator"):
                    if not isinstance(rq.get(name, ""), str):
                        return f"{here}.{name}: must be a string"
                values = rq.get("values")
                if values is not None and (not isinstance(values, list) or not all(isinstance(v, str) for v in values)):
                    return f"{here}.values: must be a list of strings"
    return ""


def resource_slice_errors(spec: Mapping[str, Any], path: str = "spec") -> list[str]:
    """The field errors the server reports for a ResourceSlice ``spec`` (already decoded), in its order."""
    out = _driver_errors(str(spec.get("driver") or ""), f"{path}.driver")
    pool = spec.get("pool")
    out.extend(_pool_errors(pool if isinstance(pool, dict) else {}, f"{path}.pool"))
    chosen: list[str] = []
    node_name = spec.get("nodeName")
    if node_name is not None:
        if node_name:
            chosen.append("`nodeName`")
            out.extend(field.invalid(f"{path}.nodeName", node_name, m) for m in node_name_errors(str(node_name)))
        else:
            out.append(field.invalid(f"{path}.nodeName", "", "must be either unset or set to a non-empty string"))
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        chosen.append("`nodeSelector`")
        spath = f"{path}.nodeSelector"
        wrong = _selector_type_error(selector, spath)
        if wrong:  # the server fails to decode it: no field validation runs
            return [wrong]
        out.extend(node_selector_errors(selector, spath))
        terms = selector.get("nodeSelectorTerms")
        if not isinstance(terms, list) or len(terms) != 1:
            out.append(
                field.invalid(
                    f"{spath}.nodeSelectorTerms",
                    terms if isinstance(terms, list) else None,  # absent: a nil slice, JSON null
                    "must have exactly one node selector term",
                )
            )
    for name in ("allNodes", "perDeviceNodeSelection"):
        flag = spec.get(name)
        if flag is None:
            continue
        if flag is True:
            chosen.append(f"`{name}`")
        else:
            out.append(field.invalid(f"{path}.{name}", False, "must be either unset or set to true"))
    if not chosen:
        out.append(field.required(path, _ONE_OF))
    elif len(chosen) > 1:
        out.append(field.invalid(path, "{" + ", ".join(chosen) + "}", _ONE_OF + ", but multiple fields are set"))
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        out.append(field.invalid(path, "", "only one of `sharedCounters` or `devices` is allowed"))
    from gpulabel.k8s.dra.limits import slice_limit_errors

    out.extend(slice_limit_errors(spec, path))  # the sizes: devices, attributes, taints, counters (limits.py)
    return out


def slice_invalid_message(name: str, errors: list[str]) -> str:
    """``errors.NewInvalid`` for a ResourceSlice."""
    return f"ResourceSlice.resource.k8s.io {go_quote(name)} is invalid: {field.aggregate(errors)}"
