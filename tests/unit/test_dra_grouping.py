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

from gpulabel.checks.dra import explain_node, explain_pod
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
