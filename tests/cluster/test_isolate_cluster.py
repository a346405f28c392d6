"""isolate's dry run predicts the run on a real API server (issue 24): same exit code, output and lines."""

from __future__ import annotations

from typing import Any

from gpulabel_run import gpulabel
from labcluster_support import LabCluster

OPERANDS_KEY = "nvidia.com/gpu.deploy.operands"


def _gpu_pod(ns: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train", "namespace": ns},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
        },
    }


def test_the_dry_run_refuses_a_node_with_a_gpu_pod_as_the_run_does(
    labcluster: LabCluster, ns: str, make_node: Any
) -> None:
    node = "iso-dry-busy"
    make_node(node)
    labcluster.apply(_gpu_pod(ns, node))
    for flags in ((), ("-o", "json")):
        dry = gpulabel(labcluster.kubeconfig, "isolate", node, "--dry-run", *flags)
        run = gpulabel(labcluster.kubeconfig, "isolate", node, *flags)
        assert run.returncode == 1, run.stderr
        assert f"node {node}: not isolated: GPU pods running: {ns}/train (nvidia.com/gpu)" in run.stderr
        assert (dry.returncode, dry.stderr) == (run.returncode, run.stderr)
        assert dry.stdout.replace('"dry_run": true', '"dry_run": false') == run.stdout
    assert OPERANDS_KEY not in labcluster.get("node", node)["metadata"]["labels"]


def test_the_dry_run_of_a_free_node_prints_what_the_run_writes(labcluster: LabCluster, make_node: Any) -> None:
    node = "iso-dry-free"
    make_node(node)
    dry = gpulabel(labcluster.kubeconfig, "isolate", node, "--dry-run")
    assert OPERANDS_KEY not in labcluster.get("node", node)["metadata"]["labels"]
    run = gpulabel(labcluster.kubeconfig, "isolate", node)
    assert (
        (dry.returncode, dry.stdout, dry.stderr)
        == (run.returncode, run.stdout, run.stderr)
        == (
            0,
            f"{node} {OPERANDS_KEY} false\n",
            "",
        )
    )
    assert labcluster.get("node", node)["metadata"]["labels"][OPERANDS_KEY] == "false"
