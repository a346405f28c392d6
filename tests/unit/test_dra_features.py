"""The 1.37 allocator's features on hand-made clusters: shared counters, per-device node selection,
admin access, distinctAttribute, DeviceTaintRules, pool order, and the refusals of what is not modelled.

Each row follows ``k8s.io/dynamic-resource-allocation@v0.37.2/structured/internal/incubating``
(``allocator_incubating.go``, ``pools_incubating.go``, ``constraint.go``) and the tracker that applies
DeviceTaintRules (``resourceslice/tracker/tracker.go`` ``applyPatches``).
"""

from __future__ import annotations

from typing import Any

import pytest
from bench import draobjects as dra

from gpulabel.checks.dra.rules import explain_node
from gpulabel.k8s.dra.evaluator import DraEvaluator
from gpulabel.k8s.dra.plugin import DraState, pod_claims
from gpulabel.model.cluster import node_from_json
from tests.objects import node

A = f'device.attributes["{dra.DRIVER}"]'
MEM = f'device.capacity["{dra.DRIVER}"].memory'
A100 = dra.GPUS[0]
XID = {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}


ANY = dra.device_class("any.example.com", f'device.driver == "{dra.DRIVER}"')


def one(*selectors: str, count: int = 1, **kw: Any) -> dict[str, Any]:
    return dra.claim_spec([dra.request("r", dra.exactly("any.example.com", *selectors, count=count, **kw))])


def run(objects: list[dict[str, Any]], spec: dict[str, Any], node_name: str = "n1", **labels: str) -> Any:
    """The allocation outcome and the explanation for claim ``c`` on the node."""
    state = DraState.from_objects((f"obj{i}", o) for i, o in enumerate([ANY, *objects, dra.claim("c", spec)]))
    claims = pod_claims("default", "p", dra.dra_pod("p", [("gpu", "claim", "c")])["spec"], {}, state).to_allocate
    n = node_from_json(node(node_name, labels))
    ev = DraEvaluator(state)
    return ev.allocate(n, claims), explain_node(ev, n, claims)


def devices(got: Any) -> list[str]:
    return [d[1][2] for d in got.devices[0]]


def parts(*extra: dict[str, Any], node_name: str = "n1") -> list[dict[str, Any]]:
    """One GPU of 80Gi as counters; the whole GPU, two halves and a 60Gi partition consume them."""
    return [
        dra.counter_slice(f"{node_name}-counters", {"gpu-0": {"memory": "80Gi"}}, node=node_name, pool="parts"),
        dra.resource_slice(
            f"{node_name}-devices",
            [
                dra.partition("gpu-0", "gpu-0", {"memory": "80Gi"}),
                dra.partition("gpu-0-a", "gpu-0", {"memory": "40Gi"}, kind="part"),
                dra.partition("gpu-0-b", "gpu-0", {"memory": "40Gi"}, kind="part"),
                dra.partition("gpu-0-60", "gpu-0", {"memory": "60Gi"}, kind="part"),
            ],
            node=node_name,
            pool="parts",
            count=2,
        ),
        *extra,
    ]


def held(name: str, device: str, pool: str = "parts", admin: bool = False) -> dict[str, Any]:
    obj = dra.claim(name, one(), allocation=[("r", dra.DRIVER, pool, device)])
    if admin:
        obj["status"]["allocation"]["devices"]["results"][0]["adminAccess"] = True
    return obj


# -- partitionable devices -----------------------------------------------------------


def test_a_whole_gpu_and_a_60gi_partition_do_not_fit_after_a_half_is_allocated() -> None:
    whole, explained = run(parts(held("half", "gpu-0-a")), one(f'{A}.type == "gpu"'))
    assert not whole.ok and whole.error is None
    assert [v.reason for v in explained] == ["counter"]
    assert "needs 80Gi of counter memory in set gpu-0, 40Gi left" in explained[0].detail
    big, _ = run(parts(held("half", "gpu-0-a")), one(f'{MEM}.compareTo(quantity("60Gi")) == 0'))
    assert not big.ok
    other_half, _ = run(parts(held("half", "gpu-0-a")), one(f'{A}.type == "part"'))
    assert devices(other_half) == ["gpu-0-b"]


