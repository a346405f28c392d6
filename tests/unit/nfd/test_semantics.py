"""What NFD's code establishes beyond its unit tables (docs/nfd.md; ../shared/nfd-rules-semantics.md cites
the upstream code, e2e test or probe for each): case handling, failFast, matchAny, rule.matched, templates,
prefixing and the namespace rules, dynamic values, merging, taints, extended resources, annotations."""

from __future__ import annotations

from typing import Any

import pytest

from gpulabel.k8s.nfd.expression import Expression, ExpressionError, evaluate, go_atoi, parse_version
from gpulabel.k8s.nfd.gotemplate import TemplateError, Unsupported, expand_map
from gpulabel.k8s.nfd.master import NfdConfig, NodeResult, process_node
from gpulabel.k8s.nfd.objects import Features, NodeFeature, NodeFeatureRule, Rule, Term
from gpulabel.k8s.nfd.rule import execute

E = Expression
NS = "feature.node.kubernetes.io"


def t(feature: str, exprs: dict[str, Expression] | None = None, name: Expression | None = None) -> Term:
    return Term(feature, None if exprs is None else tuple(exprs.items()), name)


F = Features(
    {"kernel.loadedmodule": frozenset({"nvidia"}), "cpu.cpuid": frozenset({"AVX", "AVX2"})},
    {"kernel.version": {"major": "5", "full": "5.15.0-91-generic"}, "kernel.config": {"LSM": "bpf", "X": ""}},
    {"pci.device": ({"vendor": "10de", "class": "0302"}, {"vendor": "8086", "class": "0200"})},
)


def nf(name: str, features: Features = F, labels: dict[str, str] | None = None, ns: str = "node-feature-discovery",
       node: str = "n1") -> NodeFeature:  # fmt: skip
    return NodeFeature(ns, name, node, features, labels or {})


DEFAULT = NfdConfig()


def node(*rules: Rule, cfg: NfdConfig = DEFAULT, features: Features = F, **kw: Any) -> NodeResult:
    return process_node("n1", [nf("n1", features, **kw)], [NodeFeatureRule("obj", rules)], cfg)


# -- expressions -----------------------------------------------------------------------------------


ATOI = [("+5", 5), ("05", 5), ("-0", 0), (" 5", None), ("0x10", None), ("1.0", None), ("3a", None), ("", None),
        ("+", None), ("9223372036854775807", 2**63 - 1), ("9223372036854775808", None)]  # fmt: skip


@pytest.mark.parametrize(("text", "ok"), ATOI)
def test_integers_are_go_atoi(text: str, ok: int | None) -> None:
    if ok is None:
        with pytest.raises(ValueError):
            go_atoi(text)
    else:
        assert go_atoi(text) == ok


def test_an_invalid_integer_is_an_error_not_false_but_only_when_the_element_exists() -> None:
    with pytest.raises(ExpressionError):
        evaluate(E("Gt", ("5",)), True, " 6")
    assert evaluate(E("Gt", ("abc",)), False, None) is False  # absent: arguments never checked
    assert evaluate(E("In", ()), False, None) is False


def test_versions_drop_the_pre_release_and_reject_four_parts() -> None:
    assert parse_version("5.15.0-91-generic") == (5, 15, 0) == parse_version("v5.15")
    assert evaluate(E("Ge", ("1.2.3",), "version"), True, "1.2.3-rc1")
    for bad in ("1.2.3.4", "garbage", "1.2.3-01"):
        with pytest.raises(ValueError):
            parse_version(bad)


def test_bounds_order_is_checked_for_integers_only() -> None:
    with pytest.raises(ExpressionError):
        evaluate(E("GeLe", ("5", "5")), True, "5")
    assert evaluate(E("GtLt", ("2.0", "1.0"), "version"), True, "1.5") is False  # no check, simply false


def test_type_other_than_version_is_an_error_on_comparisons_and_ignored_elsewhere() -> None:
    with pytest.raises(ExpressionError):
        evaluate(E("Gt", ("1",), "int"), True, "2")
    assert evaluate(E("In", ("2",), "int"), True, "2")


