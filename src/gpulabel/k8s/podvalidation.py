"""The API server's checks on a pod spec's node selection, message for message.

Two stages, as on the server: decoding (a value of the wrong JSON type, e.g.
an unquoted ``true`` in ``nodeSelector``, is refused before validation with
Go's ``json: cannot unmarshal ...``), then validation, whose field errors read
as ``field.Error`` prints them (``<path>: Required value: <detail>``,
``<path>: Invalid value: "<v>": <detail>``, ``Forbidden``, ``Unsupported
value``) and are joined as ``errors.NewInvalid`` joins them.

Checked: the pod's basic shape (``containers``: at least one, each with a
name and an image, names unique, as ``validateContainers`` checks them; the
types of ``command``, ``args``, ``workingDir``, ``env``, ``ports`` and
``resources``, and the
resources themselves, :mod:`gpulabel.k8s.containerresources`) and
the fields that decide placement: ``nodeSelector``, ``affinity.nodeAffinity``,
``nodeName`` and ``tolerations``, in the order ``ValidatePodSpec`` checks them.
Upstream: ``pkg/apis/core/validation/validation.go`` (``validateContainers``,
``ValidateNodeSelector``, ``ValidateNodeSelectorTerm``,
``ValidateNodeSelectorRequirement``, ``ValidateNodeFieldSelectorRequirement``,
``ValidatePreferredSchedulingTerms``, ``ValidateTolerations``) in k8s.io/kubernetes v1.37.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import msgspec

from gpulabel.k8s import field
from gpulabel.k8s.containerresources import resource_requirements_errors
from gpulabel.k8s.gostr import go_quote
from gpulabel.k8s.labels import dns1123_label_errors, dns1123_subdomain_errors, key_errors, label_errors, value_errors
from gpulabel.k8s.nodeaffinity import FIELD_SELECTOR_OPERATORS
from gpulabel.k8s.resources import QuantityError, parse_quantity
from gpulabel.k8s.taints import TAINT_EFFECTS, TOLERATION_OPERATORS

__all__ = [
    "RESTART_POLICIES",
    "WORKLOAD_KINDS",
    "decode_error",
    "decode_message",
    "decoding_types",
    "invalid_message",
    "node_name_errors",
    "node_selector_errors",
    "pod_spec_of",
    "validate_pod_spec",
]

# kind -> (API group, where the pod spec sits)
WORKLOAD_KINDS: dict[str, tuple[str, str]] = {
    "Pod": ("", "spec"),
    "Deployment": ("apps", "spec.template.spec"),
    "ReplicaSet": ("apps", "spec.template.spec"),
    "StatefulSet": ("apps", "spec.template.spec"),
    "DaemonSet": ("apps", "spec.template.spec"),
    "Job": ("batch", "spec.template.spec"),
    "CronJob": ("batch", "spec.jobTemplate.spec.template.spec"),
}

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


# -- stage 1: decoding ------------------------------------------------------------


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


# A small schema of the typed fields on the path to node selection: name -> (Go struct, Go type, child schema)
_Schema = dict[str, tuple[str, Any]]
_REQUIREMENT: _Schema = {
    "key": ("string", None),
    "operator": ("v1.NodeSelectorOperator", None),
    "values": ("[]string", "string"),
}
_TERM: _Schema = {
    "matchExpressions": ("[]v1.NodeSelectorRequirement", ("NodeSelectorRequirement", _REQUIREMENT)),
    "matchFields": ("[]v1.NodeSelectorRequirement", ("NodeSelectorRequirement", _REQUIREMENT)),
}
_PREFERRED_TERM: _Schema = {
    "weight": ("int32", None),
    "preference": ("v1.NodeSelectorTerm", ("NodeSelectorTerm", _TERM)),
}
_NODE_AFFINITY: _Schema = {
    "requiredDuringSchedulingIgnoredDuringExecution": (
        "v1.NodeSelector",
        ("NodeSelector", {"nodeSelectorTerms": ("[]v1.NodeSelectorTerm", ("NodeSelectorTerm", _TERM))}),
    ),
    "preferredDuringSchedulingIgnoredDuringExecution": (
        "[]v1.PreferredSchedulingTerm",
        ("PreferredSchedulingTerm", _PREFERRED_TERM),
    ),
}
_TOLERATION: _Schema = {
    "key": ("string", None),
    "operator": ("v1.TolerationOperator", None),
    "value": ("string", None),
    "effect": ("v1.TaintEffect", None),
    "tolerationSeconds": ("int64", None),
}
_QUANTITY = "resource.Quantity"  # a map value decoded by Quantity.UnmarshalJSON (ParseQuantity)
_RESOURCES: _Schema = {
    "limits": ("v1.ResourceList", _QUANTITY),
    "requests": ("v1.ResourceList", _QUANTITY),
}
_ENV_VAR: _Schema = {"name": ("string", None), "value": ("string", None)}
_PORT: _Schema = {
    "name": ("string", None),
    "hostPort": ("int32", None),
    "containerPort": ("int32", None),
    "protocol": ("v1.Protocol", None),
    "hostIP": ("string", None),
}
_CONTAINER: _Schema = {
    "name": ("string", None),
    "image": ("string", None),
    "env": ("[]v1.EnvVar", ("EnvVar", _ENV_VAR)),
    "ports": ("[]v1.ContainerPort", ("ContainerPort", _PORT)),
    "command": ("[]string", "string"),
    "args": ("[]string", "string"),
    "workingDir": ("string", None),
    "resources": ("v1.ResourceRequirements", ("ResourceRequirements", _RESOURCES)),
}
_POD_SPEC: _Schema = {
    "containers": ("[]v1.Container", ("Container", _CONTAINER)),
    "restartPolicy": ("v1.RestartPolicy", None),
    "nodeSelector": ("map[string]string", "string"),
    "nodeName": ("string", None),
    "hostNetwork": ("bool", None),
    "affinity": ("v1.Affinity", ("Affinity", {"nodeAffinity": ("v1.NodeAffinity", ("NodeAffinity", _NODE_AFFINITY))})),
    "tolerations": ("[]v1.Toleration", ("Toleration", _TOLERATION)),
}


_NAMED_STRINGS = ("NodeSelectorOperator", "TolerationOperator", "TaintEffect", "RestartPolicy", "Protocol")
RESTART_POLICIES = ("Always", "OnFailure", "Never")


def _python_type(gotype: str) -> type:
    """The JSON value (as Python decodes it) that Go decodes into ``gotype``."""
    if gotype == "bool":
        return bool
    if gotype in ("int32", "int64"):
        return int
    if gotype.startswith("[]"):
        return list
    if gotype.startswith("map[") or (gotype.startswith("v1.") and gotype[3:] not in _NAMED_STRINGS):
        return dict
    return str


def _gotypes(schema: _Schema) -> set[str]:
    found = set()
    for gotype, child in schema.values():
        found.add(gotype)
        if isinstance(child, str):
            found.add(child)
        elif child is not None:
            found |= _gotypes(child[1])
    return found


# Every Go type of the schemas above and the JSON value it takes: a constant, built at import.
_PYTHON_TYPES = {gotype: _python_type(gotype) for gotype in _gotypes(_POD_SPEC)}


def _fits(value: Any, gotype: str) -> bool:
    """Whether Go decodes ``value`` into ``gotype``; JSON null leaves the Go value at its zero value."""
    want = _PYTHON_TYPES.get(gotype) or _python_type(gotype)
    return value is None or (isinstance(value, want) and not (want is int and isinstance(value, bool)))


def _unmarshal(value: Any, struct: str, jpath: str, gotype: str) -> str:
    return f"json: cannot unmarshal {_json_type(value)} into Go struct field {struct}.{jpath} of type {gotype}"


def _quantity_error(value: Any) -> str | None:
    """``Quantity.UnmarshalJSON``: the JSON text (a string unquoted) must parse; its error is the whole message."""
    text = value if isinstance(value, str) else json.dumps(value)
    try:
        parse_quantity(text.strip())
    except QuantityError as err:
        return str(err)
    return None


def _decode(obj: Mapping[str, Any], struct: str, schema: _Schema, jpath: str) -> str | None:
    # In document order, as Go's decoder meets the fields; unknown fields are ignored.
    for name, value in obj.items():
        entry = schema.get(name)
        if entry is None or value is None:
            continue
        gotype, child = entry
        here = f"{jpath}.{name}"
        if not _fits(value, gotype):
            return _unmarshal(value, struct, here, gotype)
        if child is None:
            continue
        if child == _QUANTITY:
            for item in value.values():
                if item is not None and (err := _quantity_error(item)):
                    return err
            continue
        if isinstance(child, str):  # element type of a list or map of scalars
            items = value.values() if isinstance(value, dict) else value
            for item in items:
                if not _fits(item, child):
                    return _unmarshal(item, struct, here, child)
            continue
        child_struct, child_schema = child
        elems = value if isinstance(value, list) else [value]
        for elem in elems:
            if elem is None:
                continue
            if not isinstance(elem, dict):
                return _unmarshal(elem, struct, here, "v1." + child_struct)
            if err := _decode(elem, child_struct, child_schema, here):
                return err
    return None


def decode_error(spec: Any, path: str = "spec") -> str | None:
    """The decoding error the server reports for ``spec``, or ``None``.

    Go names the innermost struct and the field's JSON path without indexes,
    e.g. ``json: cannot unmarshal bool into Go struct field PodSpec.spec.nodeSelector of type string``.
    """
    if spec is None:
        return None
    if not isinstance(spec, dict):
        struct = "PodTemplateSpec" if path.endswith("template.spec") else "Pod"
        return _unmarshal(spec, struct, path, "v1.PodSpec")
    if _well_typed(spec) and _quantities_parse(spec, _POD_SPEC):
        return None
    return _decode(spec, "PodSpec", _POD_SPEC, path)


def _holds_quantity(schema: _Schema, seen: frozenset[int] = frozenset()) -> bool:
    if id(schema) in seen:
        return False
    for _, child in schema.values():
        if child == _QUANTITY:
            return True
        if isinstance(child, tuple) and _holds_quantity(child[1], seen | {id(schema)}):
            return True
    return False


def _quantities_parse(obj: Mapping[str, Any], schema: _Schema) -> bool:
    """Whether every quantity under ``obj`` (already well typed) parses: msgspec checks types, not quantities.

    Walks only the fields whose schema leads to a quantity (resources, overhead).
    """
    for name, value in obj.items():
        entry = schema.get(name)
        if entry is None or value is None:
            continue
        child = entry[1]
        if child == _QUANTITY:
            if any(item is not None and _quantity_error(item) for item in value.values()):
                return False
        elif isinstance(child, tuple) and id(child[1]) in _WITH_QUANTITIES:
            for elem in value if isinstance(value, list) else [value]:
                if elem is not None and not _quantities_parse(elem, child[1]):
                    return False
    return True


def _well_typed(spec: dict[str, Any]) -> bool:
    """Whether every field of the schema has its type, checked by msgspec in C (no message; rarely false).

    The msgspec types are built from the same schema, and are at least as
    strict as :func:`_decode` (they also refuse what it lets pass, such as a
    map key that is not a string): when they refuse, :func:`_decode` says
    whether and how the API server would.
    """
    try:
        msgspec.convert(spec, _POD_SPEC_FAST)
    except msgspec.ValidationError:
        return False
    return True


_FAST_SCALARS: dict[type, Any] = {bool: bool, int: int, str: str, list: list, dict: dict}


def _fast_type(struct: str, schema: _Schema, made: dict[int, Any]) -> Any:
    """A msgspec Struct for ``schema``: each field its Go type's JSON type, or null (``made``: the Structs
    already built for the schemas it shares, by id)."""
    known = made.get(id(schema))
    if known is not None:
        return known
    fields: list[tuple[str, Any, None]] = []
    for name, (gotype, child) in schema.items():
        want = _python_type(gotype)
        if child is None:
            kind: Any = _FAST_SCALARS[want]
        elif isinstance(child, str):
            elem = _FAST_SCALARS[_python_type(child)] | None
            kind = list[elem] if want is list else dict[str, elem]  # type: ignore[valid-type]
        else:
            inner = _fast_type(child[0], child[1], made) | None
            kind = list[inner] if want is list else inner  # type: ignore[valid-type]
        fields.append((name, kind | None, None))
    out = made[id(schema)] = msgspec.defstruct(f"Fast{struct}", fields)
    return out


_POD_SPEC_FAST = _fast_type("PodSpec", _POD_SPEC, {})  # built once, when the module is imported


def decoding_types(fields: tuple[str, ...]) -> list[tuple[str, Any]]:
    """``(field, msgspec type)`` for those of ``fields`` the decoding checks, where no quantity can sit:
    a spec whose such fields all have these types decodes (:func:`decode_error` of them is None)."""
    types = {f.encode_name: f.type for f in msgspec.structs.fields(_POD_SPEC_FAST)}
    out = []
    for name in fields:
        if name not in types:
            continue
        child = _POD_SPEC[name][1]
        if child == _QUANTITY or (isinstance(child, tuple) and _holds_quantity(child[1])):
            raise ValueError(f"spec.{name} can hold a quantity: its type does not say whether it decodes")
        out.append((name, types[name]))
    return out


def _schemas(schema: _Schema, out: dict[int, _Schema]) -> dict[int, _Schema]:
    if id(schema) not in out:
        out[id(schema)] = schema
        for _, child in schema.values():
            if isinstance(child, tuple):
                _schemas(child[1], out)
    return out


# the schemas (by id) under which a quantity can be: the only ones _quantities_parse descends into
_WITH_QUANTITIES = frozenset(k for k, v in _schemas(_POD_SPEC, {}).items() if _holds_quantity(v))


# -- stage 2: validation ------------------------------------------------------------


def _strs(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v if isinstance(v, dict) else {} for v in value] if isinstance(value, list) else []


def node_name_errors(name: str) -> list[str]:
    """``ValidateNodeName``: ``IsDNS1123Subdomain`` from util/validation, which says "characters"."""
    return dns1123_subdomain_errors(name, unit="characters")


def _container_errors(containers: Any, path: str, pod_defaults: bool = True) -> list[str]:
    """``validateContainers``, the parts that need no defaulting: a container, a name, an image."""
    listed = _dicts(containers)
    if not listed:
        return [field.required(path)]
    out: list[str] = []
    seen: set[str] = set()
    for i, ctr in enumerate(listed):
        cpath = f"{path}[{i}]"
        name = ctr.get("name") or ""
        if not name:
            out.append(field.required(f"{cpath}.name"))
        else:
            out.extend(field.invalid(f"{cpath}.name", name, m) for m in dns1123_label_errors(name))
        if not ctr.get("image"):
            out.append(field.required(f"{cpath}.image"))
        out.extend(resource_requirements_errors(ctr.get("resources"), f"{cpath}.resources", defaults=pod_defaults))
        if name in seen:
            out.append(field.duplicate(f"{cpath}.name", name))
        seen.add(name)
    return out


def _requirement_errors(rq: Mapping[str, Any], path: str, allow_invalid_values: bool) -> list[str]:
    """``ValidateNodeSelectorRequirement``."""
    out: list[str] = []
    op = rq.get("operator") or ""
    values = _strs(rq.get("values"))
    if op in ("In", "NotIn"):
        if not values:
            out.append(field.required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            out.append(
                field.forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            out.append(
                field.required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
            )
    else:
        out.append(field.invalid(f"{path}.operator", field.Named(op), "not a valid selector operator"))
    key = rq.get("key") or ""
    out.extend(field.invalid(f"{path}.key", key, msg) for msg in key_errors(key))
    if not allow_invalid_values:
        for i, value in enumerate(values):
            out.extend(field.invalid(f"{path}.values[{i}]", value, msg) for msg in value_errors(value))
    return out


def _field_requirement_errors(rq: Mapping[str, Any], path: str) -> list[str]:
    """``ValidateNodeFieldSelectorRequirement``: only ``metadata.name`` In/NotIn one value."""
    out: list[str] = []
    op = rq.get("operator") or ""
    values = _strs(rq.get("values"))
    if op in FIELD_SELECTOR_OPERATORS:
        if len(values) != 1:
            out.append(
                field.required(
                    f"{path}.values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        out.append(field.invalid(f"{path}.operator", field.Named(op), "not a valid selector operator"))
    key = rq.get("key") or ""
    if key != "metadata.name":
        out.append(field.invalid(f"{path}.key", key, "not a valid field selector key"))
    else:
        for i, value in enumerate(values):
            out.extend(field.invalid(f"{path}.values[{i}]", value, msg) for msg in node_name_errors(value))
    return out


def _term_errors(term: Mapping[str, Any], path: str, allow_invalid_values: bool) -> list[str]:
    out: list[str] = []
    for j, rq in enumerate(_dicts(term.get("matchExpressions"))):
        out.extend(_requirement_errors(rq, f"{path}.matchExpressions[{j}]", allow_invalid_values))
    for j, rq in enumerate(_dicts(term.get("matchFields"))):
        out.extend(_field_requirement_errors(rq, f"{path}.matchFields[{j}]"))
    return out


def node_selector_errors(selector: Mapping[str, Any], path: str) -> list[str]:
    """``ValidateNodeSelector`` (invalid label values refused): at least one term, each term valid."""
    terms = _dicts(selector.get("nodeSelectorTerms"))
    if not terms:
        return [field.required(f"{path}.nodeSelectorTerms", "must have at least one node selector term")]
    out: list[str] = []
    for i, term in enumerate(terms):
        out.extend(_term_errors(term, f"{path}.nodeSelectorTerms[{i}]", False))
    return out


def _node_affinity_errors(na: Mapping[str, Any], path: str) -> list[str]:
    out: list[str] = []
    required = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, dict):
        terms = _dicts(required.get("nodeSelectorTerms"))
        tpath = f"{path}.{_REQUIRED}.nodeSelectorTerms"
        if not terms:
            out.append(field.required(tpath, "must have at least one node selector term"))
        for i, term in enumerate(terms):
            out.extend(_term_errors(term, f"{tpath}[{i}]", False))
    for i, pref in enumerate(_dicts(na.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        ppath = f"{path}.{_PREFERRED}[{i}]"
        weight = pref.get("weight") or 0
        if not 1 <= weight <= 100:
            out.append(field.invalid(f"{ppath}.weight", weight, "must be in the range 1-100"))
        # preferred terms may carry invalid label values: they can still score on some node
        out.extend(_term_errors(pref.get("preference") or {}, f"{ppath}.preference", True))
    return out


def _toleration_errors(tolerations: list[dict[str, Any]], path: str) -> list[str]:
    """``ValidateTolerations`` with the TaintTolerationComparisonOperators gate off (its default).

    The bad values are those v1.37.2 passes: the ``value`` string where the
    operator and value disagree (``Exists`` with a value included), the
    ``operator`` and ``effect`` as their named Go types (printed as JSON).
    """
    out: list[str] = []
    for i, t in enumerate(tolerations):
        tpath = f"{path}[{i}]"
        key, op = t.get("key") or "", t.get("operator") or ""
        value, effect = t.get("value") or "", t.get("effect") or ""
        if key:
            out.extend(field.invalid(f"{tpath}.key", key, msg) for msg in key_errors(key))
        if not key and op != "Exists":
            out.append(
                field.invalid(
                    f"{tpath}.operator",
                    field.Named(op),
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            )
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            out.append(
                field.invalid(
                    f"{tpath}.effect", field.Named(effect), "effect must be 'NoExecute' when `tolerationSeconds` is set"
                )
            )
        if op in ("", "Equal"):
            if errs := value_errors(value):
                out.append(field.invalid(f"{tpath}.operator", value, ";".join(errs)))
        elif op == "Exists":
            if value:
                out.append(field.invalid(f"{tpath}.operator", value, "value must be empty when `operator` is 'Exists'"))
        elif op in ("Lt", "Gt"):
            out.append(field.not_supported(f"{tpath}.operator", field.Named(op), TOLERATION_OPERATORS))
        else:
            out.append(field.not_supported(f"{tpath}.operator", field.Named(op), TOLERATION_OPERATORS[:2]))
        if effect and effect not in TAINT_EFFECTS:
            out.append(field.not_supported(f"{tpath}.effect", field.Named(effect), TAINT_EFFECTS))
    return out


def validate_pod_spec(spec: Mapping[str, Any], path: str = "spec", *, pod_defaults: bool = True) -> list[str]:
    """The field errors the server reports for ``spec``'s shape and node selection, in its order.

    Call :func:`decode_error` first: this assumes the shapes decode.
    ``pod_defaults``: the spec is a Pod's, so the server defaults a
    container's requests from its limits before validating (``SetDefaults_Pod``);
    a pod template (Deployment, Job...) is validated as written.
    """
    out = _container_errors(spec.get("containers"), f"{path}.containers", pod_defaults)
    policy = spec.get("restartPolicy") or ""
    if policy and policy not in RESTART_POLICIES:  # validateRestartPolicy; empty is defaulted to Always
        out.append(field.not_supported(f"{path}.restartPolicy", field.Named(policy), RESTART_POLICIES))
    for key, value in (spec.get("nodeSelector") or {}).items():
        out.extend(label_errors(str(key), value, f"{path}.nodeSelector"))
    na = (spec.get("affinity") or {}).get("nodeAffinity")
    if isinstance(na, dict):
        out.extend(_node_affinity_errors(na, f"{path}.affinity.nodeAffinity"))
    node_name = spec.get("nodeName") or ""
    if node_name:
        out.extend(field.invalid(f"{path}.nodeName", node_name, msg) for msg in node_name_errors(node_name))
    out.extend(_toleration_errors(_dicts(spec.get("tolerations")), f"{path}.tolerations"))
    return out


def invalid_message(kind: str, name: str, errors: list[str]) -> str:
    """``errors.NewInvalid``: ``Pod "x" is invalid: <e>``, or ``[e1, e2]`` for several (duplicates dropped)."""
    group = WORKLOAD_KINDS.get(kind, ("", ""))[0]
    qualified = f"{kind}.{group}" if group else kind
    return f"{qualified} {go_quote(name)} is invalid: {field.aggregate(errors)}"


def decode_message(kind: str, api_version: str, detail: str) -> str:
    """How the server answers a body it cannot decode (400 BadRequest)."""
    version = api_version.rpartition("/")[2] or "v1"
    return f"{kind} in version {go_quote(version)} cannot be handled as a {kind}: {detail}"


def pod_spec_of(obj: Mapping[str, Any]) -> tuple[str, Any]:
    """``(path, spec)`` of the pod spec inside a workload object; ``spec`` is ``None`` when absent."""
    kind = str(obj.get("kind") or "")
    path = WORKLOAD_KINDS[kind][1]
    node: Any = obj
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return path, node