def test_counters_are_consumed_within_one_allocation_too() -> None:
    got, _ = run(parts(), one(f'{A}.type == "part"', count=2))
    assert devices(got) == ["gpu-0-a", "gpu-0-b"]  # 40 + 60 would overdraw: the search backtracks
    got, explained = run(parts(), one(f'{A}.type == "part"', count=3))
    assert not got.ok and [v.reason for v in explained] == ["count"]


def test_counters_of_a_pool_are_shared_across_its_slices_and_nodes() -> None:
    # the counter set is published once for all nodes; a device on another node consumes it too
    objs = [
        dra.counter_slice("counters", {"gpu-0": {"memory": "80Gi"}}, pool="p", count=3),
        dra.resource_slice("a", [dra.partition("a-half", "gpu-0", {"memory": "40Gi"})], node="n1", pool="p", count=3),
        dra.resource_slice("b", [dra.partition("b-60", "gpu-0", {"memory": "60Gi"})], node="n2", pool="p", count=3),
        held("other", "b-60", pool="p"),
    ]
    got, explained = run(objs, one())
    assert not got.ok and [v.reason for v in explained] == ["counter"]
    assert "20Gi left" in explained[0].detail


def test_an_unknown_counter_set_makes_the_pool_invalid_with_the_schedulers_status() -> None:
    objs = [
        dra.counter_slice("c", {"gpu-0": {"memory": "80Gi"}}, node="n1", pool="p"),
        dra.resource_slice("d", [dra.partition("x", "gpu-9", {"memory": "1Gi"})], node="n1", pool="p", count=2),
    ]
    got, explained = run(objs, one())
    assert not got.ok and got.invalid
    assert [v.reason for v in explained] == ["invalid-pool"]
    assert run(objs, one(mode="All"))[0].error == (
        "claim default/c, request r: asks for all devices, but resource pool gpu.nvidia.com/p is currently invalid"
    )


# -- per-device node selection -------------------------------------------------------


def test_per_device_node_selection_puts_each_device_on_its_node() -> None:
    pool = [
        dra.counter_slice("counters", {"gpu-0": {"memory": "80Gi"}, "gpu-1": {"memory": "80Gi"}}, pool="pd"),
        dra.per_device_slice(
            "pd",
            [
                dra.partition("gpu-0", "gpu-0", {"memory": "80Gi"}, node_name="n1"),
                dra.partition("gpu-1", "gpu-1", {"memory": "80Gi"}, node_name="n2"),
            ],
            pool="pd",
        ),
    ]
    assert devices(run(pool, one())[0]) == ["gpu-0"]
    assert devices(run(pool, one(), node_name="n2")[0]) == ["gpu-1"]
    got, explained = run(pool, one(), node_name="n3")
    assert not got.ok and [v.reason for v in explained] == ["no-devices"]


def test_a_device_selected_by_all_nodes_is_everywhere() -> None:
    pool = [dra.per_device_slice("pd", [dra.partition("g", "s", {"memory": "1Gi"}, all_nodes=True)], pool="pd")]
    pool.insert(0, dra.counter_slice("counters", {"s": {"memory": "1Gi"}}, pool="pd"))
    assert run(pool, one(), node_name="anywhere")[0].ok


# -- admin access, distinctAttribute ---------------------------------------------------


def test_admin_access_uses_a_held_device_and_holds_nothing() -> None:
    gpus = dra.resource_slice("n1", [dra.gpu_device("gpu-0", 0, A100, "550.54.15")], node="n1")
    admin = dra.claim_spec([dra.request("r", {**dra.exactly("any.example.com"), "adminAccess": True})])
    assert devices(run([gpus, held("user", "gpu-0", pool="n1")], admin)[0]) == ["gpu-0"]
    # an admin-access allocation does not hold its device
    assert devices(run([gpus, held("monitor", "gpu-0", pool="n1", admin=True)], one())[0]) == ["gpu-0"]


def test_distinct_attribute_needs_devices_that_differ() -> None:
    two = dra.resource_slice(
        "n1",
        [dra.gpu_device("gpu-0", 0, A100, "550.54.15"), dra.gpu_device("gpu-1", 1, A100, "550.54.15")],
        node="n1",
    )
    spec = one(count=2)
    spec["devices"]["constraints"] = [{"distinctAttribute": f"{dra.DRIVER}/productName"}]
    got, explained = run([two], spec)
    assert not got.ok and [v.reason for v in explained] == ["match-attribute"]
    assert "differs in gpu.nvidia.com/productName" in explained[0].detail
    spec["devices"]["constraints"] = [{"distinctAttribute": f"{dra.DRIVER}/index"}]
    assert devices(run([two], spec)[0]) == ["gpu-0", "gpu-1"]