def test_regexps_are_unanchored_and_is_true_is_exact() -> None:
    assert evaluate(E("InRegexp", ("al-[1-9]",)), True, "val-12")
    assert not evaluate(E("IsTrue"), True, "True") and not evaluate(E("IsFalse"), True, "0")


def test_an_empty_attribute_value_exists_and_not_in_on_an_absent_element_is_false() -> None:
    assert evaluate(E("Exists"), True, "")
    assert not evaluate(E("NotIn", ("x",)), False, None)


# -- one rule ----------------------------------------------------------------------------------------


def test_feature_names_are_lower_cased_for_lookup_so_an_upper_case_published_name_never_matches() -> None:
    upper = Features(attributes={"Kernel.Version": {"major": "6"}})
    for feature in ("kernel.version", "Kernel.Version"):
        out = execute(Rule("r", labels={"a": "b"}, match_features=(t(feature, {"major": E("Exists")}),)), upper)
        assert not out.matched and not out.error
    assert execute(Rule("r", match_features=(t("KERNEL.version", {"major": E("Exists")}),)), F).matched


def test_template_keys_keep_the_rule_s_case() -> None:
    osr = Features(attributes={"system.osrelease": {"ID": "ubuntu"}})
    rule = Rule("r", labels_template="{{ range .system.osrelease }}x={{ .Value }}{{ end }}",
                match_features=(t("system.osRelease", {"ID": E("Exists")}),))  # fmt: skip
    out = execute(rule, osr)
    assert out.error == 'map has no entry for key "osrelease"'


def test_a_missing_feature_is_no_match_never_an_error_even_for_does_not_exist() -> None:
    out = execute(Rule("r", match_features=(t("no.such", {"x": E("DoesNotExist")}),)), F)
    assert not out.matched and not out.error and out.why() == "term[0] no.such: feature absent"


def test_fail_fast_an_invalid_expression_after_a_failing_term_is_never_reached() -> None:
    bad = t("kernel.version", {"major": E("Gt", ("x",))})
    assert not execute(Rule("r", match_features=(t("no.such"), bad)), F).error
    assert execute(Rule("r", match_features=(bad,)), F).error == "not a number 'x' in Gt [x]"


def test_match_any_without_a_template_stops_at_the_first_match_hiding_later_errors() -> None:
    good = (t("kernel.loadedmodule", {"nvidia": E("Exists")}),)
    bad = (t("kernel.version", {"major": E("Gt", ("x",))}),)
    assert execute(Rule("r", labels={"a": "1"}, match_any=(good, bad)), F).matched
    assert execute(Rule("r", labels_template="a=1", match_any=(good, bad)), F).error


def test_when_no_match_any_element_matches_match_features_is_not_evaluated() -> None:
    miss = (t("kernel.loadedmodule", {"absent": E("Exists")}),)
    bad = (t("kernel.version", {"major": E("Gt", ("x",))}),)
    out = execute(Rule("r", match_any=(miss,), match_features=bad), F)
    assert not out.matched and not out.error


def test_a_rule_without_matchers_always_matches_even_without_features() -> None:
    assert execute(Rule("r", labels={"a": "b"}), Features()).matched


def test_match_name_runs_only_after_match_expressions_matched_and_both_must_match() -> None:
    term = t("cpu.cpuid", {"AVX": E("Exists")}, E("In", ("AVX512F",)))
    out = execute(Rule("r", match_features=(term,)), F)
    assert not out.matched and out.why().startswith("term[0] cpu.cpuid matchName In [AVX512F]: no element name")
    never = t("cpu.cpuid", None, E("DoesNotExist"))
    assert not execute(Rule("r", match_features=(never,)), F).matched


