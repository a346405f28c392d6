"""hazards compiles each distinct node selection once (a DaemonSet's pods share one) and gives, pod by pod,
what compiling every pod's own spec gives: the same verdict, reason and explanation."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gpulabel.checks.pending.rules import hazards
from gpulabel.k8s.nodeaffinity import compile_pod_spec
from gpulabel.model.cluster import ClusterState
from tests.objects import expr, node, pod, required, taint, term

N = int(os.environ.get("GPULABEL_FUZZ_EXAMPLES", "300"))  # as in test_fuzz.py
NODES = ("n1", "n2", "n3")
KEYS = ("gpu", "zone", "bad key!")
VALUES = ("a", "b", "")


def reference(state: ClusterState, raw: dict[str, dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Each hazard as compiling the pod's own spec (``raw``, by pod ref: the JSON it was read from) finds it:
    (pod, reason, why)."""
    by_name = {n.name: n for n in state.nodes}
    out = []
    for p in state.pods:
        n = by_name.get(p.node_name)
        if n is None or p.phase in ("Succeeded", "Failed"):
            continue
        spec = raw[p.ref]
        affinity = spec.get("affinity") if isinstance(spec.get("affinity"), dict) else {}
        if not spec.get("nodeSelector") and not (isinstance(affinity, dict) and affinity.get("nodeAffinity")):
            continue
        result = compile_pod_spec(spec).affinity_only().match(n, full=True)
        if not result.fits:
            out.append((p.ref, result.reason, result.failures[0].why))
    return out


expressions = st.builds(
    expr,
    st.sampled_from(KEYS),
    st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt")),
    st.sampled_from(VALUES),
)
fields = st.lists(
    st.builds(
        lambda op, name: expr("metadata.name", op, name), st.sampled_from(("In", "NotIn")), st.sampled_from(NODES)
    ),
    max_size=2,
)


OWN = "<own node>"  # in a drawn spec: the node the pod is bound to (the DaemonSet controller's pin)


@st.composite
def specs(draw: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["nodeSelector"] = draw(st.dictionaries(st.sampled_from(KEYS[:2]), st.sampled_from(VALUES), max_size=2))
    terms = []
    for _ in range(draw(st.integers(0, 2))):
        exprs = draw(st.lists(expressions, max_size=2))
        pin = draw(st.sampled_from(("own", "none", "drawn")))
        f = [expr("metadata.name", "In", OWN)] if pin == "own" else draw(fields) if pin == "drawn" else None
        terms.append(term(*exprs, fields=f))
    if terms or draw(st.booleans()):
        spec.update(required(*terms))
    return spec


def bound(spec: Any, node_name: str) -> Any:
    if isinstance(spec, dict):
        return {k: bound(v, node_name) for k, v in spec.items()}
    if isinstance(spec, list):
        return [bound(v, node_name) for v in spec]
    return node_name if spec == OWN else spec


@st.composite
def states(draw: Any) -> tuple[ClusterState, dict[str, dict[str, Any]]]:
    labels = draw(st.lists(st.dictionaries(st.sampled_from(KEYS[:2]), st.sampled_from(VALUES), max_size=2), min_size=1))
    objects: list[dict[str, Any]] = [node(name, draw(st.sampled_from(labels))) for name in NODES]
    templates = draw(st.lists(specs(), min_size=1, max_size=3))  # pods share specs, as replicas and daemons do
    for i in range(draw(st.integers(1, 10))):
        where = draw(st.sampled_from(NODES))
        owner = draw(st.sampled_from(("", "ds-1", "ds-2")))
        spec = bound(draw(st.sampled_from(templates)), where)
        objects.append(pod("ns", f"p{i}", where, spec=spec, owner_uid=owner))
    raw = {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o["spec"] for o in objects if o["kind"] == "Pod"}
    return ClusterState.from_objects([("test", o) for o in objects]), raw


@settings(max_examples=N, deadline=None)
@given(states())
def test_hazards_equal_compiling_each_pod_on_its_own(drawn: tuple[ClusterState, dict[str, dict[str, Any]]]) -> None:
    state, raw = drawn
    found = hazards(state)
    expected = reference(state, raw)
    assert [(f.pod, " ".join((f.reason, *f.args))) for f in found] == [(p, reason) for p, reason, _ in expected]
    for f, (_, _, why) in zip(found, expected, strict=True):
        assert f.detail.startswith(why + "; ")


def test_the_pods_of_a_daemonset_pinned_to_their_nodes_share_one_verdict() -> None:
    spec = lambda n: {
        "nodeSelector": {"gpu": "a"},
        **required(term(fields=[expr("metadata.name", "In", n)])),
    }
    state = ClusterState.from_objects(
        [("test", o) for o in (node("n1", {}), node("n2", {}), node("n3", {"gpu": "a"}))]
        + [("test", pod("ns", f"ds-{n}", n, spec=spec(n), owner_uid="u")) for n in NODES]
    )
    assert [(f.pod, f.line()) for f in hazards(state)] == [
        ("ns/ds-n1", "ns/ds-n1 n1 node-selector gpu=a"),
        ("ns/ds-n2", "ns/ds-n2 n2 node-selector gpu=a"),
    ]


def test_pods_differing_only_in_tolerations_share_a_verdict_and_keep_their_own_way_out() -> None:
    """What holds a running pod is its selection alone (tolerations never do), so the verdict is shared; where
    it would go if rescheduled reads its own tolerations: n3 takes only the pod that tolerates its taint."""
    spec = {"nodeSelector": {"gpu": "a"}}
    tolerant = {**spec, "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]}
    nodes = (node("n1", {}), node("n2", {}), node("n3", {"gpu": "a"}, taints=[taint("dedicated")]))
    state = ClusterState.from_objects(
        [("test", o) for o in nodes]
        + [("test", pod("ns", "plain", "n1", spec=spec)), ("test", pod("ns", "tolerant", "n2", spec=tolerant))]
    )
    found = hazards(state)
    assert [(f.pod, f.line(), f.fits_elsewhere, f.sample) for f in found] == [
        ("ns/plain", "ns/plain n1 node-selector gpu=a", 0, ()),
        ("ns/tolerant", "ns/tolerant n2 node-selector gpu=a", 1, ("n3",)),
    ]
    assert found[0].detail.endswith("it would stay Pending if rescheduled")
    assert found[1].detail.endswith("it would fit 1 other node(s) if rescheduled")
