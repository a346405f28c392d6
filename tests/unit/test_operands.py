"""operands: per-node findings from deploy labels and the pods actually there."""

from __future__ import annotations

from typing import Any

import pytest

from gpulabel.checks.operands.daemonsets import operand_of_daemonset, untolerated_taints
from gpulabel.checks.operands.rules import check_operands
from gpulabel.model.cluster import ClusterState, daemonset_from_json, node_from_json
from tests.objects import daemonset, node, pod

OPS = ["driver", "container-toolkit", "device-plugin"]
UID = {op: f"uid-{op}" for op in [*OPS, "gpu-feature-discovery", "operator-validator"]}


def gated(op: str, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeSelector": {f"nvidia.com/gpu.deploy.{op}": "true"}, "containers": []}
    spec.update(extra)
    return daemonset("gpu-operator", f"ds-{op}", UID[op], spec, {"desiredNumberScheduled": 99})


def labels(**ops: str) -> dict[str, str]:
    return {f"nvidia.com/gpu.deploy.{k.replace('_', '-')}": v for k, v in ops.items()}


def running(op: str, node_name: str, ready: bool = True, phase: str = "Running", n: int = 0) -> dict[str, Any]:
    return pod("gpu-operator", f"{op}-{node_name}-{n}", node_name, owner_uid=UID[op], phase=phase, ready=ready)


def lines(*objects: dict[str, Any], disabled: tuple[str, ...] = ()) -> list[str]:
    state = ClusterState.from_objects(("t", o) for o in objects)
    return [f.line() for f in check_operands(state, disabled).findings]


ALL3 = [gated(op) for op in OPS]

CASES = [
    (
        "all three running in order is fine",
        [
            node("n", labels(driver="true", container_toolkit="true", device_plugin="true")),
            *(running(op, "n") for op in OPS),
        ],
        [],
    ),
    (
        "an expected operand with no pod is missing",
        [node("n", labels(driver="true", container_toolkit="true")), running("driver", "n")],
        ["n container-toolkit missing"],
    ),
    (
        "a device plugin without the toolkit is out of order",
        [node("n", labels(driver="true", device_plugin="true")), running("driver", "n"), running("device-plugin", "n")],
        ["n device-plugin out-of-order container-toolkit"],
    ),
    (
        "a host driver (false) satisfies the toolkit's prerequisite, and is said as disabled (info)",
        [node("n", labels(driver="false", container_toolkit="true")), running("container-toolkit", "n")],
        ["n driver disabled"],
    ),
    (
        "pre-installed satisfies the prerequisite too, and is said as pre-installed (info)",
        [node("n", labels(driver="pre-installed", container_toolkit="true")), running("container-toolkit", "n")],
        ["n driver pre-installed"],
    ),
    (
        "false on an operand outside the node's workload config is nobody's choice: the operator removes it",
        [node("n", labels(driver="true", vfio_manager="false", sandbox_validator="false")), running("driver", "n")],
        [],
    ),
    (
        "false on the device plugin's label is said once, not again for the MPS control daemon sharing it",
        [node("n", {**labels(device_plugin="false"), "nvidia.com/mps.capable": "true"})],
        ["n device-plugin disabled"],
    ),
    (
        "an isolated node's false labels are the isolation's: only isolated",
        [node("n", {**labels(dcgm="false"), "nvidia.com/gpu.deploy.operands": "false"})],
        ["n operands isolated"],
    ),
    (
        "no driver label at all leaves the toolkit out of order",
        [node("n", labels(container_toolkit="true")), running("container-toolkit", "n")],
        ["n container-toolkit out-of-order driver"],
    ),
    (
        "running but not ready is not-ready, and does not satisfy what depends on it",
        [
            node("n", labels(driver="true", container_toolkit="true")),
            running("driver", "n", ready=False),
            running("container-toolkit", "n"),
        ],
        ["n driver not-ready", "n container-toolkit out-of-order driver"],
    ),
    (
        "a Failed pod next to a Running one is not a finding",
        [node("n", labels(driver="true")), running("driver", "n", phase="Failed", n=1), running("driver", "n")],
        [],
    ),
    (
        "only a Failed pod means missing",
        [node("n", labels(driver="true")), running("driver", "n", phase="Failed")],
        ["n driver missing"],
    ),
    (
        "a pod bound to the node but Pending (init containers, image pull) is not-ready, not missing",
        [node("n", labels(driver="true")), running("driver", "n", phase="Pending", ready=False)],
        ["n driver not-ready"],
    ),
    (
        "a pod running where the label is false is unexpected",
        [node("n", labels(driver="false")), running("driver", "n")],
        ["n driver unexpected"],
    ),
    (
        "a paused deploy label is paused, with or without its pod, and never unexpected",
        [node("n", labels(driver="paused-for-driver-upgrade")), running("driver", "n")],
        ["n driver paused"],
    ),
    (
        "a paused prerequisite does not make its dependants out of order",
        [
            node("n", labels(driver="true", container_toolkit="paused-for-mig-change", device_plugin="true")),
            running("driver", "n"),
            running("device-plugin", "n"),
        ],
        ["n container-toolkit paused"],
    ),
    (
        "an isolated node is reported isolated, and its running operands are unexpected",
        [node("n", {**labels(driver="true"), "nvidia.com/gpu.deploy.operands": "false"}), running("driver", "n")],
        ["n operands isolated", "n driver unexpected"],
    ),
    (
        "an isolated node with nothing running is isolated, nothing missing",
        [node("n", {**labels(driver="true"), "nvidia.com/gpu.deploy.operands": "false"})],
        ["n operands isolated"],
    ),
    (
        "an enabled operand's empty deploy value is empty-deploy (gpu-operator#491: it never scheduled)",
        [node("n", labels(driver=""))],
        ["n driver empty-deploy"],
    ),
    (
        "an operand disabled cluster-wide is not expected and satisfies prerequisites",
        [node("n", labels(driver="true", container_toolkit="true")), running("container-toolkit", "n")],
        [],
    ),
    (
        "an operand disabled cluster-wide says nothing of its false label either",
        [node("n", labels(driver="false", container_toolkit="true")), running("container-toolkit", "n")],
        [],
    ),
]


@pytest.mark.parametrize(("name", "objects", "expected"), CASES, ids=[c[0] for c in CASES])
def test_operand_findings(name: str, objects: list[dict[str, Any]], expected: list[str]) -> None:
    disabled = ("driver",) if "disabled cluster-wide" in name else ()
    assert lines(*ALL3, *objects, disabled=disabled) == expected


def _written_by(manager: str, key: str) -> list[dict[str, Any]]:
    return [
        {
            "manager": manager,
            "operation": "Update",
            "time": "2026-11-30T10:00:00Z",
            "fieldsV1": {"f:metadata": {"f:labels": {f"f:{key}": {}}}},
        }
    ]


def test_a_false_deploy_label_names_its_writer_and_the_operators_own_false_is_not_a_choice() -> None:
    key = "nvidia.com/gpu.deploy.dcgm"
    team = node("n", labels(dcgm="false"), managed_fields=_written_by("kubectl-label", key))
    state = ClusterState.from_objects([("t", team)])
    (f,) = check_operands(state).findings
    assert (f.reason, f.operand, f.value) == ("disabled", "dcgm", "false")
    assert f.detail == f"{key}=false (written by kubectl-label): switched off on this node on purpose; " + (
        "the operator keeps the value"
    )
    # a false the operator's own field manager wrote (no version here does): its default, not a team's choice
    own = node("n", labels(dcgm="false"), managed_fields=_written_by("gpu-operator", key))
    assert check_operands(ClusterState.from_objects([("t", own)])).findings == []


def test_a_pre_installed_driver_with_its_pod_still_running_is_unexpected_not_pre_installed() -> None:
    assert lines(*ALL3, node("n", labels(driver="pre-installed")), running("driver", "n")) == ["n driver unexpected"]


def test_disabled_and_pre_installed_are_info_in_the_reason_table() -> None:
    from gpulabel.checks.operands.rules import REASONS

    assert (REASONS["disabled"].severity, REASONS["pre-installed"].severity) == ("info", "info")


def test_daemonset_status_numbers_are_ignored() -> None:
    # every DaemonSet claims desiredNumberScheduled=99; only pods count
    assert lines(*ALL3, node("n", labels(driver="true")), running("driver", "n")) == []


def test_an_operand_whose_daemonset_does_not_exist_is_missing_with_that_cause() -> None:
    state = ClusterState.from_objects([("t", node("n", labels(gpu_feature_discovery="true")))])
    (f,) = check_operands(state).findings
    assert f.line() == "n gpu-feature-discovery missing"
    assert f.detail == "no DaemonSet selects nvidia.com/gpu.deploy.gpu-feature-discovery=true"


def test_a_missing_operand_names_the_untolerated_taint() -> None:
    taint = {"key": "dedicated", "value": "ml", "effect": "NoSchedule"}
    state = ClusterState.from_objects([("t", gated("driver")), ("t", node("n", labels(driver="true"), taints=[taint]))])
    (f,) = check_operands(state).findings
    assert f.reason == "missing"
    assert "dedicated=ml:NoSchedule" in f.detail
    (acc,) = check_operands(state).daemonsets
    assert acc["excluded"] == [{"node": "n", "untolerated_taints": ["dedicated=ml:NoSchedule"]}]


def _pinned(node_name: str) -> dict[str, Any]:
    """The affinity the DaemonSet controller gives each of its pods."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    return {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
    }


def test_an_unscheduled_daemonset_pod_is_missing_and_quotes_the_scheduler() -> None:
    p = pod(
        "gpu-operator",
        "d",
        "",
        owner_uid=UID["driver"],
        phase="Pending",
        spec=_pinned("n"),
        conditions=[{"type": "PodScheduled", "status": "False", "message": "0/1 nodes are available"}],
    )
    state = ClusterState.from_objects([("t", gated("driver")), ("t", node("n", labels(driver="true"))), ("t", p)])
    (f,) = check_operands(state).findings
    assert f.line() == "n driver missing"
    assert f.detail == "pod gpu-operator/d Pending: 0/1 nodes are available"


WAITING = [
    (
        "a crash-looping container",
        {
            "phase": "Running",
            "containerStatuses": [
                {"name": "c", "restartCount": 7, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
            ],
        },
        "pod gpu-operator/driver-n-0 Running, waiting: CrashLoopBackOff, restarts 7",
    ),
    (
        "an image that cannot be pulled",
        {
            "phase": "Pending",
            "containerStatuses": [{"name": "c", "state": {"waiting": {"reason": "ImagePullBackOff"}}}],
        },
        "pod gpu-operator/driver-n-0 Pending, waiting: ImagePullBackOff, restarts 0",
    ),
    (
        "a secret that is not there",
        {
            "phase": "Pending",
            "containerStatuses": [{"name": "c", "state": {"waiting": {"reason": "CreateContainerConfigError"}}}],
        },
        "pod gpu-operator/driver-n-0 Pending, waiting: CreateContainerConfigError, restarts 0",
    ),
    (
        "init containers not done",
        {
            "phase": "Pending",
            "initContainerStatuses": [
                {"name": "a", "restartCount": 1, "state": {"terminated": {"exitCode": 0}}},
                {"name": "b", "restartCount": 2, "state": {"running": {}}},
            ],
            "containerStatuses": [{"name": "c", "state": {"waiting": {"reason": "PodInitializing"}}}],
        },
        "pod gpu-operator/driver-n-0 Pending, waiting: Init:1/2, restarts 3",
    ),
]


@pytest.mark.parametrize(("name", "status", "detail"), WAITING, ids=[c[0] for c in WAITING])
def test_a_waiting_pod_is_not_ready_with_its_reason_and_restarts(
    name: str, status: dict[str, Any], detail: str
) -> None:
    p = running("driver", "n", ready=False)
    p["status"].update(status)
    state = ClusterState.from_objects([("t", gated("driver")), ("t", node("n", labels(driver="true"))), ("t", p)])
    (f,) = check_operands(state).findings
    assert (f.line(), f.detail) == ("n driver not-ready", detail)


def test_cluster_policy_switches_operands_off() -> None:
    policy = {"kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"}, "spec": {"driver": {"enabled": False}}}
    assert (
        lines(
            *ALL3, policy, node("n", labels(driver="true", container_toolkit="true")), running("container-toolkit", "n")
        )
        == []
    )


DS_CASES = [
    ("a nodeSelector gate is found", {"nodeSelector": {"nvidia.com/gpu.deploy.dcgm": "true"}}, "dcgm"),
    (
        "a required affinity gate is found",
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "nvidia.com/gpu.deploy.mig-manager", "operator": "In", "values": ["true"]}
                                ]
                            }
                        ]
                    }
                }
            }
        },
        "mig-manager",
    ),
    ("a gate on another value is not an operand", {"nodeSelector": {"nvidia.com/gpu.deploy.dcgm": "yes"}}, None),
    (
        "the MPS control daemon shares the device plugin's deploy label but is its own operand",
        {"nodeSelector": {"nvidia.com/gpu.deploy.device-plugin": "true", "nvidia.com/mps.capable": "true"}},
        "mps-control-daemon",
    ),
    (
        "the device plugin's deploy label alone is the device plugin",
        {"nodeSelector": {"nvidia.com/gpu.deploy.device-plugin": "true"}},
        "device-plugin",
    ),
    (
        "an extra requirement the catalogue does not know keeps the deploy label's operand",
        {"nodeSelector": {"nvidia.com/gpu.deploy.dcgm": "true", "example.com/pool": "a"}},
        "dcgm",
    ),
    (
        "a deploy label the catalogue does not know names its own operand",
        {"nodeSelector": {"nvidia.com/gpu.deploy.future-thing": "true"}},
        "future-thing",
    ),
    ("an ungated DaemonSet is not an operand", {"nodeSelector": {"kubernetes.io/os": "linux"}}, None),
]


@pytest.mark.parametrize(("name", "spec", "operand"), DS_CASES, ids=[c[0] for c in DS_CASES])
def test_operand_of_daemonset(name: str, spec: dict[str, Any], operand: str | None) -> None:
    ds = daemonset_from_json(daemonset("ns", "x", "u", {**spec, "containers": []}))
    assert operand_of_daemonset(ds) == operand


TAINT_CASES = [
    ("a PreferNoSchedule taint never filters", {"key": "a", "effect": "PreferNoSchedule"}, [], False),
    ("an untolerated NoSchedule taint filters", {"key": "a", "value": "b", "effect": "NoSchedule"}, [], True),
    (
        "an empty-key Exists toleration tolerates everything",
        {"key": "a", "effect": "NoExecute"},
        [{"operator": "Exists"}],
        False,
    ),
    (
        "an empty effect matches every effect",
        {"key": "a", "value": "b", "effect": "NoExecute"},
        [{"key": "a", "operator": "Equal", "value": "b"}],
        False,
    ),
    (
        "Equal compares values",
        {"key": "a", "value": "b", "effect": "NoSchedule"},
        [{"key": "a", "value": "c", "effect": "NoSchedule"}],
        True,
    ),
    (
        "the controller's own unschedulable toleration applies",
        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
        [],
        False,
    ),
    (
        "network-unavailable needs hostNetwork",
        {"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"},
        [],
        True,
    ),
]


@pytest.mark.parametrize(("name", "taint", "tolerations", "filters"), TAINT_CASES, ids=[c[0] for c in TAINT_CASES])
def test_daemonset_taint_toleration(
    name: str, taint: dict[str, str], tolerations: list[dict[str, str]], filters: bool
) -> None:
    ds = daemonset_from_json(daemonset("ns", "x", "u", {"tolerations": tolerations, "containers": []}))
    n = node_from_json(node("n", taints=[taint]))
    assert bool(untolerated_taints(ds, n)) is filters


def test_an_mps_daemon_pod_left_on_a_node_that_lost_mps_capable_is_unexpected_and_says_why() -> None:
    mps = daemonset(
        "gpu-operator",
        "nvidia-device-plugin-mps-control-daemon",
        "uid-mps",
        {
            "nodeSelector": {"nvidia.com/gpu.deploy.device-plugin": "true", "nvidia.com/mps.capable": "true"},
            "containers": [],
        },
    )
    objs = [*ALL3, mps, node("n", labels(device_plugin="true")), running("device-plugin", "n")]
    objs.append(pod("gpu-operator", "mps-n", "n", owner_uid="uid-mps"))
    state = ClusterState.from_objects(("t", o) for o in objs)
    findings = check_operands(state).findings
    assert [(f.line(), f.detail.split("; ")[-1]) for f in findings] == [
        (
            "n device-plugin out-of-order container-toolkit",
            "device-plugin is running but container-toolkit is not running and ready on this node",
        ),
        ("n mps-control-daemon unexpected", "the node lacks nvidia.com/mps.capable=true"),
        (
            "n mps-control-daemon out-of-order container-toolkit",
            "mps-control-daemon is running but container-toolkit is not running and ready on this node",
        ),
    ]


def test_on_a_vm_passthrough_node_a_false_sandbox_operand_is_disabled_and_a_false_container_one_is_not() -> None:
    policy = {
        "kind": "ClusterPolicy",
        "metadata": {"name": "p"},
        "spec": {"sandboxWorkloads": {"enabled": True}, "sandboxDevicePlugin": {"enabled": True}},
    }
    vm = node(
        "vm",
        {
            **labels(sandbox_device_plugin="false", sandbox_validator="true", dcgm="false"),
            "nvidia.com/gpu.workload.config": "vm-passthrough",
        },
    )
    state = ClusterState.from_objects([("t", policy), ("t", vm)])
    found = [f.line() for f in check_operands(state).findings if f.reason == "disabled"]
    assert found == ["vm sandbox-device-plugin disabled"]
