"""The matcher: kube-scheduler's node filters, one sentence per case."""

from __future__ import annotations

from typing import Any

import pytest

from gpulabel.k8s.nodeaffinity import (
    AFFINITY,
    NODE_NAME,
    TAINTS,
    UNSCHEDULABLE,
    compile_pod_spec,
    parse_int64,
)
from gpulabel.k8s.taints import Taint, Toleration
from gpulabel.model.cluster import Node, node_from_json
from tests.objects import expr, node, required, taint, term, toleration


def mk(name: str = "n1", labels: dict[str, str] | None = None, **kw: Any) -> Node:
    return node_from_json(node(name, labels, **kw))


# -- strconv.ParseInt(s, 10, 64) ----------------------------------------------------

INT64_CASES = [
    ("a plain number parses", "4", 4),
    ("a leading plus is accepted by ParseInt", "+4", 4),
    ("a leading minus is accepted", "-4", -4),
    ("leading zeros are decimal, not octal", "08", 8),
    ("minus zero is zero", "-0", 0),
    ("the largest int64 parses", "9223372036854775807", 2**63 - 1),
    ("the smallest int64 parses", "-9223372036854775808", -(2**63)),
    ("one beyond the largest int64 is out of range", "9223372036854775808", None),
    ("one below the smallest int64 is out of range", "-9223372036854775809", None),
    ("twenty digits are out of range", "99999999999999999999", None),
    ("many leading zeros are still in range", "0" * 30 + "7", 7),
    ("a word is not a number", "eight", None),
    ("a leading space is rejected", " 4", None),
    ("a trailing space is rejected", "4 ", None),
    ("hex is rejected in base 10", "0x10", None),
    ("underscores are rejected in base 10", "1_000", None),
    ("a decimal point is rejected", "4.0", None),
    ("two signs are rejected", "+-4", None),
    ("a sign alone is rejected", "+", None),
    ("the empty string is rejected", "", None),
    ("non-ASCII digits are rejected though int() accepts them", "\u0664", None),
    ("full-width digits are rejected", "\uff14", None),
]


@pytest.mark.parametrize(("name", "text", "want"), INT64_CASES, ids=[c[0] for c in INT64_CASES])
def test_parse_int64_is_go_parseint(name: str, text: str, want: int | None) -> None:
    assert parse_int64(text) == want


# -- one requirement against one node's labels --------------------------------------

GPU = "nvidia.com/gpu.product"
COUNT = "nvidia.com/gpu.count"

