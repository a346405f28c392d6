"""``NodeIndex.patch``, ``insert``, ``remove``: a node changed, come or gone regroups that node alone, and ``place``
gives what a new index gives.

The pending keeper keeps one index of every node between events (``checks/pending/check.py``): a node whose
labels, taints, cordon or capacity changed is patched into it instead of the index being made again over every
node (issue 50: a new Pending spec's row walked every node twice more at 65,000 nodes for it). On random
clusters and random changes, every pod's verdicts through the patched index must equal a new index's.
"""

from __future__ import annotations

import bisect
import random
from typing import Any

from gpulabel.checks.placement.fit import NodeIndex, place
from gpulabel.k8s.resources import NodeCapacity
from gpulabel.model.cluster import ClusterState, Node, Pod
from tests.unit.pending_objects import JSON, node, pod

PRODUCTS = ("a100", "h100", "l4")


def _node(rng: random.Random, name: str) -> JSON:
    labels = {"product": rng.choice(PRODUCTS), "zone": rng.choice("ab")}
    if rng.random() < 0.7:
        labels["train"] = "true"
    spec: JSON = {}
    if rng.random() < 0.3:
        spec["taints"] = [{"key": rng.choice(("gpu", "dedicated")), "effect": "NoSchedule"}]
    if rng.random() < 0.1:
        spec["unschedulable"] = True
    return node(name, rng.choice((None, "1", "4", "8")), labels, spec)


def _pod(rng: random.Random, i: int) -> JSON:
    selector = {"product": rng.choice(PRODUCTS)} if rng.random() < 0.6 else None
    obj = pod(f"p{i}", rng.choice((0, 1, 2, 8)), priority=rng.choice((0, 10)), selector=selector)
    spec = obj["spec"]
    if rng.random() < 0.5:
        spec["tolerations"] = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    if rng.random() < 0.4:
        term: JSON = {"matchExpressions": [{"key": "train", "operator": rng.choice(("Exists", "DoesNotExist"))}]}
        if rng.random() < 0.3:
            term["matchFields"] = [{"key": "metadata.name", "operator": "In", "values": [f"n{rng.randrange(30)}"]}]
        spec["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        }
    return obj


def _read(objects: list[JSON]) -> ClusterState:
    return ClusterState.from_objects(("t", o) for o in objects)


def _cap(rng: random.Random, n: Node) -> NodeCapacity | None:
    if n.amounts is None or rng.random() < 0.1:
        return None
    used = [{"nvidia.com/gpu": rng.choice((0, 1, 4))} for _ in range(rng.randrange(3))]
    return NodeCapacity.of(n.amounts, used, [rng.choice((0, 5, 20)) for _ in used])


def _verdicts(pods: list[Pod], index: NodeIndex) -> list[Any]:
    return [place(p.requirements, index, full=True, request=p.requests) for p in pods]


def test_a_patched_index_places_every_pod_as_a_new_one() -> None:
    for seed in range(12):
        rng = random.Random(seed)
        names = [f"n{i:02d}" for i in range(30)]
        state = _read([_node(rng, n) for n in names] + [_pod(rng, i) for i in range(12)])
        nodes, pods = list(state.nodes), list(state.pods)
        caps = {n.name: c for n in nodes if (c := _cap(rng, n)) is not None}
        index = NodeIndex(nodes, caps)
        _verdicts(pods, index)  # the key sets' groups cached, so that patches regroup them
        for step in range(60):
            if rng.random() < 0.25:  # a node joins or leaves, the index in name order as the keeper keeps it
                if rng.random() < 0.5 and len(nodes) > 5:
                    i = rng.randrange(len(nodes))
                    caps.pop(nodes.pop(i).name, None)
                    index.remove(i)
                else:
                    joined = _read([_node(rng, f"n{rng.randrange(30):02d}x{step}")]).nodes[0]
                    i = bisect.bisect_left([n.name for n in nodes], joined.name)
                    nodes.insert(i, joined)
                    cap = _cap(rng, joined)
                    if cap is not None:
                        caps[joined.name] = cap
                    assert index.insert(i, joined, cap)
                assert _verdicts(pods, index) == _verdicts(pods, NodeIndex(nodes, caps)), seed
                continue
            i = rng.randrange(len(nodes))
            changed = _read([_node(rng, nodes[i].name)]).nodes[0] if rng.random() < 0.7 else nodes[i]
            cap = _cap(rng, changed)
            nodes[i] = changed
            if cap is None:
                caps.pop(changed.name, None)
            else:
                caps[changed.name] = cap
            assert index.patch(changed, cap, None if cap is None else cap.key())
            assert _verdicts(pods, index) == _verdicts(pods, NodeIndex(nodes, caps)), seed


def test_a_node_the_index_does_not_hold_is_refused() -> None:
    state = _read([node("a", "1", {"product": "l4"}), node("b", "1", {"product": "l4"})])
    index = NodeIndex(state.nodes[:1])
    assert not index.patch(state.nodes[1], None)
    assert [n.name for n in index.nodes] == ["a"]


def test_past_its_bound_of_empty_groups_the_index_asks_to_be_made_again() -> None:
    rng = random.Random(1)
    state = _read([node("a", "1", {"product": "l4"}), _pod(rng, 0)])
    index = NodeIndex(state.nodes)
    index.groups(("product",))
    patched = 0
    while index.patch(_read([node("a", "1", {"product": f"p{patched}"})]).nodes[0], None):
        patched += 1
    assert 200 < patched < 300  # every patch a new group, the old one empty: 256 + 2 per group made at first
