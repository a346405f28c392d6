"""Drive the labcluster control plane (labcluster/) from tests.

labcluster runs real etcd, kube-apiserver, kube-scheduler and
kube-controller-manager processes plus kwok (fake kubelets); see
labcluster/README.md. Nothing here ever skips: a failed build or start raises
LabClusterError carrying the reason and the tail of the relevant log.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[2]
LABCLUSTER_DIR = REPO / "labcluster"
BINARY = LABCLUSTER_DIR / "bin" / "labcluster"
GPU_OPERATOR_DIR = LABCLUSTER_DIR / "gpu-operator"
GPU_OPERATOR_BINARY = GPU_OPERATOR_DIR / "bin" / "gpu-operator"
GPU_OPERATOR_NAMESPACE = "gpu-operator"

T = TypeVar("T")


class LabClusterError(RuntimeError):
    """The control plane could not be built, started or used."""


def _tail(text: str, lines: int = 60) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def build(timeout: float = 3600, script: Path = LABCLUSTER_DIR / "build", binary: Path = BINARY) -> Path:
    """Run labcluster/build (a no-op when the binary is up to date)."""
    name = script.relative_to(REPO)
    try:
        proc = subprocess.run(
            [str(script)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LabClusterError(f"{name} could not run: {exc}") from exc
    if proc.returncode != 0:
        raise LabClusterError(f"{name} failed (exit {proc.returncode}):\n{_tail(proc.stdout)}\n{_tail(proc.stderr)}")
    if not os.access(binary, os.X_OK):
        raise LabClusterError(f"{name} succeeded but {binary} is missing")
    return binary


def build_gpu_operator(timeout: float = 3600) -> Path:
    """Run labcluster/gpu-operator/build: the real NVIDIA GPU Operator from the Go module proxy (cached)."""
    return build(timeout, GPU_OPERATOR_DIR / "build", GPU_OPERATOR_BINARY)


class LabCluster:
    """A running control plane whose state lives in ``dir``."""

    def __init__(self, dir: Path, binary: Path = BINARY) -> None:
        self.dir = Path(dir)
        self.binary = binary
        self.kubeconfig = self.dir / "kubeconfig"
        self.audit_log = self.dir / "audit.log"

    @classmethod
    def start(
        cls,
        dir: Path,
        binary: Path = BINARY,
        timeout: float = 300,
        gpu_operator: bool = False,
        cluster_policy: str = "sample",
    ) -> LabCluster:
        """``labcluster up``; with ``gpu_operator`` the real GPU Operator runs too.

        ``cluster_policy``: "sample" (the operator module's sample), "none", or a file.
        """
        dir.mkdir(parents=True, exist_ok=True)
        extra = ["--gpu-operator", "--cluster-policy", cluster_policy] if gpu_operator else []
        try:
            proc = subprocess.run(
                [str(binary), "up", "--dir", str(dir), "--timeout", f"{int(timeout)}s", *extra],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout + 30,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            subprocess.run([str(binary), "down", "--dir", str(dir)], capture_output=True, check=False)
            raise LabClusterError(f"labcluster up did not finish: {exc}") from exc
        if proc.returncode != 0:
            raise LabClusterError(f"labcluster up failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return cls(dir, binary)

    def stop(self) -> None:
        proc = subprocess.run(
            [str(self.binary), "down", "--dir", str(self.dir)], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise LabClusterError(f"labcluster down failed:\n{proc.stderr}")

    def log_tail(self, component: str, lines: int = 40) -> str:
        path = self.dir / f"{component}.log"
        return _tail(path.read_text(errors="replace"), lines) if path.exists() else ""

    # --- kubectl -----------------------------------------------------------

    def kubectl(
        self, *args: str, check: bool = True, input: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run ``labcluster kubectl --kubeconfig KUBECONFIG ARGS...``."""
        cmd = [str(self.binary), "kubectl", "--kubeconfig", str(self.kubeconfig), *args]
        proc = subprocess.run(
            cmd,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise LabClusterError(
                f"kubectl {' '.join(args)} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def get(self, *args: str) -> Any:
        """``kubectl get ARGS -o json``, parsed."""
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def apply(self, *objects: Mapping[str, Any]) -> None:
        """``kubectl apply`` the objects, sent as JSON.

        Not YAML: PyYAML writes the string "08" unquoted and Go's YAML parser
        then reads it as the number 8, which the API rejects as a label value.
        """
        items = [dict(o) for o in objects]
        self.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))

    def create_nodes(self, count: int, prefix: str, labels: Mapping[str, str], timeout: float = 600) -> str:
        """``labcluster nodes``: PREFIX0..PREFIX(count-1), Ready; returns what it printed."""
        proc = subprocess.run(
            [
                str(self.binary),
                "nodes",
                "--dir",
                str(self.dir),
                "--count",
                str(count),
                "--prefix",
                prefix,
                "--labels",
                ",".join(f"{k}={v}" for k, v in labels.items()),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        if proc.returncode != 0:
            raise LabClusterError(f"labcluster nodes failed (exit {proc.returncode}):\n{proc.stderr}")
        return proc.stdout.strip()

    def audit_events(self) -> list[dict[str, Any]]:
        """Audit events logged so far (nodes: every request; everything: lists)."""
        if not self.audit_log.exists():
            return []
        events = []
        for line in self.audit_log.read_text().splitlines():
            if line.strip():
                events.append(json.loads(line))
        return events


def wait_for(
    predicate: Callable[[], T | None],
    timeout: float = 30,
    interval: float = 0.2,
    message: str | Callable[[], str] = "",
) -> T:
    """Poll ``predicate`` until it returns something truthy, and return that.

    Exceptions raised by the predicate count as "not yet"; on timeout the last
    value or exception is reported in the AssertionError.
    """
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            result = predicate()
            if result:
                return result
            last = result
        except Exception as exc:  # the condition may not be checkable yet
            last = exc
        if time.monotonic() >= deadline:
            detail = message() if callable(message) else message
            raise AssertionError(f"timed out after {timeout}s {detail}: last result {last!r}")
        time.sleep(interval)


def namespace_phase(cluster: LabCluster, name: str) -> str | None:
    """The namespace's ``status.phase`` (``Active`` or ``Terminating``), or None when there is none."""
    proc = cluster.kubectl("get", "namespace", name, "-o", "jsonpath={.status.phase}", check=False)
    if proc.returncode == 0:
        return proc.stdout.strip()
    if "NotFound" in proc.stderr:
        return None
    raise LabClusterError(f"kubectl get namespace {name} failed (exit {proc.returncode}):\n{proc.stderr}")


def account_kubeconfig(cluster: LabCluster, account: str, path: Path, namespace: str = "gpulabel") -> Path:
    """A kubeconfig at ``path`` that acts as ServiceAccount ``namespace/account`` (a TokenRequest's token)."""
    import yaml

    token = cluster.kubectl("create", "token", account, "-n", namespace).stdout.strip()
    server = yaml.safe_load(cluster.kubeconfig.read_text())["clusters"][0]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [server],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [{"name": account, "context": {"cluster": server["name"], "user": account}}],
        "current-context": account,
    }
    path.write_text(yaml.safe_dump(config))
    return path


def namespace_usable(cluster: LabCluster, name: str, timeout: float = 120) -> None:
    """Wait until namespace ``name`` is Active or absent, not Terminating.

    A file that ran earlier on this session's cluster (with pytest-xdist, any
    earlier file on the same worker) may have deleted it without waiting; the
    API server refuses new objects in a terminating namespace ("unable to
    create new content in namespace ... because it is being terminated").
    """
    wait_for(
        lambda: namespace_phase(cluster, name) != "Terminating",
        timeout=timeout,
        interval=0.5,
        message=f"for namespace {name} to finish terminating",
    )


def no_pod_going(cluster: LabCluster) -> bool:
    """Whether no pod in the cluster is terminating or bound to a node that is gone (the pod garbage
    collector deletes those after its quarantine): each such deletion makes the scheduler try its Pending
    pods again, so their messages would no longer be those of their first attempt."""
    nodes = {n["metadata"]["name"] for n in cluster.get("nodes")["items"]}
    for pod in cluster.get("pods", "-A")["items"]:
        bound = pod["spec"].get("nodeName")
        if pod["metadata"].get("deletionTimestamp") or (bound and bound not in nodes):
            return False
    return True


def delete_pods_now(cluster: LabCluster, namespace: str) -> None:
    """Delete every pod of ``namespace`` at once (grace 0, forced), before their nodes go: a pod whose node is
    deleted first stays terminating until the pod garbage collector's quarantine is over (about a minute),
    counted by whatever file runs next on this cluster."""
    cluster.kubectl("delete", "pods", "--all", "-n", namespace, "--grace-period=0", "--force", "--wait=false")


def delete_namespace(cluster: LabCluster, name: str, timeout: float = 120) -> None:
    """Delete namespace ``name`` and wait until it is gone, its content with it: the next file on this
    cluster may create it again, and its pods must not outlive the file that made them."""
    cluster.kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found")
    wait_for(
        lambda: namespace_phase(cluster, name) is None,
        timeout=timeout,
        interval=0.5,
        message=f"for namespace {name} to go",
    )


def node_manifest(
    name: str,
    labels: Mapping[str, str] | None = None,
    taints: Iterable[Mapping[str, str]] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    """A Node object; kwok marks it Ready once created."""
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
    }


# What NFD writes on an NVIDIA GPU node that the GPU Operator reads: the PCI
# vendor (its node labeller), the kernel and the OS (the driver image tag).
def nfd_gpu_labels(
    os_id: str = "ubuntu", os_version: str = "22.04", kernel: str = "5.15.0-105-generic"
) -> dict[str, str]:
    return {
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "feature.node.kubernetes.io/kernel-version.full": kernel,
        "feature.node.kubernetes.io/system-os_release.ID": os_id,
        "feature.node.kubernetes.io/system-os_release.VERSION_ID": os_version,
    }


def gpu_node_manifest(
    name: str,
    labels: Mapping[str, str] | None = None,
    taints: Iterable[Mapping[str, str]] | None = None,
    gpu: bool = True,
    runtime: str = "containerd://1.7.20",
    kernel: str = "5.15.0-105-generic",
    os_id: str = "ubuntu",
    os_version: str = "22.04",
    gpus: int | None = None,
) -> dict[str, Any]:
    """A Node as NFD and a real kubelet would show it to the GPU Operator.

    ``gpus``: also advertise that many ``nvidia.com/gpu`` in capacity and allocatable, as the
    device plugin would (kwok runs no device plugin and keeps what the Node is created with).

    ``gpu``: the NFD labels of an NVIDIA PCI device, kernel and OS (else only
    kernel and OS, as on a CPU node). ``status.nodeInfo`` carries the container
    runtime (the operator refuses anything but ``containerd://``, ``cri-o://``
    or ``docker://``); kwok keeps what the Node is created with.
    """
    nfd = nfd_gpu_labels(os_id, os_version, kernel)
    if not gpu:
        del nfd["feature.node.kubernetes.io/pci-10de.present"]
    node = node_manifest(name, {**nfd, **(labels or {})}, taints)
    ident = hashlib.sha256(name.encode()).hexdigest()
    node["status"] = {
        "nodeInfo": {
            "containerRuntimeVersion": runtime,
            "kernelVersion": kernel,
            "osImage": f"{os_id} {os_version}",
            "operatingSystem": "linux",
            "architecture": "amd64",
            "kubeletVersion": "v1.37.2",
            "kubeProxyVersion": "",
            "machineID": ident[:32],
            "systemUUID": str(uuid.UUID(ident[:32])),
            "bootID": str(uuid.UUID(ident[32:64])),
        }
    }
    if gpus is not None:
        amounts = {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
        node["status"]["capacity"] = dict(amounts)
        node["status"]["allocatable"] = dict(amounts)
    return node


def node_is_ready(node: Mapping[str, Any]) -> bool:
    """Ready=True and the node-lifecycle controller has removed the not-ready taint."""
    conditions = node.get("status", {}).get("conditions", [])
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
    taints = node.get("spec", {}).get("taints", [])
    return ready and not any(t["key"] == "node.kubernetes.io/not-ready" for t in taints)


def restart_apiserver(cluster: LabCluster, down_seconds: float) -> None:
    """SIGKILL the API server, wait ``down_seconds``, start it again with the same arguments (etcd keeps the state)."""
    pid_file = cluster.dir / "kube-apiserver.pid"
    pid = int(pid_file.read_text())
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    os.kill(pid, signal.SIGKILL)
    wait_for(
        lambda: not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2], timeout=10
    )
    time.sleep(down_seconds)
    with open(cluster.dir / "kube-apiserver.log", "ab") as log:
        proc = subprocess.Popen(
            [a.decode() for a in argv],
            cwd=cluster.dir,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    pid_file.write_text(f"{proc.pid}\n")
