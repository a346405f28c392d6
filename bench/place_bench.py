"""Benchmark: ``place`` for 100 pods on 10,000 nodes, grouped against node by node.

Run: ``.venv/bin/python -m bench.place_bench [--nodes N] [--pods P] [--repeat R]``.

The synthetic cluster looks like a real one: every node has its own
``kubernetes.io/hostname``, GPU nodes carry GFD/NFD labels from a handful of
machine types, some nodes are tainted or cordoned. The pods use In, NotIn,
Exists, DoesNotExist, Gt/Lt, ORed terms, nodeSelector, tolerations, and a few
name-dependent ones (nodeName, matchFields). Both ways are timed in the same
process, best of ``--repeat``; the grouped time includes building the index.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from gpulabel.checks.placement.fit import NodeIndex, place, place_ungrouped
from gpulabel.k8s.nodeaffinity import PodRequirements, Result, compile_pod_spec
from gpulabel.k8s.taints import Taint
from gpulabel.model.cluster import Node

MACHINES = [
    ("NVIDIA-A100-SXM4-40GB", "8", "ampere", "40537"),
    ("NVIDIA-A100-SXM4-80GB", "8", "ampere", "81920"),
    ("NVIDIA-H100-80GB-HBM3", "8", "hopper", "81559"),
    ("NVIDIA-L4", "1", "ada-lovelace", "23034"),
    ("NVIDIA-A10", "2", "ampere", "22731"),
    ("Tesla-T4", "4", "turing", "15360"),
]
PRODUCT = "nvidia.com/gpu.product"
COUNT = "nvidia.com/gpu.count"
GPU_TAINT = Taint("nvidia.com/gpu", "true", "NoSchedule")


def synthetic_nodes(n: int, rng: random.Random) -> list[Node]:
    nodes = []
    for i in range(n):
        name = f"node-{i:05d}"
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": rng.choice(["amd64", "amd64", "arm64"]),
            "topology.kubernetes.io/zone": f"zone-{i % 3}",
            "feature.node.kubernetes.io/kernel-version.major": rng.choice(["5", "6"]),
        }
        taints: tuple[Taint, ...] = ()
        if rng.random() < 0.8:
            product, count, family, memory = rng.choice(MACHINES)
            labels |= {
                "nvidia.com/gpu.present": "true",
                "feature.node.kubernetes.io/pci-10de.present": "true",
                PRODUCT: product,
                COUNT: count,
                "nvidia.com/gpu.family": family,
                "nvidia.com/gpu.memory": memory,
                "nvidia.com/gfd.timestamp": str(1763629200 + i),  # unique per node, like the real label
            }
            if rng.random() < 0.5:
                labels["feature.node.kubernetes.io/custom-gpu-training"] = "true"
            if rng.random() < 0.3:
                taints = (GPU_TAINT,)
        nodes.append(Node(name=name, labels=labels, taints=taints, unschedulable=rng.random() < 0.02))
    return nodes


def _expr(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def _affinity(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]
            }
        }
    }


def synthetic_pods(n: int, nodes: list[Node], rng: random.Random) -> list[PodRequirements]:
    gpu_toleration = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    makers: list[Callable[[], dict[str, Any]]] = [
        lambda: {"affinity": _affinity([_expr(PRODUCT, "In", rng.choice(MACHINES)[0])])},
        lambda: {"affinity": _affinity([_expr(COUNT, "Gt", str(rng.randint(0, 7)))]), "tolerations": gpu_toleration},
        lambda: {"nodeSelector": {"nvidia.com/gpu.present": "true", "kubernetes.io/arch": "amd64"}},
        lambda: {
            "affinity": _affinity(
                [_expr("nvidia.com/gpu.present", "Exists"), _expr(PRODUCT, "NotIn", rng.choice(MACHINES)[0])],
                [_expr("feature.node.kubernetes.io/kernel-version.major", "In", "6"), _expr(COUNT, "DoesNotExist")],
            )
        },
        lambda: {
            "affinity": _affinity(
                [_expr("feature.node.kubernetes.io/custom-gpu-training", "Exists"), _expr(PRODUCT, "In", "NVIDIA-A10")]
            ),
            "tolerations": gpu_toleration,
        },
        lambda: {"nodeSelector": {"topology.kubernetes.io/zone": f"zone-{rng.randint(0, 2)}"}},
        lambda: {"nodeName": rng.choice(nodes).name, "tolerations": [{"operator": "Exists"}]},
        lambda: {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": [rng.choice(nodes).name]}
                                ]
                            }
                        ]
                    }
                }
            }
        },
    ]
    weights = [20, 20, 15, 15, 15, 10, 3, 2]
    return [compile_pod_spec(rng.choices(makers, weights)[0]()) for _ in range(n)]


def best_of(repeat: int, fn: Callable[[], list[list[Result]]]) -> tuple[float, list[list[Result]]]:
    best, out = float("inf"), []
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--pods", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=6)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    nodes = synthetic_nodes(args.nodes, rng)
    pods = synthetic_pods(args.pods, nodes, rng)

    def grouped() -> list[list[Result]]:
        index = NodeIndex(nodes)
        return [place(p, index) for p in pods]

    def ungrouped() -> list[list[Result]]:
        return [place_ungrouped(p, nodes) for p in pods]

    t_grouped, r_grouped = best_of(args.repeat, grouped)
    t_base, r_base = best_of(args.repeat, ungrouped)
    if r_grouped != r_base:
        raise SystemExit("grouped and node-by-node verdicts differ")
    index = NodeIndex(nodes)
    groups = [len(index.groups(p.label_keys)[1]) for p in pods]
    fits = sum(r.fits for rs in r_grouped for r in rs)
    print(f"nodes={len(nodes)} pods={len(pods)} verdicts={len(nodes) * len(pods)} fitting={fits}")
    print(f"node groups per pod: {min(groups)}-{max(groups)} (key sets: {len({p.label_keys for p in pods})})")
    print(f"grouped (index + place, best of {args.repeat}): {t_grouped * 1000:.1f} ms")
    print(f"node by node (baseline):          {t_base * 1000:.1f} ms")
    print(f"speed-up: {t_base / t_grouped:.1f}x")


if __name__ == "__main__":
    main()
