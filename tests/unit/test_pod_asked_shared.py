"""Pods read with one load's table share what their containers ask (requests, nvidia.com resources, the ways
they see GPUs), and every record is the record each pod gets read alone: a resize in a bound pod's status,
pod-level resources, overhead, sidecars and annotations all still count (readers._asked)."""

from __future__ import annotations

import copy
import itertools
from typing import Any

from gpulabel.model.readers import pod_from_json
from tests.objects import pod

_CONTAINERS: list[list[dict[str, Any]]] = [
    [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "2"}}}],
    [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "2"}}}],  # the same again
    [
        {
            "name": "c",
            "image": "i",
            "resources": {"requests": {"memory": "1Gi"}, "limits": {"nvidia.com/gpu": "1"}},
            "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}],
            "securityContext": {"privileged": True},
        }
    ],
]
_INITS: list[list[dict[str, Any]] | None] = [
    None,
    [{"name": "side", "image": "i", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}}],
]
_LEVEL: list[dict[str, Any]] = [{}, {"resources": {"requests": {"cpu": "3"}}}, {"overhead": {"cpu": "250m"}}]
_STATUS: list[dict[str, Any]] = [
    {},
    {"containerStatuses": [{"name": "c", "allocatedResources": {"cpu": "4"}}]},
    {"containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "6"}}}]},
    {"conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]},
    {"resources": {"requests": {"cpu": "5"}}, "allocatedResources": {"cpu": "5"}},
]
_NOTES: list[dict[str, str] | None] = [None, {"cdi.k8s.io/gpu": "nvidia.com/gpu=0"}]


def _pods() -> list[dict[str, Any]]:
    out = []
    shapes = itertools.product(_CONTAINERS, _INITS, _LEVEL, _STATUS, ["", "node-a"], _NOTES)
    for i, (containers, inits, level, status, node, notes) in enumerate(shapes):
        spec: dict[str, Any] = {"containers": copy.deepcopy(containers), **copy.deepcopy(level)}
        if inits is not None:
            spec["initContainers"] = copy.deepcopy(inits)
        obj = pod("ns", f"p{i}", node, spec=spec)
        extra = copy.deepcopy(status)
        obj["status"]["conditions"] = obj["status"]["conditions"] + extra.pop("conditions", [])
        obj["status"].update(extra)
        if notes:
            obj["metadata"]["annotations"] = dict(notes)
        out.append(obj)
    return out


def test_every_pod_read_with_the_table_is_the_pod_read_alone() -> None:
    pods = _pods()
    table: dict[Any, Any] = {}
    for order in (pods, list(reversed(pods))):  # whichever pod of a kind comes first fills the table
        for obj in order:
            assert pod_from_json(obj, "f", table) == pod_from_json(obj, "f", None), obj["metadata"]["name"]
    # and the table did share: one pod unbound, its replica bound without a resize ask one object
    same = [pod_from_json(obj, "f", table) for obj in (pods[0], pods[2])]
    assert same[0].node_name == "" and same[1].node_name == "node-a"
    assert same[0].gpu_resources == ("nvidia.com/gpu",) and same[0].gpu_resources is same[1].gpu_resources


def test_a_resized_bound_pod_counts_its_status_not_its_replicas() -> None:
    spec = {"containers": copy.deepcopy(_CONTAINERS[0])}
    plain, resized = pod("ns", "a", "node-a", spec=spec), pod("ns", "b", "node-a", spec=copy.deepcopy(spec))
    resized["status"]["containerStatuses"] = [{"name": "c", "allocatedResources": {"cpu": "4"}}]
    table: dict[Any, Any] = {}
    first, second = pod_from_json(plain, "f", table), pod_from_json(resized, "f", table)
    assert first.requests["cpu"] == 1000 and second.requests["cpu"] == 4000
