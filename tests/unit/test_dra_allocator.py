"""The structured allocator mirror and the DRA CEL environment on hand-made clusters."""

from __future__ import annotations

from typing import Any

import pytest
from bench import draobjects as dra

from gpulabel.k8s.dra.cel import compile_selector, device_input
from gpulabel.k8s.dra.evaluator import DraEvaluator
from gpulabel.k8s.dra.plugin import DraState, pod_claims
from gpulabel.k8s.dra.values import SemverError, compare_semver, parse_quantity, parse_semver
from gpulabel.model.cluster import node_from_json
from tests.objects import node

A = f'device.attributes["{dra.DRIVER}"]'
C = f'device.capacity["{dra.DRIVER}"]'
A100 = dra.GPUS[0]
H100 = dra.GPUS[2]


def gpus(node_name: str, *products: tuple[str, str, str, int], taint: int | None = None) -> dict[str, Any]:
    devices = [
        dra.gpu_device(
            f"gpu-{i}",
            i,
            p,
            "550.54.15",
            node=node_name,
            taints=[{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}] if i == taint else None,
        )
        for i, p in enumerate(products)
    ]
    return dra.resource_slice(node_name, devices, node=node_name)


def outcome(objects: list[dict[str, Any]], claim_spec: dict[str, Any], node_name: str = "n1") -> Any:
    pod = dra.dra_pod("p", [("gpu", "claim", "c")])
    state = DraState.from_objects(
        (f"obj{i}", o) for i, o in enumerate([dra.GPU_CLASS, dra.MIG_CLASS, *objects, dra.claim("c", claim_spec)])
    )
    claims = pod_claims("default", "p", pod["spec"], {}, state)
    assert claims.missing is None
    return DraEvaluator(state).allocate(node_from_json(node(node_name)), claims.to_allocate)


def one(*selectors: str, count: int = 1, **kw: Any) -> dict[str, Any]:
    return dra.claim_spec([dra.request("r", dra.exactly("gpu.nvidia.com", *selectors, count=count, **kw))])


def test_a_matching_free_device_is_allocated_in_slice_order() -> None:
    got = outcome([gpus("n1", A100, A100)], one(f'{A}.productName == "{A100[0]}"'))
    assert got.ok and got.devices == ((("r", ("gpu.nvidia.com", "n1", "gpu-0")),),)


def test_count_beyond_the_matching_devices_fails_without_error() -> None:
    got = outcome([gpus("n1", A100, H100)], one(f'{A}.architecture == "Hopper"', count=2))
    assert not got.ok and got.error is None


def test_devices_of_other_claims_are_skipped() -> None:
    held = dra.claim("held", one(), allocation=[("r", "gpu.nvidia.com", "n1", "gpu-0")])
    assert not outcome([gpus("n1", A100), held], one()).ok
    assert outcome([gpus("n1", A100, A100), held], one()).devices[0][0][1][2] == "gpu-1"


def test_untolerated_device_taints_refuse_the_device_and_a_toleration_admits_it() -> None:
    assert not outcome([gpus("n1", A100, taint=0)], one()).ok
    tol = [{"key": "gpu.nvidia.com/xid", "operator": "Exists", "effect": "NoSchedule"}]
    assert outcome([gpus("n1", A100, taint=0)], one(tolerations=tol)).ok


def test_a_missing_attribute_on_a_reached_device_is_the_schedulers_error() -> None:
    got = outcome([gpus("n1", A100)], one(f'{A}.profile == "1g.10gb"'))
    assert got.error == (
        "claim default/c: selector #0 on device gpu.nvidia.com/n1/gpu-0: CEL runtime error: no such key: profile."
        " consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for"
        " optional fields"
    )


def test_the_search_stops_before_a_device_that_would_error() -> None:
    mig = dra.mig_device("gpu-1-mig-0", 1, 0, A100, "550.54.15", dra.MIG_PROFILES[0])
    s = dra.resource_slice("n1", [dra.gpu_device("gpu-0", 0, A100, "550.54.15"), mig], node="n1")
    any_class = dra.device_class("any.example.com")
    spec = dra.claim_spec([dra.request("r", dra.exactly("any.example.com", f'{A}.uuid.startsWith("GPU-")'))])
    assert outcome([s, any_class], spec).ok  # one device is enough: the MIG device is never reached
    spec = dra.claim_spec([dra.request("r", dra.exactly("any.example.com", f'{A}.brand == "Nvidia"', count=2))])
    assert "no such key: brand" in (outcome([s, any_class], spec).error or "")


def test_all_mode_takes_every_matching_device_and_fails_if_one_is_held() -> None:
    all_spec = one(mode="All")
    assert len(outcome([gpus("n1", A100, A100, H100)], all_spec).devices[0]) == 3
    held = dra.claim("held", one(), allocation=[("r", "gpu.nvidia.com", "n1", "gpu-2")])
    assert not outcome([gpus("n1", A100, A100, H100), held], all_spec).ok


