"""NFD's end-to-end NodeFeatureRule scenario (test/e2e/node_feature_discovery_test.go, NFD v0.19), reproduced
from snapshots: the exact labels, annotations, taints and extended resources nfd-master reaches at each stage.

The data and what differs from the stored upstream copies: ``data/e2e/README.md``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpulabel.checks.nfd.rules import predict
from gpulabel.cluster.snapshot import load_snapshots
from gpulabel.k8s.nfd.master import NfdConfig, NodeResult

DATA = Path(__file__).parent / "data" / "e2e"
NS = "feature.node.kubernetes.io"
TAINTS_ON = NfdConfig(enable_taints=True)

STAGE1 = {f"{NS}/e2e-flag-test-1": "true", f"{NS}/e2e-attribute-test-1": "true", f"{NS}/e2e-instance-test-1": "true"}
STAGE2 = {
    **STAGE1,
    f"{NS}/e2e-matchany-test-1": "true",
    f"{NS}/e2e-template-test-1-instance_1": "found",
    f"{NS}/e2e-template-test-1-instance_2": "found",
}
LABELS2 = (
    "e2e-attribute-test-1,e2e-flag-test-1,e2e-instance-test-1,e2e-matchany-test-1,"
    "e2e-template-test-1-instance_1,e2e-template-test-1-instance_2"
)
TAINTS3 = (
    "feature.node.kubernetes.io/fake-special-node=exists:PreferNoSchedule",
    "feature.node.kubernetes.io/fake-dedicated-node=true:NoExecute",
    "feature.node.kubernetes.io/performance-optimized-node=true:NoExecute",
)
TAINTS3U = (
    "feature.node.kubernetes.io/fake-special-node=exists:PreferNoSchedule",
    "feature.node.kubernetes.io/foo=true:NoExecute",
)


def run(cfg: NfdConfig, *rule_files: str) -> NodeResult:
    state = load_snapshots([str(DATA / "worker-nodefeature.yaml"), *(str(DATA / f) for f in rule_files)])
    (pred,) = predict(state, cfg)
    return pred.result


def test_stage1_labels_from_nodefeaturerule_1() -> None:
    r = run(TAINTS_ON, "nodefeaturerule-1.yaml")
    assert dict(r.labels) == STAGE1
    assert dict(r.annotations) == {
        "nfd.node.kubernetes.io/feature-labels": "e2e-attribute-test-1,e2e-flag-test-1,e2e-instance-test-1"
    }


def test_stage2_backreferences_matchany_and_templates() -> None:
    r = run(TAINTS_ON, "nodefeaturerule-1.yaml", "nodefeaturerule-2.yaml")
    assert dict(r.labels) == STAGE2
    assert dict(r.annotations) == {"nfd.node.kubernetes.io/feature-labels": LABELS2}


def test_vars_feed_a_later_rule_but_never_a_rule_of_an_object_sorting_earlier() -> None:
    # e2e-test-2 sorts after e2e-test-1: its rule sees rule-1's labels and vars in rule.matched.
    # Renamed so that it sorts first, the same rule sees no rule.matched at all and does not match.
    state = load_snapshots([str(DATA / "worker-nodefeature.yaml"), str(DATA / "nodefeaturerule-1.yaml")])
    import dataclasses

    from gpulabel.k8s.nfd.objects import NfdState

    two = load_snapshots([str(DATA / "nodefeaturerule-2.yaml")]).nfd.rules[0]
    early = dataclasses.replace(two, name="a-sorts-first")
    state = dataclasses.replace(state, nfd=NfdState(state.nfd.nodefeatures, (*state.nfd.rules, early)))
    (pred,) = predict(state, NfdConfig())
    outcome = {rr.rule: rr.outcome for rr in pred.result.rules}["e2e-matchany-test-1"]
    assert not outcome.matched and outcome.failures[0].line() == "term[0] rule.matched: feature absent"


def test_stage3_taints_with_enable_taints() -> None:
    r = run(TAINTS_ON, "nodefeaturerule-1.yaml", "nodefeaturerule-2.yaml", "nodefeaturerule-3.yaml")
    assert tuple(str(t) for t in r.taints) == TAINTS3
    assert r.annotations["nfd.node.kubernetes.io/taints"] == ",".join(TAINTS3)
    assert r.dropped["taint nfd.node.kubernetes.io/denied-taint=true:NoSchedule"].startswith("namespace")
    assert r.dropped["taint unprefixed-taint=true:NoSchedule"] == "unprefixed name"


def test_stage3_without_enable_taints_no_taint_is_written() -> None:
    r = run(NfdConfig(), "nodefeaturerule-1.yaml", "nodefeaturerule-2.yaml", "nodefeaturerule-3.yaml")
    assert r.taints == ()
    assert "nfd.node.kubernetes.io/taints" not in r.annotations
    assert dict(r.labels) == STAGE2


def test_stage3_updated_taints() -> None:
    r = run(TAINTS_ON, "nodefeaturerule-1.yaml", "nodefeaturerule-2.yaml", "nodefeaturerule-3-updated.yaml")
    assert tuple(str(t) for t in r.taints) == TAINTS3U
    assert r.annotations["nfd.node.kubernetes.io/taints"] == ",".join(TAINTS3U)


def test_stage4_extended_resources() -> None:
    r = run(TAINTS_ON, "nodefeaturerule-1.yaml", "nodefeaturerule-2.yaml", "nodefeaturerule-4.yaml")
    assert dict(r.extended_resources) == {
        "feature.node.kubernetes.io/nons": "123",
        "vendor.io/dynamic": "10",
        "vendor.feature.node.kubernetes.io/static": "123",
    }
    assert dict(r.annotations) == {
        "nfd.node.kubernetes.io/feature-labels": LABELS2,
        "nfd.node.kubernetes.io/extended-resources": "nons,vendor.feature.node.kubernetes.io/static,vendor.io/dynamic",
    }


def test_stage5_annotations() -> None:
    r = run(TAINTS_ON, "nodefeaturerule-1.yaml", "nodefeaturerule-2.yaml", "nodefeaturerule-5.yaml")
    assert dict(r.annotations) == {
        "nfd.node.kubernetes.io/feature-labels": LABELS2,
        "feature.node.kubernetes.io/defaul-ns-annotation": "foo",
        "feature.node.kubernetes.io/defaul-ns-annotation-2": "bar",
        "custom.vendor.io/feature": "baz",
        "nfd.node.kubernetes.io/feature-annotations": (
            "custom.vendor.io/feature,defaul-ns-annotation,defaul-ns-annotation-2"
        ),
    }


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("e2e-flag-test-neg-1", "term[0] fake.flag flag_1 DoesNotExist: flag (a flag has no value)"),
        ("e2e-attribute-test-neg-1", 'term[0] fake.attribute attr_2 IsTrue: value "false"'),
        (
            "e2e-instance-test-neg-1",
            'term[0] fake.instance attr_3 Lt [10]: values "10", "100" on 3 instance(s)',
        ),
    ],
)
def test_the_negative_rules_say_which_expression_failed(rule: str, why: str) -> None:
    r = run(TAINTS_ON, "nodefeaturerule-1.yaml")
    outcome = {rr.rule: rr.outcome for rr in r.rules}[rule]
    assert not outcome.matched and outcome.why() == why
