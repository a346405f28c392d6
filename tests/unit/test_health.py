"""The health check on snapshots built from the API's own shapes.

Shapes: a Node's ``status.capacity``/``status.allocatable`` and ``status.conditions`` (core/v1
``NodeStatus``, ``NodeCondition``: type, status, lastHeartbeatTime, lastTransitionTime, reason,
message); a Pod's ``status.containerStatuses[].allocatedResourcesStatus`` (core/v1 ``ResourceStatus``
{name, resources: [``ResourceHealth`` {resourceID, health}]}, KEP-4680); a ResourceClaim's
``status.devices[].conditions`` (resource/v1 ``AllocatedDeviceStatus``). Condition types: the
publishers' rows of ``checks.health.DEFAULT_CONDITIONS``.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from bench import draobjects as dra

from gpulabel.checks.engine.rootcause import root_causes
from gpulabel.checks.health.rules import DEFAULT_CONDITIONS
from gpulabel.checks.registry import BUILTIN, run_check, run_checks
from gpulabel.cli.main import main
from gpulabel.model.cluster import ClusterState
from tests.objects import as_list

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
LABELS = {
    "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.count": "8",
    "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
    "nvidia.com/gpu.memory": "81559",
    "nvidia.com/gpu.deploy.device-plugin": "true",
    "feature.node.kubernetes.io/pci-10de.present": "true",
}


def node(
    name: str = "gpu-1",
    capacity: int = 8,
    allocatable: int = 8,
    conditions: list[dict[str, Any]] | None = None,
    taints: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(LABELS)},
        "spec": {"taints": taints} if taints else {},
        "status": {
            "capacity": {"cpu": "96", "memory": "2063731308Ki", "pods": "110", "nvidia.com/gpu": str(capacity)},
            "allocatable": {"cpu": "95", "memory": "2000000000Ki", "pods": "110", "nvidia.com/gpu": str(allocatable)},
            "conditions": [ready, *(conditions or [])],
        },
    }


def pod(name: str, health: str, device: str = "GPU-3f2c4b7e-93d1-4e0c-8c4b-7a1e2d9f0b11") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "nodeName": "gpu-1",
            # as the API server stores it: requests defaulted from limits for an extended resource
            "containers": [
                {
                    "name": "trainer",
                    "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}},
                }
            ],
        },
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {
                    "name": "trainer",
                    "ready": True,
                    "restartCount": 0,
                    "allocatedResourcesStatus": [
                        {"name": "nvidia.com/gpu", "resources": [{"resourceID": device, "health": health}]}
                    ],
                }
            ],
        },
    }


def condition(kind: str, status: str, since: str = "2026-12-01T08:00:00Z", **more: str) -> dict[str, Any]:
    return {"type": kind, "status": status, "lastHeartbeatTime": since, "lastTransitionTime": since, **more}


def check(objects: list[dict[str, Any]], **opts: Any) -> list[str]:
    state = ClusterState.from_objects(("s.yaml", o) for o in objects)
    result = run_check("health", state, BUILTIN.options(now=NOW, **opts))
    return [f"{f.severity} {f.line()}" for f in result.findings]


def test_a_healthy_node_is_silent() -> None:
    assert check([node(conditions=[condition("GPUXIDErrors", "False")]), pod("train-0", "Healthy")]) == []


def test_a_lost_gpu_is_an_error_naming_the_device_and_the_pod_holding_it() -> None:
    objects = [node(allocatable=7), pod("train-0", "Unhealthy")]
    assert check(objects) == [
        "error gpu-1 nvidia.com/gpu gpus-lost 1/8 GPU-3f2c4b7e-93d1-4e0c-8c4b-7a1e2d9f0b11",
    ]
    state = ClusterState.from_objects(("s.yaml", o) for o in objects)
    result = run_checks(state, BUILTIN.options(now=NOW))
    (finding,) = [f for f in result.findings if f.check == "health"]
    assert "held by ml/train-0 container trainer" in finding.detail
    # capacity no longer calls the gap a label mismatch: the labels say 8 and the node has 8
    assert not [f for f in result.findings if f.check == "capacity"]
    (cause,) = root_causes(state.nodes, result.findings)
    assert (cause.link, cause.gpus, cause.finding.reason) == ("health", 1, "gpus-lost")


def test_allocatable_zero_is_the_plugin_gone_not_lost_gpus() -> None:
    # a stopped device plugin: the kubelet keeps capacity and advertises none (its grace period)
    state = ClusterState.from_objects([("s.yaml", node(allocatable=0))])
    result = run_checks(state, BUILTIN.options(now=NOW))
    assert [(f.check, f.reason) for f in result.findings] == [("capacity", "no-allocatable")]


def test_a_lost_gpu_nobody_reports_says_so() -> None:
    state = ClusterState.from_objects([("s.yaml", node(allocatable=6))])
    (f,) = run_check("health", state, BUILTIN.options(now=NOW)).findings
    assert f.args == ("2/8",) and "no pod reports which device" in f.detail


def test_unknown_health_is_a_warning_and_unhealthy_without_a_loss_an_error() -> None:
    unknown = check([node(), pod("a", "Unknown", "GPU-a")])
    assert unknown == ["warning gpu-1 nvidia.com/gpu device-unknown GPU-a ml/a trainer"]
    assert check([node(), pod("b", "Unhealthy", "GPU-b")]) == [
        "error gpu-1 nvidia.com/gpu device-unhealthy GPU-b ml/b trainer"
    ]


def test_a_gpu_condition_in_its_problem_state_is_an_error_said_with_its_age() -> None:
    xid = condition("GPUXIDErrors", "True", reason="XID79", message="GPU has fallen off the bus")
    assert check([node(conditions=[xid])]) == ["error gpu-1 condition GPUXIDErrors=True reason=XID79"]
    (said,) = run_check(
        "health", ClusterState.from_objects([("s", node(conditions=[xid]))]), BUILTIN.options(now=NOW)
    ).findings
    said_, _ = said.detail.split("; repair: ")  # the repair line: model/repairs.py (test_repairs.py)
    assert said_ == "GPU has fallen off the bus; since 2026-12-01T08:00:00Z, for 4h0m (more than 30m)"
    recent = condition("XIDErrors", "True", since="2026-12-01T11:55:00Z")
    assert check([node(conditions=[recent])]) == ["error gpu-1 condition XIDErrors=True"]
    (young,) = run_check(
        "health", ClusterState.from_objects([("s", node(conditions=[recent]))]), BUILTIN.options(now=NOW)
    ).findings
    # younger than --stuck-after: no age said
    assert young.detail.split("; repair: ")[0] == "no message; since 2026-12-01T11:55:00Z"
    (said,) = check([node(conditions=[condition("GpuXidError", "Unknown")])])
    assert said.startswith("warning gpu-1 condition-unknown GpuXidError=Unknown")


def test_kubelet_conditions_and_unknown_types_are_not_read_here() -> None:
    other = [condition("MemoryPressure", "True"), condition("KernelDeadlock", "True")]
    assert check([node(conditions=other)]) == []


def test_the_config_adds_a_condition_type_with_its_polarity_and_drops_a_default() -> None:
    custom = condition("ExampleGPUHealthy", "False", reason="DCGMDiagFailed")
    assert check([node(conditions=[custom])], health_conditions={"ExampleGPUHealthy": "False"}) == [
        "error gpu-1 condition ExampleGPUHealthy=False reason=DCGMDiagFailed"
    ]
    xid = condition("XIDErrors", "True")
    assert check([node(conditions=[xid])], health_conditions={"XIDErrors": "None"}) == []


def test_a_configured_health_taint_is_an_error_and_others_are_not() -> None:
    taints = [
        {"key": "example.com/gpu-quarantine", "value": "xid", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
    ]
    assert check([node(taints=taints)], health_taints=("example.com/gpu-quarantine",)) == [
        "error gpu-1 health-taint example.com/gpu-quarantine=xid:NoSchedule"
    ]
    assert check([node(taints=taints)]) == []
    # NVSentinel's documented quarantine taint is one by default (docs/INTEGRATIONS.md of NVIDIA/NVSentinel)
    quarantined = [{"key": "nvidia.com/gpu-xid-error", "value": "true", "effect": "NoSchedule"}]
    assert check([node(taints=quarantined)]) == ["error gpu-1 health-taint nvidia.com/gpu-xid-error=true:NoSchedule"]
    total = gpus_lines([node(taints=quarantined)])[-1]
    assert total.startswith("total nodes=1 gpus=8 mig_devices=- allocatable=8 usable=0 unhealthy=8")


def test_a_dra_device_the_claim_says_is_not_ready_is_named() -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "train-gpu", "namespace": "ml"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
        "status": {
            "allocation": {
                "devices": {
                    "results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": "gpu-1", "device": "gpu-0"}]
                }
            },
            "reservedFor": [{"resource": "pods", "name": "train-0", "uid": "u1"}],
            "devices": [
                {
                    "driver": "gpu.nvidia.com",
                    "pool": "gpu-1",
                    "device": "gpu-0",
                    "conditions": [
                        {"type": "Ready", "status": "False", "reason": "XID79", "message": "fallen off the bus"}
                    ],
                }
            ],
        },
    }
    assert check([node(), pod("train-0", "Healthy"), claim]) == [
        "error gpu-1 claim-device-not-ready gpu.nvidia.com/gpu-1/gpu-0 Ready=False ml/train-gpu"
    ]


def test_every_default_condition_names_where_it_comes_from() -> None:
    assert len({c.type for c in DEFAULT_CONDITIONS}) == len(DEFAULT_CONDITIONS)
    assert all(c.problem in ("True", "False") and "(" in c.source for c in DEFAULT_CONDITIONS)


# -- usable capacity (gpus) ------------------------------------------------------------------


def gpus_lines(objects: list[dict[str, Any]], by: str | None = None) -> list[str]:
    from gpulabel.checks.health.inventory import inventory_result

    state = ClusterState.from_objects(("s.yaml", o) for o in objects)
    return list(inventory_result(state, by).sections[0].text)


def test_gpus_free_counts_only_usable_unrequested_gpus() -> None:
    lost = node("lost", allocatable=7)
    cordoned = node("cordoned")
    cordoned["spec"]["unschedulable"] = True
    not_ready = node("not-ready")
    not_ready["status"]["conditions"][0]["status"] = "Unknown"
    # the taint named after the resource a GPU pod requests is tolerated by default (ExtendedResourceToleration)
    gke = node("gke", taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}])
    dedicated = node("dedicated", taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}])
    sick = node("sick", conditions=[condition("GPUXIDErrors", "True", reason="XID79")])
    lines = gpus_lines([lost, cordoned, not_ready, gke, dedicated, sick, pod("train-0", "Unhealthy")])
    product = "product=NVIDIA-H100-80GB-HBM3 driver=- mig=- sharing=-"
    assert lines == [
        f"{product} nodes=6 gpus=48 mig_devices=- allocatable=47 usable=15 unhealthy=9 unschedulable=24 requested=0 "
        "free=15",
        "total nodes=6 gpus=48 mig_devices=- allocatable=47 usable=15 unhealthy=9 unschedulable=24 requested=0 free=15",
    ]


def test_gpus_by_namespace_counts_requests_per_namespace_and_kueue_queue() -> None:
    queued = pod("q-0", "Healthy")
    queued["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-a"}
    waiting = pod("w-0", "Healthy")
    waiting["spec"].pop("nodeName")
    waiting["status"] = {"phase": "Pending"}
    assert gpus_lines([node(), pod("train-0", "Healthy"), queued, waiting], by="namespace") == [
        "namespace=ml pods=2 requested=1 pending=1",
        "namespace=ml queue=team-a pods=1 requested=1 pending=0",
    ]


def test_a_dra_only_cluster_is_counted_per_device_class() -> None:
    from gpulabel.cluster.snapshot import load_snapshots

    state = load_snapshots(["examples/dra-lab.json"])
    from gpulabel.checks.health.inventory import inventory_result

    result = inventory_result(state)
    assert [s.name for s in result.sections] == ["inventory", "totals", "deviceclasses"]
    (row,) = result.sections[2].rows
    assert row["deviceclass"] == "gpu.nvidia.com" and row["devices"] == 6
    assert "no GPU nodes" not in result.sections[0].text


def test_a_label_selector_counts_only_the_selected_nodes_devices() -> None:
    from dataclasses import replace

    from gpulabel.checks.health.inventory import inventory_result
    from gpulabel.cluster.snapshot import load_snapshots

    state = load_snapshots(["examples/dra-lab.json"])
    (everything,) = inventory_result(state).sections[2].rows
    first = min(state.nodes, key=lambda n: n.name)  # what `-l` leaves when it selects one node
    rows = inventory_result(replace(state, nodes=(first,))).sections[2].rows
    assert rows and 0 < rows[0]["devices"] < everything["devices"], (rows, everything)


# -- MIG profile names that disagree (capacity) ----------------------------------------------


def test_mig_profiles_the_labels_and_the_device_plugin_name_differently_are_one_finding() -> None:
    # GFD labelled 3g.21gb while the device plugin advertised 3g.20gb (a real report of the two disagreeing)
    mig = node(capacity=0, allocatable=0)
    mig["metadata"]["labels"].update(
        {
            "nvidia.com/mig.capable": "true",
            "nvidia.com/mig.strategy": "mixed",
            "nvidia.com/mig.config": "all-3g.20gb",
            "nvidia.com/mig.config.state": "success",
            "nvidia.com/mig-3g.21gb.count": "2",
            "nvidia.com/mig-3g.21gb.replicas": "1",
            "nvidia.com/mig-1g.10gb.count": "1",
        }
    )
    for part in ("capacity", "allocatable"):
        mig["status"][part].update({"nvidia.com/mig-3g.20gb": "2", "nvidia.com/mig-1g.10gb": "1"})
    state = ClusterState.from_objects([("s.yaml", mig)])
    found = run_check("capacity", state, BUILTIN.options(now=NOW)).findings
    assert [f"{f.severity} {f.line()}" for f in found] == [
        "warning gpu-1 mig-profile-mismatch labels: mig-3g.21gb (2); advertised: mig-3g.20gb (2)"
    ]


# -- GPU pods, widened (pending) -------------------------------------------------------------


def _pending_pod(name: str, selector: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"nodeSelector": selector, "containers": [{"name": "c", "image": "trainer"}]},
        "status": {"phase": "Pending"},
    }


def test_a_pod_selecting_a_key_the_gpu_stack_manages_or_only_gpu_nodes_carry_is_a_gpu_pod() -> None:
    from gpulabel.checks.pending.rules import GpuPods

    gpu = node("gpu-1")
    gpu["metadata"]["labels"]["example.com/accelerator-pool"] = "a"
    cpu = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cpu-1", "labels": {"zone": "a"}}}
    gpu["metadata"]["labels"]["zone"] = "a"
    pods = [
        _pending_pod("feature-file", {"feature.node.kubernetes.io/custom-gpu-training": "true"}),
        _pending_pod("sub-namespace", {"vendor.feature.node.kubernetes.io/infiniband": "true"}),
        _pending_pod("gpu-pool", {"example.com/accelerator-pool": "a"}),
        _pending_pod("zone", {"zone": "a"}),
        _pending_pod("nothing", {}),
    ]
    state = ClusterState.from_objects(("s.yaml", o) for o in [gpu, cpu, *pods])
    gpus = GpuPods(state.nodes)
    assert [p.name for p in state.pods if p in gpus] == ["feature-file", "sub-namespace", "gpu-pool"]
    # when every node is a GPU node, no key is one only GPU nodes carry
    only_gpu = ClusterState.from_objects(("s.yaml", o) for o in [gpu, *pods])
    assert [p.name for p in only_gpu.pods if p in GpuPods(only_gpu.nodes)] == ["feature-file", "sub-namespace"]


def test_pending_help_says_the_gpu_pod_rule(capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from gpulabel.cli.main import main
    from gpulabel.model.vocabulary import GPU_POD_RULE

    with pytest.raises(SystemExit):
        main(["pending", "--help"], io.StringIO(), io.StringIO())
    assert " ".join(GPU_POD_RULE.split()) in " ".join(capsys.readouterr().out.split())


def test_the_monitors_gpu_split_reads_the_configs_condition_types() -> None:
    from gpulabel.checks.health.rules import condition_table
    from gpulabel.controller.monitor_metrics import node_gpus
    from gpulabel.model.cluster import node_from_json

    sick = node_from_json(node("sick", conditions=[condition("AcmeGPUHealthy", "False", reason="ECC")]))
    assert node_gpus([sick]).fleet == (8, 0, 0)  # not a default type: usable
    table = condition_table({"AcmeGPUHealthy": "False"})  # the config file's health.conditions
    assert node_gpus([sick], conditions=table).fleet == (0, 8, 0)


# -- a DRA device condition on a node the input does not hold ---------------------------------------------------


def not_ready(pool: str, reserved_for: str = "train-0") -> dict[str, Any]:
    """A claim whose device (``pool``/gpu-0) its driver says is not ready (resource/v1 ``AllocatedDeviceStatus``)."""
    result = {"request": "gpu", "driver": "gpu.nvidia.com", "pool": pool, "device": "gpu-0"}
    ready = {"type": "Ready", "status": "False", "reason": "XID79", "message": "fallen off the bus"}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "train-gpu", "namespace": "ml"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
        "status": {
            "allocation": {"devices": {"results": [result]}},
            "reservedFor": [{"resource": "pods", "name": reserved_for, "uid": "u1"}],
            "devices": [{**{k: result[k] for k in ("driver", "pool", "device")}, "conditions": [ready]}],
        },
    }


SLICE_ON_GPU_9 = dra.resource_slice(
    "gpu-9-gpu.nvidia.com-x7k2p", [dra.gpu_device("gpu-0", 0, dra.GPUS[2], dra.DRIVER_VERSIONS[1])], node="gpu-9"
)
UNPLACED = (
    "error claim-device-not-ready gpu.nvidia.com/gpu-9/gpu-0 Ready=False ml/train-gpu "
    "slice=gpu-9-gpu.nvidia.com-x7k2p node=gpu-9"
)


def test_a_dra_device_condition_on_a_node_the_input_does_not_hold_is_one_line_naming_slice_and_node() -> None:
    # the slice names gpu-9 (a deleted node's slice, or a snapshot of some nodes): said, not dropped
    assert check([node(), not_ready("gpu-9"), SLICE_ON_GPU_9]) == [UNPLACED]
    # once the node is in the input, it is that node's finding, as any other
    assert check([node(), node("gpu-9"), not_ready("gpu-9"), SLICE_ON_GPU_9]) == [
        "error gpu-9 claim-device-not-ready gpu.nvidia.com/gpu-9/gpu-0 Ready=False ml/train-gpu"
    ]
    # no slice says where the device is, and the claim's pod is bound to a node the input does not hold
    bound = {**pod("train-0", "Healthy"), "spec": {**pod("train-0", "Healthy")["spec"], "nodeName": "gpu-7"}}
    assert check([node(), not_ready("gpu-9"), bound]) == [
        "error claim-device-not-ready gpu.nvidia.com/gpu-9/gpu-0 Ready=False ml/train-gpu node=gpu-7"
    ]
    # nothing says where: the node is unknown, and still the device is said
    assert check([node(), not_ready("gpu-9", reserved_for="gone")]) == [
        "error claim-device-not-ready gpu.nvidia.com/gpu-9/gpu-0 Ready=False ml/train-gpu node=?"
    ]


def test_the_unplaced_device_is_in_check_with_its_reason_and_not_with_l_which_left_its_node_out(
    tmp_path: Path,
) -> None:
    snapshot = tmp_path / "s.json"
    snapshot.write_text(json.dumps(as_list(node(), not_ready("gpu-9"), SLICE_ON_GPU_9)))
    out = io.StringIO()
    assert main(["check", "--snapshot", str(snapshot), "-o", "wide"], out, io.StringIO()) == 1
    wide = [line for line in out.getvalue().splitlines() if line.startswith("error claim-device-not-ready")]
    assert wide == [
        f"{UNPLACED} (XID79: fallen off the bus; ResourceSlice gpu-9-gpu.nvidia.com-x7k2p puts the device on node "
        "gpu-9, which is not in the input)"
    ]
    out = io.StringIO()
    # -l selects gpu-1 (a selector that selected no node would exit 2: app/selected.py)
    selected = ["check", "--snapshot", str(snapshot), "-l", "nvidia.com/gpu.present=true", "-o", "json"]
    assert main(selected, out, io.StringIO()) == 0
    doc = json.loads(out.getvalue())
    assert doc["summary"]["checks"]["health"]["findings"] == 0, doc["summary"]


def test_the_monitor_places_the_device_as_nodes_and_pods_come_and_go() -> None:
    from gpulabel.checks.engine.assessment import FullEvaluator
    from gpulabel.checks.engine.incremental.evaluator import IncrementalEvaluator
    from gpulabel.model.cluster import KIND

    def record(obj: dict[str, Any]) -> tuple[str, tuple[str, str], Any]:
        kind = KIND[obj["kind"]]
        meta = obj["metadata"]
        return kind.kind, (meta.get("namespace", ""), meta["name"]), kind.reader()(obj, "test")

    steps: list[list[dict[str, Any]]] = [
        [node(), not_ready("gpu-9", reserved_for="train-0"), SLICE_ON_GPU_9, pod("train-0", "Healthy")],
        [node("gpu-9")],  # the node joins: its own finding
        [],  # (deleted below) it leaves: unplaced again
    ]
    at = NOW.timestamp()
    seen = []
    for ev in (FullEvaluator(BUILTIN.options(now=NOW)), IncrementalEvaluator(BUILTIN.options(now=NOW))):
        lines = []
        kinds = {"Node", "Pod", "ResourceSlice", "ResourceClaim"}
        for kind in sorted(kinds):
            ev.reset(kind, [])
        for obj in steps[0] + steps[1]:
            kind, key, rec = record(obj)
            ev.apply(kind, key, rec)
            lines.append([f.line() for f in ev.assess(at).findings if f.check == "health"])
        ev.apply("Node", ("", "gpu-9"), None)
        lines.append([f.line() for f in ev.assess(at).findings if f.check == "health"])
        # no slice: the claim's pod places the device; bound to a node not in the input, then to gpu-1
        ev.apply("ResourceSlice", ("", SLICE_ON_GPU_9["metadata"]["name"]), None)
        lines.append([f.line() for f in ev.assess(at).findings if f.check == "health"])
        moved = {**pod("train-0", "Healthy"), "spec": {**pod("train-0", "Healthy")["spec"], "nodeName": "gpu-7"}}
        kind, key, rec = record(moved)
        ev.apply(kind, key, rec)
        lines.append([f.line() for f in ev.assess(at).findings if f.check == "health"])
        seen.append(lines)
    assert seen[0] == seen[1]
    unplaced = UNPLACED.removeprefix("error ")
    on_gpu_9 = "gpu-9 claim-device-not-ready gpu.nvidia.com/gpu-9/gpu-0 Ready=False ml/train-gpu"
    on_gpu_1 = "gpu-1 claim-device-not-ready gpu.nvidia.com/gpu-9/gpu-0 Ready=False ml/train-gpu"
    unknown = "claim-device-not-ready gpu.nvidia.com/gpu-9/gpu-0 Ready=False ml/train-gpu"
    assert seen[0] == [
        [],  # gpu-1 alone
        [f"{unknown} node=?"],  # the claim: no slice says where, nor a bound pod (its pod is not in the input)
        [unplaced],  # the slice on gpu-9
        [unplaced],  # its pod, bound to gpu-1, does not move a device its slice places
        [on_gpu_9],
        [unplaced],
        [on_gpu_1],  # no slice: where its pod is
        [f"{unknown} node=gpu-7"],
    ]
