"""NFD's rule tests as data (pkg/apis/nfd/nodefeaturerule/rule_test.go at NFD v0.19): TestRule's
steps and TestTemplating's rules, each row naming the upstream assertion it reproduces."""

from __future__ import annotations

from typing import Any

import pytest

from gpulabel.k8s.nfd.expression import Expression
from gpulabel.k8s.nfd.objects import Features, Rule, Term
from gpulabel.k8s.nfd.rule import execute

E = Expression


def t(feature: str, exprs: dict[str, Expression] | None = None, name: Expression | None = None) -> Term:
    return Term(feature, None if exprs is None else tuple(exprs.items()), name)


R1 = Rule("r1", labels={"label-1": "", "label-2": "true"})
R2 = Rule(
    "r2",
    labels={"label-1": "label-val-1"},
    vars={"var-1": "var-val-1"},
    match_features=(t("domain-1.kf-1", {"key-1": E("Exists")}),),
)
R1_EMPTY_SET = Rule("r1", labels=R1.labels, match_features=(t("domain-1.kf-1", {}),))
R3 = Rule(
    "r3",
    labels={"label-3": "label-val-3", "empty": ""},
    match_features=(t("domain-1.vf-1", {"key-1": E("In", ("val-1",))}),),
)
R3_INST = Rule(
    "r3", labels={"label-4": "label-val-4"}, match_features=(t("domain-1.if-1", {"attr-1": E("In", ("val-1",))}),)
)


def multi(exprs: dict[str, Expression]) -> Rule:
    return Rule("r3", labels={"feat": "val-1"}, match_features=(t("dom.feat", exprs),))


R5 = Rule(
    "r5",
    labels={"label-5": "label-val-5"},
    match_features=(
        t("domain-1.vf-1", {"key-1": E("In", ("val-x",))}),
        t("domain-1.if-1", {"attr-1": E("In", ("val-1",))}),
    ),
)
R5_FIXED = Rule(
    "r5", labels=R5.labels, match_features=(t("domain-1.vf-1", {"key-1": E("In", ("val-1",))}), R5.match_features[1])
)
NA = (t("domain-1.kf-1", {"key-na": E("Exists")}),)
K1 = (t("domain-1.kf-1", {"key-1": E("Exists")}),)
R5_ANY_NA = Rule("r5", labels=R5.labels, match_features=R5_FIXED.match_features, match_any=(NA,))
R5_ANY = Rule("r5", labels=R5.labels, match_features=R5_FIXED.match_features, match_any=(NA, K1))

EMPTY = Features()
EMPTY_SETS = Features({"domain-1.kf-1": frozenset()}, {"domain-1.vf-1": {}}, {"domain-1.if-1": ()})
NON_EMPTY = Features(
    {"domain-1.kf-1": frozenset({"key-x"})},
    {"domain-1.vf-1": {"key-1": "val-x"}},
    {"domain-1.if-1": ({"attr-1": "val-x"},)},
)
WITH_KEY1 = Features({"domain-1.kf-1": frozenset({"key-x", "key-1"})}, NON_EMPTY.attributes, NON_EMPTY.instances)
VAL1 = Features(WITH_KEY1.flags, {"domain-1.vf-1": {"key-1": "val-1"}}, WITH_KEY1.instances)
INST1 = Features(VAL1.flags, VAL1.attributes, {"domain-1.if-1": ({"attr-1": "val-1"},)})
F2 = Features(
    {"dom.feat": frozenset({"k-1", "k-2"})},
    {"dom.feat": {"a-1": "v-1", "a-2": "v-2"}},
    {"dom.feat": ({"ia-1": "iv-1"}, {"ia-2": "iv-2"})},
)

