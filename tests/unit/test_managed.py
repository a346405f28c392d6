"""``managed``: GKE's managed device plugin beside the GPU Operator's on one node, and its healthy twins."""

from __future__ import annotations

from typing import Any

import pytest

from gpulabel.checks.registry import BUILTIN, run_check
from gpulabel.model.cluster import ClusterState
from tests.objects import gpu_node

GKE = {"cloud.google.com/gke-accelerator": "nvidia-l4", "nvidia.com/gpu.deploy.device-plugin": "true"}
OPTED_OUT = {"gke-no-default-nvidia-gpu-device-plugin": "true"}


def _policy(device_plugin: bool) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": {"devicePlugin": {"enabled": device_plugin}},
    }


def _found(*objects: dict[str, Any], **told: Any) -> list[tuple[str | None, str, str]]:
    state = ClusterState.from_objects(("t", o) for o in objects)
    return [(f.node, f.reason, f.severity) for f in run_check("managed", state, BUILTIN.options(**told)).findings]


def test_both_plugins_on_a_gke_node_is_an_error_naming_the_label() -> None:
    state = ClusterState.from_objects([("t", gpu_node("gke-a", **GKE))])
    (f,) = run_check("managed", state, BUILTIN.options()).findings
    assert (f.node, f.reason, f.severity, f.key) == (
        "gke-a",
        "two-device-plugins",
        "error",
        "gke-no-default-nvidia-gpu-device-plugin",
    )
    assert "gke-no-default-nvidia-gpu-device-plugin=true" in f.detail and "devicePlugin.enabled=false" in f.detail
    assert _found(gpu_node("gke-a", **GKE), _policy(True)) == [("gke-a", "two-device-plugins", "error")]


@pytest.mark.parametrize(
    ("labels", "objects", "told"),
    [
        ({**GKE, **OPTED_OUT}, (), {}),  # the pool opted out of GKE's plugin: the operator's alone
        ({"cloud.google.com/gke-accelerator": "nvidia-l4"}, (), {}),  # no operator plugin: GKE's alone
        ({**GKE, "nvidia.com/gpu.deploy.device-plugin": "false"}, (), {}),  # the operator's switched off here
        ({"nvidia.com/gpu.deploy.device-plugin": "true"}, (), {}),  # not a GKE node
        (GKE, (_policy(False),), {}),  # the ClusterPolicy keeps the operator's plugin off
        (GKE, (), {"disabled": ("device-plugin",)}),  # so does --disabled
    ],
    ids=["opted out", "no operator plugin", "deploy label false", "not GKE", "policy off", "flag off"],
)
def test_one_advertiser_per_node_raises_nothing(labels: dict[str, str], objects: tuple[Any, ...], told: Any) -> None:
    assert _found(gpu_node("n", **labels), *objects, **told) == []


def test_the_example_names_only_the_pool_that_did_not_opt_out() -> None:
    from pathlib import Path

    from gpulabel.app.checks import check_options
    from gpulabel.cluster.snapshot import load_snapshots

    state = load_snapshots([str(Path(__file__).parents[2] / "examples" / "gke-managed.yaml")])
    found = run_check("managed", state, check_options()).findings
    assert [(f.node, f.reason) for f in found] == [("gke-serve-pool-0", "two-device-plugins")]
