"""The cudaskew check: pods failing because the node's driver supports an older CUDA than their image needs.

Every message here is one NVIDIA's stack or the CUDA runtime writes, as it reaches a container's status:

- libnvidia-container's, behind the runtime's hook error (``src/cli/configure.c`` ``requirement error: %s``;
  ``src/cli/dsl.c`` ``dsl_evaluate``: ``unsatisfied condition: %s, please update your driver to a newer
  version, or use an earlier cuda container``, NVIDIA/libnvidia-container 09df17a, 5823754), as containerd and
  runc wrap it in the kubelet's ``StartError``/``RunContainerError`` message;
- the Go toolkit's CSV mode (NVIDIA/nvidia-container-toolkit d34b304, ``internal/modifier/csv.go``
  ``requirements not met: %v`` around ``internal/requirements/constraints/binary.go`` ``unsatisfied condition:
  %v (%v)``);
- the CUDA runtime's ``cudaGetErrorString(cudaErrorInsufficientDriver)`` (35), in a termination message.

Node labels are GFD's (NVIDIA/k8s-device-plugin v0.20.0 ``internal/lm/nvml.go`` ``newVersionLabeler``).
"""

from __future__ import annotations

from typing import Any

import pytest

from gpulabel.checks.cudaskew.rules import LINES, affinity, matched, selector_nodes
from gpulabel.checks.registry import BUILTIN, run_check
from gpulabel.model.cluster import ClusterState
from tests.unit.test_health import LABELS as GPU_LABELS

HOOK = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: "
    "unable to start container process: error during container init: error running hook #0: error running hook: "
    "exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
    "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a "
    "newer version, or use an earlier cuda container: unknown"
)
CSV = "requirements not met: unsatisfied condition: cuda>=12.6 (cuda=12.2)"
RUNTIME = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"
MESSAGES = {
    "hook": (HOOK, (12, 8), "libnvidia-container src/cli/dsl.c + src/cli/configure.c"),
    "csv": (CSV, (12, 6), "nvidia-container-toolkit internal/requirements/constraints/binary.go"),
    "runtime": (RUNTIME, None, "CUDA runtime cudaErrorInsufficientDriver"),
}


def gfd(driver: str, cuda: str) -> dict[str, str]:
    """GFD's version labels of a driver (``550.54.15``) supporting CUDA ``12.4``, new and deprecated keys."""
    major, minor, rev = driver.split(".")
    cmajor, cminor = cuda.split(".")
    return {
        "nvidia.com/cuda.driver-version.major": major,
        "nvidia.com/cuda.driver-version.minor": minor,
        "nvidia.com/cuda.driver-version.revision": rev,
        "nvidia.com/cuda.driver-version.full": driver,
        "nvidia.com/cuda.driver.major": major,
        "nvidia.com/cuda.driver.minor": minor,
        "nvidia.com/cuda.driver.rev": rev,
        "nvidia.com/cuda.runtime-version.major": cmajor,
        "nvidia.com/cuda.runtime-version.minor": cminor,
        "nvidia.com/cuda.runtime-version.full": cuda,
        "nvidia.com/cuda.runtime.major": cmajor,
        "nvidia.com/cuda.runtime.minor": cminor,
    }


def node(name: str, driver: str = "550.54.15", cuda: str = "12.4", gpu: bool = True) -> dict[str, Any]:
    labels = {**GPU_LABELS, **gfd(driver, cuda)} if gpu else {"kubernetes.io/hostname": name}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "status": {}}


def pod(name: str, message: str | None, node_name: str = "old-1", where: str = "last") -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Running"}
    c: dict[str, Any] = {"name": "main", "restartCount": 3, "state": {"running": {}}}
    if message is not None and where == "last":
        status["phase"] = "Running"
        c["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s restarting failed"}}
        c["lastState"] = {"terminated": {"reason": "StartError", "exitCode": 128, "message": message}}
    elif message is not None:
        status["phase"] = "Failed"
        c["state"] = {"terminated": {"reason": "Error", "exitCode": 1, "message": message}}
    status["containerStatuses"] = [c]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "nodeName": node_name,
            "containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
        },
        "status": status,
    }


def state(*objects: dict[str, Any]) -> ClusterState:
    return ClusterState.from_objects([("test", o) for o in objects])


def findings(*objects: dict[str, Any]) -> list[Any]:
    return list(run_check("cudaskew", state(*objects), BUILTIN.options()).findings)


@pytest.mark.parametrize("case", sorted(MESSAGES))
def test_every_message_is_a_line_of_the_table(case: str) -> None:
    message, needed, _ = MESSAGES[case]
    hit = matched(message)
    assert hit is not None
    named = hit[1].groupdict().get("needed")
    assert (tuple(int(x) for x in named.split(".")) if named else None) == needed