# -- DeviceTaintRules ------------------------------------------------------------------


GPU = dra.resource_slice("n1", [dra.gpu_device("gpu-0", 0, A100, "550.54.15")], node="n1")


def test_a_taint_rule_taints_the_devices_it_selects_and_is_named() -> None:
    rule = dra.taint_rule("xid-79", XID, pool="n1", device="gpu-0")
    got, explained = run([GPU, rule], one())
    assert not got.ok and [v.reason for v in explained] == ["taint"]
    assert "gpu.nvidia.com/xid=79:NoSchedule (devicetaintrule xid-79)" in explained[0].detail
    tolerate = [{"key": "gpu.nvidia.com/xid", "operator": "Exists"}]
    assert run([GPU, rule], one(tolerations=tolerate))[0].ok


@pytest.mark.parametrize(
    ("selector", "taints"),
    [
        ({"driver": "other.example.com"}, False),
        ({"pool": "elsewhere"}, False),
        ({"device": "gpu-1"}, False),
        ({}, True),  # an empty selector (no driver, pool or device) selects every device
    ],
)
def test_a_rule_selects_by_driver_pool_and_device(selector: dict[str, str], taints: bool) -> None:
    rule = dra.taint_rule("r", XID, driver=None)
    rule["spec"]["deviceSelector"] = selector
    assert run([GPU, rule], one())[0].ok is not taints


def test_effect_none_and_a_rule_without_selector_do_not_block() -> None:
    none = dra.taint_rule("watch", {"key": "gpu.nvidia.com/ecc", "value": "1", "effect": "None"})
    assert run([GPU, none], one())[0].ok
    nosel = dra.taint_rule("nosel", XID)
    del nosel["spec"]["deviceSelector"]
    assert run([GPU, nosel], one())[0].ok


# -- pools: order and slices the allocator ignores ------------------------------------


def test_pools_with_binding_conditions_are_searched_last() -> None:
    waiting = {**dra.gpu_device("gpu-0", 0, A100, "550.54.15"), "bindingConditions": ["Attached"]}
    objs = [
        dra.resource_slice("a", [waiting], node="n1", pool="a-pool"),
        dra.resource_slice("b", [dra.gpu_device("gpu-0", 0, A100, "550.54.15")], node="n1", pool="b-pool"),
    ]
    got, _ = run(objs, one())
    assert got.devices[0][0][1] == (dra.DRIVER, "b-pool", "gpu-0")


def test_a_slice_with_compatibility_groups_is_ignored() -> None:
    grouped = {**dra.gpu_device("gpu-0", 0, A100, "550.54.15"), "compatibilityGroups": ["g"]}
    got, explained = run([dra.resource_slice("n1", [grouped], node="n1")], one())
    assert not got.ok and [v.reason for v in explained] == ["no-devices"]


# -- refusals: nothing unmodelled is answered ------------------------------------------


def _with_device(**fields: Any) -> dict[str, Any]:
    return dra.resource_slice("n1", [{**dra.gpu_device("gpu-0", 0, A100, "550.54.15"), **fields}], node="n1")


@pytest.mark.parametrize(
    ("objects", "field"),
    [
        (
            [_with_device(nodeAllocatableResources={"cpu": {"perPod": "1"}})],
            "resourceslice n1: spec.devices[0].nodeAllocatableResources",
        ),
        (
            [_with_device(capacity={"memory": {"value": "8", "requestPolicy": {"validRange": {"min": "500m"}}}})],
            "resourceslice n1: spec.devices[0].capacity[memory].requestPolicy (a step or minimum that is not a whole"
            " number)",
        ),
        (
            [{**GPU, "spec": {**GPU["spec"], "partitionTypeAttribute": "gpu.nvidia.com/type"}}],
            "resourceslice n1: spec.partitionTypeAttribute",
        ),
    ],
    ids=["nodeAllocatableResources", "fractional-step", "partitionTypeAttribute"],
)
def test_an_unmodelled_field_is_refused_and_named(objects: list[dict[str, Any]], field: str) -> None:
    got, explained = run(objects, one())
    assert not got.ok and got.error is None
    assert got.unmodelled == f"{field} is not modelled by gpulabel"
    assert [(v.reason, v.detail) for v in explained] == [("unmodelled", got.unmodelled)]


