"""One row per reason: why a claim cannot be allocated on a node, named as a sentence."""

from __future__ import annotations

from typing import Any

import pytest
from bench import draobjects as dra

from gpulabel.checks.dra.rules import REASONS, explain_node
from gpulabel.k8s.dra.evaluator import DraEvaluator
from gpulabel.k8s.dra.plugin import DraState, pod_claims
from gpulabel.model.cluster import node_from_json
from tests.objects import node

A = f'device.attributes["{dra.DRIVER}"]'
A100, H100 = dra.GPUS[0], dra.GPUS[2]
XID = [{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}]


def gpu_slice(*products: tuple[str, str, str, int], taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return dra.resource_slice(
        "n1", [dra.gpu_device(f"gpu-{i}", i, p, "550.54.15", taints=taints) for i, p in enumerate(products)], node="n1"
    )


def one(*selectors: str, count: int = 1, cls: str = "gpu.nvidia.com", **kw: Any) -> dict[str, Any]:
    return dra.claim_spec([dra.request("r", dra.exactly(cls, *selectors, count=count, **kw))])


HELD = dra.claim("trainer", one(), allocation=[("r", dra.DRIVER, "n1", "gpu-0")])
TWO_SAME = dra.claim_spec(
    [dra.request("r", dra.exactly("gpu.nvidia.com", count=2))], match_attribute=f"{dra.DRIVER}/productName"
)
INCOMPLETE = dra.resource_slice("n1-a", [dra.gpu_device("gpu-0", 0, A100, "550.54.15")], node="n1", pool="p", count=2)

PARTS = [
    dra.counter_slice("n1-counters", {"gpu-0": {"memory": "80Gi"}}, node="n1", pool="parts"),
    dra.resource_slice(
        "n1-devices",
        [
            dra.partition("gpu-0", "gpu-0", {"memory": "80Gi"}),
            dra.partition("gpu-0-a", "gpu-0", {"memory": "40Gi"}),
            dra.partition("gpu-0-b", "gpu-0", {"memory": "40Gi"}),
        ],
        node="n1",
        pool="parts",
        count=2,
    ),
]
HALF_HELD = dra.claim("half", one(), allocation=[("r", dra.DRIVER, "parts", "gpu-0-a")])
WHOLE = f'{A}.type == "gpu" && device.capacity["{dra.DRIVER}"].memory.compareTo(quantity("80Gi")) == 0'
ALPHA = dra.resource_slice(
    "n1",
    [{**dra.gpu_device("gpu-0", 0, A100, "550.54.15"), "nodeAllocatableResources": {"cpu": {"perPod": "1"}}}],
    node="n1",
)
BAD_COUNTER = [
    dra.counter_slice("n1-counters", {"gpu-0": {"memory": "80Gi"}}, node="n1", pool="parts"),
    dra.resource_slice(
        "n1-devices", [dra.partition("gpu-0", "gpu-1", {"memory": "80Gi"})], node="n1", pool="parts", count=2
    ),
]

TABLE = [
    ("a node without slices has no devices", [], one(), "no-devices", "no ResourceSlice"),
    (
        "a whole GPU after a half of it was allocated: the counter and what is left",
        [*PARTS, HALF_HELD],
        one(WHOLE),
        "counter",
        "gpu.nvidia.com/parts/gpu-0 needs 80Gi of counter memory in set gpu-0, 40Gi left",
    ),
    (
        "a device consuming a counter set the pool lacks makes the pool invalid",
        BAD_COUNTER,
        one(),
        "invalid-pool",
        "gpu.nvidia.com/parts (counter set gpu-1 not found)",
    ),
    (
        "an alpha field (nodeAllocatableResources) is refused, the field named",
        [ALPHA],
        one(),
        "unmodelled",
        "resourceslice n1: spec.devices[0].nodeAllocatableResources is not modelled by gpulabel",
    ),
    (
        "a GPU of 80Gi asked for 81Gi of memory",
        [gpu_slice(A100)],
        dra.claim_spec(
            [dra.request("r", {**dra.exactly("gpu.nvidia.com"), "capacity": {"requests": {"memory": "81Gi"}}})]
        ),
        "capacity",
        "a request of 81Gi is charged 81Gi, 80Gi left",
    ),
    (
        "a node whose only pool is half published has an incomplete pool",
        [INCOMPLETE],
        one(),
        "incomplete-pool",
        "gpu.nvidia.com/p not completely published",
    ),
    (
        "MIG class on a node of whole GPUs fails the class selector",
        [gpu_slice(A100)],
        one(cls="mig.nvidia.com"),
        "class-selector",
        "mig.nvidia.com",
    ),
    (
        "asking for Hopper on an Ampere node names the expression and the value read",
        [gpu_slice(A100)],
        one(f'{A}.architecture == "Hopper"'),
        "selector",
        "architecture=Ampere",
    ),
    (
        "an attribute the GPUs lack is a CEL error with the scheduler's text",
        [gpu_slice(A100)],
        one(f'{A}.profile == "1g.10gb"'),
        "cel-error",
        "no such key: profile",
    ),
    (
        "a device with an Xid taint and no toleration",
        [gpu_slice(A100, taints=XID)],
        one(),
        "taint",
        "gpu.nvidia.com/xid=79:NoSchedule",
    ),
    (
        "the only GPU allocated to another claim names that claim",
        [gpu_slice(A100), HELD],
        one(),
        "allocated",
        "default/trainer",
    ),
    ("two GPUs asked of a one-GPU node", [gpu_slice(A100)], one(count=2), "count", "needs 2"),
    (
        "two GPUs asked where one has an Xid taint: the count names the tainted one",
        [
            dra.resource_slice(
                "n1",
                [
                    dra.gpu_device("gpu-0", 0, A100, "550.54.15"),
                    dra.gpu_device("gpu-1", 1, A100, "550.54.15", taints=XID),
                ],
                node="n1",
            )
        ],
        one(count=2),
        "count",
        "needs 2 device(s), 1 free matching; tainted, not used: "
        "gpu.nvidia.com/n1/gpu-1 (gpu.nvidia.com/xid=79:NoSchedule)",
    ),
    (
        "two GPUs that must share a product on a mixed node",
        [gpu_slice(A100, H100)],
        TWO_SAME,
        "match-attribute",
        "productName",
    ),
]


@pytest.mark.parametrize(
    ("objects", "spec", "reason", "detail"), [row[1:] for row in TABLE], ids=[row[0] for row in TABLE]
)
def test_reason(objects: list[dict[str, Any]], spec: dict[str, Any], reason: str, detail: str) -> None:
    state = DraState.from_objects(
        (str(i), o) for i, o in enumerate([dra.GPU_CLASS, dra.MIG_CLASS, *objects, dra.claim("c", spec)])
    )
    pod = dra.dra_pod("p", [("gpu", "claim", "c")])
    claims = pod_claims("default", "p", pod["spec"], {}, state).to_allocate
    verdicts = explain_node(DraEvaluator(state), node_from_json(node("n1")), claims)
    assert [v.reason for v in verdicts] == [reason]
    assert detail in verdicts[0].detail
    assert verdicts[0].line("default/p") == f"default/p n1 claim c/r {reason}"


def test_the_table_covers_every_reason() -> None:
    # decided before allocation, from an allocated claim's status: test_dra_features.py
    before = {"elsewhere", "binding-wait", "binding-failed"}
    assert sorted({row[3] for row in TABLE}) == sorted(set(REASONS) - before)


def test_a_node_that_fits_has_no_verdicts() -> None:
    state = DraState.from_objects([("c", dra.GPU_CLASS), ("s", gpu_slice(A100)), ("cl", dra.claim("c", one()))])
    claims = pod_claims("default", "p", dra.dra_pod("p", [("gpu", "claim", "c")])["spec"], {}, state).to_allocate
    assert explain_node(DraEvaluator(state), node_from_json(node("n1")), claims) == []


def test_claim_findings_group_into_one_line_per_pod_request_and_reason() -> None:
    from gpulabel.checks.pending.rules import pending_pods
    from gpulabel.cluster.snapshot import load_snapshots
    from gpulabel.render.text import finding_line

    lab = str(__import__("pathlib").Path(__file__).resolve().parents[2] / "examples" / "dra-lab.json")
    state = load_snapshots([lab])
    grouped = [f for p in pending_pods(state) for f in p.grouped(state.nodes)]
    lines = [finding_line(f) for f in grouped]
    assert "ml/train-h100 claim 2 node(s) train-h100-gpu/gpu selector" in lines
    assert "ml/train-h100 claim 1 node(s) train-h100-gpu/gpu no-devices" in lines
    assert len(lines) == 7  # train-h100: 2 reasons, train-big: 3, infer-mig: 2
    per_node = [f for p in pending_pods(state) for f in p.findings(state.nodes)]
    assert sum(f.count or 0 for f in grouped) == len(per_node) == 9  # every node of every pod, counted once


def test_a_missing_claim_is_named_not_the_pod() -> None:
    from gpulabel.checks.dra.rules import pod_claim_verdicts
    from gpulabel.model.cluster import ClusterState

    pod = dra.dra_pod("p", [("gpu", "claim", "absent-claim")])
    state = ClusterState.from_objects([("c", dra.GPU_CLASS), ("s", gpu_slice(A100)), ("n", node("n1")), ("p", pod)])
    (verdict,) = pod_claim_verdicts(state, state.pods[0], state.nodes)["n1"]
    assert (verdict.reason, verdict.claim, verdict.detail) == (
        "no-claim",
        "default/absent-claim",
        'resourceclaim "absent-claim" not found',
    )
    assert verdict.line("default/p") == "default/p n1 claim absent-claim no-claim"
