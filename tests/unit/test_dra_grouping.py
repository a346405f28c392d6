"""Grouping nodes by what a pod's selectors can read never changes a verdict.

Random fleets (GPU models, MIG devices, taints, devices held by other claims)
and random claims: for every node, the group's verdict from explain_pod equals
allocating and explaining that node alone.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from bench import draobjects as dra

from gpulabel.checks.dra.rules import explain_node, explain_pod
from gpulabel.k8s.dra.evaluator import DraEvaluator
from gpulabel.k8s.dra.plugin import DraState, pod_claims
from gpulabel.model.cluster import node_from_json
from tests.objects import node

A = f'device.attributes["{dra.DRIVER}"]'
C = f'device.capacity["{dra.DRIVER}"]'
SELECTORS = [
    f'{A}.architecture == "Ampere"',
    f'{C}.memory.compareTo(quantity("40Gi")) >= 0',
    f'{A}.profile == "1g.10gb"',
    f"{A}.index < 2",
    f'{A}.driverVersion.isGreaterThan(semver("550.0.0"))',
    f"has({A}.profile)",
]


def fleet(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    objects: list[tuple[str, dict[str, Any]]] = [
        ("c", dra.GPU_CLASS),
        ("m", dra.MIG_CLASS),
        ("a", dra.device_class("any")),
    ]
    for i in range(12):
        name = f"n{i}"
        product = rng.choice(dra.GPUS[:3])
        version = rng.choice(dra.DRIVER_VERSIONS)
        taint = [{"key": "xid", "value": "1", "effect": "NoSchedule"}]
        devices = [
            dra.gpu_device(f"gpu-{j}", j, product, version, node=name, taints=taint if rng.random() < 0.1 else None)
            for j in range(rng.randint(1, 4))
        ]
        if rng.random() < 0.3:
            devices.append(dra.mig_device("mig-0", 9, 0, product, version, dra.MIG_PROFILES[0]))
        objects.append((name, dra.resource_slice(name, devices, node=name)))
        held = [d["name"] for d in devices if rng.random() < 0.3]
        if held:
            spec = dra.claim_spec([dra.request("r", dra.exactly("any"))])
            allocation = [("r", dra.DRIVER, name, d) for d in held]
            objects.append((f"h{i}", dra.claim(f"held-{i}", spec, "other", allocation)))
    return objects


@pytest.mark.parametrize("seed", range(60))
def test_grouped_verdicts_equal_node_by_node_verdicts(seed: int) -> None:
    rng = random.Random(seed)
    objects = fleet(rng)
    for k in range(5):
        cls = rng.choice(["gpu.nvidia.com", "mig.nvidia.com", "any"])
        selectors = rng.sample(SELECTORS, rng.randint(0, 2))
        mode = {"mode": "All"} if rng.random() < 0.15 else {"count": rng.randint(1, 3)}
        match = f"{dra.DRIVER}/productName" if rng.random() < 0.3 else None
        spec = dra.claim_spec([dra.request("r", dra.exactly(cls, *selectors, **mode))], match_attribute=match)
        state = DraState.from_objects([*objects, ("p", dra.claim(f"c{k}", spec))])
        nodes = [node_from_json(node(f"n{i}")) for i in range(12)]
        pod = dra.dra_pod("p", [("gpu", "claim", f"c{k}")])
        claims = pod_claims("default", "p", pod["spec"], {}, state).to_allocate
        by_node = {name: g for g in explain_pod(DraEvaluator(state), nodes, claims) for name in g.nodes}
        alone = DraState.from_objects([*objects, ("p", dra.claim(f"c{k}", spec))])
        for n in nodes:
            fits = DraEvaluator(alone).allocate(n, claims).ok
            assert by_node[n.name].fits == fits, (seed, k, n.name, selectors)
            mine = [v.reason for v in explain_node(DraEvaluator(alone), n, claims)]
            assert [v.reason for v in by_node[n.name].verdicts] == mine, (seed, k, n.name, selectors)


PROFILES = [("1g", "10Gi", "1"), ("3g", "40Gi", "3"), ("7g", "80Gi", "7")]


def partitioned_fleet(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """Partitionable GPUs (counters), a per-device pool over the nodes, shared devices with a policy,
    taint rules, and allocations by other claims (held partitions consume their counters)."""
    objects: list[tuple[str, dict[str, Any]]] = [("a", dra.device_class("any"))]
    held: list[tuple[str, str]] = []
    for i in range(10):
        name = f"n{i}"
        devices = [
            dra.partition(f"g-{p}-{k}", "g", {"memory": m, "slices": s}, profile=p)
            for p, m, s in PROFILES
            for k in range(rng.randint(0, 2))
        ]
        if rng.random() < 0.3:
            devices.append(
                {
                    "name": "shared",
                    "allowMultipleAllocations": True,
                    "attributes": {"profile": {"string": "shared"}},
                    "capacity": {
                        "memory": {
                            "value": "40Gi",
                            "requestPolicy": {"default": "4Gi", "validRange": {"min": "4Gi", "step": "4Gi"}},
                        }
                    },
                }
            )
        objects.append(
            (f"{name}c", dra.counter_slice(f"{name}-c", {"g": {"memory": "80Gi", "slices": "7"}}, node=name, pool=name))
        )
        objects.append((f"{name}d", dra.resource_slice(f"{name}-d", devices, node=name, pool=name, count=2)))
        held += [(name, d["name"]) for d in devices if d["name"] != "shared" and rng.random() < 0.2]
        if rng.random() < 0.2 and devices:
            rule = dra.taint_rule(f"rule-{i}", {"key": "x", "effect": rng.choice(["NoSchedule", "None"])}, pool=name)
            objects.append((f"r{i}", rule))
    pd = [
        dra.partition(
            f"pd-{i}", f"s{i}", {"memory": "80Gi", "slices": "7"}, profile="7g", node_name=f"n{rng.randint(0, 9)}"
        )
        for i in range(4)
    ]
    objects.append(
        ("pdc", dra.counter_slice("pd-c", {f"s{i}": {"memory": "80Gi", "slices": "7"} for i in range(4)}, pool="pd"))
    )
    objects.append(("pdd", dra.per_device_slice("pd-d", pd, pool="pd")))
    for j, (pool, device) in enumerate(held):
        spec = dra.claim_spec([dra.request("r", dra.exactly("any"))])
        objects.append((f"h{j}", dra.claim(f"held-{j}", spec, "other", [("r", dra.DRIVER, pool, device)])))
    return objects


@pytest.mark.parametrize("seed", range(30))
def test_grouping_holds_with_counters_per_device_nodes_rules_and_capacity(seed: int) -> None:
    rng = random.Random(seed)
    objects = partitioned_fleet(rng)
    nodes = [node_from_json(node(f"n{i}")) for i in range(10)]
    for k in range(4):
        selectors = [f'{A}.profile == "{rng.choice(["1g", "3g", "7g", "shared"])}"'] if rng.random() < 0.7 else []
        exactly = dra.exactly("any", *selectors, count=rng.randint(1, 3))
        if rng.random() < 0.3:
            exactly["capacity"] = {"requests": {"memory": rng.choice(["3Gi", "10Gi", "30Gi"])}}
        if rng.random() < 0.2:
            exactly["tolerations"] = [{"key": "x", "operator": "Exists"}]
        spec = dra.claim_spec([dra.request("r", exactly)])
        state = DraState.from_objects([*objects, ("p", dra.claim(f"c{k}", spec))])
        pod = dra.dra_pod("p", [("gpu", "claim", f"c{k}")])
        claims = pod_claims("default", "p", pod["spec"], {}, state).to_allocate
        by_node = {name: g for g in explain_pod(DraEvaluator(state), nodes, claims) for name in g.nodes}
        for n in nodes:
            alone = DraEvaluator(DraState.from_objects([*objects, ("p", dra.claim(f"c{k}", spec))]))
            assert by_node[n.name].fits == alone.allocate(n, claims).ok, (seed, k, n.name, spec)
            mine = [v.reason for v in explain_node(alone, n, claims)]
            assert [v.reason for v in by_node[n.name].verdicts] == mine, (seed, k, n.name, spec)