FEAT = {"feat": "val-1"}
# (upstream assertion, rule, features, labels or None for no match, vars)
RULE_STEPS: list[tuple[str, Rule, Features, dict[str, str] | None, dict[str, str] | None]] = [
    ("totally empty features: empty matcher should have matched", R1, EMPTY, dict(R1.labels), {}),
    ("totally empty features: missing feature should not have returned an error", R2, EMPTY, None, None),
    ("empty feature sets: empty matcher should have matched", R1, EMPTY_SETS, dict(R1.labels), {}),
    ("empty feature sets: unexpected match", R2, EMPTY_SETS, None, None),
    ("non-empty feature sets: empty matcher should have matched", R1, NON_EMPTY, dict(R1.labels), {}),
    ("empty match expression set matches anything", R1_EMPTY_SET, NON_EMPTY, dict(R1.labels), {}),
    ("keys should not have matched", R2, NON_EMPTY, None, None),
    ("keys should have matched; vars should be present", R2, WITH_KEY1, dict(R2.labels), dict(R2.vars)),
    ("values should not have matched", R3, WITH_KEY1, None, None),
    ("values should have matched", R3, VAL1, dict(R3.labels), {}),
    ("instances should not have matched", R3_INST, VAL1, None, None),
    ("instances should have matched", R3_INST, INST1, dict(R3_INST.labels), {}),
    ("key in multi-type feature should have matched", multi({"k-1": E("Exists")}), F2, FEAT, {}),
    ("attribute in multi-type feature should have matched", multi({"a-1": E("In", ("v-1",))}), F2, FEAT, {}),
    ("instance attr in multi-type feature should have matched", multi({"ia-1": E("In", ("iv-1",))}), F2, FEAT, {}),
    ("multi-type: flags and attributes", multi({"k-2": E("Exists"), "a-2": E("In", ("v-2",))}), F2, FEAT, {}),
    ("multi-type: instance", multi({"ia-2": E("In", ("iv-2",))}), F2, FEAT, {}),
    ("multiple feature matchers: should not have matched", R5, INST1, None, None),
    ("multiple feature matchers: should have matched", R5_FIXED, INST1, dict(R5.labels), {}),
    ("matchAny: should not have matched", R5_ANY_NA, INST1, None, None),
    ("matchAny: should have matched", R5_ANY, INST1, dict(R5.labels), {}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "rule", "features", "labels", "vars_"), RULE_STEPS, ids=[r[0] for r in RULE_STEPS])
def test_rule(case: str, rule: Rule, features: Features, labels: Any, vars_: Any) -> None:
    out = execute(rule, features)
    assert not out.error
    assert out.matched is (labels is not None)
    if labels is not None:
        assert dict(out.labels) == labels
        assert dict(out.vars) == vars_


