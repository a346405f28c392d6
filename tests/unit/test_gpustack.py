"""capacity, mig, sharing, upgrade and the gpus inventory: one table per check, a sentence per case."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gpulabel.app.checks import parse_duration
from gpulabel.checks.capacity.rules import capacity
from gpulabel.checks.health.inventory import inventory
from gpulabel.checks.mig.rules import mig
from gpulabel.checks.registry import CHECKS
from gpulabel.checks.sharing.rules import sharing
from gpulabel.checks.upgrade.rules import upgrade
from gpulabel.cli.main import main
from gpulabel.errors import InputError
from gpulabel.model import gpustack as G
from gpulabel.model.cluster import ClusterState

NO_MANAGED_FIELDS = (
    "stuck detection skipped (no managedFields: capture with gpulabel snapshot or --show-managed-fields)"
)
NOW = datetime(2026, 11, 30, 4, 0, 0, tzinfo=UTC)
STUCK = 1800.0
GPU = {
    "nvidia.com/gpu.present": "true",
    "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
    "nvidia.com/gpu.count": "8",
    "nvidia.com/gpu.memory": "81920",
    "nvidia.com/gpu.replicas": "1",
    "nvidia.com/gpu.sharing-strategy": "none",
    "nvidia.com/gpu.deploy.device-plugin": "true",
}


def node(
    labels: dict[str, str],
    allocatable: dict[str, str] | None = None,
    written: dict[str, timedelta] | None = None,
    name: str = "n1",
) -> dict[str, Any]:
    """A Node; ``written`` maps label keys to how long ago their last write was (managedFields)."""
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if written:
        meta["managedFields"] = [
            {
                "manager": "mig-manager",
                "operation": "Update",
                "time": (NOW - ago).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "fieldsV1": {"f:metadata": {"f:labels": {f"f:{key}": {}}}},
            }
            for key, ago in written.items()
        ]
    obj: dict[str, Any] = {"kind": "Node", "metadata": meta}
    if allocatable is not None:
        obj["status"] = {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110", **allocatable}}
    return obj


def state(*objs: dict[str, Any]) -> ClusterState:
    return ClusterState.from_objects([("test", o) for o in objs])


def lines(findings: Any) -> list[str]:
    return [f.line() for f in findings]


# -- capacity ---------------------------------------------------------------------------

CAPACITY: list[tuple[str, dict[str, Any], list[str]]] = [
    ("eight GPUs labelled and advertised pass", node(GPU, {"nvidia.com/gpu": "8"}), []),
    (
        "GPUs labelled but none allocatable is no-allocatable",
        node({**GPU, "nvidia.com/gpu.count": "2"}, {"nvidia.com/gpu": "0"}),
        ["n1 nvidia.com/gpu no-allocatable"],
    ),
    (
        "no GPU resource at all is no-allocatable too",
        node(GPU, {}),
        ["n1 nvidia.com/gpu no-allocatable"],
    ),
    (
        "an isolated node is not expected to advertise",
        node({**GPU, "nvidia.com/gpu.deploy.operands": "false"}, {}),
        [],
    ),
    (
        "a node whose device plugin is switched off is not expected to advertise",
        node({**GPU, "nvidia.com/gpu.deploy.device-plugin": "false"}, {}),
        [],
    ),
    (
        "a node without status.allocatable in the snapshot is not judged",
        node(GPU, None),
        [],
    ),
    (
        "fewer GPUs advertised than labelled is a mismatch",
        node(GPU, {"nvidia.com/gpu": "7"}),
        ["n1 nvidia.com/gpu allocatable-mismatch"],
    ),
    (
        "time-slicing with 4 replicas advertises count x replicas",
        node(
            {**GPU, "nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"},
            {"nvidia.com/gpu": "32"},
        ),
        [],
    ),
    (
        "time-slicing advertising only the GPUs is a mismatch",
        node(
            {**GPU, "nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"},
            {"nvidia.com/gpu": "8"},
        ),
        ["n1 nvidia.com/gpu allocatable-mismatch"],
    ),
    (
        "a renamed shared resource is compared under its own name",
        node({**GPU, "nvidia.com/gpu.replicas": "2"}, {"nvidia.com/gpu.shared": "16"}),
        [],
    ),
    (
        "a mixed node with two profiles is checked per profile",
        node(
            {
                **GPU,
                "nvidia.com/mig.strategy": "mixed",
                "nvidia.com/mig-1g.10gb.count": "14",
                "nvidia.com/mig-3g.40gb.count": "4",
            },
            {"nvidia.com/mig-1g.10gb": "14", "nvidia.com/mig-3g.40gb": "2"},
        ),
        ["n1 nvidia.com/mig-3g.40gb allocatable-mismatch"],
    ),
    (
        "a mixed profile advertised without a label is a mismatch",
        node(
            {**GPU, "nvidia.com/mig.strategy": "mixed", "nvidia.com/mig-1g.10gb.count": "7"},
            {"nvidia.com/mig-1g.10gb": "7", "nvidia.com/mig-2g.20gb": "1"},
        ),
        ["n1 nvidia.com/mig-2g.20gb allocatable-mismatch"],
    ),
    (
        "a mixed-strategy node without MIG devices advertises whole GPUs",
        node({**GPU, "nvidia.com/mig.strategy": "mixed"}, {"nvidia.com/gpu": "8"}),
        [],
    ),
    (
        "on a mixed node the GPUs left out of MIG mode are not compared",
        node(
            {**GPU, "nvidia.com/mig.strategy": "mixed", "nvidia.com/mig-3g.40gb.count": "4"},
            {"nvidia.com/mig-3g.40gb": "4", "nvidia.com/gpu": "6"},
        ),
        [],
    ),
    (
        "GPUs advertised on a node without gpu.present are unlabelled",
        node({"nvidia.com/gpu.product": "NVIDIA-L4"}, {"nvidia.com/gpu": "1"}),
        ["n1 nvidia.com/gpu unlabelled-gpus"],
    ),
    (
        "gpu.present=false with GPUs advertised is unlabelled too",
        node({"nvidia.com/gpu.present": "false"}, {"nvidia.com/gpu": "2"}),
        ["n1 nvidia.com/gpu unlabelled-gpus"],
    ),
    (
        "NFD's NVIDIA PCI label without gpu.present is missing",
        node({"feature.node.kubernetes.io/pci-10de.present": "true"}, {}),
        ["n1 nvidia.com/gpu.present missing"],
    ),
    ("a CPU node passes", node({"kubernetes.io/os": "linux"}, {}), []),
]


@pytest.mark.parametrize(("obj", "want"), [c[1:] for c in CAPACITY], ids=[c[0] for c in CAPACITY])
def test_capacity(obj: dict[str, Any], want: list[str]) -> None:
    # on a cluster the GPU Operator manages (its ClusterPolicy in the input)
    assert lines(capacity(state(obj, OPERATOR_POLICY))) == want


def test_without_the_operator_nothing_owes_gpu_present() -> None:
    """No ClusterPolicy, no deploy label: a standalone device plugin's cluster, where nothing writes gpu.present."""
    pci_only = node({"feature.node.kubernetes.io/pci-10de.present": "true"}, {"nvidia.com/gpu": "1"})
    assert lines(capacity(state(pci_only))) == []
    assert lines(capacity(state(pci_only, OPERATOR_POLICY))) == [
        "n1 nvidia.com/gpu.present missing",
        "n1 nvidia.com/gpu unlabelled-gpus",
    ]


