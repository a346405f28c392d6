"""place, pending and hazards over a cluster state; the lab's story; grouping is exact."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulabel.checks.pending.rules import hazard_recounted, hazards, pending, pending_pods
from gpulabel.checks.placement.fit import (
    NodeIndex,
    closest_fix,
    fitting_nodes,
    place,
    place_ungrouped,
    predict,
    scheduler_message,
)
from gpulabel.cluster.manifests import load_workloads, workloads_from_bytes
from gpulabel.errors import ManifestError
from gpulabel.k8s.nodeaffinity import compile_pod_spec
from gpulabel.model.cluster import ClusterState, node_from_json
from tests.objects import expr, node, pod, required, taint, term, toleration

ROOT = Path(__file__).parents[2]
LAB = ROOT / "examples" / "lab-cluster.yaml"
PODS = ROOT / "examples" / "pods"
TRAINING = "feature.node.kubernetes.io/custom-gpu-training"


def lab_objects() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = yaml.safe_load(LAB.read_text())["items"]
    return items


def state_of(*objects: dict[str, Any]) -> ClusterState:
    return ClusterState.from_objects([("test", o) for o in objects])


# -- the lab's story ----------------------------------------------------------------


def story_state() -> ClusterState:
    """The lab after NFD stopped reporting custom-gpu-training on lab-node-1 and train-b was created."""
    items = copy.deepcopy(lab_objects())
    (node1,) = [o for o in items if o["kind"] == "Node" and o["metadata"]["name"] == "lab-node-1"]
    del node1["metadata"]["labels"][TRAINING]
    train_b = yaml.safe_load((PODS / "train-b.yaml").read_text())
    train_b["metadata"]["namespace"] = "ml"
    message = (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    train_b["status"] = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}],
    }
    return state_of(*items, train_b)


def test_the_lab_as_shipped_has_no_hazards_and_nothing_pending() -> None:
    state = state_of(*lab_objects())
    assert hazards(state) == []
    assert pending(state) == []


def test_train_b_has_the_same_affinity_as_train_a() -> None:
    (train_a,) = [o for o in lab_objects() if o["metadata"]["name"] == "train-a"]
    train_b = yaml.safe_load((PODS / "train-b.yaml").read_text())
    assert train_b["spec"]["affinity"] == train_a["spec"]["affinity"]


def test_story_hazards_report_train_a_on_lab_node_1() -> None:
    (found,) = hazards(story_state())
    assert found.line() == f"ml/train-a lab-node-1 affinity term[0] {TRAINING} Exists"
    assert found.detail == "label absent; it would stay Pending if rescheduled"
    assert found.fits_elsewhere == 0


def test_story_pending_groups_train_b_by_reason_with_node_counts() -> None:
    state = story_state()
    grouped = pending(state)
    assert [f.line() for f in grouped] == [
        "ml/train-b affinity 1 node(s) term[0] nvidia.com/gpu.product In [NVIDIA-A10]",
        f"ml/train-b affinity 2 node(s) term[0] {TRAINING} Exists",
    ]
    assert [f.sample for f in grouped] == [("lab-node-0",), ("lab-node-1", "lab-node-2")]


def test_story_pending_per_node_explains_train_b_node_by_node() -> None:
    state = story_state()
    assert [f.line() for f in pending(state, per_node=True)] == [
        "ml/train-b lab-node-0 affinity term[0] nvidia.com/gpu.product In [NVIDIA-A10]",
        f"ml/train-b lab-node-1 affinity term[0] {TRAINING} Exists",
        f"ml/train-b lab-node-2 affinity term[0] {TRAINING} Exists",
    ]
    (p,) = pending_pods(state)
    assert p.message.startswith("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")
    assert p.predicted == p.message


def test_story_the_closest_fix_is_putting_the_label_back() -> None:
    state = story_state()
    (p,) = pending_pods(state)
    req = p.pod.requirements
    fix = closest_fix(req, state.nodes, p.results)
    assert fix is not None
    assert fix.command() == f"kubectl label node lab-node-1 {TRAINING}=true"


def test_story_prediction_matches_the_schedulers_condition() -> None:
    state = story_state()
    (train_b,) = [p for p in state.pods if p.name == "train-b"]
    raw = yaml.safe_load((PODS / "train-b.yaml").read_text())["spec"]
    prediction = predict(raw, state.nodes)
    assert prediction.feasible == ()
    assert prediction.message == train_b.condition_message("PodScheduled")
    assert prediction.results["lab-node-1"].reason == f"affinity term[0] {TRAINING} Exists"


# -- the example manifests ----------------------------------------------------------

EXAMPLES = [
    ("In picks the A100 node", "in.yaml", ["lab-node-0"]),
    ("Exists plus NotIn in one term picks the A10 node", "exists-notin.yaml", ["lab-node-1"]),
    ("Gt 3 GPUs picks the 4-GPU node", "gt.yaml", ["lab-node-0"]),
    ("ORed terms pick the CPU node through term[1]", "ored-terms.yaml", ["lab-node-2"]),
    ("train-b fits where train-a runs", "train-b.yaml", ["lab-node-1"]),
]


@pytest.mark.parametrize(("name", "manifest", "fits"), EXAMPLES, ids=[c[0] for c in EXAMPLES])
def test_example_manifests(name: str, manifest: str, fits: list[str]) -> None:
    nodes = state_of(*lab_objects()).nodes
    (w,) = load_workloads([str(PODS / manifest)])
    assert w.namespace == "default"
    results = place(w.requirements, NodeIndex(nodes))
    assert [n.name for n, r in zip(nodes, results, strict=True) if r.fits] == fits


# -- grouping gives the same verdicts as node-by-node matching -----------------------

KEYS = ["a", "b", "c"]
VALUES = ["", "1", "4", "x", "+4", "eight"]
label_sets = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)
taint_sets = st.lists(
    st.builds(
        taint,
        st.sampled_from(["t", "u"]),
        st.sampled_from(["", "v"]),
        st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"]),
    ),
    max_size=2,
)
exprs = st.one_of(
    st.builds(lambda k, v: expr(k, "In", v), st.sampled_from(KEYS), st.sampled_from(VALUES[1:])),
    st.builds(lambda k, v: expr(k, "NotIn", v), st.sampled_from(KEYS), st.sampled_from(VALUES[1:])),
    st.builds(lambda k: expr(k, "Exists"), st.sampled_from(KEYS)),
    st.builds(lambda k: expr(k, "DoesNotExist"), st.sampled_from(KEYS)),
    st.builds(
        lambda k, op, v: expr(k, op, v),
        st.sampled_from(KEYS),
        st.sampled_from(["Gt", "Lt"]),
        st.sampled_from(["1", "3", "eight"]),
    ),
)
fields = st.builds(
    lambda op, n: expr("metadata.name", op, f"n{n}"), st.sampled_from(["In", "NotIn"]), st.integers(0, 5)
)
terms = st.builds(lambda e, f: term(*e, fields=f), st.lists(exprs, max_size=3), st.lists(fields, max_size=1))
specs = st.fixed_dictionaries(
    {},
    optional={
        "nodeSelector": st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2),
        "affinity": st.builds(lambda ts: required(*ts)["affinity"], st.lists(terms, max_size=3)),
        "tolerations": st.lists(
            st.builds(
                toleration,
                st.sampled_from(["", "t", "u"]),
                st.sampled_from(["Exists", "Equal"]),
                st.sampled_from(["", "v"]),
                st.sampled_from(["", "NoSchedule"]),
            ),
            max_size=2,
        ),
        "nodeName": st.sampled_from(["n0", "n3"]),
    },
)
clusters = st.lists(st.tuples(label_sets, taint_sets, st.booleans()), min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(spec=specs, cluster=clusters, full=st.booleans())
def test_grouped_placement_equals_node_by_node(spec: dict[str, Any], cluster: list[Any], full: bool) -> None:
    nodes = [node_from_json(node(f"n{i}", lbl, taints=t, unschedulable=u)) for i, (lbl, t, u) in enumerate(cluster)]
    req = compile_pod_spec(spec)
    verdicts = place_ungrouped(req, nodes, full=full)
    assert place(req, NodeIndex(nodes), full=full) == verdicts
    fitting = [n.name for n, r in zip(nodes, verdicts, strict=True) if r.fits]
    assert fitting_nodes(req, NodeIndex(nodes), limit=3) == (len(fitting), fitting[:3])


def test_nodes_with_unique_hostnames_still_group_by_the_keys_a_pod_reads() -> None:
    nodes = [
        node_from_json(node(f"n{i}", {"kubernetes.io/hostname": f"n{i}", "gpu": "a" if i % 2 else "b"}))
        for i in range(100)
    ]
    index = NodeIndex(nodes)
    req = compile_pod_spec({"nodeSelector": {"gpu": "a"}})
    member, reps = index.groups(req.label_keys)
    assert len(reps) == 2 and len(member) == 100
    assert sum(r.fits for r in place(req, index)) == 50


# -- the smallest label change ------------------------------------------------------

FIX_CASES: list[tuple[str, dict[str, str], dict[str, Any], str | None]] = [
    ("In sets the first value", {"gpu": "a"}, required(term(expr("gpu", "In", "b", "c"))), "--overwrite gpu=b"),
    ("In on an absent key adds it", {}, required(term(expr("gpu", "In", "b"))), "gpu=b"),
    ("NotIn removes the key", {"gpu": "b"}, required(term(expr("gpu", "NotIn", "b"))), "gpu-"),
    ("Exists adds the key as true", {}, required(term(expr("gpu", "Exists"))), "gpu=true"),
    ("DoesNotExist removes the key", {"gpu": "x"}, required(term(expr("gpu", "DoesNotExist"))), "gpu-"),
    (
        "Gt sets one more than the bound",
        {"count": "2"},
        required(term(expr("count", "Gt", "3"))),
        "--overwrite count=4",
    ),
    ("Lt sets one less than the bound", {}, required(term(expr("count", "Lt", "3"))), "count=2"),
    (
        "Exists and NotIn together pick another value",
        {},
        required(term(expr("k", "Exists"), expr("k", "NotIn", "true"))),
        "k=1",
    ),
    ("nodeSelector sets its value", {}, {"nodeSelector": {"gpu": "a"}}, "gpu=a"),
    (
        "the term with fewer changes wins",
        {"a": "1"},
        required(term(expr("x", "Exists"), expr("y", "Exists")), term(expr("a", "In", "2"))),
        "--overwrite a=2",
    ),
    (
        "In and NotIn on one value cannot be satisfied",
        {},
        required(term(expr("k", "In", "v"), expr("k", "NotIn", "v"))),
        None,
    ),
    ("an empty term cannot be fixed", {}, required(term()), None),
    (
        "a term that names another node cannot be fixed",
        {},
        required(term(expr("k", "Exists"), fields=[expr("metadata.name", "In", "other")])),
        None,
    ),
]


@pytest.mark.parametrize(("name", "labels", "spec", "args"), FIX_CASES, ids=[c[0] for c in FIX_CASES])
def test_closest_fix(name: str, labels: dict[str, str], spec: dict[str, Any], args: str | None) -> None:
    nodes = [node_from_json(node("n1", labels))]
    req = compile_pod_spec(spec)
    results = place(req, NodeIndex(nodes))
    assert not results[0].fits
    fix = closest_fix(req, nodes, results)
    if args is None:
        assert fix is None
    else:
        assert fix is not None and fix.command() == f"kubectl label node n1 {args}"
        fixed = dict(labels)
        for change in fix.changes:
            if change.value is None:
                fixed.pop(change.key)
            else:
                fixed[change.key] = change.value
        assert req.match(node_from_json(node("n1", fixed))).fits


def test_closest_fix_skips_nodes_a_taint_or_cordon_rejects() -> None:
    nodes = [
        node_from_json(node("a", {}, taints=[taint("t")])),
        node_from_json(node("b", {}, unschedulable=True)),
        node_from_json(node("c", {"x": "1"})),
        node_from_json(node("d", {})),
        node_from_json(node("e", {"x": "2"})),
    ]
    req = compile_pod_spec(required(term(expr("x", "In", "2"), expr("y", "Exists"))))
    fix = closest_fix(req, nodes, place(req, NodeIndex(nodes)))
    assert fix is not None and fix.command() == "kubectl label node e y=true"
    fix = closest_fix(req, nodes[:4], place(req, NodeIndex(nodes[:4])))
    assert fix is not None and fix.command() == "kubectl label node d x=2 y=true", "an overwrite costs more than an add"
    only_tainted = nodes[:2]
    assert closest_fix(req, only_tainted, place(req, NodeIndex(only_tainted))) is None


# -- the scheduler's message --------------------------------------------------------


def test_scheduler_message_counts_first_failures_sorted_as_strings() -> None:
    nodes = [node_from_json(node(f"n{i:02}", {}, taints=[taint("t")] if i < 10 else None)) for i in range(12)]
    nodes.append(node_from_json(node("z", {}, unschedulable=True)))
    req = compile_pod_spec({"nodeSelector": {"x": "1"}})
    message = scheduler_message(req, nodes, place(req, NodeIndex(nodes)))
    assert message == (
        "0/13 nodes are available: 1 node(s) were unschedulable, 10 node(s) had untolerated taint(s), "
        "2 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/13 nodes are available: 13 Preemption is not helpful for scheduling."
    )


def test_scheduler_message_is_none_when_some_node_passes() -> None:
    nodes = [node_from_json(node("a", {}))]
    req = compile_pod_spec({})
    assert scheduler_message(req, nodes, place(req, NodeIndex(nodes))) is None


def test_scheduler_message_for_node_name_affinity_counts_absent_nodes() -> None:
    nodes = [node_from_json(node(n, {})) for n in ("a", "b", "c")]
    req = compile_pod_spec({**required(term(fields=[expr("metadata.name", "In", "a")])), "nodeSelector": {"x": "1"}})
    assert scheduler_message(req, nodes, place(req, NodeIndex(nodes))) == (
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "2 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    conflict = compile_pod_spec(
        required(term(fields=[expr("metadata.name", "In", "a"), expr("metadata.name", "In", "b")]))
    )
    assert (scheduler_message(conflict, nodes, place(conflict, NodeIndex(nodes))) or "").startswith(
        "0/3 nodes are available: pod affinity terms conflict."
    )


# -- hazards and pending edge cases --------------------------------------------------

GPU_A = {"gpu": "a"}
NEEDS_A = {"nodeSelector": {"gpu": "a"}}


def test_hazards_ignore_unconstrained_finished_and_orphaned_pods() -> None:
    state = state_of(
        node("n1", {}),
        pod("ns", "free", "n1"),
        pod("ns", "done", "n1", phase="Succeeded", spec=NEEDS_A),
        pod("ns", "orphan", "gone", spec=NEEDS_A),
        pod("ns", "bad", "n1", spec=NEEDS_A),
        pod("other", "bad", "n1", spec=NEEDS_A),
    )
    assert [f.line() for f in hazards(state)] == ["ns/bad n1 node-selector gpu=a", "other/bad n1 node-selector gpu=a"]
    assert [f.pod for f in hazards(state, "other")] == ["other/bad"]


def test_hazards_say_where_the_pod_would_go_instead() -> None:
    state = state_of(
        node("n1", {}), node("n2", GPU_A), node("n3", GPU_A, taints=[taint("t")]), pod("ns", "p", "n1", spec=NEEDS_A)
    )
    (found,) = hazards(state)
    assert found.detail == "label absent; it would fit 1 other node(s) if rescheduled"
    assert found.sample == ("n2",)


@pytest.mark.parametrize("fits", [0, 1, 2])
def test_a_hazard_recounted_reads_as_hazards_writes_it_with_that_count(fits: int) -> None:
    """The monitor tells a hazard again when only the nodes that would take its pod moved (hazard_recounted):
    the same finding hazards() writes over a cluster where that many nodes would."""
    others = [node(f"n{i}", GPU_A) for i in range(2, 2 + fits)]
    state = state_of(node("n1", {}), node("n9", GPU_A), *others, pod("ns", "p", "n1", spec=NEEDS_A))
    (first,) = hazards(state)
    assert first.fits_elsewhere == 1 + fits
    (want,) = hazards(state_of(node("n1", {}), *others, pod("ns", "p", "n1", spec=NEEDS_A)))
    assert hazard_recounted(first, fits, [n["metadata"]["name"] for n in others]) == want
    assert hazard_recounted(replace(first, detail="reworded"), fits, []) is None  # not its wording: judge again
    assert hazard_recounted(replace(first, fits_elsewhere=None), fits, []) is None  # a daemon pod's: no count


def test_a_daemon_pod_on_a_node_its_daemonset_no_longer_selects_is_about_to_go() -> None:
    state = state_of(node("n1", {}), pod("gpu-operator", "driver-x", "n1", spec=NEEDS_A, owner_uid="u1"))
    (found,) = hazards(state)
    assert found.detail == (
        "label absent; its DaemonSet no longer selects the node, so the DaemonSet controller will delete it"
    )
    assert found.fits_elsewhere is None


def test_hazards_ignore_taints_added_after_binding() -> None:
    state = state_of(node("n1", GPU_A, taints=[taint("t", "", "NoSchedule")]), pod("ns", "p", "n1", spec=NEEDS_A))
    assert hazards(state) == []


def test_pending_says_fits_when_node_selection_is_not_the_cause() -> None:
    state = state_of(node("n1", GPU_A), node("n2", {}), pod("ns", "p", phase="Pending", spec=NEEDS_A))
    lines = [(f.line(), f.detail) for f in pending(state, per_node=True)]
    assert lines == [
        (
            "ns/p n1 fits",
            "the filters gpulabel models allow this node; the pod waits for something else"
            " (ports, volumes, topology; resources if allocatable is unknown)",
        ),
        ("ns/p n2 node-selector gpu=a", "NodeAffinity: label absent"),
    ]
    assert [f.line() for f in pending(state)] == ["ns/p fits 1 node(s)", "ns/p node-selector 1 node(s) gpu=a"]
    (p,) = pending_pods(state)
    assert p.predicted is None


def test_grouped_pending_counts_every_node_once_and_samples_a_few() -> None:
    nodes = [node(f"n{i:02}", {}) for i in range(10)] + [node("gpu", GPU_A)]
    state = state_of(*nodes, pod("ns", "p", phase="Pending", spec=NEEDS_A))
    fits, absent = pending(state)  # in the order of each group's first node: gpu < n00
    assert (absent.reason, absent.count, absent.sample) == ("node-selector", 10, ("n00", "n01", "n02"))
    assert (fits.reason, fits.count, fits.sample) == ("fits", 1, ("gpu",))


def test_pending_skips_bound_pods_and_other_namespaces() -> None:
    state = state_of(
        node("n1", {}), pod("ns", "bound", "n1", phase="Pending"), pod("ns", "p", phase="Pending", spec=NEEDS_A)
    )
    assert [f.pod for f in pending(state)] == ["ns/p"]
    assert pending(state, "elsewhere") == []


# -- manifests ----------------------------------------------------------------------


def test_a_deployment_reports_template_paths() -> None:
    bad = b"""
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      containers: [{name: c, image: i}]
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: nvidia.com/gpu.product, operator: In}
"""
    with pytest.raises(ManifestError) as err:
        workloads_from_bytes(bad, "d.yaml")
    assert str(err.value) == (
        'd.yaml: Deployment.apps "d" is invalid: spec.template.spec.affinity.nodeAffinity'
        ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: "
        "Required value: must be specified when `operator` is 'In' or 'NotIn'"
    )


def test_other_kinds_are_skipped_and_daemonsets_get_the_controllers_tolerations() -> None:
    text = b"""
apiVersion: v1
kind: Service
metadata: {name: s}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds, namespace: gpu-operator}
spec:
  selector: {matchLabels: {app: ds}}
  template:
    metadata: {labels: {app: ds}}
    spec:
      containers: [{name: c, image: i}]
      nodeSelector: {gpu: a}
"""
    (w,) = workloads_from_bytes(text, "f.yaml")
    assert (w.kind, w.ref, w.where) == ("DaemonSet", "gpu-operator/ds", "f.yaml: document 2")
    assert w.requirements.match(node_from_json(node("n", GPU_A, unschedulable=True))).fits


def test_an_unquoted_true_is_refused_as_the_server_refuses_it() -> None:
    with pytest.raises(ManifestError) as err:
        workloads_from_bytes(
            b"kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec: {nodeSelector: {a: true}}\n", "p.yaml"
        )
    assert str(err.value) == (
        'p.yaml: Pod in version "v1" cannot be handled as a Pod: '
        "json: cannot unmarshal bool into Go struct field PodSpec.spec.nodeSelector of type string"
    )
