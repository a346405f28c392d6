"""The Helm chart on the real control plane: what the built helm renders is accepted object by object
(server-side apply), and the controller, run with the chart's own arguments, ServiceAccount token and
ConfigMap, leads through the chart's Lease and restores drift."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helm_support import HelmError, build_helm, objects, template
from labcluster_support import LabCluster, delete_namespace, namespace_usable, wait_for
from test_deploy_cluster import free_port, metric, sa_files, token_kubeconfig

NAMESPACE = "gpulabel"
LEASE = "gpulabel-sync-chart"  # not the kustomize test's Lease: the chart's leaseName value at work
NODE = "chart-node"


@pytest.fixture(scope="module")
def chart_objects(labcluster: LabCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[dict[str, Any]]]:
    try:
        build_helm()
    except HelmError as exc:
        pytest.fail(f"helm is unavailable: {exc}", pytrace=False)
    rendered = template(
        "--set",
        f"namespace.create=true,sync.leaderElection.leaseName={LEASE}",
        "--set-json",
        f'featureFiles.files={{"{NODE}.env": "# the chart test\\nexample.com/gpu=a\\n"}}',
        namespace=NAMESPACE,
    )
    path = tmp_path_factory.mktemp("chart") / "rendered.yaml"
    namespace_usable(labcluster, NAMESPACE)  # another file on this cluster may have just deleted it
    path.write_text(rendered)
    docs = objects(rendered)
    # --force-conflicts: deploy/base's objects (same names, other field manager) may be there already
    res = labcluster.kubectl(
        "apply", "--server-side", "--force-conflicts", "--field-manager=gpulabel-chart-test", "-f", str(path)
    )
    accepted = [line for line in res.stdout.splitlines() if line.endswith(" serverside-applied")]
    assert len(accepted) == len(docs), res.stdout + res.stderr
    # kwok's fake pods run nothing, but must not look like candidates: the test runs the controller itself
    labcluster.kubectl("scale", "deployment/gpulabel-sync", "-n", NAMESPACE, "--replicas=0")
    yield docs
    # leave the cluster as the kustomize test expects it: no gpulabel objects, no gpulabel namespace
    labcluster.kubectl("delete", "-f", str(path), "--ignore-not-found", "--wait=false")
    delete_namespace(labcluster, NAMESPACE)


def test_every_rendered_object_is_in_the_cluster(labcluster: LabCluster, chart_objects: list[dict[str, Any]]) -> None:
    kinds = {d["kind"] for d in chart_objects}
    assert kinds >= {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
    assert kinds >= {"ConfigMap", "Service", "Deployment", "CronJob"}
    for doc in chart_objects:
        where = ["-n", doc["metadata"]["namespace"]] if "namespace" in doc["metadata"] else []
        live = labcluster.get(doc["kind"].lower(), doc["metadata"]["name"], *where)
        assert live["metadata"]["uid"], doc["metadata"]["name"]


def lease_holder(cluster: LabCluster) -> str:
    res = cluster.kubectl("get", "lease", LEASE, "-n", NAMESPACE, "-o", "jsonpath={.spec.holderIdentity}", check=False)
    return res.stdout.strip() if res.returncode == 0 else ""


def test_the_controller_with_the_charts_arguments_and_rights_leads_and_restores_drift(
    labcluster: LabCluster, chart_objects: list[dict[str, Any]], make_node: Any, tmp_path: Path
) -> None:
    make_node(NODE, {"example.com/gpu": "a"})
    deployment = labcluster.get("deployment", "gpulabel-sync", "-n", NAMESPACE)
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    (mount,) = container["volumeMounts"]
    # what the kubelet would mount: the ConfigMap's files, the ServiceAccount's token
    config = labcluster.get("configmap", pod["volumes"][0]["configMap"]["name"], "-n", NAMESPACE)
    files = tmp_path / "features.d"
    files.mkdir()
    for name, content in config["data"].items():
        (files / name).write_text(content)
    sa = sa_files(labcluster, pod["serviceAccountName"], tmp_path / "sa")
    kubeconfig = token_kubeconfig(labcluster, sa, tmp_path / "sa.kubeconfig")

    args = [files.as_posix() if a == mount["mountPath"] else a for a in container["args"]]
    port = free_port()
    args[args.index("--metrics-port") + 1] = str(port)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "POD_NAMESPACE": NAMESPACE}  # the downward API's value
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpulabel", *args, "--identity", "chart-a", "--kubeconfig", str(kubeconfig)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        wait_for(lambda: lease_holder(labcluster) == "chart-a", timeout=30, message=f"for chart-a to hold {LEASE}")
        wait_for(lambda: metric(port, "gpulabel_leader") == 1.0, timeout=30, message="for gpulabel_leader 1")
        labcluster.kubectl("label", "--overwrite", "node", NODE, "example.com/gpu=drifted")
        wait_for(
            lambda: labcluster.get("node", NODE)["metadata"]["labels"]["example.com/gpu"] == "a",
            timeout=10,
            message="for the leader to restore drift",
        )
        restored = metric(port, f'gpulabel_labels_restored_total{{key="example.com/gpu",node="{NODE}"}}')
        assert restored == 1.0
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 0, err
        assert "Traceback" not in err
        assert lease_holder(labcluster) == ""  # released on a clean stop
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)


def test_the_monitors_objects_are_accepted_by_the_api_server(labcluster: LabCluster, tmp_path: Path) -> None:
    """With monitor.enabled (and the node condition, a config file, the dashboard) every object passes a
    server-side dry run. ServiceMonitor and PrometheusRule, behind their own flags, need prometheus-operator's
    CRDs, which labcluster does not serve: promtool checks the rules they carry (tests/unit/test_alert_rules.py)."""
    try:
        build_helm()
    except HelmError as exc:
        pytest.fail(f"helm is unavailable: {exc}", pytrace=False)
    rendered = template(
        "--set",
        "monitor.enabled=true,monitor.nodeCondition=true",
        "--set-json",
        'monitor.config={"severity": {"operands/unexpected": "info"}}',
        namespace="default",  # a dry run cannot create the namespace its objects go into
    )
    path = tmp_path / "monitor.yaml"
    path.write_text(rendered)
    docs = objects(rendered)
    monitor = [d for d in docs if "monitor" in d["metadata"]["name"] or d["metadata"]["name"] == "gpulabel-dashboard"]
    kinds = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap", "Deployment"}
    assert {d["kind"] for d in monitor} == {*kinds, "Service"}
    res = labcluster.kubectl(
        "apply", "--server-side", "--dry-run=server", "--field-manager=gpulabel-chart-test", "-f", str(path)
    )
    accepted = [line for line in res.stdout.splitlines() if line.endswith("serverside-applied (server dry run)")]
    assert len(accepted) == len(docs), res.stdout + res.stderr