OPERATOR_CASES: list[tuple[str, dict[str, str], dict[str, Any], str | None]] = [
    ("In matches a value in the set", {GPU: "NVIDIA-A10"}, expr(GPU, "In", "NVIDIA-L4", "NVIDIA-A10"), None),
    (
        "In rejects a value outside the set",
        {GPU: "NVIDIA-A10"},
        expr(GPU, "In", "NVIDIA-L4"),
        'value "NVIDIA-A10" is not in the set',
    ),
    ("In rejects an absent key", {}, expr(GPU, "In", "NVIDIA-L4"), "label absent"),
    (
        "In compares exactly, case included",
        {GPU: "nvidia-l4"},
        expr(GPU, "In", "NVIDIA-L4"),
        'value "nvidia-l4" is not in the set',
    ),
    ("NotIn matches an absent key (the trap)", {}, expr(GPU, "NotIn", "NVIDIA-L4"), None),
    ("NotIn matches a value outside the set", {GPU: "NVIDIA-A10"}, expr(GPU, "NotIn", "NVIDIA-L4"), None),
    (
        "NotIn rejects a value in the set",
        {GPU: "NVIDIA-L4"},
        expr(GPU, "NotIn", "NVIDIA-L4"),
        'value "NVIDIA-L4" is in the set',
    ),
    ("Exists matches any value", {GPU: "x"}, expr(GPU, "Exists"), None),
    ("Exists matches an empty value", {GPU: ""}, expr(GPU, "Exists"), None),
    ("Exists rejects an absent key", {}, expr(GPU, "Exists"), "label absent"),
    ("DoesNotExist matches an absent key", {}, expr(GPU, "DoesNotExist"), None),
    ("DoesNotExist rejects an empty value", {GPU: ""}, expr(GPU, "DoesNotExist"), 'label present with value ""'),
    ("Gt compares as numbers, not strings", {COUNT: "10"}, expr(COUNT, "Gt", "9"), None),
    ("Gt is strict", {COUNT: "3"}, expr(COUNT, "Gt", "3"), "3 is not greater than 3"),
    ("Gt rejects an absent key", {}, expr(COUNT, "Gt", "3"), "label absent"),
    (
        "Gt on a node value 'eight' does not match",
        {COUNT: "eight"},
        expr(COUNT, "Gt", "3"),
        'node value "eight" is not a base-10 integer',
    ),
    ("Gt on a node value '+4' matches: ParseInt takes the sign", {COUNT: "+4"}, expr(COUNT, "Gt", "3"), None),
    (
        "Gt on a node value ' 4' does not match",
        {COUNT: " 4"},
        expr(COUNT, "Gt", "3"),
        'node value " 4" is not a base-10 integer',
    ),
    (
        "Gt on a node value '0x10' does not match",
        {COUNT: "0x10"},
        expr(COUNT, "Gt", "3"),
        'node value "0x10" is not a base-10 integer',
    ),
    (
        "Gt on a node value beyond int64 does not match",
        {COUNT: "9223372036854775808"},
        expr(COUNT, "Gt", "3"),
        'node value "9223372036854775808" is out of the int64 range',
    ),
    ("Gt on the largest int64 matches", {COUNT: "9223372036854775807"}, expr(COUNT, "Gt", "3"), None),
    ("Gt on a leading-zero node value reads it as decimal", {COUNT: "08"}, expr(COUNT, "Gt", "7"), None),
    ("Gt compares negative numbers", {COUNT: "-1"}, expr(COUNT, "Gt", "0"), "-1 is not greater than 0"),
    ("Lt is strict", {COUNT: "3"}, expr(COUNT, "Lt", "3"), "3 is not less than 3"),
    ("Lt matches a smaller number", {COUNT: "2"}, expr(COUNT, "Lt", "3"), None),
    ("Lt reaches the smallest int64", {COUNT: "-9223372036854775808"}, expr(COUNT, "Lt", "0"), None),
    (
        "Lt rejects a node value below int64",
        {COUNT: "-9223372036854775809"},
        expr(COUNT, "Lt", "0"),
        'node value "-9223372036854775809" is out of the int64 range',
    ),
]


@pytest.mark.parametrize(("name", "labels", "requirement", "why"), OPERATOR_CASES, ids=[c[0] for c in OPERATOR_CASES])
def test_operator(name: str, labels: dict[str, str], requirement: dict[str, Any], why: str | None) -> None:
    result = compile_pod_spec(required(term(requirement))).match(mk(labels=labels), full=True)
    assert result.fits is (why is None)
    if why is not None:
        (failure,) = result.failures
        assert failure.why == why
        assert failure.filter == AFFINITY and failure.term == 0


# -- requirements that do not parse make their term match nothing --------------------