OPERATOR_POLICY = {"kind": "ClusterPolicy", "metadata": {"name": "cp"}, "spec": {}}


def test_a_cluster_policy_that_disables_the_device_plugin_expects_nothing() -> None:
    policy = {"kind": "ClusterPolicy", "metadata": {"name": "cp"}, "spec": {"devicePlugin": {"enabled": False}}}
    assert capacity(state(node(GPU, {}), policy)) == []


# -- mig ---------------------------------------------------------------------------------

MIG_NODE = {
    **GPU,
    "nvidia.com/mig.capable": "true",
    "nvidia.com/mig.strategy": "single",
    "nvidia.com/mig.config": "all-1g.10gb",
}
MIG: list[tuple[str, dict[str, Any], list[str]]] = [
    ("a successful layout passes", node({**MIG_NODE, "nvidia.com/mig.config.state": "success"}), []),
    (
        "a failed layout is failed",
        node({**MIG_NODE, "nvidia.com/mig.config.state": "failed"}),
        ["n1 nvidia.com/mig.config.state failed"],
    ),
    (
        "pending just under --stuck-after is not stuck, but slow (past half of it)",
        node(
            {**MIG_NODE, "nvidia.com/mig.config.state": "pending"},
            written={"nvidia.com/mig.config.state": timedelta(minutes=29, seconds=59)},
        ),
        ["n1 nvidia.com/mig.config.state slow"],
    ),
    (
        "pending for under half of --stuck-after is nothing yet",
        node(
            {**MIG_NODE, "nvidia.com/mig.config.state": "pending"},
            written={"nvidia.com/mig.config.state": timedelta(minutes=14, seconds=59)},
        ),
        [],
    ),
    (
        "pending just over --stuck-after is stuck",
        node(
            {**MIG_NODE, "nvidia.com/mig.config.state": "pending"},
            written={"nvidia.com/mig.config.state": timedelta(minutes=30, seconds=1)},
        ),
        ["n1 nvidia.com/mig.config.state stuck"],
    ),
    (
        "rebooting for hours is stuck",
        node(
            {**MIG_NODE, "nvidia.com/mig.config.state": "rebooting"},
            written={"nvidia.com/mig.config.state": timedelta(hours=3)},
        ),
        ["n1 nvidia.com/mig.config.state stuck"],
    ),
    (
        "a pending state without managedFields has no age and is not stuck",
        node({**MIG_NODE, "nvidia.com/mig.config.state": "pending"}),
        [],
    ),
    (
        "success long ago is never stuck",
        node(
            {**MIG_NODE, "nvidia.com/mig.config.state": "success"},
            written={"nvidia.com/mig.config.state": timedelta(days=9)},
        ),
        [],
    ),
    (
        "a MIG-INVALID product is mig-invalid",
        node({**MIG_NODE, "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-INVALID", "nvidia.com/gpu.count": "0"}),
        ["n1 nvidia.com/gpu.product mig-invalid"],
    ),
    (
        "a layout on a node without mig.capable is not-capable",
        node({**GPU, "nvidia.com/mig.config": "all-1g.5gb"}),
        ["n1 nvidia.com/mig.config not-capable"],
    ),
    (
        "all-disabled on a node without mig.capable is fine",
        node({**GPU, "nvidia.com/mig.config": "all-disabled", "nvidia.com/mig.capable": "false"}),
        [],
    ),
]


