"""The one table of kinds (model/cluster.py KINDS) is what snapshots, live LISTs and the RBAC rules are made of."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import yaml

from gpulabel.cluster.client import RESOURCES
from gpulabel.k8s.dra.objects import DRA_KINDS
from gpulabel.model.cluster import KINDS, SUPPORTED_KINDS, ClusterState

ROOT = Path(__file__).resolve().parents[2]
TABLE = {(k.group, k.resource) for k in KINDS}


def _pairs(rules: list[dict[str, list[str]]]) -> set[tuple[str, str]]:
    return {(g, r) for rule in rules if "list" in rule["verbs"] for g in rule["apiGroups"] for r in rule["resources"]}


def test_the_read_only_role_lists_exactly_the_kinds_of_the_table() -> None:
    docs = list(yaml.safe_load_all((ROOT / "deploy" / "rbac" / "readonly.yaml").read_text()))
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    assert _pairs(role["rules"]) == TABLE


def test_the_helm_charts_read_only_role_lists_exactly_the_kinds_of_the_table() -> None:
    text = (ROOT / "deploy" / "helm" / "gpulabel" / "templates" / "rbac.yaml").read_text()
    block = text[text.index(".Values.rbac.readonly.create") : text.index("{{- $evidence")]
    rules = [
        {"apiGroups": re.findall(r'"([^"]*)"', g), "resources": re.findall(r'"([^"]*)"', r), "verbs": ["list"]}
        for g, r in re.findall(r'"apiGroups" \(list ([^)]*)\) "resources" \(list ([^)]*)\)', block)
    ]
    assert rules and _pairs(rules) == TABLE


def _rules(text: str) -> set[tuple[str, str, str]]:
    """(group, resource, verb) of the chart's ``(dict "apiGroups" ... "verbs" ...)`` rules in ``text``."""
    found = re.findall(r'"apiGroups" \(list ([^)]*)\) "resources" \(list ([^)]*)\) "verbs" \(list ([^)]*)\)', text)
    return {
        (g, r, v)
        for gs, rs, vs in found
        for g in re.findall(r'"([^"]*)"', gs)
        for r in re.findall(r'"([^"]*)"', rs)
        for v in re.findall(r'"([^"]*)"', vs)
    }


EVIDENCE_RULES = {("", "pods/log", "get"), ("", "events", "list")}


def test_the_evidence_rights_are_pods_log_get_and_events_list_in_the_chart_and_deploy_rbac_alike() -> None:
    """``pods/log`` get and ``events`` list, and nothing more: in deploy/rbac/readonly-evidence.yaml (bound to the
    read-only ServiceAccount) and in the chart's read-only role only when ``rbac.readonly.evidence`` is set."""
    docs = list(yaml.safe_load_all((ROOT / "deploy" / "rbac" / "readonly-evidence.yaml").read_text()))
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    (binding,) = [d for d in docs if d["kind"] == "ClusterRoleBinding"]
    granted = {
        (g, r, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]
    }
    assert granted == EVIDENCE_RULES
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "gpulabel-readonly", "namespace": "gpulabel"}]
    text = (ROOT / "deploy" / "helm" / "gpulabel" / "templates" / "rbac.yaml").read_text()
    part = text[text.index("{{- $evidence") :]
    part = part[: part.index("{{ include")]
    assert _rules(part) == EVIDENCE_RULES
    assert "{{- if .Values.rbac.readonly.evidence }}" in part and "concat $rules $evidence" in part
    values = yaml.safe_load((ROOT / "deploy" / "helm" / "gpulabel" / "values.yaml").read_text())
    assert values["rbac"]["readonly"]["evidence"] is False  # off unless asked for


def test_the_table_gives_the_api_paths_the_supported_kinds_and_the_state_fields() -> None:
    assert RESOURCES["Node"] == ("/api/v1/nodes", False)
    assert RESOURCES["ResourceClaim"] == ("/apis/resource.k8s.io/v1/resourceclaims", True)
    assert set(RESOURCES) == {k.kind for k in KINDS}
    # the rows read in part of an API kind (the autoscalers' Events) are that kind in a snapshot
    assert set(SUPPORTED_KINDS) == {k.object_kind for k in KINDS} == {k.kind for k in KINDS if not k.api_kind}
    assert tuple(k.kind for k in KINDS if k.field == "dra") == DRA_KINDS
    fields = {f.name for f in dataclasses.fields(ClusterState)}
    assert {k.field for k in KINDS} <= fields