def test_derived_attributes_fail_with_the_schedulers_text() -> None:
    spec = dra.claim_spec([dra.request("r", {**dra.exactly("any.example.com"), "derivedAttributes": [{"name": "x"}]})])
    assert run([GPU], spec)[0].error == (
        "claim default/c, request r: cannot handle request with derived attributes, the feature is disabled"
    )


# -- claims already allocated ----------------------------------------------------------


def test_an_allocated_claim_is_available_only_where_its_node_selector_says() -> None:
    from gpulabel.checks.dra.rules import pod_claim_verdicts
    from gpulabel.checks.pending.rules import pending_pods
    from gpulabel.model.cluster import ClusterState

    claim = held("c", "gpu-0", pool="n1")
    claim["status"]["allocation"]["nodeSelector"] = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
    }
    pod = {**dra.dra_pod("p", [("gpu", "claim", "c")]), "status": {"phase": "Pending"}}
    state = ClusterState.from_objects((str(i), o) for i, o in enumerate([ANY, GPU, claim, pod, node("n1"), node("n2")]))
    verdicts = pod_claim_verdicts(state, state.pods[0], state.nodes)
    assert verdicts["n1"] == ()
    assert [v.reason for v in verdicts["n2"]] == ["elsewhere"]
    # the scheduler's message counts n2 as "resourceclaim not available on the node"
    state2 = ClusterState.from_objects(
        (str(i), o) for i, o in enumerate([ANY, GPU, claim, pod, node("n2"), node("n3")])
    )
    (waiting,) = pending_pods(state2)
    assert waiting.predicted is not None and "2 resourceclaim not available on the node" in waiting.predicted


# -- consumable capacity ----------------------------------------------------------------


def shared_gpu(policy: dict[str, Any] | None = None, value: str = "80Gi") -> dict[str, Any]:
    memory: dict[str, Any] = {"value": value}
    if policy is not None:
        memory["requestPolicy"] = policy
    device = {**dra.gpu_device("gpu-0", 0, A100, "550.54.15"), "allowMultipleAllocations": True}
    device["capacity"] = {"memory": memory}
    return dra.resource_slice("n1", [device], node="n1")


def asks(memory: str | None, count: int = 1) -> dict[str, Any]:
    exactly = dra.exactly("any.example.com", count=count)
    if memory is not None:
        exactly["capacity"] = {"requests": {"memory": memory}}
    return dra.claim_spec([dra.request("r", exactly)])


def share(name: str, memory: str) -> dict[str, Any]:
    obj = held(name, "gpu-0", pool="n1")
    result = obj["status"]["allocation"]["devices"]["results"][0]
    result["shareID"] = f"uid-{name}"
    result["consumedCapacity"] = {"memory": memory}
    return obj


STEP = {"default": "4Gi", "validRange": {"min": "4Gi", "max": "40Gi", "step": "4Gi"}}


def test_a_shared_device_takes_claims_while_capacity_is_left() -> None:
    assert devices(run([shared_gpu(), share("a", "60Gi")], asks("20Gi"))[0]) == ["gpu-0"]
    got, explained = run([shared_gpu(), share("a", "60Gi")], asks("30Gi"))
    assert not got.ok and [v.reason for v in explained] == ["capacity"]
    assert "capacity memory 80Gi, 60Gi consumed by other shares: a request of 30Gi is charged 30Gi, 20Gi left" in (
        explained[0].detail
    )
    # two requests of one claim may share a device (one request takes a device once: the search moves on)
    two = asks("40Gi")
    two["devices"]["requests"].append({**two["devices"]["requests"][0], "name": "r2"})
    assert devices(run([shared_gpu()], two)[0]) == ["gpu-0", "gpu-0"]
    assert not run([shared_gpu()], asks("40Gi", count=2))[0].ok
    # without a request, a share is charged the whole capacity (no default)
    assert not run([shared_gpu(), share("a", "1Gi")], asks(None))[0].ok


