"""API-server validation of node selection: the server's field paths and messages."""

from __future__ import annotations

from typing import Any

import pytest

from gpulabel.k8s.podvalidation import decode_error, decode_message, invalid_message, validate_pod_spec
from tests.objects import expr, required, term, toleration

REQ = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
E0 = f"{REQ}[0].matchExpressions[0]"
F0 = f"{REQ}[0].matchFields[0]"
T0 = "spec.tolerations[0]"
VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation "
    "is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
DNS_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)

CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("a valid affinity has no errors", required(term(expr("a", "In", "b"), expr("c", "Gt", "3"))), []),
    ("no terms at all", required(), [f"{REQ}: Required value: must have at least one node selector term"]),
    ("an empty term is valid (and matches nothing)", required(term()), []),
    (
        "In without values",
        required(term(expr("a", "In"))),
        [f"{E0}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
    ),
    (
        "NotIn without values",
        required(term(expr("a", "NotIn"))),
        [f"{E0}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
    ),
    (
        "Exists with values",
        required(term(expr("a", "Exists", "b"))),
        [f"{E0}.values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
    ),
    (
        "Gt with two values",
        required(term(expr("a", "Gt", "1", "2"))),
        [f"{E0}.values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"],
    ),
    (
        "Gt 'eight' passes: the server does not check that it is an integer",
        required(term(expr("a", "Gt", "eight"))),
        [],
    ),
    (
        "Gt '-1' is not a label value",
        required(term(expr("a", "Gt", "-1"))),
        [f'{E0}.values[0]: Invalid value: "-1": {VALUE_MSG}'],
    ),
    (
        "an unknown operator",
        required(term(expr("a", "Equals", "b"))),
        [f'{E0}.operator: Invalid value: "Equals": not a valid selector operator'],
    ),
    (
        "an empty key",
        required(term(expr("", "Exists"))),
        [
            f'{E0}.key: Invalid value: "": name part must be non-empty',
            f"{E0}.key: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
            "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ],
    ),
    (
        "an invalid value in In",
        required(term(expr("a", "In", "ok", "NVIDIA A10"))),
        [f'{E0}.values[1]: Invalid value: "NVIDIA A10": {VALUE_MSG}'],
    ),
    (
        "matchFields on another field",
        required(term(fields=[expr("metadata.labels", "In", "x")])),
        [f'{F0}.key: Invalid value: "metadata.labels": not a valid field selector key'],
    ),
    (
        "matchFields with two values",
        required(term(fields=[expr("metadata.name", "In", "a", "b")])),
        [
            f"{F0}.values: Required value: "
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
        ],
    ),
    (
        "matchFields with Exists",
        required(term(fields=[expr("metadata.name", "Exists")])),
        [f'{F0}.operator: Invalid value: "Exists": not a valid selector operator'],
    ),
    (
        "matchFields with a name that is not a node name",
        required(term(fields=[expr("metadata.name", "In", "Lab_Node")])),
        [f'{F0}.values[0]: Invalid value: "Lab_Node": {DNS_MSG}'],
    ),
    ("nodeSelector with an empty value is valid", {"nodeSelector": {"a": ""}}, []),
    (
        "nodeSelector with a space in the value",
        {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA A100"}},
        [f'spec.nodeSelector: Invalid value: "NVIDIA A100": {VALUE_MSG}'],
    ),
    (
        "nodeSelector with an empty prefix",
        {"nodeSelector": {"/x": "1"}},
        ['spec.nodeSelector: Invalid value: "/x": prefix part must be non-empty'],
    ),
    ("a valid nodeName", {"nodeName": "lab-node-1"}, []),
    ("an uppercase nodeName", {"nodeName": "Lab"}, [f'spec.nodeName: Invalid value: "Lab": {DNS_MSG}']),
    (
        "preferred weight out of range",
        {
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": term()}]
                }
            }
        },
        [
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
            "Invalid value: 0: must be in the range 1-100"
        ],
    ),
    (
        "preferred terms may carry invalid label values",
        {
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 5, "preference": term(expr("a", "In", "NVIDIA A10"))}
                    ]
                }
            }
        },
        [],
    ),
    ("a toleration with an empty effect is valid", {"tolerations": [toleration("k", "Exists")]}, []),
    ("a toleration with an empty key and Exists is valid", {"tolerations": [toleration(operator="Exists")]}, []),
    (
        "an empty key with Equal",
        {"tolerations": [toleration(operator="Equal", value="v")]},
        [
            f'{T0}.operator: Invalid value: "Equal": operator must be Exists when `key` is empty, '
            'which means "match all values and all keys"'
        ],
    ),
    (
        "an empty key with no operator",
        {"tolerations": [toleration(effect="NoSchedule")]},
        [
            f'{T0}.operator: Invalid value: "": operator must be Exists when `key` is empty, '
            'which means "match all values and all keys"'
        ],
    ),
    (
        "Exists with a value",
        {"tolerations": [toleration("k", "Exists", "v")]},
        [f"{T0}.operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'"],
    ),
    (
        "Equal with a value that is not a label value",
        {"tolerations": [toleration("k", "Equal", "a b")]},
        [f'{T0}.operator: Invalid value: "a b": {VALUE_MSG}'],
    ),
    (
        "an unknown effect",
        {"tolerations": [toleration("k", "Exists", effect="NoAdmit")]},
        [f'{T0}.effect: Unsupported value: "NoAdmit": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'],
    ),
    (
        "tolerationSeconds without NoExecute",
        {"tolerations": [toleration("k", "Exists", effect="NoSchedule", tolerationSeconds=30)]},
        [f"{T0}.effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"],
    ),
    (
        "Gt tolerations while the alpha gate is off",
        {"tolerations": [toleration("k", "Gt", "1")]},
        [f'{T0}.operator: Unsupported value: "Gt": supported values: "Equal", "Exists", "Lt", "Gt"'],
    ),
    (
        "an unknown toleration operator",
        {"tolerations": [toleration("k", "In", "1")]},
        [f'{T0}.operator: Unsupported value: "In": supported values: "Equal", "Exists"'],
    ),
    (
        "errors come in the server's order: nodeSelector, affinity, nodeName, tolerations",
        {
            "tolerations": [toleration("k", "Foo")],
            "nodeName": "A",
            "nodeSelector": {"a": "b c"},
            **required(),
        },
        [
            f'spec.nodeSelector: Invalid value: "b c": {VALUE_MSG}',
            f"{REQ}: Required value: must have at least one node selector term",
            f'spec.nodeName: Invalid value: "A": {DNS_MSG}',
            f'{T0}.operator: Unsupported value: "Foo": supported values: "Equal", "Exists"',
        ],
    ),
]