def test_each_kind_is_read_into_its_field() -> None:
    objects = [
        {"kind": "Node", "metadata": {"name": "n"}},
        {"kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": {"nodeName": "n"}},
        {"kind": "DaemonSet", "metadata": {"name": "d", "namespace": "ops"}, "spec": {"template": {"spec": {}}}},
        {"kind": "ClusterPolicy", "metadata": {"name": "cp"}, "spec": {}},
        {"kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}},
        {"kind": "NodePool", "metadata": {"name": "gpu-pool"}, "spec": {"template": {"spec": {}}}},
        {"kind": "NodeClaim", "metadata": {"name": "gpu-pool-x7k2p"}, "spec": {}},
        {"kind": "ConfigMap", "metadata": {"name": "another", "namespace": "kube-system"}},
        {"kind": "Secret", "metadata": {"name": "ignored"}},
    ]
    state = ClusterState.from_objects(("t", o) for o in objects)
    assert [n.name for n in state.nodes] == ["n"]
    assert [p.name for p in state.pods] == ["p"]
    assert [d.name for d in state.daemonsets] == ["d"]
    assert [c["metadata"]["name"] for c in state.cluster_policies] == ["cp"]
    assert list(state.dra.classes) == ["gpu"]
    assert [p.name for p in state.karpenter.nodepools] == ["gpu-pool"]
    assert [c.name for c in state.karpenter.nodeclaims] == ["gpu-pool-x7k2p"]
    assert [(m.namespace, m.name, m.status) for m in state.autoscaler] == [("kube-system", "another", None)]
    assert state.kinds == {
        "Node", "Pod", "DaemonSet", "ClusterPolicy", "DeviceClass", "NodePool", "NodeClaim", "ConfigMap",
    }  # fmt: skip


def test_the_autoscalers_events_are_read_in_part_one_reason_a_list_and_their_objects_are_events() -> None:
    """One LIST per reason, disjoint from the Warning row (a field selector matches one value), each read as an
    Event; a live read's rows are the API kind in the state's kinds, as a snapshot's."""
    rows = [k for k in KINDS if k.object_kind == "Event"]
    assert [(k.kind, k.field_selector) for k in rows] == [
        ("Event", "type=Warning,source!=karpenter"),
        ("Event/Nominated", "type=Normal,reason=Nominated,involvedObject.kind=Pod"),
        ("Event/FailedScheduling", "type=Warning,source=karpenter,reason=FailedScheduling,involvedObject.kind=Pod"),
        ("Event/TriggeredScaleUp", "type=Normal,reason=TriggeredScaleUp,involvedObject.kind=Pod"),
        ("Event/NotTriggerScaleUp", "type=Normal,reason=NotTriggerScaleUp,involvedObject.kind=Pod"),
    ]
    assert {k.path for k in rows} == {"/api/v1/events"} and {k.field for k in rows} == {"events"}
    assert ClusterState.of_records([], "live", ["Event/Nominated", "ConfigMap"]).kinds == {"Event", "ConfigMap"}


def test_the_status_configmap_is_granted_by_name_alone() -> None:
    """RBAC: ``configmaps`` only with ``resourceNames: [cluster-autoscaler-status]`` (a LIST whose fieldSelector is
    ``metadata.name=NAME`` is authorized as NAME: k8s.io/apiserver v0.37.2 pkg/endpoints/request/requestinfo.go),
    in deploy/rbac, the monitor's role and both of the chart's."""
    for path in ("deploy/rbac/readonly.yaml", "deploy/monitor/monitor-rbac.yaml"):
        docs = list(yaml.safe_load_all((ROOT / path).read_text()))
        (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
        rules = [r for r in role["rules"] if "configmaps" in r["resources"]]
        assert [(r["resources"], r.get("resourceNames")) for r in rules] == [
            (["configmaps"], ["cluster-autoscaler-status"])
        ]
    for name in ("rbac.yaml", "monitor-rbac.yaml"):
        text = (ROOT / "deploy" / "helm" / "gpulabel" / "templates" / name).read_text()
        lines = [ln for ln in text.splitlines() if '"configmaps"' in ln]
        assert len(lines) == 1 and '"resourceNames" (list "cluster-autoscaler-status"))' in lines[0]


def _watched(rules: list[dict[str, list[str]]]) -> set[tuple[str, str]]:
    return {
        (g, r)
        for rule in rules
        if {"list", "watch"} <= set(rule["verbs"])
        for g in rule["apiGroups"]
        for r in rule["resources"]
    }


def test_the_monitors_role_lists_and_watches_exactly_the_kinds_of_the_table() -> None:
    docs = list(yaml.safe_load_all((ROOT / "deploy" / "monitor" / "monitor-rbac.yaml").read_text()))
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    # events are listed (not watched) once, by a new leader reading the last one's open Warnings
    assert _watched(role["rules"]) == _pairs(role["rules"]) - {("events.k8s.io", "events")} == TABLE
    writes = {
        (g, r, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]
    }
    assert {w for w in writes if w[2] not in {"list", "watch"}} == {
        ("events.k8s.io", "events", "create"),
        ("events.k8s.io", "events", "patch"),
        ("events.k8s.io", "events", "get"),  # an Event another instance made (409)
        ("", "pods", "get"),  # a pod's UID for its Event
    }


def test_the_helm_charts_monitor_role_lists_and_watches_exactly_the_kinds_of_the_table() -> None:
    text = (ROOT / "deploy" / "helm" / "gpulabel" / "templates" / "monitor-rbac.yaml").read_text()
    block = text[: text.index(".Values.monitor.nodeCondition")]
    rules = [
        {
            "apiGroups": re.findall(r'"([^"]*)"', g),
            "resources": re.findall(r'"([^"]*)"', r),
            "verbs": re.findall(r'"([^"]*)"', v),
        }
        for g, r, v in re.findall(
            r'"apiGroups" \(list ([^)]*)\) "resources" \(list ([^)]*)\) "verbs" \(list ([^)]*)\)', block
        )
    ]
    assert rules and _watched(rules) == _pairs(rules) - {("events.k8s.io", "events")} == TABLE