UNPARSABLE_CASES = [
    ("Gt 'eight'", expr(COUNT, "Gt", "eight"), "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("Gt '+4': ParseInt takes it, but '+' is not a label value", expr(COUNT, "Gt", "+4"), "a valid label must be"),
    ("Gt ' 4'", expr(COUNT, "Gt", " 4"), "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("Gt '0x10'", expr(COUNT, "Gt", "0x10"), "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("Gt beyond int64", expr(COUNT, "Gt", "9223372036854775808"), "the value must be an integer"),
    ("Gt '-1', not a label value", expr(COUNT, "Gt", "-1"), "a valid label must be"),
    ("Gt with two values", expr(COUNT, "Gt", "1", "2"), "exactly one value is required"),
    ("Lt with no value", expr(COUNT, "Lt"), "exactly one value is required"),
    ("In with no values", expr(GPU, "In"), "values set can't be empty"),
    ("NotIn with no values", expr(GPU, "NotIn"), "values set can't be empty"),
    ("Exists with a value", expr(GPU, "Exists", "x"), "values set must be empty for exists and does not exist"),
    ("an unknown operator", expr(GPU, "Equals", "x"), 'Unsupported value: "Equals": supported values: "In", "NotIn"'),
    ("a lowercase operator", expr(GPU, "in", "x"), 'Unsupported value: "in"'),
    ("an invalid key", expr("a/b/c", "Exists"), "a valid label key must consist of"),
    ("an invalid value in In", expr(GPU, "In", "NVIDIA A10"), "a valid label must be"),
]


@pytest.mark.parametrize(("name", "requirement", "message"), UNPARSABLE_CASES, ids=[c[0] for c in UNPARSABLE_CASES])
def test_unparsable_requirement_fails_its_term_only(name: str, requirement: dict[str, Any], message: str) -> None:
    labels = {COUNT: "9", GPU: "x"}
    broken = compile_pod_spec(required(term(requirement, expr(GPU, "Exists"))))
    result = broken.match(mk(labels=labels), full=True)
    assert not result.fits
    (failure,) = result.failures
    assert message in failure.why and "the whole term matches no node" in failure.why
    assert failure.requirement is not None and failure.requirement.errors
    either = compile_pod_spec(required(term(requirement), term(expr(GPU, "Exists"))))
    assert either.match(mk(labels=labels)).fits


def test_parse_errors_carry_field_paths() -> None:
    req = compile_pod_spec(required(term(expr(COUNT, "Exists"), expr(COUNT, "Gt", "eight"))), "spec.template.spec")
    assert req.terms is not None
    (error,) = req.terms[0].expressions[1].errors
    assert error == (
        "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        '.nodeSelectorTerms[0].matchExpressions[1].values[0]: Invalid value: "eight": '
        "for 'Gt', 'Lt' operators, the value must be an integer"
    )


def test_in_with_values_missing_renders_null_as_go_does() -> None:
    req = compile_pod_spec(required(term(expr(GPU, "In"))))
    assert req.terms is not None
    assert req.terms[0].expressions[0].errors == (
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
    )


# -- terms and selectors ------------------------------------------------------------

A10 = {GPU: "NVIDIA-A10", "nvidia.com/gpu.present": "true"}

TERM_CASES: list[tuple[str, dict[str, Any], bool, str]] = [
    ("an empty term matches nothing", required(term()), False, "affinity term[0] empty"),
    ("an empty term ORed with a matching term matches", required(term(), term(expr(GPU, "Exists"))), True, ""),
    ("no terms at all match nothing", required(), False, "affinity no-terms"),
    (
        "an empty requiredDuringScheduling object has no terms and matches nothing",
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}},
        False,
        "affinity no-terms",
    ),
    (
        "a null requiredDuringScheduling is no constraint",
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}},
        True,
        "",
    ),
    (
        "preferred terms are not filters",
        {
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": term(expr(GPU, "DoesNotExist"))}
                    ]
                }
            }
        },
        True,
        "",
    ),
    ("terms are ORed", required(term(expr(GPU, "In", "NVIDIA-L4")), term(expr(GPU, "In", "NVIDIA-A10"))), True, ""),
    (
        "expressions within a term are ANDed",
        required(term(expr(GPU, "In", "NVIDIA-A10"), expr("nvidia.com/gpu.count", "Exists"))),
        False,
        "affinity term[0] nvidia.com/gpu.count Exists",
    ),
    (
        "expressions and fields are ANDed",
        required(term(expr(GPU, "Exists"), fields=[expr("metadata.name", "In", "other")])),
        False,
        "affinity term[0] metadata.name In [other]",
    ),
    ("matchFields In matches the node's name", required(term(fields=[expr("metadata.name", "In", "n1")])), True, ""),
    (
        "matchFields NotIn rejects the node's name",
        required(term(fields=[expr("metadata.name", "NotIn", "n1")])),
        False,
        "affinity term[0] metadata.name NotIn [n1]",
    ),
    (
        "matchFields with two values does not parse",
        required(term(fields=[expr("metadata.name", "In", "n1", "n2")])),
        False,
        "affinity term[0] metadata.name In [n1 n2]",
    ),
    (
        "matchFields Exists does not parse",
        required(term(fields=[expr("metadata.name", "Exists")])),
        False,
        "affinity term[0] metadata.name Exists",
    ),
    ("a field other than metadata.name reads as empty", required(term(fields=[expr("spec.x", "In", "")])), True, ""),
    ("nodeSelector needs the exact value", {"nodeSelector": {GPU: "NVIDIA-A10"}}, True, ""),
    (
        "nodeSelector rejects another value",
        {"nodeSelector": {GPU: "NVIDIA-L4"}},
        False,
        "node-selector nvidia.com/gpu.product=NVIDIA-L4",
    ),
    ("nodeSelector rejects an absent key", {"nodeSelector": {"x": "1"}}, False, "node-selector x=1"),
    ("nodeSelector with an empty value rejects an absent key", {"nodeSelector": {"x": ""}}, False, "node-selector x="),
    (
        "nodeSelector with an empty value rejects a non-empty value",
        {"nodeSelector": {GPU: ""}},
        False,
        "node-selector nvidia.com/gpu.product=",
    ),
    ("an empty nodeSelector is no constraint", {"nodeSelector": {}}, True, ""),
    (
        "nodeSelector is checked before affinity",
        {"nodeSelector": {"x": "1"}, **required(term(expr(GPU, "In", "NVIDIA-L4")))},
        False,
        "node-selector x=1",
    ),
    (
        "nodeSelector and affinity must both match",
        {"nodeSelector": {GPU: "NVIDIA-A10"}, **required(term(expr(GPU, "In", "NVIDIA-L4")))},
        False,
        "affinity term[0] nvidia.com/gpu.product In [NVIDIA-L4]",
    ),
]