def test_every_line_of_the_table_matches_a_message() -> None:
    assert [line for line in LINES if not any(line.pattern.search(m) for m, _, _ in MESSAGES.values())] == []


def test_a_node_too_old_is_an_error_naming_its_driver_the_need_and_a_selector_that_avoids_it() -> None:
    objs = [node("old-1"), node("new-1", "570.86.10", "12.8"), node("newer-1", "580.65.06", "13.0")]
    (f,) = findings(*objs, pod("train-0", HOOK), pod("train-1", HOOK))
    assert (f.severity, f.node, f.reason, f.args) == (
        "error",
        "old-1",
        "driver-too-old",
        ("cuda>=12.8", "node-cuda=12.4"),
    )
    assert f.detail.startswith(
        "2 pod(s) (ml/train-0, ml/train-1) need cuda>=12.8; the node's driver 550.54.15 supports CUDA 12.4"
    )
    assert "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update" in f.detail
    assert (
        "required node affinity nvidia.com/cuda.runtime-version.major Gt 12, or nvidia.com/cuda.runtime-version.major "
        "In [12] and nvidia.com/cuda.runtime-version.minor Gt 7 matches 2 node(s) here (new-1, newer-1)"
    ) in f.detail


def test_the_selector_takes_exactly_the_nodes_new_enough() -> None:
    s = state(*(node(f"n-{v}", cuda=v) for v in ("11.8", "12.0", "12.4", "12.7", "12.8", "12.10", "13.0")))
    assert selector_nodes((12, 8), s.nodes) == ["n-12.10", "n-12.8", "n-13.0"]
    assert selector_nodes((12, 0), s.nodes) == ["n-12.0", "n-12.10", "n-12.4", "n-12.7", "n-12.8", "n-13.0"]
    terms = affinity((12, 0))["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]  # type: ignore[index]
    assert terms == [
        {"matchExpressions": [{"key": "nvidia.com/cuda.runtime-version.major", "operator": "Gt", "values": ["11"]}]}
    ]


def test_no_node_new_enough_says_so() -> None:
    (f,) = findings(node("old-1"), node("old-2", cuda="12.2"), pod("p", CSV))
    assert f.args == ("cuda>=12.6", "node-cuda=12.4")
    assert "matches no node here: upgrade the driver, or use an image built for the node's CUDA" in f.detail


def test_the_cuda_runtime_line_names_no_version_and_a_newer_node_is_proposed() -> None:
    (f,) = findings(node("old-1"), node("new-1", cuda="12.8"), pod("p", RUNTIME, where="terminated"))
    assert f.args == ("cuda-runtime", "node-cuda=12.4")
    assert "need a newer CUDA than the driver's (the line names none)" in f.detail
    assert "matches 1 node(s) here (new-1)" in f.detail


def test_labels_that_say_the_driver_suffices_are_called_stale() -> None:
    (f,) = findings(node("old-1", cuda="12.8"), pod("p", HOOK))
    assert "its labels say that suffices: they are stale" in f.detail


def test_the_healthy_twin_raises_nothing() -> None:
    """The same nodes and pods running, failing for other reasons, and the runtime's line on a node without GPUs
    (where no driver at all says the same)."""
    other = pod("oom", "OOMKilled: CUDA out of memory. Tried to allocate 2.00 GiB", where="terminated")
    assert (
        findings(
            node("old-1"),
            node("new-1", "570.86.10", "12.8"),
            node("cpu-1", gpu=False),
            pod("train-0", None),
            pod("train-1", None, node_name="new-1"),
            other,
            pod("cpu", RUNTIME, node_name="cpu-1", where="terminated"),
        )
        == []
    )


def test_explain_says_it_beside_the_chain_of_the_node() -> None:
    import io
    from pathlib import Path

    from gpulabel.cli.main import main

    example = Path(__file__).parents[2] / "examples" / "gpu-workloads.yaml"
    out = io.StringIO()
    code = main(["explain", "node/a100-old-0", "--snapshot", str(example)], out, io.StringIO())
    lines = out.getvalue().splitlines()
    assert lines[0] == "node/a100-old-0: 8 GPU(s); every link ok"
    (also,) = [line for line in lines if line.startswith("also")]
    assert also.startswith("also   cudaskew driver-too-old cuda>=12.8 node-cuda=12.4: 2 pod(s)")
    # explain reads one node: the selector's matches are said of the nodes read, not of the cluster
    assert also.endswith(
        "matches no node of the nodes read (the input holds only some): upgrade the driver, or use an image built "
        "for the node's CUDA"
    )
    assert code == 1
