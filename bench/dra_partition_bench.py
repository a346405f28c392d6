"""Partitionable devices at fleet scale: the cost of shared counters in `pending`.

5,000 nodes, each with two GPUs published as partitionable devices (8 devices per node: per GPU the
whole GPU and MIG-like 4g, 3g and 1g partitions, each consuming the GPU's shared counters
``memory`` and ``slices``); a fifth of the nodes run a claim holding a 3g partition (which consumes
part of its GPU's counters), a tenth a whole GPU. 200 Pending pods from ten shapes whose claims
mostly cannot be allocated (whole GPUs where a partition is taken, more partitions than fit the
counters, a profile nobody has, ...). The same fleet with the counters left out (the devices
consume nothing) is the baseline: the target is at most 2x its time. Timed in process, best of 3;
each run parses the slices and explains every pod on every node, as ``gpulabel pending`` does.

    python -m bench.dra_partition_bench [--nodes 5000] [--pods 200]
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

import orjson

from gpulabel.checks.dra.rules import explain_pod
from gpulabel.k8s.dra.evaluator import DraEvaluator
from gpulabel.k8s.dra.plugin import DraState, pod_claims
from gpulabel.model.cluster import node_from_json

DRIVER = "gpu.nvidia.com"
RES = "resource.k8s.io/v1"
A = f'device.attributes["{DRIVER}"]'
# profile, memory, slices (a GPU: 80Gi, 7 slices)
LAYOUT = [("7g", "80Gi", "7"), ("4g", "40Gi", "4"), ("3g", "40Gi", "3"), ("1g", "10Gi", "1")]


def device(gpu: str, profile: str, memory: str, slices: str, counters: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": f"{gpu}-{profile}",
        "attributes": {"profile": {"string": profile}, "parent": {"string": gpu}},
        "capacity": {"memory": {"value": memory}},
    }
    if counters:
        out["consumesCounters"] = [
            {"counterSet": gpu, "counters": {"memory": {"value": memory}, "slices": {"value": slices}}}
        ]
    return out


def fleet(
    n: int, counters: bool, rng: random.Random
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    nodes, slices, held = [], [], []
    for i in range(n):
        name = f"gpu-node-{i:05d}"
        nodes.append({"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}})
        gpus = ["gpu-0", "gpu-1"]
        devices = [device(g, *p, counters=counters) for g in gpus for p in LAYOUT]
        pool = {"name": name, "generation": 1, "resourceSliceCount": 2 if counters else 1}
        slices.append(
            {
                "kind": "ResourceSlice",
                "apiVersion": RES,
                "metadata": {"name": f"{name}-devices"},
                "spec": {"driver": DRIVER, "pool": pool, "nodeName": name, "devices": devices},
            }
        )
        if counters:
            sets = [{"name": g, "counters": {"memory": {"value": "80Gi"}, "slices": {"value": "7"}}} for g in gpus]
            slices.append(
                {
                    "kind": "ResourceSlice",
                    "apiVersion": RES,
                    "metadata": {"name": f"{name}-counters"},
                    "spec": {"driver": DRIVER, "pool": pool, "nodeName": name, "sharedCounters": sets},
                }
            )
        roll = rng.random()
        busy = ["gpu-0-3g"] if roll < 0.2 else ["gpu-1-7g"] if roll < 0.3 else []
        if busy:
            results = [{"request": "r", "driver": DRIVER, "pool": name, "device": d} for d in busy]
            held.append(
                {
                    "kind": "ResourceClaim",
                    "apiVersion": RES,
                    "metadata": {"name": f"running-{i}", "namespace": "ml"},
                    "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
                    "status": {"allocation": {"devices": {"results": results}}},
                }
            )
    return nodes, slices, held


def request(name: str, count: int = 1, *selectors: str) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"name": name, "exactly": exactly}


SHAPES = [
    [request("r", 2, f'{A}.profile == "7g"')],  # both whole GPUs: not where one is partly taken
    [request("r", 3, f'{A}.profile == "3g"')],  # only two 3g per node
    [request("r", 1, f'{A}.profile == "2g"')],  # nobody has 2g
    [request("a", 2, f'{A}.profile == "4g"'), request("b", 2, f'{A}.profile == "3g"')],  # 4g + 3g per GPU: fits
    [request("a", 2, f'{A}.profile == "7g"'), request("b", 1, f'{A}.profile == "1g"')],  # counters exhausted
    [request("r", 9)],
    [request("r", 1, f'{A}.profile == "1g"'), request("s", 2, f'{A}.profile == "7g"')],
    [request("r", 4, f'{A}.profile == "1g" || {A}.profile == "3g"')],
    [request("r", 1, f'device.capacity["{DRIVER}"].memory.compareTo(quantity("100Gi")) >= 0')],
    [request("r", 5, f'{A}.parent == "gpu-0"')],
]


def run(n_nodes: int, n_pods: int, counters: bool) -> tuple[float, int, int]:
    rng = random.Random(7)
    nodes_json, slices, held = fleet(n_nodes, counters, rng)
    raw = orjson.dumps({"kind": "ResourceSliceList", "items": slices})
    cls = {
        "kind": "DeviceClass",
        "apiVersion": RES,
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }
    pods = []
    for i in range(n_pods):
        claim = {
            "kind": "ResourceClaim",
            "apiVersion": RES,
            "metadata": {"name": f"pending-{i}", "namespace": "ml"},
            "spec": {"devices": {"requests": SHAPES[i % len(SHAPES)]}},
        }
        pods.append((claim, {"resourceClaims": [{"name": "gpu", "resourceClaimName": f"pending-{i}"}]}))
    nodes = [node_from_json(n) for n in nodes_json]
    others = [cls, *held, *(c for c, _ in pods)]

    def once() -> tuple[int, int]:
        items = orjson.loads(raw)["items"]
        state = DraState.from_objects([*(("s", s) for s in items), *(("x", o) for o in others)])
        ev = DraEvaluator(state)
        groups = fitting = 0
        for i, (_, spec) in enumerate(pods):
            claims = pod_claims("ml", f"job-{i}", spec, {}, state)
            found = explain_pod(ev, nodes, claims.to_allocate)
            groups += len(found)
            fitting += sum(len(g.nodes) for g in found if g.fits)
        return groups, fitting

    times = []
    for _ in range(3):
        t = time.perf_counter()
        groups, fitting = once()
        times.append(time.perf_counter() - t)
    return min(times), groups, fitting


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=200)
    args = ap.parse_args()
    plain, g0, f0 = run(args.nodes, args.pods, counters=False)
    parts, g1, f1 = run(args.nodes, args.pods, counters=True)
    print(f"{args.nodes} nodes x 8 devices, {args.pods} pending pods")
    print(f"without counters: {plain:.2f} s ({g0} node groups explained, {f0} pod-node fits)")
    print(f"with counters:    {parts:.2f} s ({g1} node groups explained, {f1} pod-node fits)")
    print(f"ratio {parts / plain:.2f} (target at most 2)")
    raise SystemExit(0 if parts <= 2 * plain else 1)


if __name__ == "__main__":
    main()