TF = Features(
    {"domain_1.kf_1": frozenset({"key-a", "key-b", "key-c"}), "domain.mf": frozenset({"key-a", "key-b", "key-c"})},
    {
        "domain_1.vf_1": {"key-1": "val-1", "keu-2": "val-2", "key-3": "val-3", "key-4": "val-4"},
        "domain.mf": {"key-d": "val-d", "key-e": "val-e"},
    },
    {
        "domain_1.if_1": (
            {"attr-1": "1", "attr-2": "val-2"},
            {"attr-1": "10", "attr-2": "val-20"},
            {"attr-1": "100", "attr-2": "val-200"},
            {"attr-1": "1000", "attr-2": "val-2000", "attr-3": "3000"},
        )
    },
)
T1_TERMS = (
    t("domain_1.kf_1", {"key-a": E("Exists"), "key-c": E("Exists"), "foo": E("DoesNotExist")}),
    t("domain_1.vf_1", {"key-1": E("In", ("val-1", "val-2")), "bar": E("DoesNotExist")}),
    t("domain_1.if_1", {"attr-1": E("Lt", ("100",))}),
    t("domain_1.if_1", {"attr-1": E("Exists"), "attr-2": E("Exists"), "attr-3": E("Exists")}),
)
T1_LABELS = """
label-1=will-be-overridden
label-2=
{{range .domain_1.kf_1}}kf-{{.Name}}=present
{{end}}
{{range .domain_1.vf_1}}vf-{{.Name}}=vf-{{.Value}}
{{end}}
{{range .domain_1.if_1}}if-{{index . "attr-1"}}_{{index . "attr-2"}}=present
{{end}}"""
T1_VARS = """
var-1=value-will-be-overridden-by-vars
var-2=
{{range .domain_1.kf_1}}kf-{{.Name}}=true
{{end}}"""
T1 = Rule(
    "r1",
    labels={"label-1": "label-val-1"},
    labels_template=T1_LABELS,
    vars={"var-1": "var-val-1"},
    vars_template=T1_VARS,
    match_features=T1_TERMS,
)
T1_ANY = Rule(
    "r3", labels=T1.labels, labels_template=T1_LABELS, vars=T1.vars, vars_template=T1_VARS, match_any=(T1_TERMS,)
)
T1_WANT = {
    "label-1": "label-val-1",
    "label-2": "",
    "kf-key-a": "present",
    "kf-key-c": "present",
    "kf-foo": "present",
    "vf-key-1": "vf-val-1",
    "vf-bar": "vf-",
    "if-1_val-2": "present",
    "if-10_val-20": "present",
    "if-1000_val-2000": "present",
}
T1_VARS_WANT = {"var-1": "var-val-1", "var-2": "", "kf-key-a": "true", "kf-key-c": "true", "kf-foo": "true"}
MF = Rule(
    "mf",
    labels_template="\n{{range .domain.mf}}mf-{{.Name}}=found\n{{end}}",
    match_features=(t("domain.mf", {"key-a": E("Exists"), "key-d": E("In", ("val-d",))}),),
)
KA = (t("domain_1.kf_1", {"key-a": E("Exists")}),)
R4 = Rule(
    "r4",
    labels_template="{{range .domain_1.vf_1}}{{.Name}}={{.Value}}\n{{end}}",
    match_features=(t("domain_1.vf_1", {"key-5": E("DoesNotExist")}, E("In", ("key-1", "key-4"))),),
)
R4_NO = Rule(
    "r4", labels={"should-not-match": "true"}, match_features=(t("domain_1.vf_1", None, E("In", ("key-not-exists",))),)
)

# TestTemplating: (assertion, rule, labels (None: no match, "error": an error), vars)
TEMPLATING: list[tuple[str, Rule, Any, Any]] = [
    ("matchFeatures templates", T1, T1_WANT, T1_VARS_WANT),
    ("matchAny templates (empty matchFeatures)", T1_ANY, T1_WANT, T1_VARS_WANT),
    ("multi-type feature", MF, {"mf-key-a": "found", "mf-key-d": "found"}, {}),
    ('labelsTemplate "foo=bar"', Rule("r2", labels_template="foo=bar", match_features=KA), {"foo": "bar"}, {}),
    ('labelsTemplate "foo"', Rule("r2", labels_template="foo", match_features=KA), "error", None),
    ('labelsTemplate "{{"', Rule("r2", labels_template="{{", match_features=KA), "error", None),
    ('varsTemplate "bar=baz"', Rule("r2", vars_template="bar=baz", match_features=KA), {}, {"bar": "baz"}),
    ('varsTemplate "bar"', Rule("r2", vars_template="bar", match_features=KA), "error", None),
    ('varsTemplate "{{"', Rule("r2", vars_template="{{", match_features=KA), "error", None),
    ("matchName", R4, {"key-1": "val-1", "key-4": "val-4", "key-5": ""}, {}),
    ("matchName without a match", R4_NO, None, None),
]  # fmt: skip


@pytest.mark.parametrize(("case", "rule", "labels", "vars_"), TEMPLATING, ids=[r[0] for r in TEMPLATING])
def test_templating(case: str, rule: Rule, labels: Any, vars_: Any) -> None:
    out = execute(rule, TF)
    if labels == "error":
        assert out.error and not out.matched
        return
    assert not out.error
    assert out.matched is (labels is not None)
    if labels is not None:
        assert dict(out.labels) == labels
        assert dict(out.vars) == vars_
