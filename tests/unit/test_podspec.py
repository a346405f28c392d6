"""Pod specs compiled when read (model/podspec.py), and the parts records of one load share by content.

The reference is the pod read on its own (no table) and its raw spec compiled by ``compile_pod_spec``:
through one long-lived table, as a monitor keeps its LIST's reader for the watch events after it (pods
come, change and go; what they held is freed and its memory reused), every record must equal that,
and pods share a part exactly when its content is equal.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gpulabel.k8s.nodeaffinity import compile_pod_spec
from gpulabel.model.podspec import PINNED, compiled
from gpulabel.model.readers import node_from_json, pod_from_json
from tests.objects import expr, node, pod, required, term

N = int(os.environ.get("GPULABEL_FUZZ_EXAMPLES", "300"))
NODES = ("n1", "n2", "")

TOLERATIONS = st.sampled_from(
    [None, [], [{"operator": "Exists"}], [{"key": "a", "operator": "Exists"}], [{"key": "b", "effect": "NoSchedule"}]]
)
SELECTORS = st.sampled_from([None, {}, {"gpu": "a"}, {"gpu": "b"}, {"zone": ""}])
PINS = st.sampled_from([*NODES, PINNED])


@st.composite
def affinities(draw: Any) -> dict[str, Any] | None:
    """None, an empty one, a selection, a DaemonSet pin (alone or beside a selection), or pins that differ."""
    shape = draw(st.sampled_from(["none", "empty", "select", "pin", "pin+select", "two-pins", "pin+extra", "null"]))
    node_ = draw(PINS)
    pin = {"key": "metadata.name", "operator": "In", "values": [node_]}
    select = expr("gpu", "In", draw(st.sampled_from(["a", "b"])))
    if shape == "none":
        return None
    if shape == "empty":
        return {}
    if shape == "null":
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [None]}}}
    terms = {
        "select": [term(select)],
        "pin": [term(fields=[pin])],
        "pin+select": [term(select, fields=[pin]), term(expr("zone", "Exists"))],
        "two-pins": [term(fields=[pin]), term(fields=[{**pin, "values": [draw(PINS)]}])],
        "pin+extra": [term(fields=[pin, {"key": "metadata.name", "operator": "NotIn", "values": ["x"]}])],
    }[shape]
    return dict(required(*terms)["affinity"])


@st.composite
def specs(draw: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    for key, values in (("tolerations", TOLERATIONS), ("nodeSelector", SELECTORS), ("affinity", affinities())):
        value = draw(values)
        if value is not None:
            spec[key] = value
    if draw(st.booleans()):
        spec["schedulingGates"] = draw(st.sampled_from([[], [{"name": "g"}]]))
    if draw(st.booleans()):
        spec["preemptionPolicy"] = draw(st.sampled_from(["Never", "PreemptLowerPriority"]))
    if draw(st.booleans()):
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": draw(st.sampled_from(["c1", "c2"]))}]
    return spec


def _without_node_name(raw: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in raw.items() if k != "nodeName"}


@settings(max_examples=N, deadline=None)
@given(st.lists(st.tuples(specs(), st.sampled_from(NODES), st.booleans()), min_size=1, max_size=30))
def test_one_long_lived_table_gives_each_pod_what_reading_it_alone_gives(
    drawn: list[tuple[dict[str, Any], str, bool]],
) -> None:
    table: dict[Any, Any] = {}
    kept: list[Any] = []
    by_content: dict[bytes | str, Any] = {}
    for i, (spec, where, keep) in enumerate(drawn):
        obj = pod("ns", f"p{i}", where, spec=copy.deepcopy(spec), labels={"app": "x"} if i % 2 else {})
        raw = copy.deepcopy(obj["spec"])
        record = pod_from_json(obj, "t", table)
        alone = pod_from_json(copy.deepcopy(obj), "t")
        assert record == alone
        assert record.requirements == compile_pod_spec(_without_node_name(raw))
        assert record.spec.named_node(record.pinned) == _loose_pin(raw)
        assert record.spec.resource_claims == tuple(raw.get("resourceClaims") or ())
        assert record.spec.gated == bool(raw.get("schedulingGates"))
        first = by_content.setdefault(record.spec.key, record.spec)
        assert record.spec is first  # one object per content within a load
        if keep:
            kept.append(record)
        del obj, record, alone  # what the pod held is freed (by its count): the next pod's values may reuse it
    specs_seen = list(by_content.values())
    for a in specs_seen:
        for b in specs_seen:
            assert (a == b) == (a is b)  # distinct contents never meet


def _loose_pin(raw: dict[str, Any]) -> str:
    """operands.target_node's rule as it read the raw spec: the first metadata.name In with one value."""
    affinity = ((raw.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for t in affinity.get("nodeSelectorTerms") or ():
        for f in (t or {}).get("matchFields") or ():
            if f.get("key") == "metadata.name" and f.get("operator") == "In" and len(f.get("values") or []) == 1:
                return str(f["values"][0])
    return ""


def test_a_daemonsets_pods_share_one_compiled_spec_and_name_their_own_node() -> None:
    table: dict[Any, Any] = {}
    spec = lambda n: {
        "tolerations": [{"operator": "Exists"}],
        **required(term(fields=[expr("metadata.name", "In", n)])),
    }
    records = [pod_from_json(pod("ns", f"ds-{n}", spec=spec(n), owner_uid="u"), "t", table) for n in ("n1", "n2")]
    assert records[0].spec is records[1].spec and records[0].spec.pinned
    assert [r.pinned for r in records] == ["n1", "n2"]
    assert [r.requirements.named_nodes() for r in records] == [frozenset({"n1"}), frozenset({"n2"})]
    assert records[0].requirements == compile_pod_spec(spec("n1"))


def test_a_spec_naming_the_stand_in_itself_compiles_as_written() -> None:
    """A hostile snapshot may name the stand-in: beside another field it is no pin, and as a pin it is put back."""
    table: dict[Any, Any] = {}
    pinned, _ = compiled(required(term(fields=[expr("metadata.name", "In", "n1")])), table)
    beside = required(term(fields=[expr("metadata.name", "In", PINNED), expr("metadata.name", "NotIn", "x")]))
    literal, pin = compiled(beside, table)
    assert literal is not pinned and literal != pinned and not literal.pinned and pin == ""
    assert literal.requirements_for(pin) == compile_pod_spec(beside)
    alone = required(term(fields=[expr("metadata.name", "In", PINNED)]))
    same, pin = compiled(alone, table)
    assert same is pinned and pin == PINNED and same.requirements_for(pin) == compile_pod_spec(alone)


def test_equal_specs_of_two_loads_are_equal_records() -> None:
    """A relist reads with a new table: the records of unchanged pods still compare equal to the old ones."""
    obj = pod("ns", "p", "n1", spec={"nodeSelector": {"gpu": "a"}})
    a, b = pod_from_json(copy.deepcopy(obj), "t", {}), pod_from_json(copy.deepcopy(obj), "t", {})
    assert a.spec is not b.spec and a == b and hash(a.spec) == hash(b.spec)


def test_pod_conditions_are_cut_to_what_the_checks_read_and_shared() -> None:
    table: dict[Any, Any] = {}
    conditions = [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-12-01T00:00:00Z"}]
    a, b = (pod_from_json(pod("ns", n, "n1", conditions=copy.deepcopy(conditions)), "t", table) for n in "ab")
    assert a.conditions == {"Ready": {"type": "Ready", "status": "True"}} and a.conditions is b.conditions
    assert a.ready


def test_nodes_of_one_load_share_their_taints_and_conditions() -> None:
    table: dict[Any, Any] = {}
    taint = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    a, b = (node_from_json(node(n, taints=copy.deepcopy(taint)), "t", table) for n in ("a", "b"))
    assert (
        a.taints is b.taints
        and a.conditions is b.conditions
        and a.taints == node_from_json(node("c", taints=taint)).taints
    )
