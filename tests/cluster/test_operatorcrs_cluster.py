"""NVIDIADriver node-selector overlaps as the real GPU Operator reports them, and gpulabel's finding beside it.

labcluster's operator (``github.com/NVIDIA/gpu-operator`` v0.0.0-20250917190837-d73a0086a6ba) serves the
NVIDIADriver CRD (``deployments/gpu-operator/crds/nvidia.com_nvidiadrivers.yaml``) and runs its controller
unconditionally (``cmd/gpu-operator/main.go``). Its ``Reconcile`` (``controllers/nvidiadriver_controller.go``)
needs a ClusterPolicy (the sample one is there), then validates the node selectors
(``internal/validator/validator.go``) before it syncs anything: two NVIDIADrivers selecting one node are refused
on every NVIDIADriver with condition ``Error``/``ConflictingNodeSelector``. Nothing is deployed while they
overlap, so the test needs no driver image. Both CRs are deleted at the end (with one left, the controller would
go on to render its driver DaemonSet).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpulabel_run import gpulabel
from labcluster_support import LabCluster, wait_for

POOL_A, ALL_GPUS = "crd-pool-a", "crd-all-gpus"


def nvidiadriver(name: str, selector: dict[str, str] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driverType": "gpu",
        "repository": "nvcr.io/nvidia",
        "image": "driver",
        "version": "570.172.08",
    }
    if selector is not None:
        spec["nodeSelector"] = selector
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "NVIDIADriver", "metadata": {"name": name}, "spec": spec}


def error_condition(cluster: LabCluster, name: str) -> dict[str, Any] | None:
    status = cluster.get("nvidiadriver", name).get("status") or {}
    return next((c for c in status.get("conditions") or () if c["type"] == "Error" and c["status"] == "True"), None)


def refused(cluster: LabCluster, name: str) -> dict[str, Any] | None:
    condition = error_condition(cluster, name)
    return condition if condition is not None and condition["reason"] == "ConflictingNodeSelector" else None


def operatorcrs(output: str) -> list[dict[str, Any]]:
    return [f for f in json.loads(output)["findings"] if f["check"] == "operatorcrs"]


def test_overlapping_nvidiadrivers_as_the_operator_refuses_them_and_gpulabel_names_both_and_the_node(
    gpu_operator: LabCluster, make_gpu_node: Any, tmp_path: Path
) -> None:
    make_gpu_node("crd-gpu-0", {"pool": "crd-a"})
    make_gpu_node("crd-gpu-1", {"pool": "crd-b"})
    for node in ("crd-gpu-0", "crd-gpu-1"):  # the operator's labeller marks them: what a nil nodeSelector selects
        wait_for(
            lambda n=node: gpu_operator.get("node", n)["metadata"]["labels"].get("nvidia.com/gpu.present") == "true",
            timeout=60,
            message=f"for the operator to label {node} nvidia.com/gpu.present=true",
        )
    try:
        gpu_operator.apply(nvidiadriver(POOL_A, {"pool": "crd-a"}), nvidiadriver(ALL_GPUS, None))
        said = {
            name: wait_for(lambda name=name: refused(gpu_operator, name), timeout=90, message=f"for {name}'s refusal")
            for name in (POOL_A, ALL_GPUS)
        }
        # the operator's own words (validator.go: %q of the reconciled CR's spec.nodeSelector, a Go map; nil: map[])
        assert said[POOL_A]["message"] == (
            'conflicting NVIDIADriver NodeSelectors found for resource: crd-pool-a, nodeSelector: map["pool":"crd-a"]'
        )
        assert said[ALL_GPUS]["message"] == (
            "conflicting NVIDIADriver NodeSelectors found for resource: crd-all-gpus, nodeSelector: map[]"
        )
        for name in (POOL_A, ALL_GPUS):
            assert gpu_operator.get("nvidiadriver", name)["status"]["state"] == "notReady"

        live = gpulabel(gpu_operator.kubeconfig, "check", "-o", "json")
        snap = tmp_path / "snap.json"
        done = gpulabel(gpu_operator.kubeconfig, "snapshot", "-o", str(snap))
        assert done.returncode == 0, done.stderr
        offline = gpulabel(gpu_operator.kubeconfig, "check", "--snapshot", str(snap), "-o", "json")
        for run in (live, offline):
            (f,) = operatorcrs(run.stdout)  # one finding: the overlap; the CRs' conditions are not said again
            assert (f["reason"], f["severity"], f["node"], f["args"], f["count"]) == (
                "drivers-overlap",
                "error",
                "crd-gpu-0",
                [ALL_GPUS, POOL_A],
                1,
            )
            # gpulabel quotes the condition the operator wrote on the first of the pair
            assert f"the operator says (Error ConflictingNodeSelector): {said[ALL_GPUS]['message']}." in f["detail"]
            assert f["detail"].startswith(
                "NVIDIADrivers crd-all-gpus (no nodeSelector: every nvidia.com/gpu.present=true node) and crd-pool-a "
                "(nodeSelector pool=crd-a) both select node crd-gpu-0:"
            )
    finally:
        gpu_operator.kubectl("delete", "nvidiadriver", POOL_A, ALL_GPUS, "--ignore-not-found", "--wait=false")