def test_a_satisfied_does_not_exist_adds_an_element_and_terms_on_one_feature_append() -> None:
    rule = Rule(
        "r",
        labels_template="{{ range .kernel.config }}{{ .Name }}=[{{ .Value }}]\n{{ end }}",
        match_features=(t("kernel.config", {"NOPE": E("DoesNotExist")}), t("kernel.config", {"LSM": E("Exists")})),
    )
    assert dict(execute(rule, F).labels) == {"NOPE": "[]", "LSM": "[bpf]"}


def test_a_missing_instance_attribute_in_a_template_is_an_error() -> None:
    rule = Rule("r", labels_template="{{ range .pci.device }}x={{ .sriov }}{{ end }}",
                match_features=(t("pci.device", {"vendor": E("In", ("10de",))}),))  # fmt: skip
    assert execute(rule, F).error == 'map has no entry for key "sriov"'


def test_a_broken_template_on_a_rule_that_does_not_match_is_silent() -> None:
    rule = Rule("r", labels_template="{{", match_features=(t("no.such"),))
    out = execute(rule, F)
    assert not out.matched and not out.error


def test_template_lines_split_at_the_first_equals_keep_inner_spaces_and_the_last_duplicate_wins() -> None:
    assert expand_map(" a = b \nk=1=2\n\nk2=x\nk2=y", {}) == {"a ": " b", "k": "1=2", "k2": "y"}
    with pytest.raises(TemplateError):
        expand_map("novalue", {})


def test_template_functions_env_is_not_defined_and_an_unimplemented_sprig_function_says_so() -> None:
    with pytest.raises(TemplateError, match='function "env" not defined'):
        expand_map('{{ env "HOME" }}', {})
    with pytest.raises(Unsupported):
        expand_map("{{ sha256sum . }}", {})
    assert expand_map('{{ "A-B" | lower | replace "-" "_" }}=1', {}) == {"a_b": "1"}
    with pytest.raises(TemplateError, match="larger than"):
        expand_map("x" * (64 * 1024 + 1), {})


def test_unsupported_is_an_error_that_marks_the_prediction_unknown() -> None:
    any_module = (t("kernel.loadedmodule", {}),)
    out = execute(Rule("r", labels_template="{{ sha256sum . }}=x", match_features=any_module), F)
    assert out.error and out.unsupported


def test_a_template_runs_only_in_a_matcher_so_a_rule_without_matchers_writes_only_static_labels() -> None:
    out = execute(Rule("r", labels={"s": "1"}, labels_template="t=1"), F)
    assert out.matched and dict(out.labels) == {"s": "1"}


# -- nfd-master --------------------------------------------------------------------------------------


def test_rule_matched_sees_raw_labels_and_vars_of_every_earlier_rule() -> None:
    r1 = Rule("r1", labels={"lsm": "@kernel.config.LSM", "vendor.io/x": "1"}, vars={"v": "yes"})
    r2 = Rule("r2", labels={"saw": "@rule.matched.v"},
              match_features=(t("rule.matched", {"lsm": E("In", ("@kernel.config.LSM",)), "vendor.io/x": E("Exists"),
                                                 "v": E("In", ("yes",))}),))  # fmt: skip
    out = node(r1, r2)
    assert out.labels[f"{NS}/lsm"] == "bpf"
    assert out.labels[f"{NS}/saw"] == "yes"  # @rule.matched resolves after every rule ran
    assert "v" not in out.labels and f"{NS}/v" not in out.labels  # vars never reach the node


def test_the_first_rule_sees_no_rule_matched_and_an_erroring_rule_does_not_create_it() -> None:
    dne = Rule("probe", labels={"p": "1"}, match_features=(t("rule.matched", {"x": E("DoesNotExist")}),))
    assert f"{NS}/p" not in node(dne).labels
    err = Rule("err", match_features=(t("kernel.version", {"major": E("Gt", ("x",))}),))
    assert f"{NS}/p" not in node(err, dne).labels
    miss = Rule("miss", labels={"m": "1"}, match_features=(t("no.such"),))
    assert node(miss, dne).labels[f"{NS}/p"] == "1"  # a rule that did not match still creates rule.matched