@pytest.mark.parametrize(("name", "spec", "fits", "reason"), TERM_CASES, ids=[c[0] for c in TERM_CASES])
def test_terms_and_selectors(name: str, spec: dict[str, Any], fits: bool, reason: str) -> None:
    result = compile_pod_spec(spec).match(mk("n1", A10))
    assert (result.fits, result.reason) == (fits, reason)


def test_nodeselector_with_an_empty_value_matches_an_empty_label() -> None:
    assert compile_pod_spec({"nodeSelector": {"x": ""}}).match(mk(labels={"x": ""})).fits


def test_full_mode_reports_every_term_and_requirement() -> None:
    spec = required(term(expr(GPU, "In", "NVIDIA-L4"), expr("a", "Exists")), term(expr("b", "Exists")))
    result = compile_pod_spec(spec).match(mk(labels=A10), full=True)
    assert [(f.term, f.reason, f.why) for f in result.failures] == [
        (0, "affinity term[0] nvidia.com/gpu.product In [NVIDIA-L4]", 'value "NVIDIA-A10" is not in the set'),
        (0, "affinity term[0] a Exists", "label absent"),
        (1, "affinity term[1] b Exists", "label absent"),
    ]
    assert result.failures[0].requirement is not None
    assert result.failures[0].requirement.path.endswith("nodeSelectorTerms[0].matchExpressions[0]")


# -- taints and tolerations ---------------------------------------------------------

TOLERATION_CASES = [
    (
        "Equal with the same value tolerates",
        Taint("k", "v", "NoSchedule"),
        toleration("k", "Equal", "v", "NoSchedule"),
        True,
    ),
    (
        "Equal with another value does not",
        Taint("k", "v", "NoSchedule"),
        toleration("k", "Equal", "w", "NoSchedule"),
        False,
    ),
    ("an empty operator means Equal", Taint("k", "v", "NoSchedule"), toleration("k", "", "v", "NoSchedule"), True),
    (
        "an empty operator with no value does not tolerate a valued taint",
        Taint("k", "v", "NoSchedule"),
        toleration("k"),
        False,
    ),
    (
        "Equal with no value tolerates a taint with no value",
        Taint("k", "", "NoSchedule"),
        toleration("k", "Equal"),
        True,
    ),
    ("Exists ignores the value", Taint("k", "v", "NoSchedule"), toleration("k", "Exists", effect="NoSchedule"), True),
    ("an empty effect matches NoSchedule", Taint("k", "v", "NoSchedule"), toleration("k", "Exists"), True),
    ("an empty effect matches NoExecute", Taint("k", "v", "NoExecute"), toleration("k", "Exists"), True),
    (
        "another effect does not match",
        Taint("k", "v", "NoExecute"),
        toleration("k", "Exists", effect="NoSchedule"),
        False,
    ),
    ("another key does not match", Taint("k", "v", "NoSchedule"), toleration("j", "Exists"), False),
    (
        "an empty key with Exists tolerates every taint",
        Taint("k", "v", "NoExecute"),
        toleration(operator="Exists"),
        True,
    ),
    (
        "an empty key with Exists and an effect tolerates that effect only",
        Taint("k", "v", "NoExecute"),
        toleration(operator="Exists", effect="NoSchedule"),
        False,
    ),
    (
        "an empty key with Equal matches any key with that value",
        Taint("k", "v", "NoSchedule"),
        toleration(operator="Equal", value="v"),
        True,
    ),
    ("Gt is off by default and tolerates nothing", Taint("k", "5", "NoSchedule"), toleration("k", "Gt", "1"), False),
    ("an unknown operator tolerates nothing", Taint("k", "v", "NoSchedule"), toleration("k", "Foo", "v"), False),
]


@pytest.mark.parametrize(("name", "t", "tol", "tolerated"), TOLERATION_CASES, ids=[c[0] for c in TOLERATION_CASES])
def test_toleration(name: str, t: Taint, tol: dict[str, str], tolerated: bool) -> None:
    req = compile_pod_spec({"tolerations": [tol]})
    node_ = mk(taints=[{"key": t.key, "value": t.value, "effect": t.effect}])
    assert req.match(node_).fits is tolerated
    if not tolerated:
        assert req.match(node_).reason == f"untolerated-taint {t}"


