"""place's advice: a proposed label change makes the pod fit on that node by every filter; typos get a hint.

The property test draws random pods over ``examples/mixed-fleet.yaml`` (node
selectors, affinity terms of every operator over the fleet's own label keys
and values and some near misses of them, GPU requests, a toleration for the
cordon): whenever place proposes a change, applying it to a copy of the
snapshot must make place answer yes on that node, resources included.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulabel.checks.placement.advice import advise
from gpulabel.checks.placement.fit import NodeIndex, place
from gpulabel.cluster.manifests import workload_from_object
from gpulabel.errors import ManifestError
from gpulabel.model.cluster import ClusterState
from tests.unit.test_placecmds import run

ROOT = Path(__file__).parents[2]
FLEET = ROOT / "examples" / "mixed-fleet.yaml"
OBJECTS: list[dict[str, Any]] = yaml.safe_load(FLEET.read_text())["items"]
PRODUCT = "nvidia.com/gpu.product"
TRAINING = "feature.node.kubernetes.io/custom-gpu-training"
KEYS = [PRODUCT, "nvidia.com/gpu.count", "nvidia.com/mig.capable", "nvidia.com/gpu.present", TRAINING]
FLEET_VALUES = sorted(
    {str(v) for o in OBJECTS if o["kind"] == "Node" for k, v in o["metadata"]["labels"].items() if k in KEYS}
)
VALUES = [*FLEET_VALUES, "NVIDIA-L4", "NVIDIA-A100-SXM4-80G", "nvidia-a10", "true", "3", "9"]
TOLERATE_CORDON = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


def state_of(objects: list[dict[str, Any]]) -> ClusterState:
    return ClusterState.from_objects(("fleet.yaml", o) for o in objects)


STATE = state_of(OBJECTS)
INDEX = NodeIndex(STATE.nodes, STATE.capacities())


@st.composite
def requirement(draw: st.DrawFn) -> dict[str, Any]:
    key = draw(st.sampled_from(KEYS))
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
    if op in ("Exists", "DoesNotExist"):
        return {"key": key, "operator": op}
    if op in ("Gt", "Lt"):
        return {"key": key, "operator": op, "values": [draw(st.sampled_from(["0", "1", "2", "4", "8"]))]}
    return {"key": key, "operator": op, "values": draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=2))}


@st.composite
def pod(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    gpus = draw(st.sampled_from([0, 0, 1, 2, 4, 5, 8, 64]))
    if gpus:
        spec["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    if draw(st.booleans()):
        spec["nodeSelector"] = dict(
            draw(st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(VALUES)), min_size=1, max_size=2))
        )
    terms = draw(st.lists(st.lists(requirement(), min_size=1, max_size=3), min_size=0, max_size=2))
    if terms:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]
                }
            }
        }
    if draw(st.booleans()):
        spec["tolerations"] = [TOLERATE_CORDON]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def relabelled(objects: list[dict[str, Any]], node: str, changes: list[tuple[str, str | None]]) -> list[dict[str, Any]]:
    out = copy.deepcopy(objects)
    for o in out:
        if o["kind"] == "Node" and o["metadata"]["name"] == node:
            labels = o["metadata"].setdefault("labels", {})
            for key, value in changes:
                if value is None:
                    labels.pop(key, None)
                else:
                    labels[key] = value
    return out


seen = {"fixes": 0, "none": 0, "blocked": 0}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pod())
def test_every_proposed_change_makes_place_answer_yes_on_that_node(obj: dict[str, Any]) -> None:
    try:
        w = workload_from_object(obj, "p.yaml")
    except ManifestError:
        return
    results = place(w.requirements, INDEX, full=True, request=w.requests)
    if any(r.fits for r in results):
        return
    advice = advise(w.requirements, STATE.nodes, results, capacities=STATE.capacities(), request=w.requests)
    if advice.fix is None:
        seen["none"] += 1
        seen["blocked"] += bool(advice.blocked)
        return
    seen["fixes"] += 1
    changed = relabelled(OBJECTS, advice.fix.node, [(c.key, c.value) for c in advice.fix.changes])
    after = state_of(changed)
    verdicts = place(w.requirements, NodeIndex(after.nodes, after.capacities()), full=True, request=w.requests)
    by_name = {n.name: r for n, r in zip(after.nodes, verdicts, strict=True)}
    assert by_name[advice.fix.node].fits, (advice.fix.command(), by_name[advice.fix.node].failures)
    # a value no node has, that looks like one the fleet has, is a typo in the manifest: never written
    for c in advice.fix.changes:
        assert not (c.key == PRODUCT and c.value in ("NVIDIA-A100-SXM4-80G", "nvidia-a10")), c


def test_the_property_test_saw_fixes_and_refusals() -> None:
    assert seen["fixes"] >= 10 and seen["none"] >= 10 and seen["blocked"] >= 3, seen


def _pod(spec_extra: dict[str, Any], gpus: int = 0, product: str | None = None) -> dict[str, Any]:
    ctr: dict[str, Any] = {"name": "c", "image": "i"}
    if gpus:
        ctr["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    spec: dict[str, Any] = {"containers": [ctr], **spec_extra}
    if product is not None:
        term = {"matchExpressions": [{"key": PRODUCT, "operator": "In", "values": [product]}]}
        spec["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def _advice(obj: dict[str, Any]) -> Any:
    w = workload_from_object(obj, "p.yaml")
    results = place(w.requirements, INDEX, full=True, request=w.requests)
    return advise(w.requirements, STATE.nodes, results, capacities=STATE.capacities(), request=w.requests)


def test_a_node_without_the_gpus_is_not_proposed() -> None:
    # gpu-new-0 has no labels and no GPUs: labelling it NVIDIA-A10 (one added label, the cheapest
    # change) would not give it 5 GPUs; the only node with 5 free is the H100 (56 MIG devices)
    advice = _advice(_pod({}, gpus=5, product="NVIDIA-A10"))
    assert advice.fix is not None and advice.fix.node == "dgx-h100-0"
    advice = _advice(_pod({}, gpus=64, product="NVIDIA-A10"))
    assert advice.fix is None
    assert advice.blocked == (("insufficient nvidia.com/gpu", 9),)
    assert advice.none_line() == (
        "none (no single label change makes a node fit: the nodes whose labels could match fail "
        "insufficient nvidia.com/gpu on 9 node(s))"
    )


def test_a_typo_gets_did_you_mean_and_is_never_written_to_a_node() -> None:
    advice = _advice(_pod({}, gpus=1, product="NVIDIA-A100-SXM4-80G"))
    assert f"{PRODUCT}=NVIDIA-A100-SXM4-80G is on no node: did you mean NVIDIA-A100-SXM4-80GB, on 2 node(s)" in (
        advice.hints
    )
    assert advice.fix is None or all(c.value != "NVIDIA-A100-SXM4-80G" for c in advice.fix.changes)


def test_a_near_miss_is_noted() -> None:
    advice = _advice(_pod({}, gpus=1, product="NVIDIA-L4"))
    assert advice.hints == (
        f"{PRODUCT}=NVIDIA-L4 (on no node) is not NVIDIA-L4-SHARED, on 3 node(s): a near miss, not a match",
    )


def test_place_wide_prints_the_hints_and_why_no_change_helps(tmp_path: Path) -> None:
    manifest = tmp_path / "p.yaml"
    manifest.write_text(yaml.safe_dump(_pod({}, gpus=5, product="NVIDIA-A100-SXM4-80G")))
    code, out, _ = run("place", str(manifest), "--snapshot", str(FLEET), "-o", "wide")
    assert code == 1
    assert out.splitlines()[-2:] == [
        "closest: none (no node can be made to fit by changing labels alone)",
        f"    hint: {PRODUCT}=NVIDIA-A100-SXM4-80G is on no node: did you mean NVIDIA-A100-SXM4-80GB, on 2 node(s)",
    ]


def test_pending_wide_explains_a_group_by_its_best_node() -> None:
    from gpulabel.checks.pending.rules import pending

    def gpu_node(name: str, gpus: str) -> dict[str, Any]:
        alloc = {"cpu": "8", "memory": "8Gi", "pods": "110", "nvidia.com/gpu": gpus}
        meta = {"name": name, "labels": {"pool": "a"}}
        return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": {"allocatable": alloc}}

    waiting = _pod({}, gpus=5)
    resources = waiting["spec"]["containers"][0]["resources"]
    resources["requests"] = resources["limits"]  # as the API server defaults it
    waiting["metadata"]["namespace"] = "ml"
    waiting["status"] = {"phase": "Pending"}
    state = state_of([gpu_node("n-0", "0"), gpu_node("n-1", "4"), gpu_node("n-2", "1"), waiting])
    (finding,) = pending(state)
    assert (finding.count, finding.sample) == (3, ("n-1", "n-0", "n-2"))
    assert "requested 5, free 4" in (finding.detail or "")


def test_a_typo_is_a_near_spelling_with_the_same_numbers() -> None:
    from gpulabel.checks.placement.advice import _similar

    assert _similar("NVIDIA-A100-SXM4-80G", "NVIDIA-A100-SXM4-80GB")
    assert _similar("nvidia-a10", "NVIDIA-A10")
    assert _similar("NVIDIA-H100-80GB-HMB3", "NVIDIA-H100-80GB-HBM3")
    assert not _similar("NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-SXM4-40GB")  # another GPU, not a typo
    assert not _similar("NVIDIA-A10", "NVIDIA-A100")
    assert not _similar("NVIDIA-L4", "NVIDIA-L4-SHARED")  # a near miss, noted as such
    assert not _similar("a", "b") and not _similar("true", "tru")  # too short to call a typo


def test_asking_for_a_gpu_the_fleet_lacks_gets_no_did_you_mean() -> None:
    # dgx-a100-0/1 are 80GB: a 40GB request is not a typo of theirs
    advice = _advice(_pod({}, gpus=1, product="NVIDIA-A100-SXM4-40GB"))
    assert not any("did you mean" in h for h in advice.hints)