def test_rule_order_is_by_object_name_then_list_order_later_overwriting() -> None:
    a = NodeFeatureRule("b-second", (Rule("x", labels={"k": "from-b"}),))
    b = NodeFeatureRule("a-first", (Rule("x", labels={"k": "from-a"}), Rule("y", labels={"k": "from-a2"})))
    out = process_node("n1", [nf("n1")], [a, b], NfdConfig())
    assert out.labels[f"{NS}/k"] == "from-b" and out.label_sources[f"{NS}/k"] == "rule b-second/x"


def test_rule_labels_overwrite_nodefeature_labels() -> None:
    out = node(Rule("r", labels={"k": "rule"}), labels={"k": "worker"})
    assert out.labels[f"{NS}/k"] == "rule"


@pytest.mark.parametrize(
    ("key", "cfg", "written"),
    [
        ("kubernetes.io/x", NfdConfig(), False),
        ("node.kubernetes.io/x", NfdConfig(), False),
        ("nfd.node.kubernetes.io/x", NfdConfig(), False),
        ("k8s.io/x", NfdConfig(), True),
        ("profile.node.kubernetes.io/x", NfdConfig(), True),
        ("sub.feature.node.kubernetes.io/x", NfdConfig(), True),
        ("vendor.io/x", NfdConfig(deny_label_ns=frozenset({"vendor.io"})), False),
        ("a.vendor.io/x", NfdConfig(deny_label_ns=frozenset({"*.vendor.io"})), False),
        ("vendor.io/x", NfdConfig(deny_label_ns=frozenset({"*.vendor.io"})), True),
        (f"{NS}/x", NfdConfig(deny_label_ns=frozenset({"*"})), False),
        ("kubernetes.io/x", NfdConfig(extra_label_ns=frozenset({"kubernetes.io"})), True),
        ("vendor.io/x", NfdConfig(deny_label_ns=frozenset({"*"}), extra_label_ns=frozenset({"vendor.io"})), True),
    ],
)
def test_label_namespace_rules(key: str, cfg: NfdConfig, written: bool) -> None:
    assert (key in node(Rule("r", labels={key: "v"}), cfg=cfg).labels) is written


def test_extra_label_ns_skips_value_validation_and_the_whitelist_is_an_unanchored_regexp_on_the_name() -> None:
    cfg = NfdConfig(extra_label_ns=frozenset({"kubernetes.io"}))
    assert node(Rule("r", labels={"kubernetes.io/x": "bad value!"}), cfg=cfg).labels["kubernetes.io/x"] == "bad value!"
    assert f"{NS}/bad" not in node(Rule("r", labels={"bad": "bad value!"})).labels
    wl = NfdConfig(label_whitelist="gpu")
    out = node(Rule("r", labels={"nvidia-gpu-x": "1", "vendor.io/gpu": "1", "cpu": "1"}), cfg=wl)
    assert set(out.labels) - {k for k in out.labels if k.startswith("nfd.")} == {f"{NS}/nvidia-gpu-x", "vendor.io/gpu"}


def test_dynamic_values_read_attributes_only_and_a_failure_drops_the_label() -> None:
    out = node(Rule("r", labels={"a": "@kernel.version.full", "b": "@kernel.loadedmodule.nvidia",
                                 "c": "@pci.device.vendor", "d": "@kernel.version.nope"}))  # fmt: skip
    assert out.labels[f"{NS}/a"] == "5.15.0-91-generic"
    assert {f"label {NS}/{k}" for k in "bcd"} <= set(out.dropped)


