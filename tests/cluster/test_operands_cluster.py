"""operands on the real control plane: real DaemonSets gated by deploy labels, real pods."""

from __future__ import annotations

from typing import Any

from gpulabel_run import gpulabel, lines_about
from labcluster_support import LabCluster, wait_for

OPERANDS = ["driver", "container-toolkit", "device-plugin"]


def operand_daemonset(ns: str, operand: str) -> dict[str, Any]:
    name = f"op-{operand}"
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "nodeSelector": {f"nvidia.com/gpu.deploy.{operand}": "true"},
                    "containers": [{"name": operand, "image": f"example.com/{operand}:1"}],
                },
            },
        },
    }


def operand_pods_on(cluster: LabCluster, ns: str, node: str) -> dict[str, str]:
    pods = cluster.get("pods", "-n", ns, "--field-selector", f"spec.nodeName={node}")["items"]
    return {p["metadata"]["labels"]["app"]: p["status"].get("phase", "") for p in pods}


def operands_lines(cluster: LabCluster, *nodes: str, wide: bool = False) -> list[str]:
    res = gpulabel(cluster.kubeconfig, "operands", *(["-o", "wide"] if wide else []))
    assert res.returncode in (0, 1), res.stderr
    if wide:  # each wide line leads with its severity
        return lines_about("\n".join(line.partition(" ")[2] for line in res.stdout.splitlines()), *nodes)
    return lines_about(res.stdout, *nodes)


def test_operands_on_real_daemonsets(labcluster: LabCluster, ns: str, make_node: Any) -> None:
    labcluster.apply(*(operand_daemonset(ns, op) for op in OPERANDS))
    node = "opc-a"
    make_node(node, {"nvidia.com/gpu.deploy.driver": "true", "nvidia.com/gpu.deploy.device-plugin": "true"})
    wait_for(
        lambda: operand_pods_on(labcluster, ns, node) == {"op-driver": "Running", "op-device-plugin": "Running"},
        timeout=60,
        message="for driver and device-plugin pods",
    )
    # a device plugin labelled by hand without the toolkit
    assert operands_lines(labcluster, node) == [f"{node} device-plugin out-of-order container-toolkit"]

    # label the toolkit: its pod comes, the finding goes
    labcluster.kubectl("label", "node", node, "nvidia.com/gpu.deploy.container-toolkit=true")
    wait_for(lambda: operand_pods_on(labcluster, ns, node).get("op-container-toolkit") == "Running", timeout=60)
    wait_for(lambda: operands_lines(labcluster, node) == [], timeout=30, message="for operands to be clean")

    # remove the driver label: the pod goes, and the toolkit is now out of order
    labcluster.kubectl("label", "node", node, "nvidia.com/gpu.deploy.driver-")
    wait_for(lambda: "op-driver" not in operand_pods_on(labcluster, ns, node), timeout=60)
    assert operands_lines(labcluster, node) == [f"{node} container-toolkit out-of-order driver"]


def test_a_tainted_node_is_missing_with_the_taint_named(labcluster: LabCluster, ns: str, make_node: Any) -> None:
    labcluster.apply(operand_daemonset(ns, "driver"))
    node = "opc-tainted"
    make_node(
        node,
        {"nvidia.com/gpu.deploy.driver": "true"},
        taints=[{"key": "dedicated", "value": "training", "effect": "NoSchedule"}],
    )
    lines = operands_lines(labcluster, node, wide=True)
    assert len(lines) == 1
    assert lines[0].startswith(f"{node} driver missing (")
    assert "dedicated=training:NoSchedule" in lines[0]


def test_a_node_added_after_a_run_is_seen_on_the_next(labcluster: LabCluster, make_node: Any) -> None:
    first = gpulabel(labcluster.kubeconfig, "operands", "-o", "wide")
    assert "opc-late" not in first.stdout
    # no DaemonSet anywhere selects the vfio-manager deploy label
    make_node("opc-late", {"nvidia.com/gpu.deploy.vfio-manager": "true"})
    assert operands_lines(labcluster, "opc-late", wide=True) == [
        "opc-late vfio-manager missing (no DaemonSet selects nvidia.com/gpu.deploy.vfio-manager=true)"
    ]


def test_isolating_a_node_takes_its_operands_away(labcluster: LabCluster, ns: str, make_node: Any) -> None:
    labcluster.apply(*(operand_daemonset(ns, op) for op in OPERANDS))
    node = "opc-isolate"
    deploy = {f"nvidia.com/gpu.deploy.{op}": "true" for op in OPERANDS}
    make_node(node, deploy)
    wait_for(lambda: len(operand_pods_on(labcluster, ns, node)) == 3, timeout=60, message="for three operand pods")
    res = gpulabel(labcluster.kubeconfig, "isolate", node)
    assert (res.returncode, res.stdout) == (0, f"{node} nvidia.com/gpu.deploy.operands false\n"), res.stderr
    # isolated: nothing is expected, so the pods still running are unexpected
    assert sorted(operands_lines(labcluster, node)) == sorted(
        [f"{node} operands isolated", *(f"{node} {op} unexpected" for op in OPERANDS)]
    )
    # the GPU Operator answers isolation by removing the deploy labels; play its part
    labcluster.kubectl("label", "node", node, *(f"{k}-" for k in deploy))
    wait_for(lambda: operand_pods_on(labcluster, ns, node) == {}, timeout=60, message="for the operand pods to go")
    assert operands_lines(labcluster, node) == [f"{node} operands isolated"]
    again = gpulabel(labcluster.kubeconfig, "isolate", node)
    assert (again.returncode, again.stdout) == (0, "")  # already isolated: no write
    undo = gpulabel(labcluster.kubeconfig, "isolate", node, "--undo")
    assert (undo.returncode, undo.stdout) == (0, f"{node} nvidia.com/gpu.deploy.operands-\n")
    assert "nvidia.com/gpu.deploy.operands" not in labcluster.get("node", node)["metadata"]["labels"]
