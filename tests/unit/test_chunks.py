"""model/chunks.py's Chunks reads as the tuple of its parts' items; the incremental evaluator's state lists the
pods in the pod store's order and the nodes by name through it, whatever pods and nodes came, changed and went
(parts of 3 here, so that every event crosses parts); the nodes' parts are cut and joined as nodes come and go."""

from __future__ import annotations

import random

import pytest

from gpulabel.app.checks import check_options
from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.checks.engine.incremental import IncrementalEvaluator
from gpulabel.checks.engine.incremental import evaluator as incremental_evaluator
from gpulabel.checks.engine.incremental.nodeparts import NodeParts
from gpulabel.model.chunks import Chunks
from gpulabel.model.cluster import Node
from gpulabel.model.readers import node_from_json
from tests.unit.pending_objects import node, pod
from tests.unit.test_incremental import START, Pair


def test_chunks_read_as_the_tuple_of_their_parts() -> None:
    parts = [(1, 2), (), (3,), (4, 5, 6)]
    flat = (1, 2, 3, 4, 5, 6)
    chunks = Chunks(parts)
    assert len(chunks) == 6 and tuple(chunks) == flat and list(chunks) == list(flat)
    assert chunks == flat and flat == chunks and chunks == Chunks([flat]) and chunks != (1, 2, 3)
    assert chunks != [1, 2, 3, 4, 5, 6]  # a tuple's equality: not a list's
    assert chunks[0] == 1 and chunks[-1] == 6 and chunks[1:3] == (2, 3)
    assert hash(chunks) == hash(flat) and repr(chunks) == repr(flat)
    assert 4 in chunks and chunks.index(5) == 4 and chunks.count(2) == 1
    with pytest.raises(IndexError):
        chunks[6]
    assert Chunks([]) == () and not Chunks([(), ()])


def test_the_states_pods_are_the_stores_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(incremental_evaluator, "SIZE", 3)
    rng = random.Random(3)
    names = [f"p{i}" for i in range(12)]
    listed = [node("gpu-a", "8", {"nvidia.com/gpu.present": "true"}), *(pod(n, 1, "gpu-a") for n in names[:7])]
    ev = IncrementalEvaluator(check_options())
    pair = Pair(ev, FullEvaluator(check_options()))
    pair.reset(listed)
    for step in range(200):
        name = rng.choice(names)
        pair.apply(pod(name, rng.randint(0, 2), rng.choice(["gpu-a", ""])), rng.random() < 0.3)
        got, want = pair.assess(START + step)
        assert got.state.pods == want.state.pods, step
        assert tuple(got.state.pods) == tuple(ev.records.get("Pod", {}).values())


def test_the_states_nodes_are_the_nodes_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(incremental_evaluator, "SIZE", 3)
    rng = random.Random(5)
    names = [f"gpu-{i:02}" for i in range(14)]
    ev = IncrementalEvaluator(check_options())
    pair = Pair(ev, FullEvaluator(check_options()))
    pair.reset([node(n, "8", {"nvidia.com/gpu.present": "true"}) for n in names[:6]])
    for step in range(300):
        name = rng.choice(names)
        labels = {"nvidia.com/gpu.present": "true", "step": str(step % 3)}
        pair.apply(node(name, str(rng.choice([4, 8])), labels), rng.random() < 0.3)
        got, want = pair.assess(START + step)
        assert got.state.nodes == want.state.nodes, step
        assert [n.name for n in got.state.nodes] == sorted(ev._nodes), step


def test_node_parts_keep_the_nodes_by_name_and_remake_only_the_part_touched() -> None:
    rng = random.Random(11)
    parts = NodeParts(4)
    want: dict[str, Node] = {}
    names = [f"n{i:03}" for i in range(60)]
    for step in range(2000):
        name = rng.choice(names)
        if rng.random() < 0.4:
            parts.drop(name)
            want.pop(name, None)
        else:
            made = node_from_json(node(name, str(rng.choice([4, 8])), {"step": str(step)}))
            parts.put(made)
            want[name] = made
        before = parts.chunks()
        assert list(before) == [want[n] for n in sorted(want)], step
        sizes = [len(p) for p in before._parts]
        assert all(0 < s <= 8 for s in sizes), (step, sizes)  # never empty, never over twice the size
        assert len(sizes) <= len(want) // 2 + 1, (step, sizes)  # no run of small parts: a small one is joined
        touched = rng.choice(sorted(want))
        parts.put(want[touched])  # the same node again: one part made again, the others the same objects
        after = parts.chunks()
        assert sum(a is not b for a, b in zip(before._parts, after._parts, strict=True)) == 1
    many = [node_from_json(node(f"m{i:04}", "8", {})) for i in range(400)]
    parts.fill(many)
    kept = sorted(rng.sample(range(400), 10))
    for i in sorted(set(range(400)) - set(kept), key=lambda _: rng.random()):  # a pool scaled down
        parts.drop(many[i].name)
    left = parts.chunks()  # the parts left small were joined
    assert list(left) == [many[i] for i in kept]
    assert len(left) == 10 and len(left._parts) <= 6, [len(p) for p in left._parts]
    parts.fill([])
    assert parts.chunks() == ()