def test_merging_own_namespace_first_then_by_name_instances_concatenated() -> None:
    own = nf("n1", Features(attributes={"a.b": {"k": "own"}}, instances={"i.j": ({"x": "1"},)}), labels={"l": "own"})
    other = nf("aaa", Features(attributes={"a.b": {"k": "third"}}, instances={"i.j": ({"x": "2"},)}),
               labels={"l": "third"}, ns="gpu-operator")  # fmt: skip
    rule = Rule("r", labels_template="{{ range .i.j }}x{{ .x }}=1\n{{ end }}",
                match_features=(t("i.j", {"x": E("Exists")}),))  # fmt: skip
    out = process_node("n1", [other, own], [NodeFeatureRule("o", (rule,))], NfdConfig())
    assert out.labels[f"{NS}/l"] == "third"  # the third-party object merges after nfd-master's own
    assert {f"{NS}/x1", f"{NS}/x2"} <= set(out.labels)
    denied = process_node("n1", [other, own], [], NfdConfig(deny_node_feature_labels=True))
    assert denied.labels[f"{NS}/l"] == "own"


def test_within_one_object_a_prefixed_key_beats_its_unprefixed_twin() -> None:
    out = node(labels={"k": "bare", f"{NS}/k": "prefixed"})
    assert out.labels[f"{NS}/k"] == "prefixed"


def test_taints_only_with_enable_taints_never_prefixed_and_validated() -> None:
    from gpulabel.k8s.taints import Taint

    rule = Rule("r", taints=(Taint(f"{NS}/a", "1", "NoSchedule"), Taint("b", "1", "NoSchedule"),
                             Taint(f"{NS}/c", "1", "Sometimes")))  # fmt: skip
    assert node(rule).taints == ()
    on = node(rule, cfg=NfdConfig(enable_taints=True))
    assert [str(x) for x in on.taints] == [f"{NS}/a=1:NoSchedule"]
    assert on.annotations["nfd.node.kubernetes.io/taints"] == f"{NS}/a=1:NoSchedule"


def test_extended_resources_annotations_resource_labels_and_the_instance_prefix() -> None:
    rule = Rule("r", labels={"gpus": "8"}, extended_resources={"bad": "eight", "ok": "@kernel.version.major"},
                annotations={"note": "x" * 1025, "short": "y"})  # fmt: skip
    out = node(rule, cfg=NfdConfig(resource_labels=frozenset({"gpus"}), instance="blue"))
    assert dict(out.extended_resources) == {f"{NS}/gpus": "8", f"{NS}/ok": "5"}
    assert f"{NS}/gpus" not in out.labels
    assert out.annotations[f"{NS}/short"] == "y" and f"{NS}/note" not in out.annotations
    assert out.annotations["nfd.node.kubernetes.io/blue.extended-resources"] == "gpus,ok"
    assert out.annotations["nfd.node.kubernetes.io/blue.feature-annotations"] == "short"


def test_auto_default_ns_off_writes_unprefixed_names_as_they_are() -> None:
    out = node(Rule("r", labels={"plain": "1"}), cfg=NfdConfig(auto_default_ns=False))
    assert out.labels["plain"] == "1"


def test_a_flag_feature_with_null_elements_does_not_match_an_empty_set_but_empty_elements_do() -> None:
    rule = Rule("r", match_features=(t("a.b", {}),))
    assert not execute(rule, Features(flags={"a.b": None})).matched
    assert execute(rule, Features(flags={"a.b": frozenset()})).matched


def test_a_failing_set_with_an_invalid_expression_says_nfd_master_may_fail_the_rule_instead() -> None:
    rule = Rule("r", match_features=(t("kernel.version", {"major": E("In", ("6",)), "full": E("Gt", ("1",))}),))
    out = execute(rule, F)
    assert not out.matched and not out.error
    assert out.why() == (
        'term[0] kernel.version major In [6]: value "5" '
        "(nfd-master may fail the rule instead, its order is random: not a number '5.15.0-91-generic')"
    )


def test_index_of_a_missing_element_attribute_is_the_empty_string_as_for_a_go_map_of_strings() -> None:
    assert expand_map('x=[{{ index (index .pci.device 0) "sriov" }}]', {"pci": {"device": [{"vendor": "10de"}]}}) == {
        "x": "[]"
    }