def test_match_attribute_needs_devices_that_agree() -> None:
    spec = dra.claim_spec(
        [dra.request("r", dra.exactly("gpu.nvidia.com", count=2))], match_attribute=f"{dra.DRIVER}/productName"
    )
    assert not outcome([gpus("n1", A100, H100)], spec).ok
    got = outcome([gpus("n1", A100, H100, A100)], spec)
    assert [d[1][2] for d in got.devices[0]] == ["gpu-0", "gpu-2"]  # backtracks past gpu-1


def test_first_available_falls_back_to_the_next_subrequest() -> None:
    spec = dra.claim_spec(
        [
            dra.request(
                "r",
                first_available=[
                    ("big", dra.exactly("gpu.nvidia.com", f'{A}.architecture == "Hopper"')),
                    ("small", dra.exactly("gpu.nvidia.com")),
                ],
            )
        ]
    )
    assert outcome([gpus("n1", A100)], spec).devices[0][0][0] == "r/small"


def test_an_incomplete_pool_is_skipped_and_fails_all_mode_with_the_schedulers_text() -> None:
    s = dra.resource_slice("n1-a", [dra.gpu_device("gpu-0", 0, A100, "550.54.15")], node="n1", pool="p", count=2)
    assert not outcome([s], one()).ok
    assert outcome([s], one(mode="All")).error == (
        "claim default/c, request r: asks for all devices, but resource pool gpu.nvidia.com/p"
        " is currently being updated"
    )


def test_node_selector_and_all_nodes_slices_reach_the_nodes_they_select() -> None:
    sel = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}
    s = dra.resource_slice("shared", [dra.gpu_device("gpu-0", 0, A100, "550.54.15")], pool="shared", node_selector=sel)
    state = DraState.from_objects([("c", dra.GPU_CLASS), ("s", s), ("cl", dra.claim("c", one()))])
    claims = pod_claims("default", "p", dra.dra_pod("p", [("gpu", "claim", "c")])["spec"], {}, state)
    assert DraEvaluator(state).allocate(node_from_json(node("x", {"zone": "a"})), claims.to_allocate).ok
    assert not DraEvaluator(state).allocate(node_from_json(node("y", {"zone": "b"})), claims.to_allocate).ok


def test_a_missing_class_is_an_error() -> None:
    spec = dra.claim_spec([dra.request("r", dra.exactly("nosuch.example.com"))])
    assert outcome([gpus("n1", A100)], spec).error == (
        "claim default/c, request r: could not retrieve device class nosuch.example.com: "
        'deviceclass.resource.k8s.io "nosuch.example.com" not found'
    )


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        (f'{A}.driverVersion.isGreaterThan(semver("550.0.0"))', True),
        (f'{A}.driverVersion.compareTo(semver("550.54.15")) == 0', True),
        (f'{A}.cudaComputeCapability.isLessThan(semver("9.0.0"))', True),
        (f'{C}.memory.compareTo(quantity("80Gi")) == 0', True),
        (f'{C}.memory.isGreaterThan(quantity("85G"))', True),
        (f'{C}.memory.isLessThan(quantity("80Gi"))', False),
        (f"{C}.memory.asInteger() == 85899345920", True),
        ('quantity("1.5Gi").add(quantity("512Mi")).compareTo(quantity("2Gi")) == 0', True),
        (f"{A}.index == 0.0", True),
        (f'cel.bind(g, {A}, g.architecture == "Ampere")', True),
        ('device.attributes["other.example.com"].x == 1 || true', True),
    ],
)
def test_kubernetes_cel_extensions(expression: str, result: bool) -> None:
    device = dra.gpu_device("gpu-0", 0, A100, "550.54.15")
    attrs = {k: next(iter(v.items())) for k, v in device["attributes"].items()}
    dev = device_input(dra.DRIVER, attrs, {k: v["value"] for k, v in device["capacity"].items()})
    sel = compile_selector(expression)
    assert sel.error is None
    assert sel.evaluate(dev) is result


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1.0", "No Major.Minor.Patch elements found"),
        ("01.2.3", 'Major number must not contain leading zeroes "01"'),
        ("1.2.x", 'Invalid character(s) found in patch number "x"'),
        ("1.2.3-", "Prerelease is empty"),
        ("1.2.3+a..b", "Build meta data is empty"),
    ],
)
def test_semver_parse_errors_are_blangs(text: str, message: str) -> None:
    with pytest.raises(SemverError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_semver(text)


def test_semver_order_and_quantities() -> None:
    assert compare_semver(parse_semver("1.2.3-rc.1"), parse_semver("1.2.3")) == -1
    assert compare_semver(parse_semver("1.2.3-rc.2"), parse_semver("1.2.3-rc.10")) == -1
    assert compare_semver(parse_semver("1.2.3+a"), parse_semver("1.2.3+b")) == 0
    assert parse_quantity("50M") < parse_quantity("50Mi")
    assert parse_quantity("200M") == parse_quantity("0.2G")