@pytest.mark.parametrize(
    ("requested", "charged_fits"),
    [
        ("3Gi", True),  # rounds up to 4Gi: 36 + 4 = 40 of 40
        ("5Gi", False),  # rounds up to 8Gi: 44 > 40
        ("1Gi", True),  # below the minimum: charged 4Gi
        ("41Gi", False),  # above the maximum: the policy refuses
        (None, True),  # the default, 4Gi
    ],
)
def test_a_request_policy_rounds_up_to_its_step(requested: str | None, charged_fits: bool) -> None:
    assert run([shared_gpu(STEP, "40Gi"), share("a", "36Gi")], asks(requested))[0].ok is charged_fits


def test_valid_values_round_up_to_the_next_value() -> None:
    values = {"validValues": ["10Gi", "20Gi", "40Gi"]}
    assert run([shared_gpu(values, "40Gi"), share("a", "20Gi")], asks("15Gi"))[0].ok  # charged 20Gi
    assert not run([shared_gpu(values, "40Gi"), share("a", "20Gi")], asks("25Gi"))[0].ok  # charged 40Gi
    assert not run([shared_gpu(values, "80Gi")], asks("50Gi"))[0].ok  # beyond every value: not a valid value


def test_capacity_requests_are_checked_against_exclusive_devices_too() -> None:
    exclusive = dra.resource_slice("n1", [dra.gpu_device("gpu-0", 0, A100, "550.54.15")], node="n1")  # 80Gi
    assert run([exclusive], asks("80Gi"))[0].ok
    got, explained = run([exclusive], asks("81Gi"))
    assert not got.ok and [v.reason for v in explained] == ["capacity"]
    spec = dra.claim_spec(
        [dra.request("r", {**dra.exactly("any.example.com"), "capacity": {"requests": {"cores": "1"}}})]
    )
    got, explained = run([exclusive], spec)
    assert not got.ok and "asks for capacity cores, which the device does not have" in explained[0].detail


def test_a_shared_device_consumes_its_counters_once() -> None:
    counters = dra.counter_slice("c", {"g": {"memory": "80Gi"}}, node="n1", pool="p")
    device = {**dra.partition("g", "g", {"memory": "80Gi"}), "allowMultipleAllocations": True}
    objs = [counters, dra.resource_slice("d", [device], node="n1", pool="p", count=2)]
    two = asks("10Gi")
    two["devices"]["requests"].append({**two["devices"]["requests"][0], "name": "r2"})
    assert devices(run(objs, two)[0]) == ["g", "g"]


# -- binding conditions -------------------------------------------------------------------


def _waiting_claim(conditions: list[dict[str, str]] | None) -> dict[str, Any]:
    claim = held("c", "gpu-0", pool="n1")
    allocation = claim["status"]["allocation"]
    allocation["allocationTimestamp"] = "2026-12-01T21:00:00Z"
    allocation["devices"]["results"][0].update(
        bindingConditions=["Attached"], bindingFailureConditions=["AttachFailed"]
    )
    if conditions is not None:
        claim["status"]["devices"] = [{"driver": dra.DRIVER, "pool": "n1", "device": "gpu-0", "conditions": conditions}]
    return claim


@pytest.mark.parametrize(
    ("conditions", "reason", "detail"),
    [
        (
            None,
            "binding-wait",
            "device gpu.nvidia.com/n1/gpu-0 waits for binding condition(s) Attached to be True since",
        ),
        (
            [{"type": "Attached", "status": "False"}],
            "binding-wait",
            "2026-12-01T21:00:00Z; the scheduler waits up to 600s",
        ),
        (
            [{"type": "AttachFailed", "status": "True", "reason": "NoFabric", "message": "switch down"}],
            "binding-failed",
            "binding failure condition AttachFailed is True (NoFabric: switch down)",
        ),
        ([{"type": "Attached", "status": "True"}], None, ""),
    ],
    ids=["no-status", "not-true", "failed", "ready"],
)
def test_pending_says_which_binding_conditions_a_pod_waits_for(
    conditions: list[dict[str, str]] | None, reason: str | None, detail: str
) -> None:
    from gpulabel.checks.dra.rules import pod_claim_verdicts
    from gpulabel.model.cluster import ClusterState

    pod = {**dra.dra_pod("p", [("gpu", "claim", "c")]), "status": {"phase": "Pending"}}
    objs = [ANY, GPU, _waiting_claim(conditions), pod, node("n1")]
    state = ClusterState.from_objects((str(i), o) for i, o in enumerate(objs))
    verdicts = pod_claim_verdicts(state, state.pods[0], state.nodes)["n1"]
    if reason is None:
        assert verdicts == ()
    else:
        assert [v.reason for v in verdicts] == [reason] and detail in verdicts[0].detail


