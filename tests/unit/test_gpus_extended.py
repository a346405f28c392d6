"""``gpus`` counts extended resources a DeviceClass backs through the class's devices (section ``extended``),
on the nodes that do not advertise the resource, with the pods' requests; the scheduler's answer for the same
objects is ``test_dra_features.py``'s extended-resource rows (and, live, ``test_dra_binding_cluster.py``)."""

from __future__ import annotations

from typing import Any

from bench import draobjects as dra

from gpulabel.checks.health.inventory import inventory_result
from gpulabel.model.cluster import ClusterState
from tests.objects import node
from tests.unit.test_dra_features import A100, ANY, _ext_pod, _with_allocatable, held

IMPLICIT = f"deviceclass.resource.kubernetes.io/{ANY['metadata']['name']}"


def extended(*objects: dict[str, Any]) -> list[str]:
    state = ClusterState.from_objects((str(i), o) for i, o in enumerate(objects))
    result = inventory_result(state)
    return [line for s in result.sections if s.name == "extended" for line in s.text]


def gpus(name: str, n: int) -> dict[str, Any]:
    return dra.resource_slice(name, [dra.gpu_device(f"gpu-{i}", i, A100, "550.54.15") for i in range(n)], node=name)


def bound(name: str, resource: str, amount: str, node_name: str) -> dict[str, Any]:
    pod = _ext_pod(resource, amount)
    pod["metadata"]["name"] = name
    pod["spec"]["nodeName"] = node_name
    pod["status"]["phase"] = "Running"
    return pod


def test_an_explicit_name_is_counted_through_the_class_devices_with_requests_and_pending() -> None:
    mapped = {**ANY, "spec": {**ANY["spec"], "extendedResourceName": "example.com/gpu"}}
    nodes = [_with_allocatable(node("n1"), {}), _with_allocatable(node("n2"), {})]
    claim = held("p1-extended-resources-x", "gpu-0", pool="n1")
    objects = [mapped, gpus("n1", 2), gpus("n2", 1), *nodes, claim, bound("p1", "example.com/gpu", "1", "n1")]
    assert extended(*objects, _ext_pod("example.com/gpu", "2")) == [
        "extended=example.com/gpu deviceclass=any.example.com nodes=2 devices=3 allocated=1 free=2 "
        "requested=1 pending=2"
    ]


def test_the_implicit_name_shows_when_a_pod_asks_for_it_and_a_plugin_node_is_left_out() -> None:
    nodes = [_with_allocatable(node("n1"), {}), _with_allocatable(node("n2"), {IMPLICIT: "4"})]
    objects = [ANY, gpus("n1", 1), gpus("n2", 2), *nodes]
    assert extended(*objects) == []  # no explicit name, nobody asks: no row
    assert extended(*objects, bound("p", IMPLICIT, "3", "n2"), _ext_pod(IMPLICIT)) == [
        f"extended={IMPLICIT} deviceclass=any.example.com nodes=1 devices=1 allocated=0 free=1 requested=0 pending=1"
    ]  # n2 advertises it: its devices and its pod are the device plugin's
