"""queues matches each flavor once per group of alike nodes (NodeGroups): the same answer as node by node
(the oracle here, ``_node_by_node``, matches every node).

Random clusters (bench/new_kinds_bench.py's, with nodes cordoned, tainted, unlabelled and without allocatable at
random) give every flavor the same nodes in the same order, the same GPUs and the same left-out reasons, dict
order included, both ways.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import pytest
from bench import new_kinds_bench

from gpulabel.checks.queues.rules import (
    _SELECTIONS,
    FlavorNodes,
    NodeGroups,
    flavor_nodes,
    flavor_requirements,
    why_none,
)
from gpulabel.model import gpustack as G
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.kueue import ResourceFlavor


def _node_by_node(flavor: ResourceFlavor, nodes: Sequence[Node]) -> FlavorNodes:
    """What a flavor selects, every node matched on its own."""
    req = flavor_requirements(flavor)
    selected: list[Node] = []
    left_out: Counter[str] = Counter()
    gpus: Counter[str] = Counter()
    unknown = 0
    for node in nodes:
        match = req.match(node)
        if not match.fits:
            left_out[match.reason] += 1
            continue
        selected.append(node)
        if node.amounts is None:
            unknown += 1
        gpus.update(G.gpu_resources(node.amounts))
    return FlavorNodes(flavor, tuple(selected), dict(gpus), unknown, dict(left_out))


def _cluster(seed: int) -> ClusterState:
    rng = random.Random(seed)
    objects = new_kinds_bench.extended(300, nodepools=0, flavors=24, pending=0)
    for o in objects:
        if o["kind"] != "Node":
            continue
        if rng.random() < 0.1:
            o["spec"]["unschedulable"] = True
        if rng.random() < 0.1:
            o["spec"].setdefault("taints", []).append({"key": "x", "value": rng.choice("ab"), "effect": "NoSchedule"})
        if rng.random() < 0.05:
            o["metadata"]["labels"].pop("nvidia.com/gpu.product", None)
        if rng.random() < 0.05:
            o["status"].pop("allocatable", None)
    return ClusterState.from_objects(("t", o) for o in objects)


@pytest.mark.parametrize("seed", range(5))
def test_grouped_flavors_equal_node_by_node(seed: int) -> None:
    state = _cluster(seed)
    flavors = list(state.kueue.flavors.values())
    groups = NodeGroups(state.nodes, {k for f in flavors for k in flavor_requirements(f).label_keys})
    assert len(groups.members) < len(state.nodes)  # alike nodes share a group: the point of it
    for flavor in flavors:
        alone, grouped = _node_by_node(flavor, state.nodes), flavor_nodes(flavor, state.nodes, groups=groups)
        assert grouped == alone, flavor.name
        assert list(grouped.gpus) == list(alone.gpus) and list(grouped.left_out) == list(alone.left_out)
        if not alone.nodes:  # and why none: the label no node carries, the nearest value (counted by groups)
            assert why_none(grouped, state.nodes, groups) == why_none(alone, state.nodes)
        assert flavor_nodes(flavor, state.nodes) == alone  # grouped by the flavor's own keys


def test_groups_made_for_other_keys_are_not_used() -> None:
    state = _cluster(0)
    flavor = next(iter(state.kueue.flavors.values()))
    groups = NodeGroups(state.nodes, ())  # reads no label: the flavor's nodeLabels are not among its keys
    assert not groups.serves(flavor_requirements(flavor))
    assert flavor_nodes(flavor, state.nodes, groups=groups) == _node_by_node(flavor, state.nodes)


def test_selected_markings_are_kept_a_bounded_few_and_equal_a_fresh_walk() -> None:
    state = _cluster(1)
    groups = NodeGroups(state.nodes, {"nvidia.com/gpu.product"})
    rng = random.Random(7)
    markings = [tuple(rng.random() < 0.5 for _ in groups.members) for _ in range(3 * _SELECTIONS)]
    for fits in markings + markings[:5]:  # more distinct markings than are kept, then some again
        want = tuple(n for n, gid in zip(groups.nodes, groups.of, strict=True) if fits[gid])
        assert groups.selected(fits) == want
        assert groups.selected(list(fits)) is groups.selected(fits)  # the second ask walks no node
        assert len(groups._selected) <= _SELECTIONS