# -- extended resources backed by DRA ------------------------------------------------------


def _ext_pod(resource: str, amount: str = "1") -> dict[str, Any]:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {resource: amount}}}]},
        "status": {"phase": "Pending"},
    }
    return pod


def _with_allocatable(n: dict[str, Any], resources: dict[str, str]) -> dict[str, Any]:
    n["status"]["allocatable"] = {"cpu": "8", "memory": "32Gi", "pods": "110", **resources}
    return n


def _pending(objects: list[dict[str, Any]]) -> Any:
    from gpulabel.checks.pending.rules import pending_pods
    from gpulabel.model.cluster import ClusterState

    state = ClusterState.from_objects((str(i), o) for i, o in enumerate(objects))
    (waiting,) = pending_pods(state)
    return waiting, state


def test_an_extended_resource_a_class_maps_is_allocated_through_its_devices() -> None:
    mapped = {**ANY, "spec": {**ANY["spec"], "extendedResourceName": "example.com/gpu"}}
    two = dra.resource_slice(
        "n1",
        [dra.gpu_device("gpu-0", 0, A100, "550.54.15"), dra.gpu_device("gpu-1", 1, A100, "550.54.15")],
        node="n1",
    )
    nodes = [_with_allocatable(node("n1"), {}), _with_allocatable(node("n2"), {})]
    waiting, state = _pending([mapped, two, *nodes, _ext_pod("example.com/gpu", "2")])
    fits = {n.name for n, r in zip(state.nodes, waiting.results, strict=True) if r.fits}
    assert fits == {"n1", "n2"}  # NodeResourcesFit leaves it to DRA on both
    assert "n1" not in waiting.claims  # two devices: the scheduler's claim fits there
    (finding,) = waiting.claims["n2"]
    assert finding.args == ("p-extended-resources/example.com/gpu", "no-devices")
    # three asked of two devices
    waiting, _ = _pending([mapped, two, *nodes, _ext_pod("example.com/gpu", "3")])
    assert [f.args[-1] for f in waiting.claims["n1"]] == ["count"]


def test_the_implicit_name_and_a_node_that_advertises_the_resource() -> None:
    implicit = f"deviceclass.resource.kubernetes.io/{ANY['metadata']['name']}"
    one_gpu = dra.resource_slice("n1", [dra.gpu_device("gpu-0", 0, A100, "550.54.15")], node="n1")
    nodes = [_with_allocatable(node("n1"), {}), _with_allocatable(node("n2"), {implicit: "4"})]
    waiting, _ = _pending([ANY, one_gpu, *nodes, _ext_pod(implicit)])
    assert "n1" not in waiting.claims
    assert "n2" not in (waiting.claims or {})  # the device plugin's: NodeResourcesFit, not DRA
    # a resource no class maps stays NodeResourcesFit's
    waiting, _ = _pending([ANY, one_gpu, *nodes, _ext_pod("example.com/other")])
    assert not any(r.fits for r in waiting.results)


def test_of_two_classes_naming_one_resource_the_newer_wins() -> None:
    from gpulabel.k8s.dra.extended import extended_classes
    from gpulabel.k8s.dra.objects import DeviceClass

    old = DeviceClass("b-old", (), "example.com/gpu", "2026-01-01T00:00:00Z")
    new = DeviceClass("z-new", (), "example.com/gpu", "2026-06-01T00:00:00Z")
    tie = DeviceClass("a-tie", (), "example.com/gpu", "2026-06-01T00:00:00Z")
    assert extended_classes([old, new])["example.com/gpu"].name == "z-new"
    assert extended_classes([new, tie])["example.com/gpu"].name == "a-tie"
    assert extended_classes([old])["deviceclass.resource.kubernetes.io/b-old"].name == "b-old"


def test_devices_lists_a_per_device_node_selection_device_on_its_node() -> None:
    from gpulabel.checks.health.devices import device_rows

    pool = dra.per_device_slice("pd", [dra.partition("g", "s", {"memory": "1Gi"}, node_name="n7")], pool="pd")
    state = DraState.from_objects([("s", pool), ("r", dra.taint_rule("ecc", XID, pool="pd"))])
    (row,) = device_rows(state)
    assert (row.node, row.state) == ("n7", "tainted")
