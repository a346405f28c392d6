"""The unrequested check: running pods that see GPUs without requesting them.

The variable's values and what the toolkit makes of them are NVIDIA/nvidia-container-toolkit's (commit d34b304,
``internal/config/image/devices.go`` and ``cuda_image.go``; cited in ``model/gpusight.py``). The twin is the real
GPU Operator's snapshot (``examples/gpu-operator-cluster.yaml``): twelve operand pods that are privileged or set
``NVIDIA_VISIBLE_DEVICES=all`` (device plugin, validator, driver, toolkit, DCGM, dcgm-exporter, GFD, MIG
manager), each known by its owner DaemonSet, and none flagged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpulabel.checks.health.inventory import inventory_result
from gpulabel.checks.registry import BUILTIN, run_check
from gpulabel.cluster.snapshot import load_snapshots
from gpulabel.model.cluster import ClusterState
from gpulabel.model.gpusight import Sight, seen
from tests.unit.test_health import LABELS as GPU_LABELS

OPERATOR = Path(__file__).parents[2] / "examples" / "gpu-operator-cluster.yaml"


def node(name: str = "gpu-1", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(GPU_LABELS if labels is None else labels)},
        "status": {"allocatable": {"nvidia.com/gpu": "8"} if labels is None else {}},
    }


def pod(
    name: str,
    env: str | None = None,
    privileged: bool = False,
    annotations: dict[str, str] | None = None,
    gpus: int = 0,
    owner: tuple[str, str] | None = ("ReplicaSet", "rs-1"),
    phase: str = "Running",
    node_name: str = "gpu-1",
) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "main", "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"}
    if env is not None:
        c["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": env}]
    if privileged:
        c["securityContext"] = {"privileged": True}
    if gpus:
        c["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    meta: dict[str, Any] = {"name": name, "namespace": "ml", "annotations": annotations or {}}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": "x", "uid": owner[1]}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"nodeName": node_name, "containers": [c]},
        "status": {"phase": phase},
    }


def state(*objects: dict[str, Any]) -> ClusterState:
    return ClusterState.from_objects([("test", o) for o in objects], kinds=("DaemonSet",))


def found(*objects: dict[str, Any]) -> list[tuple[str, str, tuple[str, ...]]]:
    result = run_check("unrequested", state(*objects), BUILTIN.options())
    return [(f.severity, f.pod, f.args) for f in result.findings]


# NVIDIA_VISIBLE_DEVICES values and what the toolkit's NewVisibleDevices / devicesFromEnvvars make of them
VALUES = [
    ("all", "all"),
    ("0,1", "2"),
    ("GPU-0e2e9f5a-3f1c-4c7b-9d3a-1b2c3d4e5f60", "1"),
    (" 0 , ,3 ", "2"),  # parts trimmed, empty parts dropped
    ("0,all", "all"),  # the first all/none part decides
    ("none", None),  # the driver, no device
    ("none,all", None),
    ("void", None),
    ("0,void", None),  # any void part: nothing
    ("", None),
]


@pytest.mark.parametrize(("value", "devices"), VALUES)
def test_the_variable_reads_as_the_toolkit_reads_it(value: str, devices: str | None) -> None:
    got = seen([Sight("env", "main", value)])
    assert [s.devices for s in got] == ([devices] if devices else [])


def test_each_way_of_seeing_gpus_is_a_warning_naming_the_pod_and_the_way() -> None:
    assert found(
        node(),
        pod("env-all", env="all"),
        pod("env-list", env="0,1"),
        pod("priv", privileged=True),
        pod("cdi", annotations={"cdi.k8s.io/mgmt": "management.nvidia.com/gpu=all"}),
    ) == [
        ("warning", "ml/env-all", ("env",)),
        ("warning", "ml/env-list", ("env",)),
        ("warning", "ml/priv", ("privileged",)),
        ("warning", "ml/cdi", ("cdi",)),
    ]
    (f,) = run_check("unrequested", state(node(), pod("p", env="all")), BUILTIN.options()).findings
    assert f.node == "gpu-1"
    assert "sees all of the node's GPUs: container main: NVIDIA_VISIBLE_DEVICES=all" in f.detail
    assert "accept-nvidia-visible-devices-envvar-when-unprivileged=true" in f.detail


def test_the_healthy_twin_raises_nothing() -> None:
    """Requesting pods, hidden values, another vendor's CDI device, pods not Running, a node without GPUs, and an
    unowned DaemonSet pod whose DaemonSet is not an operand is still judged (the last row)."""
    cpu_node = node("cpu-1", labels={"kubernetes.io/hostname": "cpu-1"})
    assert (
        found(
            node(),
            cpu_node,
            pod("asks", env="all", gpus=1),
            pod("void", env="void"),
            pod("none", env="none"),
            pod("other-vendor", annotations={"cdi.k8s.io/x": "vendor.com/fpga=0"}),
            pod("done", env="all", phase="Succeeded"),
            pod("pending", env="all", phase="Pending"),
            pod("on-cpu", env="all", node_name="cpu-1"),
        )
        == []
    )


def test_the_real_operators_operands_are_not_flagged_and_a_workload_like_them_is() -> None:
    s = load_snapshots([str(OPERATOR)])
    seeing = [p for p in s.pods if p.sight]
    assert len(seeing) == 12 and all(seen(p.sight) for p in seeing)
    assert run_check("unrequested", s, BUILTIN.options()).findings == ()
    # the device plugin's pod as a workload's (its owner a ReplicaSet): flagged
    plugin = next(p for p in seeing if p.name.startswith("nvidia-device-plugin-daemonset"))
    import dataclasses

    workload = dataclasses.replace(plugin, name="copy", owners=(("ReplicaSet", "rs-9"),))
    again = dataclasses.replace(s, pods=(*s.pods, workload))
    (f,) = run_check("unrequested", again, BUILTIN.options()).findings
    assert (f.pod, f.reason) == ("gpu-operator/copy", "gpus-unrequested")


def test_a_daemonset_pod_is_not_judged_without_daemonsets_in_the_input() -> None:
    owned = pod("ds-pod", env="all", owner=("DaemonSet", "ds-1"))
    bare = ClusterState.from_objects([("test", o) for o in (node(), owned)])
    result = run_check("unrequested", bare, BUILTIN.options())
    assert result.findings == ()
    assert result.caveats and "DaemonSets not in the input" in result.caveats[0]
    # with DaemonSets read, a DaemonSet no operand's is judged
    assert found(node(), owned) == [("warning", "ml/ds-pod", ("env",))]


def test_gpus_says_the_gpus_are_in_use_outside_the_schedulers_count() -> None:
    result = inventory_result(state(node(), pod("env-all", env="all"), pod("asks", env="all", gpus=1)))
    section = next(s for s in result.sections if s.name == "unrequested")
    assert section.text == ("node=gpu-1 pod=ml/env-all sees=all how=env: in use outside the scheduler's count",)
    assert section.rows == ({"node": "gpu-1", "pod": "ml/env-all", "sees": "all", "how": ("env",)},)


def test_a_bundle_keeps_the_variable_and_redacts_the_other_values() -> None:
    from gpulabel.cluster.redact import Redactor

    doc = pod("p", env="0,1")
    doc["spec"]["containers"][0]["env"].append({"name": "API_TOKEN_X", "value": "s3cr3t"})
    redactor = Redactor()
    out = redactor.redact_document(doc)
    assert out["spec"]["containers"][0]["env"] == [
        {"name": "NVIDIA_VISIBLE_DEVICES", "value": "0,1"},
        {"name": "API_TOKEN_X", "value": "<redacted>"},
    ]
    assert redactor.counts["env-value"] == 1
    # a value an older bundle redacted says nothing
    assert seen([Sight("env", "main", "<redacted>")]) == []