def test_prefer_no_schedule_taints_do_not_filter() -> None:
    assert compile_pod_spec({}).match(mk(taints=[taint("k", "v", "PreferNoSchedule")])).fits


def test_the_first_untolerated_taint_is_the_reason() -> None:
    n = mk(taints=[taint("a", "1", "PreferNoSchedule"), taint("b", "", "NoExecute"), taint("c", "2")])
    assert compile_pod_spec({}).match(n).reason == "untolerated-taint b:NoExecute"
    full = compile_pod_spec({}).match(n, full=True)
    assert [f.reason for f in full.failures] == ["untolerated-taint b:NoExecute", "untolerated-taint c=2:NoSchedule"]


UNSCHEDULABLE_CASES = [
    ("a cordoned node rejects a pod without tolerations", [], False),
    (
        "the unschedulable toleration lets the pod in",
        [toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoSchedule")],
        True,
    ),
    ("a toleration with no effect covers it", [toleration("node.kubernetes.io/unschedulable", "Exists")], True),
    ("a tolerate-everything toleration covers it", [toleration(operator="Exists")], True),
    (
        "a NoExecute toleration does not",
        [toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoExecute")],
        False,
    ),
]


@pytest.mark.parametrize(("name", "tols", "fits"), UNSCHEDULABLE_CASES, ids=[c[0] for c in UNSCHEDULABLE_CASES])
def test_unschedulable(name: str, tols: list[dict[str, str]], fits: bool) -> None:
    result = compile_pod_spec({"tolerations": tols}).match(mk(unschedulable=True))
    assert (result.fits, result.reason) == (fits, "" if fits else "unschedulable")


def test_daemonset_pods_tolerate_a_cordon() -> None:
    assert compile_pod_spec({}, daemonset=True).match(mk(unschedulable=True)).fits


def test_filters_run_in_the_scheduler_order() -> None:
    spec = {"nodeName": "elsewhere", "nodeSelector": {"x": "1"}}
    n = mk("n1", {}, unschedulable=True, taints=[taint("t")])
    req = compile_pod_spec(spec)
    assert req.match(n).reason == "unschedulable"
    assert [f.filter for f in req.match(n, full=True).failures] == [UNSCHEDULABLE, NODE_NAME, TAINTS, AFFINITY]
    assert req.match(mk("n1", {}, taints=[taint("t")])).reason == "node-name elsewhere"
    assert compile_pod_spec({"nodeName": "n1", "nodeSelector": {"x": "1"}}).match(
        mk("n1", {}, taints=[taint("t")])
    ).reason == ("untolerated-taint t:NoSchedule")


def test_affinity_only_ignores_cordons_taints_and_node_name() -> None:
    req = compile_pod_spec({"nodeName": "other", "nodeSelector": {"x": "1"}}).affinity_only()
    assert req.match(mk("n1", {"x": "1"}, unschedulable=True, taints=[taint("t", "", "NoExecute")])).fits


def test_an_untolerated_taint_lists_the_pods_tolerations() -> None:
    n = mk(taints=[taint("nvidia.com/gpu", "true")])
    assert compile_pod_spec({}).match(n).failures[0].why == "the pod has no tolerations"
    tols = {
        "tolerations": [
            toleration("nvidia.com/gpu", "Equal", "false"),
            toleration(operator="Exists", effect="NoExecute"),
        ]
    }
    assert compile_pod_spec(tols).match(n).failures[0].why == (
        "none of the pod's tolerations (nvidia.com/gpu Equal false:*, * Exists:NoExecute) "
        "matches nvidia.com/gpu=true:NoSchedule"
    )


def test_toleration_str_names_wildcards() -> None:
    assert str(Toleration(operator="Exists")) == "* Exists:*"
    assert str(Toleration("k", "", "v", "NoSchedule")) == "k Equal v:NoSchedule"


def test_prefilter_names_need_every_term_to_name_nodes() -> None:
    by_name = compile_pod_spec(
        required(
            term(fields=[expr("metadata.name", "In", "a", "b"), expr("metadata.name", "In", "b", "c")]),
            term(fields=[expr("metadata.name", "In", "d")]),
        )
    )
    assert by_name.prefilter_names() == frozenset({"b", "d"})
    assert compile_pod_spec(required(term(fields=[expr("metadata.name", "In", "a")]), term())).prefilter_names() is None