CONTAINERS = [{"name": "c", "image": "i"}]


@pytest.mark.parametrize(("name", "spec", "errors"), CASES, ids=[c[0] for c in CASES])
def test_validate_pod_spec(name: str, spec: dict[str, Any], errors: list[str]) -> None:
    spec = {"containers": CONTAINERS, **spec}
    assert decode_error(spec) is None
    assert validate_pod_spec(spec) == errors


def test_template_paths_start_at_spec_template_spec() -> None:
    errors = validate_pod_spec({"containers": CONTAINERS, **required(term(expr("a", "In")))}, "spec.template.spec")
    assert errors == [
        "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
    ]


def test_invalid_message_is_the_servers() -> None:
    assert invalid_message("Pod", "p", ["a: Required value"]) == 'Pod "p" is invalid: a: Required value'
    assert invalid_message("Deployment", "d", ["x", "y", "x"]) == 'Deployment.apps "d" is invalid: [x, y]'
    assert invalid_message("Job", "j", ["x"]).startswith('Job.batch "j"')


DECODE_CASES: list[tuple[str, Any, str | None]] = [
    ("a clean spec decodes", {"nodeSelector": {"a": "b"}, **required(term(expr("a", "In", "b")))}, None),
    ("nulls decode as zero values", {"nodeSelector": None, "affinity": None, "tolerations": None}, None),
    # encoding/json (decodeState.object): fields in document order, the first type error is the one returned
    (
        "the first bad field in document order is reported (tolerations first)",
        {"tolerations": "x", "nodeSelector": 1},
        "json: cannot unmarshal string into Go struct field PodSpec.spec.tolerations of type []v1.Toleration",
    ),
    (
        "the first bad field in document order is reported (nodeSelector first)",
        {"nodeSelector": 1, "tolerations": "x"},
        "json: cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of type map[string]string",
    ),
    (
        "containers as a string",
        {"containers": "x"},
        "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container",
    ),
    (
        "an unquoted true in nodeSelector",
        {"nodeSelector": {"nvidia.com/gpu.present": True}},
        "json: cannot unmarshal bool into Go struct field PodSpec.spec.nodeSelector of type string",
    ),
    (
        "a number in nodeSelector",
        {"nodeSelector": {"nvidia.com/gpu.count": 4}},
        "json: cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of type string",
    ),
    (
        "values given as a string",
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In", "values": "b"}]}]
                    }
                }
            }
        },
        "json: cannot unmarshal string into Go struct field NodeSelectorRequirement.spec.affinity.nodeAffinity"
        ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.matchExpressions.values of type []string",
    ),
    (
        "a Gt value given as a number",
        required(term({"key": "a", "operator": "Gt", "values": [3]})),
        "json: cannot unmarshal number into Go struct field NodeSelectorRequirement.spec.affinity.nodeAffinity"
        ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.matchExpressions.values of type string",
    ),
    (
        "tolerations given as a mapping",
        {"tolerations": {"key": "a"}},
        "json: cannot unmarshal object into Go struct field PodSpec.spec.tolerations of type []v1.Toleration",
    ),
    (
        "tolerationSeconds as a string",
        {"tolerations": [{"key": "a", "operator": "Exists", "tolerationSeconds": "30"}]},
        "json: cannot unmarshal string into Go struct field Toleration.spec.tolerations.tolerationSeconds "
        "of type int64",
    ),
]


@pytest.mark.parametrize(("name", "spec", "error"), DECODE_CASES, ids=[c[0] for c in DECODE_CASES])
def test_decode_errors(name: str, spec: Any, error: str | None) -> None:
    assert decode_error(spec) == error


def test_decode_message_names_kind_and_version() -> None:
    assert decode_message("Deployment", "apps/v1", "json: x") == (
        'Deployment in version "v1" cannot be handled as a Deployment: json: x'
    )
