"""bench.synth's 130,000-node cluster has the shape per node of its 20,000-node one (issue 50, Must show 3).

The scale benches divide a large cluster's cost by a small one's: that compares like with like only if
the generator's nodes are alike at both sizes. Building 130,000 nodes' objects takes ~20 s and ~2 GB, so
the test works in two steps: at 2,000 nodes every node's objects are what its entry of ``synth.plan``
says (its pool, GPUs, labels, taints, operand and training pods), read from the objects ``generate``
built; then the plans of 20,000 and 130,000 nodes are compared, share of nodes and means per node.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import pytest
from bench.synth import DEFAULT_OPERANDS, MACHINES, TRAINING, Plan, generate, plan

# what a node's objects give it: pool, GPUs, labels, taints, operand pods and training pods bound to it
Shape = tuple[str, int, int, int, int, int]

_BASE_LABELS = 6  # hostname, os, arch, zone, kernel major and minor (synth._node)
_GPU_LABELS = 19  # synth._gpu_labels, before the operands' deploy labels


def shape_of_objects(objects: Iterable[dict[str, Any]]) -> dict[str, Shape]:
    """Each node's shape, counted from the objects as a snapshot holds them."""
    nodes: dict[str, list[Any]] = {}
    for o in objects:
        if o["kind"] == "Node":
            meta, status = o["metadata"], o["status"]
            gpus = int(status["allocatable"].get("nvidia.com/gpu", 0))
            nodes[meta["name"]] = [meta["labels"]["pool"], gpus, len(meta["labels"]), len(o["spec"].get("taints", []))]
            nodes[meta["name"]] += [0, 0]
    for o in objects:
        if o["kind"] == "Pod" and (node := o["spec"].get("nodeName")):
            nodes[node][4 if o["metadata"]["namespace"] == "gpu-operator" else 5] += 1
    return {name: (s[0], s[1], s[2], s[3], s[4], s[5]) for name, s in nodes.items()}


def shape_of_plan(planned: Plan, operands: Sequence[str] = DEFAULT_OPERANDS) -> dict[str, Shape]:
    """Each node's shape as its entry of the plan says it is built."""
    problem = {n: kind for kind, names in planned.problems.items() for n in names}
    training = Counter(planned.workloads)
    out: dict[str, Shape] = {}
    for name in planned.names:
        machine = planned.machines.get(name)
        if machine is None:
            out[name] = ("cpu", 0, _BASE_LABELS + 1, 0, 0, 0)
            continue
        kind = problem.get(name)
        labels = _BASE_LABELS + _GPU_LABELS + len(operands) - {"missing-labels": 2, "hazard": 1}.get(kind or "", 0)
        tainted = kind == "tainted"
        operand_pods = 0 if tainted else len(operands)
        bound = training[name] + (kind == "hazard")  # a hazard node keeps its running pod
        out[name] = (machine.prefix, planned.counts[name], labels, 1 + tainted, operand_pods, bound)
    return out


def summary(shapes: dict[str, Shape], planned: Plan) -> dict[str, float]:
    """The cluster's shape per node: shares of nodes, means per node and per GPU node, shares of problems."""
    n = len(shapes)
    gpu = [s for s in shapes.values() if s[1]]
    out = {f"share {pool}": c / n for pool, c in Counter(s[0] for s in shapes.values()).items()}
    out |= {f"share {c} GPUs": k / len(gpu) for c, k in Counter(s[1] for s in gpu).items()}
    out["GPUs per GPU node"] = sum(s[1] for s in gpu) / len(gpu)
    out["labels per node"] = sum(s[2] for s in shapes.values()) / n
    out["labels per GPU node"] = sum(s[2] for s in gpu) / len(gpu)
    out["taints per GPU node"] = sum(s[3] for s in gpu) / len(gpu)
    out["operand pods per GPU node"] = sum(s[4] for s in gpu) / len(gpu)
    out["training pods per GPU node"] = sum(s[5] for s in gpu) / len(gpu)
    out["share of GPU nodes with training pods"] = sum(1 for s in gpu if s[5]) / len(gpu)
    out["bound pods per node"] = sum(s[4] + s[5] for s in shapes.values()) / n
    out |= {f"problem {k}": len(v) / len(gpu) for k, v in planned.problems.items() if k != "pending"}
    out["Pending pods per GPU node"] = planned.pending / len(gpu)
    return out


def test_every_node_is_built_as_its_entry_of_the_plan_says() -> None:
    options: dict[str, Any] = {"seed": 5, "problem_rate": 0.02}
    synth = generate(2000, **options)
    planned = plan(2000, **options)
    assert shape_of_objects(synth.objects) == shape_of_plan(planned)
    pending = [o for o in synth.objects if o["kind"] == "Pod" and not o["spec"].get("nodeName")]
    assert len(pending) == planned.pending == len(synth.problems["pending"]) > 0
    assert {k: v for k, v in synth.problems.items() if k != "pending"} == {
        k: v for k, v in planned.problems.items() if k != "pending"
    }
    hazards = {
        o["metadata"]["name"]
        for o in synth.objects
        if o["kind"] == "Node"
        and o["metadata"]["labels"].get("pool") != "cpu"
        and TRAINING not in o["metadata"]["labels"]
    }
    assert hazards == set(planned.problems["hazard"])


def test_the_plan_is_the_start_of_generate_s_random_stream() -> None:
    """``plan`` alone gives what ``generate`` builds from (the same draws, in the same order)."""
    synth = generate(300, seed=9)
    planned = plan(300, seed=9)
    assert [o["metadata"]["name"] for o in synth.objects if o["kind"] == "Node"] == planned.names


@pytest.mark.parametrize("seed", [0, 1])
def test_130000_nodes_have_the_shape_per_node_of_20000(seed: int) -> None:
    small, large = plan(20000, seed=seed), plan(130000, seed=seed)
    assert len(large.names) == 130000 and len(set(large.names)) == 130000
    a, b = summary(shape_of_plan(small), small), summary(shape_of_plan(large), large)
    assert a.keys() == b.keys()
    assert {f"share {m.prefix}" for m in MACHINES} | {"share cpu"} <= a.keys()
    for key, x in a.items():
        y = b[key]
        if key.startswith(("share", "problem", "Pending")):  # shares: sampling noise at 20,000 nodes < 0.01
            assert abs(x - y) < 0.01, (key, x, y)
        else:  # means per node
            assert abs(x - y) / x < 0.02, (key, x, y)
    # the injected problems and Pending pods grow with the GPU nodes (rounded), not stay fixed
    gpu_small, gpu_large = len(small.machines), len(large.machines)
    for kind in ("missing-labels", "not-a-number", "toolkit-not-ready", "tainted", "hazard"):
        assert len(small.problems[kind]) == round(0.01 * gpu_small)
        assert len(large.problems[kind]) == round(0.01 * gpu_large)
    assert len(large.workloads) == round(0.25 * gpu_large)