@pytest.mark.parametrize(("obj", "want"), [c[1:] for c in MIG], ids=[c[0] for c in MIG])
def test_mig(obj: dict[str, Any], want: list[str]) -> None:
    assert lines(mig(state(obj), NOW, STUCK)) == want


def test_a_strategy_that_differs_from_the_cluster_policy_is_a_mismatch() -> None:
    policy = {"kind": "ClusterPolicy", "metadata": {"name": "cp"}, "spec": {"mig": {"strategy": "mixed"}}}
    found = mig(state(node(MIG_NODE), policy), NOW, STUCK)
    assert lines(found) == ["n1 nvidia.com/mig.strategy mismatch"]
    assert found[0].detail == "single here, mixed in the ClusterPolicy"
    assert mig(state(node(MIG_NODE)), NOW, STUCK) == []  # no ClusterPolicy: nothing to compare
    per_node = node({**MIG_NODE, "nvidia.com/device-plugin.config": "mig-single"})
    assert mig(state(per_node, policy), NOW, STUCK) == []  # a per-node config chose its own strategy


# -- sharing ------------------------------------------------------------------------------

SHARING: list[tuple[str, dict[str, Any], list[str]]] = [
    ("replicas 1 with strategy none passes", node(GPU), []),
    (
        "replicas 2 with strategy none is inconsistent",
        node({**GPU, "nvidia.com/gpu.replicas": "2", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-SHARED"}),
        ["n1 nvidia.com/gpu.sharing-strategy inconsistent"],
    ),
    (
        "replicas 1 with time-slicing is inconsistent",
        node({**GPU, "nvidia.com/gpu.sharing-strategy": "time-slicing"}),
        ["n1 nvidia.com/gpu.sharing-strategy inconsistent"],
    ),
    (
        "replicas 2 with time-slicing and -SHARED passes",
        node(
            {
                **GPU,
                "nvidia.com/gpu.replicas": "2",
                "nvidia.com/gpu.sharing-strategy": "time-slicing",
                "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-SHARED",
            }
        ),
        [],
    ),
    (
        "replicas that are not a number are not-a-number",
        node({**GPU, "nvidia.com/gpu.replicas": "two"}),
        ["n1 nvidia.com/gpu.replicas not-a-number"],
    ),
    (
        "an unknown strategy is a bad-value",
        node({**GPU, "nvidia.com/gpu.sharing-strategy": "timeslicing"}),
        ["n1 nvidia.com/gpu.sharing-strategy bad-value"],
    ),
    (
        "-SHARED with replicas 1 is a shared-suffix",
        node({**GPU, "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-SHARED"}),
        ["n1 nvidia.com/gpu.product shared-suffix"],
    ),
    (
        "a renamed resource with replicas 2 needs no -SHARED",
        node(
            {**GPU, "nvidia.com/gpu.replicas": "2", "nvidia.com/gpu.sharing-strategy": "time-slicing"},
            {"nvidia.com/gpu.shared": "16"},
        ),
        [],
    ),
    (
        "-SHARED with a renamed resource is a shared-suffix",
        node(
            {
                **GPU,
                "nvidia.com/gpu.replicas": "2",
                "nvidia.com/gpu.sharing-strategy": "time-slicing",
                "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-SHARED",
            },
            {"nvidia.com/gpu.shared": "16"},
        ),
        ["n1 nvidia.com/gpu.product shared-suffix"],
    ),
    (
        "MPS on MIG devices is mps-on-mig",
        node(
            {
                **MIG_NODE,
                "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb-SHARED",
                "nvidia.com/gpu.replicas": "2",
                "nvidia.com/gpu.sharing-strategy": "mps",
            }
        ),
        ["n1 nvidia.com/gpu.sharing-strategy mps-on-mig"],
    ),
    (
        "MPS without MIG passes",
        node(
            {
                **GPU,
                "nvidia.com/gpu.replicas": "4",
                "nvidia.com/gpu.sharing-strategy": "mps",
                "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-SHARED",
            }
        ),
        [],
    ),
]


@pytest.mark.parametrize(("obj", "want"), [c[1:] for c in SHARING], ids=[c[0] for c in SHARING])
def test_sharing(obj: dict[str, Any], want: list[str]) -> None:
    assert lines(sharing(state(obj))) == want


# -- upgrade ------------------------------------------------------------------------------

UPGRADE: list[tuple[str, dict[str, Any], list[str]]] = [
    ("upgrade-done passes", node({**GPU, "nvidia.com/gpu-driver-upgrade-state": "upgrade-done"}), []),
    (
        "upgrade-failed is upgrade-failed",
        node({**GPU, "nvidia.com/gpu-driver-upgrade-state": "upgrade-failed"}),
        ["n1 nvidia.com/gpu-driver-upgrade-state upgrade-failed"],
    ),
    (
        "drain-required just under --stuck-after is not stuck, but slow",
        node(
            {**GPU, "nvidia.com/gpu-driver-upgrade-state": "drain-required"},
            written={"nvidia.com/gpu-driver-upgrade-state": timedelta(seconds=1799)},
        ),
        ["n1 nvidia.com/gpu-driver-upgrade-state slow"],
    ),
    (
        "drain-required for under half of --stuck-after is nothing yet",
        node(
            {**GPU, "nvidia.com/gpu-driver-upgrade-state": "drain-required"},
            written={"nvidia.com/gpu-driver-upgrade-state": timedelta(seconds=899)},
        ),
        [],
    ),
    (
        "drain-required just over --stuck-after is stuck",
        node(
            {**GPU, "nvidia.com/gpu-driver-upgrade-state": "drain-required"},
            written={"nvidia.com/gpu-driver-upgrade-state": timedelta(seconds=1801)},
        ),
        ["n1 nvidia.com/gpu-driver-upgrade-state stuck"],
    ),
    (
        "an operand paused for a driver upgrade in progress passes",
        node(
            {
                **GPU,
                "nvidia.com/gpu-driver-upgrade-state": "pod-restart-required",
                "nvidia.com/gpu.deploy.driver": "paused-for-driver-upgrade",
            }
        ),
        [],
    ),
    (
        "an operand paused for a driver upgrade that is done is paused-stuck",
        node(
            {
                **GPU,
                "nvidia.com/gpu-driver-upgrade-state": "upgrade-done",
                "nvidia.com/gpu.deploy.driver": "paused-for-driver-upgrade",
            }
        ),
        ["n1 nvidia.com/gpu.deploy.driver paused-stuck"],
    ),
    (
        "an operand paused for a MIG change while mig-manager works passes",
        node(
            {
                **MIG_NODE,
                "nvidia.com/mig.config.state": "rebooting",
                "nvidia.com/gpu.deploy.device-plugin": "paused-for-mig-change",
            }
        ),
        [],
    ),
    (
        "an operand paused for a MIG change after success is paused-stuck",
        node(
            {
                **MIG_NODE,
                "nvidia.com/mig.config.state": "success",
                "nvidia.com/gpu.deploy.dcgm-exporter": "paused-for-mig-change",
            }
        ),
        ["n1 nvidia.com/gpu.deploy.dcgm-exporter paused-stuck"],
    ),
    (
        "True is a bad-value",
        node({**GPU, "nvidia.com/gpu.deploy.dcgm": "True"}),
        ["n1 nvidia.com/gpu.deploy.dcgm bad-value"],
    ),
    (
        "ture is a bad-value",
        node({**GPU, "nvidia.com/gpu.deploy.dcgm": "ture"}),
        ["n1 nvidia.com/gpu.deploy.dcgm bad-value"],
    ),
    (
        "an empty deploy value is allowed",
        node({**GPU, "nvidia.com/gpu.deploy.dcgm": "", "nvidia.com/gpu.deploy.driver": "pre-installed"}),
        [],
    ),
    (
        "an unknown paused value is a bad-value",
        node({**GPU, "nvidia.com/gpu.deploy.dcgm": "paused-for-reasons"}),
        ["n1 nvidia.com/gpu.deploy.dcgm bad-value"],
    ),
]


@pytest.mark.parametrize(("obj", "want"), [c[1:] for c in UPGRADE], ids=[c[0] for c in UPGRADE])
def test_upgrade(obj: dict[str, Any], want: list[str]) -> None:
    assert lines(upgrade(state(obj), NOW, STUCK)) == want


def test_the_safe_repairs_are_offered_as_exact_commands() -> None:
    objs = [
        node({**GPU, "nvidia.com/gpu-driver-upgrade-state": "upgrade-failed"}, name="a"),
        node({**GPU, "nvidia.com/gpu.deploy.dcgm": "True"}, name="b"),
        node({**GPU, "nvidia.com/gpu.deploy.dcgm": "ture"}, name="c"),
        node({**GPU, "nvidia.com/gpu.deploy.driver": "paused-for-driver-upgrade"}, name="d"),
    ]
    repairs = {f.node: f.detail.partition("; repair: ")[2] or None for f in upgrade(state(*objs), NOW, STUCK)}
    assert repairs == {
        "a": "kubectl label node a nvidia.com/gpu-driver-upgrade-state=upgrade-required --overwrite",
        "b": "kubectl label node b nvidia.com/gpu.deploy.dcgm=true --overwrite",
        "c": None,  # a typo that could mean anything: no command
        "d": "kubectl label node d nvidia.com/gpu.deploy.driver=true --overwrite",
    }


# -- the inventory --------------------------------------------------------------------------


def test_the_inventory_counts_gpus_allocatable_and_requests_per_kind_and_pool() -> None:
    a100 = {**GPU, "nvidia.com/cuda.driver-version.major": "550", "pool": "train"}
    objs = [
        node(a100, {"nvidia.com/gpu": "8"}, name="a"),
        node(a100, {"nvidia.com/gpu": "8"}, name="b"),
        node({**a100, "pool": "infer", "nvidia.com/gpu.count": "2"}, {"nvidia.com/gpu": "2"}, name="c"),
        node({"kubernetes.io/os": "linux"}, {}, name="cpu"),
        {
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ml"},
            "spec": {
                "nodeName": "a",
                "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "3"}}}],
            },
            "status": {"phase": "Running"},
        },
        {
            "kind": "Pod",
            "metadata": {"name": "done", "namespace": "ml"},
            "spec": {
                "nodeName": "b",
                "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "8"}}}],
            },
            "status": {"phase": "Succeeded"},
        },
    ]
    (row,) = inventory(state(*objs))
    assert row.line() == (
        "product=NVIDIA-A100-SXM4-80GB driver=550 mig=- sharing=none nodes=3 gpus=18 mig_devices=- allocatable=18 "
        "usable=18 unhealthy=0 unschedulable=0 requested=3 free=15"
    )
    by_pool = inventory(state(*objs), by="pool")
    assert [r.line() for r in by_pool] == [
        "pool=train product=NVIDIA-A100-SXM4-80GB nodes=2 gpus=16 mig_devices=- allocatable=16 usable=16 unhealthy=0 "
        "unschedulable=0 requested=3 free=13",
        "pool=infer product=NVIDIA-A100-SXM4-80GB nodes=1 gpus=2 mig_devices=- allocatable=2 usable=2 unhealthy=0 "
        "unschedulable=0 requested=0 free=2",
    ]


MIXED_FLEET = Path(__file__).parents[2] / "examples" / "mixed-fleet.yaml"


def test_the_inventory_of_the_mixed_fleet_counts_gpus_not_mig_devices_and_lists_the_unlabelled() -> None:
    from gpulabel.checks.health.inventory import totals
    from gpulabel.cluster.snapshot import load_snapshots

    rows = inventory(load_snapshots([str(MIXED_FLEET)]))
    lines = [r.line() for r in rows]
    # MIG single: GFD's gpu.count (56) counts 1g.10gb devices, 7 to an H100: 8 GPUs
    assert (
        "product=NVIDIA-H100-80GB-HBM3-MIG-1g.10gb driver=550 mig=single sharing=none nodes=1 gpus=8 mig_devices=56 "
        "allocatable=56 usable=56 unhealthy=0 unschedulable=0 requested=14 free=42"
    ) in lines
    # the MIG strategy label on GPUs that cannot do MIG is not shown
    # a10-0 is cordoned: its 4 GPUs take no new pod, and free counts only usable GPUs
    assert (
        "product=NVIDIA-A10 driver=535 mig=- sharing=none nodes=2 gpus=8 mig_devices=- allocatable=8 usable=4 "
        "unhealthy=0 unschedulable=4 requested=2 free=2"
    ) in lines
    # NFD saw the NVIDIA PCI device on gpu-new-0; nothing of the GPU stack labelled it
    unlabelled = next(r for r in rows if r.group["product"] == "(unlabelled)")
    assert (unlabelled.nodes, unlabelled.names) == (1, ["gpu-new-0"])
    # MIG-INVALID: count 0, the GPUs are unknown
    assert "gpus=? mig_devices=0" in next(line for line in lines if "MIG-INVALID" in line)
    total = totals(rows)
    assert total.line() == (
        "total nodes=12 gpus=44+? mig_devices=104 allocatable=112 usable=108 unhealthy=0 unschedulable=4 "
        "requested=24 free=84"
    )
    assert total.nodes == sum(r.nodes for r in rows)


def test_gpus_by_must_be_a_label_key() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["gpus", "--snapshot", str(MIXED_FLEET), "--by", "pool name"], out, err) == 2
    assert err.getvalue().startswith("gpulabel: --by: 'pool name' is not a label key: ")
    assert err.getvalue().count("\n") == 1
    assert main(["gpus", "--snapshot", str(MIXED_FLEET), "--by", "example.com/pool"], out, err) == 0


# -- wiring ----------------------------------------------------------------------------------


def test_check_runs_the_gpu_stack_checks() -> None:
    assert {"capacity", "mig", "sharing", "upgrade"} <= {c.name for c in CHECKS}


@pytest.mark.parametrize(("text", "seconds"), [("30m", 1800), ("1h30m", 5400), ("90s", 90), ("45", 45)])
def test_stuck_after_reads_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5x", "m", "1.5h", "-1m"])
def test_stuck_after_refuses_what_is_not_a_duration(text: str) -> None:
    with pytest.raises(InputError):
        parse_duration(text)


def test_at_measures_ages_at_another_time(tmp_path: Any) -> None:

    stuck = node(
        {**MIG_NODE, "nvidia.com/mig.config.state": "pending"},
        written={"nvidia.com/mig.config.state": timedelta(minutes=40)},
    )
    path = tmp_path / "s.json"
    path.write_text(json.dumps(stuck))
    out, err = io.StringIO(), io.StringIO()
    assert main(["mig", "--snapshot", str(path), "--at", "2026-11-30T04:00:00Z"], out, err) == 1
    # the node's mig.strategy cannot be compared without a ClusterPolicy: said, not hidden
    assert (
        out.getvalue()
        == "n1 nvidia.com/mig.config.state stuck\nstrategy check skipped (no ClusterPolicy in the input)\n"
    )
    out = io.StringIO()
    assert main(["mig", "--snapshot", str(path), "--at", "2026-11-30T03:30:00Z"], out, err) == 0
    assert main(["mig", "--snapshot", str(path), "--at", "yesterday"], out, err) == 2
    assert "--at" in err.getvalue()


def test_the_commands_print_one_line_per_finding_and_exit_one(tmp_path: Any) -> None:

    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {"kind": "List", "items": [node({**GPU, "nvidia.com/gpu.deploy.dcgm": "True"}, {"nvidia.com/gpu": "8"})]}
        )
    )
    out, err = io.StringIO(), io.StringIO()
    assert main(["upgrade", "--snapshot", str(path), "-o", "wide"], out, err) == 1
    assert out.getvalue() == (
        "error n1 nvidia.com/gpu.deploy.dcgm bad-value ('True' is not true, false, pre-installed, "
        "paused-for-mig-change or paused-for-driver-upgrade: the operator keeps it and the operand stays off; "
        "repair: kubectl label node n1 nvidia.com/gpu.deploy.dcgm=true --overwrite)\n"
        f"{NO_MANAGED_FIELDS}\n"  # the node has no managedFields: stuck detection is off, and says so
    )
    out = io.StringIO()
    assert main(["capacity", "--snapshot", str(path)], out, err) == 0
    assert out.getvalue() == "OK\n"
    out = io.StringIO()
    assert main(["gpus", "--snapshot", str(path), "-o", "json"], out, err) == 0
    doc = json.loads(out.getvalue())
    assert doc["inventory"][0]["allocatable"] == 8
    group = ("product", "driver", "mig", "sharing")
    assert doc["totals"] == [{k: v for k, v in doc["inventory"][0].items() if k not in group}]
    out = io.StringIO()
    assert main(["gpus", "--snapshot", str(path), "-o", "table"], out, err) == 0
    assert out.getvalue().startswith("inventory:\n") and "rows:" not in out.getvalue()


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({"nvidia.com/gpu.count": "8", "nvidia.com/mig.capable": "true"}, []),  # mig. is not mig-
        ({}, []),
        # the prefix inside another key: the quick test lets it through, the key test does not
        ({"example.com/nvidia.com/mig-1g.10gb.count": "2"}, []),
        (
            {"nvidia.com/mig-2g.20gb.count": "1", "a": "b", "nvidia.com/mig-1g.10gb.count": "2"},
            [("nvidia.com/mig-2g.20gb.count", "1"), ("nvidia.com/mig-1g.10gb.count", "2")],
        ),
    ],
)
def test_mig_device_labels_are_the_keys_with_the_mig_device_prefix(
    labels: dict[str, str], expected: list[tuple[str, str]]
) -> None:
    assert G.mig_device_labels(labels) == expected
    assert G.mig_profile_counts(labels) == dict(sorted((k[15:-6], v) for k, v in expected))
