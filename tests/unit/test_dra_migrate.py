"""The migration aid selects, device by device, the GPUs the GFD node affinity selects.

For every GPU model of bench/draobjects.py, the node labels GFD would write for
it (sanitised product, memory in MiB, lower-case family, compute capability)
are matched by the node-affinity matcher, and the generated selector is
evaluated on the device the DRA driver publishes: the verdicts must agree.
"""

from __future__ import annotations

from typing import Any

import pytest
from bench import draobjects as dra

from gpulabel.checks.labels.migrate import migrate
from gpulabel.k8s.dra.cel import compile_selector, device_input
from gpulabel.k8s.nodeaffinity import compile_pod_spec
from gpulabel.model.cluster import node_from_json
from gpulabel.model.sanitize import sanitize_gfd
from tests.objects import node

FAMILY = {"Ampere": "ampere", "Hopper": "hopper", "Ada Lovelace": "ada-lovelace"}


def gfd_labels(product: tuple[str, str, str, int]) -> dict[str, str]:
    name, arch, cc, memory = product
    major, minor, _ = cc.split(".")
    return {
        "nvidia.com/gpu.product": sanitize_gfd(name),
        "nvidia.com/gpu.memory": str(memory // (1 << 20)),
        "nvidia.com/gpu.family": FAMILY[arch],
        "nvidia.com/gpu.compute.major": major,
        "nvidia.com/gpu.compute.minor": minor,
        "nvidia.com/gpu.count": "8",
    }


def spec(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]
                }
            }
        }
    }


def e(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": f"nvidia.com/gpu.{key}", "operator": op}
    if values:
        out["values"] = list(values)
    return out


CASES = {
    "product in a list": spec([e("product", "In", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L4")]),
    "product not in a list": spec([e("product", "NotIn", "NVIDIA-A10")]),
    "more than 40,000 MiB": spec([e("memory", "Gt", "40000")]),
    "less than 30,000 MiB": spec([e("memory", "Lt", "30000")]),
    "Hopper or Ada by family": spec([e("family", "In", "hopper", "ada-lovelace")]),
    "compute capability 8.x above 8.0": spec([e("compute.major", "In", "8"), e("compute.minor", "Gt", "0")]),
    "compute major above 8, or an A10": spec([e("compute.major", "Gt", "8")], [e("product", "In", "NVIDIA-A10")]),
    "a product the fleet lacks": spec([e("product", "In", "NVIDIA-B200")]),
}


@pytest.mark.parametrize("pod_spec", CASES.values(), ids=list(CASES))
@pytest.mark.parametrize("fleet_known", [True, False], ids=["names from the fleet", "names guessed"])
def test_the_selector_picks_the_gpus_the_labels_pick(pod_spec: dict[str, Any], fleet_known: bool) -> None:
    req = compile_pod_spec(pod_spec)
    products = [p[0] for p in dra.GPUS] if fleet_known else []
    archs = [p[1] for p in dra.GPUS] if fleet_known else []
    m = migrate(req, products, archs)
    assert m.selector is not None
    sel = compile_selector(m.selector)
    assert sel.error is None
    for product in dra.GPUS:
        labels = gfd_labels(product)
        by_labels = req.match(node_from_json(node("n", labels))).fits
        device = dra.gpu_device("gpu-0", 0, product, "550.54.15")
        attrs = {k: next(iter(v.items())) for k, v in device["attributes"].items()}
        dev = device_input(dra.DRIVER, attrs, {k: v["value"] for k, v in device["capacity"].items()})
        assert sel.evaluate(dev) is by_labels, (product[0], m.selector)


def test_the_differences_are_warned_and_other_keys_stay_node_affinity() -> None:
    req = compile_pod_spec(
        spec(
            [
                e("product", "In", "NVIDIA-A100-SXM4-80GB"),
                e("family", "In", "ampere"),
                e("count", "Gt", "3"),
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]},
            ]
        )
    )
    m = migrate(req, ["NVIDIA A100-SXM4-80GB"], ["Ampere"])
    assert m.selector == (
        'device.attributes["gpu.nvidia.com"].productName in ["NVIDIA A100-SXM4-80GB"]'
        ' && device.attributes["gpu.nvidia.com"].architecture in ["Ampere"]'
    )
    assert m.count == 4
    assert m.kept == ["topology.kubernetes.io/zone In [a]"]
    assert m.warnings == [
        'nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB is GFD\'s sanitised form of productName "NVIDIA A100-SXM4-80GB"',
        'nvidia.com/gpu.family=ampere is written "Ampere" in the driver\'s architecture attribute',
        "nvidia.com/gpu.count is not a device property: ask for the GPUs with the request's count instead",
    ]


def test_no_gpu_label_requirements_no_selector() -> None:
    req = compile_pod_spec(spec([{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]))
    assert migrate(req).selector is None
