"""Verdicts you can run unattended (issue 22), on labcluster with the real GPU Operator.

Severities, the exit policy (0 below --fail-level, 1 at or above it), the GPU-pod filter of pending,
the config file and a baseline, each on a node of its own (``-l`` keeps each run to that node).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from gpulabel_run import gpulabel
from labcluster_support import GPU_OPERATOR_NAMESPACE as NS
from labcluster_support import LabCluster, wait_for
from live_snapshot import live_as_on_a_snapshot
from test_gpu_operator_cluster import CONTAINER_SETS, DEPLOY, GFD, deploy_labels, running_sets, wait_sets


def only(node: str) -> tuple[str, str]:
    return ("-l", f"kubernetes.io/hostname={node}")


def run(cluster: LabCluster, *args: str) -> tuple[int, str]:
    res = gpulabel(cluster.kubeconfig, *args)
    assert res.returncode in (0, 1), res.stderr
    return res.returncode, res.stdout


def test_an_isolated_node_is_one_info_line_and_exit_zero(gpu_operator: LabCluster, make_gpu_node: Any) -> None:
    make_gpu_node("v-iso", GFD, gpus=1)
    wait_sets(gpu_operator, "v-iso", CONTAINER_SETS)
    assert gpulabel(gpu_operator.kubeconfig, "isolate", "v-iso").returncode == 0
    wait_for(lambda: deploy_labels(gpu_operator, "v-iso") == {f"{DEPLOY}operands": "false"}, timeout=60)
    wait_sets(gpu_operator, "v-iso", set())
    assert run(gpu_operator, "operands", *only("v-iso")) == (0, "v-iso operands isolated\n")
    code, wide = run(gpu_operator, "operands", *only("v-iso"), "-o", "wide")
    assert wide.startswith("info v-iso operands isolated (")
    doc = json.loads(run(gpu_operator, "operands", *only("v-iso"), "-o", "json")[1])
    assert [(f["reason"], f["severity"]) for f in doc["findings"]] == [("isolated", "info")]
    assert doc["summary"]["severities"] == {"error": 0, "warning": 0, "info": 1}
    code, out = run(gpu_operator, "check", *only("v-iso"))
    assert code == 0 and "operands: 1 finding(s) isolated=1" in out.splitlines(), out


def test_paused_while_mig_pending_is_info_and_left_after_success_is_an_error(
    gpu_operator: LabCluster, make_gpu_node: Any
) -> None:
    make_gpu_node("v-mig", {**GFD, "nvidia.com/mig.capable": "true"}, gpus=1)
    wait_sets(gpu_operator, "v-mig", CONTAINER_SETS | {"nvidia-mig-manager"})
    # what mig-manager writes while it reconfigures
    gpu_operator.kubectl(
        "label",
        "node",
        "v-mig",
        "--overwrite",
        "nvidia.com/mig.config.state=pending",
        f"{DEPLOY}device-plugin=paused-for-mig-change",
    )
    wait_for(lambda: "nvidia-device-plugin-daemonset" not in running_sets(gpu_operator, "v-mig"), timeout=60)
    assert run(gpu_operator, "operands", *only("v-mig")) == (0, "v-mig device-plugin paused\n")
    assert run(gpu_operator, "upgrade", *only("v-mig")) == (0, "OK\n")
    assert run(gpu_operator, "mig", *only("v-mig")) == (0, "OK\n")
    code, out = run(gpu_operator, "check", *only("v-mig"))
    assert code == 0, out
    # the change is over, the pause is left behind: an error once the threshold has passed
    gpu_operator.kubectl("label", "node", "v-mig", "--overwrite", "nvidia.com/mig.config.state=success")
    assert run(gpu_operator, "upgrade", *only("v-mig"), "--stuck-after", "1h") == (0, "OK\n")
    time.sleep(3)
    assert run(gpu_operator, "upgrade", *only("v-mig"), "--stuck-after", "2s") == (
        1,
        f"v-mig {DEPLOY}device-plugin paused-stuck\n",
    )
    code, wide = run(gpu_operator, "upgrade", *only("v-mig"), "--stuck-after", "2s", "-o", "wide")
    assert wide.startswith(f"error v-mig {DEPLOY}device-plugin paused-stuck (paused-for-mig-change but ")


def test_a_cpu_pod_pending_on_a_pvc_is_counted_as_info(gpu_operator: LabCluster, make_gpu_node: Any) -> None:
    make_gpu_node("v-cpu", gpu=False)
    gpu_operator.kubectl("create", "namespace", "v-pvc")
    wait_for(
        lambda: gpu_operator.kubectl("get", "serviceaccount", "default", "-n", "v-pvc", check=False).returncode == 0,
        timeout=30,
    )
    try:
        gpu_operator.apply(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data", "namespace": "v-pvc"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "none-such",
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        )
        gpu_operator.apply(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "etl", "namespace": "v-pvc"},
                "spec": {
                    "containers": [{"name": "c", "image": "busybox"}],
                    "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
                },
            }
        )

        def scheduled_message() -> str:
            pod = gpu_operator.get("pod", "etl", "-n", "v-pvc")
            return next(
                (c.get("message", "") for c in pod["status"].get("conditions", []) if c["type"] == "PodScheduled"), ""
            )

        wait_for(lambda: "PersistentVolumeClaim" in scheduled_message(), timeout=60, message=scheduled_message)
        assert run(gpu_operator, "pending", "-n", "v-pvc") == (0, "OK\n")
        doc = json.loads(run(gpu_operator, "pending", "-n", "v-pvc", "-o", "json")[1])
        assert doc["summary"]["other_pending"] == 1 and doc["summary"]["severities"]["info"] == 1
        code, out = run(gpu_operator, "check", "-n", "v-pvc")
        pending_line = "pending: OK (info: 1 other Pending pod(s), not GPU pods (--all-pods lists them))"
        assert pending_line in out.splitlines(), out
        code, out = run(gpu_operator, "pending", "-n", "v-pvc", "--all-pods", "-o", "json")
        found = json.loads(out)["findings"]
        assert code == 0 and {(f["pod"], f["reason"], f["severity"]) for f in found} == {("v-pvc/etl", "fits", "info")}
    finally:  # its Pending pod gone before the next test, which would count it
        gpu_operator.kubectl("delete", "pod", "etl", "-n", "v-pvc", "--grace-period=0", "--force", "--timeout=60s")
        gpu_operator.kubectl("delete", "namespace", "v-pvc", "--wait=false")


def test_empty_deploy_labels_are_a_warning_in_plain_check(gpu_operator: LabCluster, make_gpu_node: Any) -> None:
    make_gpu_node("v-empty", {**GFD, f"{DEPLOY}dcgm": ""}, gpus=1)
    wait_sets(gpu_operator, "v-empty", CONTAINER_SETS - {"nvidia-dcgm"})
    assert deploy_labels(gpu_operator, "v-empty")[f"{DEPLOY}dcgm"] == ""
    assert run(gpu_operator, "operands", *only("v-empty")) == (0, "v-empty dcgm empty-deploy\n")
    code, out = run(gpu_operator, "check", *only("v-empty"))
    assert code == 0 and "operands: 1 finding(s) empty-deploy=1" in out.splitlines(), out
    # one label, one finding: operands' (which operand it keeps away; the one that pages); audit says it only
    # where operands does not run (issue 34: a node read alone), and the audit command reads nodes alone
    assert "audit: OK" in out.splitlines(), out
    assert "total: 1 finding(s) error=0 warning=1 info=0" in out.splitlines(), out
    assert run(gpu_operator, "audit", *only("v-empty")) == (0, f"v-empty {DEPLOY}dcgm empty-deploy\n")
    assert run(gpu_operator, "check", *only("v-empty"), "--fail-level", "warning")[0] == 1


def test_a_deploy_label_false_is_disabled_and_a_pre_installed_driver_is_info(
    gpu_operator: LabCluster, make_gpu_node: Any
) -> None:
    make_gpu_node("v-off", {**GFD, f"{DEPLOY}driver": "pre-installed"}, gpus=1)
    wait_sets(gpu_operator, "v-off", CONTAINER_SETS - {"nvidia-driver-daemonset"})
    wait_for(lambda: deploy_labels(gpu_operator, "v-off").get(f"{DEPLOY}dcgm") == "true", timeout=60)
    # a team switches dcgm off on this node; a false on an operand of another workload config the operator
    # deletes (so it is nobody's choice), and it writes no false of its own
    gpu_operator.kubectl("label", "node", "v-off", "--overwrite", f"{DEPLOY}dcgm=false", f"{DEPLOY}vfio-manager=false")
    wait_for(lambda: "nvidia-dcgm" not in running_sets(gpu_operator, "v-off"), timeout=60)
    wait_for(lambda: f"{DEPLOY}vfio-manager" not in deploy_labels(gpu_operator, "v-off"), timeout=60)
    labels = deploy_labels(gpu_operator, "v-off")
    assert (labels[f"{DEPLOY}dcgm"], labels[f"{DEPLOY}driver"]) == ("false", "pre-installed")
    assert [k for k, v in labels.items() if v == "false"] == [f"{DEPLOY}dcgm"]
    assert run(gpu_operator, "operands", *only("v-off")) == (0, "v-off driver pre-installed\nv-off dcgm disabled\n")
    code, wide = run(gpu_operator, "operands", *only("v-off"), "-o", "wide")
    assert [line for line in wide.splitlines() if not line.startswith("# ")] == [  # the DaemonSets' lines apart
        f"info v-off driver pre-installed ({DEPLOY}driver=pre-installed: provided on the host, outside the "
        "operator; no pod of it is expected)",
        f"info v-off dcgm disabled ({DEPLOY}dcgm=false (written by kubectl-label): switched off on this node on "
        "purpose; the operator keeps the value)",
    ]
    code, out = run(gpu_operator, "check", *only("v-off"))
    assert code == 0 and "operands: 2 finding(s) pre-installed=1 disabled=1" in out.splitlines(), out
    assert "total: 2 finding(s) error=0 warning=0 info=2" in out.splitlines(), out
    assert not [line for line in out.splitlines() if line.startswith("cause ")], out
    assert run(gpu_operator, "check", *only("v-off"), "--fail-level", "warning")[0] == 0


def test_a_cordoned_not_ready_gpu_node_is_a_warning(
    gpu_operator: LabCluster, make_gpu_node: Any, tmp_path: Path
) -> None:
    make_gpu_node("v-down", GFD, gpus=1)
    wait_sets(gpu_operator, "v-down", CONTAINER_SETS)
    gpu_operator.kubectl("cordon", "v-down")
    assert run(gpu_operator, "capacity", *only("v-down"), "-o", "wide") == (
        0,
        "warning v-down cordoned (spec.unschedulable is true)\n",
    )
    assert run(gpu_operator, "capacity", *only("v-down"), "--fail-level", "warning")[0] == 1
    # kwok's node-initialize stage sets Ready=True again as soon as it is changed: NotReady is shown on the
    # API server's own Node object with its Ready condition turned False, read as a snapshot
    node = gpu_operator.get("node", "v-down")
    for condition in node["status"]["conditions"]:
        if condition["type"] == "Ready":
            condition.update(status="False", reason="KubeletNotReady")
    path = tmp_path / "down.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node]}))
    res = gpulabel(gpu_operator.kubeconfig, "capacity", "--snapshot", str(path), "-o", "wide")
    assert (res.returncode, res.stdout.splitlines()) == (
        0,
        [
            "warning v-down node-not-ready (condition Ready is False)",
            "warning v-down cordoned (spec.unschedulable is true)",
        ],
    ), res.stderr


def test_config_ignore_typo_and_baseline(gpu_operator: LabCluster, make_gpu_node: Any, tmp_path: Path) -> None:
    make_gpu_node("v-cfg", {**GFD, f"{DEPLOY}dcgm": ""}, gpus=1)
    wait_sets(gpu_operator, "v-cfg", CONTAINER_SETS - {"nvidia-dcgm"})
    assert run(gpu_operator, "operands", *only("v-cfg")) == (0, "v-cfg dcgm empty-deploy\n")
    # an ignore rule silences exactly the finding it names
    config = tmp_path / "config.yaml"
    config.write_text(
        "ignore:\n"
        "  - check: operands\n"
        "    reason: empty-deploy\n"
        "    nodes: kubernetes.io/hostname=v-cfg\n"
        "    comment: dcgm is switched off by hand on v-cfg\n"
    )
    assert run(gpu_operator, "operands", *only("v-cfg"), "--config", str(config)) == (0, "OK\n")
    # a typo: one line naming file, line and key, exit 2, before the cluster is read
    typo = tmp_path / "typo.yaml"
    typo.write_text("ignore:\n  - check: operands\n    reasn: empty-deploy\n    comment: x\n")
    res = gpulabel(gpu_operator.kubeconfig, "operands", *only("v-cfg"), "--config", str(typo))
    assert (res.returncode, res.stdout, res.stderr) == (
        2,
        "",
        f"gpulabel: {typo}:3: ignore[0].reasn: unknown key; one of check, reason, nodes, namespace, pod, comment\n",
    )
    # a baseline: the old finding no longer fails, a new one does
    base = tmp_path / "base.json"
    base.write_text(run(gpu_operator, "operands", *only("v-cfg"), "-o", "json")[1])
    warn = ("--fail-level", "warning")
    assert run(gpu_operator, "operands", *only("v-cfg"), *warn)[0] == 1
    assert run(gpu_operator, "operands", *only("v-cfg"), *warn, "--baseline", str(base)) == (
        0,
        "v-cfg dcgm empty-deploy\n",
    )
    gpu_operator.kubectl("label", "node", "v-cfg", "--overwrite", f"{DEPLOY}dcgm-exporter=")
    wait_for(lambda: "nvidia-dcgm-exporter" not in running_sets(gpu_operator, "v-cfg"), timeout=60)
    code, out = run(gpu_operator, "operands", *only("v-cfg"), *warn, "--baseline", str(base))
    assert (code, out) == (1, "v-cfg dcgm empty-deploy\nv-cfg dcgm-exporter empty-deploy\n")
    assert NS == "gpu-operator"


def test_a_snapshot_gives_the_same_check_as_the_live_run(
    gpu_operator: LabCluster, make_gpu_node: Any, tmp_path: Path
) -> None:
    make_gpu_node("v-snap", {**GFD, f"{DEPLOY}dcgm": ""}, gpus=1)
    wait_sets(gpu_operator, "v-snap", CONTAINER_SETS - {"nvidia-dcgm"})
    path = tmp_path / "cluster.json"
    res = gpulabel(gpu_operator.kubeconfig, "snapshot", "-o", str(path))
    assert (res.returncode, res.stdout) == (0, f"{path}: {res.stdout.split(': ', 1)[1]}"), res.stderr
    assert res.stderr == ""  # stderr is no terminal: no progress line unless asked for
    items = json.loads(path.read_text())["items"]
    kinds = {o["kind"] for o in items}
    assert {"Node", "Pod", "DaemonSet", "ClusterPolicy"} <= kinds
    # --progress: snapshot's own line on stderr, whole lines off a terminal, each kind's last state at least
    again = tmp_path / "again.json"
    res = gpulabel(gpu_operator.kubeconfig, "snapshot", "-o", str(again), "--progress")
    assert res.returncode == 0, res.stderr
    steps = [
        re.fullmatch(r"snapshot: ([\w/]+) (\d+) object\(s\), (\d+) page\(s\); kind (\d+)/(\d+) \(\d+s\)", line)
        for line in res.stderr.splitlines()
    ]
    assert steps and all(steps), res.stderr
    last = {m[1]: (int(m[2]), int(m[3]), m[5]) for m in steps if m}
    captured = json.loads(again.read_text())["items"]
    assert set(last) >= {"Node", "Pod", "DaemonSet", "ClusterPolicy"}
    assert last["Node"][0] == sum(o["kind"] == "Node" for o in captured) and last["Node"][1] >= 1
    assert {total for _, _, total in last.values()} == {str(len(last))}
    at = ("--at", "2026-12-01T00:00:00Z")
    # a plain snapshot has no log: the live run reads none either (a bundle carries them: test_evidence_cluster)
    # (live, between two snapshots: other tests on this cluster are adding and deleting their objects)
    argv = ["check", "-o", "json", *at]
    _, doc = live_as_on_a_snapshot(gpu_operator.kubeconfig, tmp_path / "moment.json", argv, live_only=["--no-evidence"])
    assert "v-snap" in {f.get("node") for f in doc["findings"]}
    # a directory is not replaced: one line, exit 2
    res = gpulabel(gpu_operator.kubeconfig, "snapshot", "-o", str(tmp_path))
    assert (res.returncode, res.stderr) == (2, f"gpulabel: {tmp_path}: cannot write: Is a directory\n")
