"""DRA explanation at fleet scale: 10,000 devices, 100 pending pods with claims.

A synthetic fleet of NVIDIA GPU nodes (8 devices each, four node types, some
with MIG devices; a fifth of the nodes busy with every GPU allocated, some
with two held), and 100 pending pods drawn from ten workload shapes (the
usual replicas of a few Deployments/Jobs) whose claims mostly cannot be
allocated (too many GPUs, a product the fleet lacks, an attribute GPUs lack,
a matchAttribute no node satisfies). Timed in process, best of 3:

- baseline: decoding the ResourceSlice LIST (orjson), what any reader pays;
- parse: turning it (and the claims) into gpulabel's objects;
- explain: for every pod and node, the allocation verdict and, per group of
  nodes allocation cannot tell apart, the reason per claim request.

``--scattered`` holds each device at random instead (the worst case for the
grouping: hardly two nodes alike).

    python -m bench.dra_bench [--nodes 1250] [--pods 100]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

import orjson

from bench import draobjects as dra
from gpulabel.checks.dra.rules import explain_pod
from gpulabel.k8s.dra.evaluator import DraEvaluator
from gpulabel.k8s.dra.plugin import DraState, pod_claims
from gpulabel.model.cluster import node_from_json

A = f'device.attributes["{dra.DRIVER}"]'
C = f'device.capacity["{dra.DRIVER}"]'


def fleet(
    n_nodes: int, rng: random.Random, scattered: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    nodes, slices, held = [], [], []
    for i in range(n_nodes):
        name = f"gpu-node-{i:05d}"
        nodes.append({"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}})
        kind = i % 4
        product = dra.GPUS[[0, 2, 3, 4][kind]]
        version = dra.DRIVER_VERSIONS[i % 3]
        if kind == 0 and i % 8 == 0:  # an A100 node partitioned: 4 whole GPUs and 4 x 1g.10gb MIG devices
            devices = [dra.gpu_device(f"gpu-{j}", j, product, version, node=name) for j in range(4)]
            devices += [dra.mig_device(f"gpu-4-mig-{j}", 4, j, product, version, dra.MIG_PROFILES[0]) for j in range(4)]
        else:
            devices = [dra.gpu_device(f"gpu-{j}", j, product, version, node=name) for j in range(8)]
        slices.append(dra.resource_slice(name, devices, node=name))
        roll = rng.random()
        if scattered:  # the worst case for grouping: each device held or not at random, nodes all differ
            busy = [d["name"] for d in devices if rng.random() < 0.3]
        elif roll < 0.2:
            busy = [d["name"] for d in devices]
        else:
            busy = [d["name"] for d in devices[:2]] if roll < 0.3 else []
        if busy:
            held.append(
                dra.claim(
                    f"running-{i}",
                    dra.claim_spec([dra.request("r", dra.exactly("gpu.nvidia.com"))]),
                    "ml",
                    [("r", dra.DRIVER, name, d) for d in busy],
                )
            )
    return nodes, slices, held


SHAPES = [
    [dra.request("r", dra.exactly("gpu.nvidia.com", f'{A}.architecture == "Hopper"', count=8))],
    [dra.request("r", dra.exactly("gpu.nvidia.com", f'{A}.productName == "NVIDIA B200"'))],
    [dra.request("r", dra.exactly("gpu.nvidia.com", f'{C}.memory.compareTo(quantity("100Gi")) >= 0'))],
    [dra.request("r", dra.exactly("gpu.nvidia.com", f'{A}.profile == "1g.10gb"'))],
    [dra.request("r", dra.exactly("mig.nvidia.com", f'{A}.profile == "3g.40gb"'))],
    [dra.request("r", dra.exactly("gpu.nvidia.com", f'{A}.driverVersion.isGreaterThan(semver("600.0.0"))'))],
    [dra.request("r", dra.exactly("gpu.nvidia.com", count=9))],
    [dra.request("r", dra.exactly("gpu.nvidia.com", mode="All")), dra.request("s", dra.exactly("mig.nvidia.com"))],
    [
        dra.request("a", dra.exactly("gpu.nvidia.com", count=4)),
        dra.request("b", dra.exactly("gpu.nvidia.com", count=5)),
    ],
    [dra.request("r", dra.exactly("gpu.nvidia.com", f'{A}.architecture == "Ampere"', count=2))],
]


def best(fn: Callable[[], Any], runs: int = 3) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1250)
    ap.add_argument("--pods", type=int, default=100)
    ap.add_argument("--scattered", action="store_true", help="hold devices at random: no two nodes alike")
    args = ap.parse_args()
    rng = random.Random(7)
    nodes_json, slices, held = fleet(args.nodes, rng, args.scattered)
    pods = []
    for i in range(args.pods):
        spec = dra.claim_spec(
            SHAPES[i % len(SHAPES)], match_attribute=f"{dra.DRIVER}/productName" if i % 10 == 9 else None
        )
        pods.append(
            (dra.claim(f"pending-{i}", spec, "ml"), dra.dra_pod(f"job-{i}", [("gpu", "claim", f"pending-{i}")], "ml"))
        )
    raw = orjson.dumps({"kind": "ResourceSliceList", "items": slices})
    others = [dra.GPU_CLASS, dra.MIG_CLASS, *held, *(c for c, _ in pods)]
    n_devices = sum(len(s["spec"]["devices"]) for s in slices)

    def baseline() -> Any:
        return orjson.loads(raw)

    def parse() -> DraState:
        items = orjson.loads(raw)["items"]
        return DraState.from_objects(
            [*(("ResourceSlice", {**s, "kind": "ResourceSlice"}) for s in items), *(("x", o) for o in others)]
        )

    nodes = [node_from_json(n) for n in nodes_json]

    def explain() -> int:
        state = parse()
        ev = DraEvaluator(state)  # one per run, as the pending check makes it
        groups = 0
        for _, pod in pods:
            claims = pod_claims("ml", pod["metadata"]["name"], pod["spec"], {}, state)
            groups += len(explain_pod(ev, nodes, claims.to_allocate))
        return groups

    t_base, _ = best(baseline)
    t_parse, _ = best(parse)
    t_explain, groups = best(explain)
    print(f"{n_devices} devices on {args.nodes} nodes, {args.pods} pending pods ({groups} node groups explained)")
    print(f"baseline, decode the ResourceSlice LIST: {t_base:.3f} s")
    print(f"parse into DRA objects:                  {t_parse:.3f} s ({t_parse / t_base:.1f}x baseline)")
    print(
        f"parse + explain every pod on every node: {t_explain:.3f} s ({t_explain / t_base:.1f}x baseline; target 2 s)"
    )


if __name__ == "__main__":
    main()
