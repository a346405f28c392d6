"""Synthetic cluster snapshots: what ``kubectl get nodes,pods,daemonsets -A -o json`` writes, at any size.

Run: ``.venv/bin/python -m bench.synth --nodes 5000 --out FILE.json [--seed S] [--problem-rate R]``.

About 85% of the nodes are GPU nodes of four machine types (A100, H100, A10, L4) with the labels NFD
and GPU Feature Discovery write, the GPU Operator's deploy labels, and the taint
``nvidia.com/gpu:NoSchedule``; the rest are CPU nodes. The operand DaemonSets live in ``gpu-operator``,
are gated by ``nodeSelector: nvidia.com/gpu.deploy.<operand>: "true"`` and own their pods by
ownerReferences uid: by default driver, container-toolkit and device-plugin, three operand pods per GPU
node (``--operands`` picks others; a ClusterPolicy switches the rest off). Training pods select their
GPU product and ``feature.node.kubernetes.io/custom-gpu-training`` with required node affinity.

A seeded fraction of GPU nodes (``--problem-rate`` of them per kind, at least one each) gets one
problem: GFD labels missing, a hand-edited ``gpu.count`` that is not a number, a container toolkit
Running but not Ready, a ``dedicated`` taint the operands do not tolerate (so they are missing), the
training label removed under a running pod (a hazard); and as many Pending pods ask for a product no
node has. :func:`generate` returns the objects as dicts, with the problems it injected, for tests and
benchmarks in-process; the same seed always gives the same snapshot.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_OPERANDS", "OPERAND_DAEMONSETS", "PROBLEMS", "Plan", "Synth", "generate", "objects", "plan"]

JSON = dict[str, Any]


@dataclass(frozen=True)
class Machine:
    product: str
    prefix: str
    counts: tuple[int, ...]
    memory: str
    family: str
    compute: tuple[str, str]
    machine: str
    weight: float


MACHINES = (
    Machine("NVIDIA-A100-SXM4-40GB", "dgx-a100", (8,), "40960", "ampere", ("8", "0"), "DGX-A100", 0.30),
    Machine("NVIDIA-H100-80GB-HBM3", "dgx-h100", (8,), "81559", "hopper", ("9", "0"), "DGX-H100", 0.25),
    Machine("NVIDIA-A10", "a10", (1, 2, 4), "23028", "ampere", ("8", "6"), "PowerEdge-R750xa", 0.25),
    Machine("NVIDIA-L4", "l4", (1, 2, 4, 8), "23034", "ada-lovelace", ("8", "9"), "ProLiant-DL380-Gen11", 0.20),
)
OPERAND_DAEMONSETS = {
    "driver": "nvidia-driver-daemonset",
    "container-toolkit": "nvidia-container-toolkit-daemonset",
    "device-plugin": "nvidia-device-plugin-daemonset",
    "gpu-feature-discovery": "gpu-feature-discovery",
    "dcgm-exporter": "nvidia-dcgm-exporter",
    "operator-validator": "nvidia-operator-validator",
}
_POLICY_SECTIONS = {
    "driver": "driver",
    "container-toolkit": "toolkit",
    "device-plugin": "devicePlugin",
    "gpu-feature-discovery": "gfd",
    "dcgm-exporter": "dcgmExporter",
    "operator-validator": "validator",
}
DEFAULT_OPERANDS = ("driver", "container-toolkit", "device-plugin")
PROBLEMS = ("missing-labels", "not-a-number", "toolkit-not-ready", "tainted", "hazard", "pending")
NAMESPACE = "gpu-operator"
TRAINING = "feature.node.kubernetes.io/custom-gpu-training"
GPU_TAINT: JSON = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
GPU_TOLERATION: JSON = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
ABSENT_PRODUCT = "NVIDIA-A100-SXM4-80GB"  # what the Pending pods ask for: no node has it
CREATED = "2026-11-20T09:00:00Z"
_SUFFIX = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet Kubernetes draws generated names from
_NUMBER_WORDS = ("one", "two", "four", "eight")


@dataclass
class Synth:
    """The objects of one synthetic cluster and the problems injected into it."""

    objects: list[JSON]
    # problem kind -> node names (``pending``: the Pending pods' namespace/name)
    problems: dict[str, list[str]] = field(default_factory=dict)

    def as_list(self) -> JSON:
        return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": self.objects}


class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.names: set[str] = set()  # namespace/name of every pod made so far

    def pod_name(self, namespace: str, prefix: str) -> str:
        """``prefix`` and a generated 5-character suffix, redrawn until unique in the namespace.

        27^5 suffixes collide by the birthday bound at ~20,000 pods of one
        DaemonSet; the API server refuses a second object of the same name
        (AlreadyExists) and its generator draws again, so a real cluster never
        holds two: neither does the synthetic one.
        """
        while True:
            name = f"{prefix}{self.suffix()}"
            if (key := f"{namespace}/{name}") not in self.names:
                self.names.add(key)
                return name

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(_SUFFIX) for _ in range(n))


def _gpu_labels(name: str, m: Machine, count: int, operands: Sequence[str], b: _Builder) -> dict[str, str]:
    driver = b.rng.choice((("550", "54", "15"), ("535", "161", "08"), ("560", "35", "03")))
    labels = {
        "nvidia.com/gpu.present": "true",
        "feature.node.kubernetes.io/pci-10de.present": "true",
        TRAINING: "true",
        "nvidia.com/gpu.product": m.product,
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.memory": m.memory,
        "nvidia.com/gpu.family": m.family,
        "nvidia.com/gpu.machine": m.machine,
        "nvidia.com/gpu.compute.major": m.compute[0],
        "nvidia.com/gpu.compute.minor": m.compute[1],
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/mig.capable": "true" if m.prefix.startswith("dgx") else "false",
        "nvidia.com/cuda.driver.major": driver[0],
        "nvidia.com/cuda.driver.minor": driver[1],
        "nvidia.com/cuda.driver.rev": driver[2],
        "nvidia.com/cuda.runtime.major": "12",
        "nvidia.com/cuda.runtime.minor": "4",
        "nvidia.com/gfd.timestamp": str(1763629200 + b.rng.randrange(86400)),
        "pool": m.prefix,
    }
    labels.update({f"nvidia.com/gpu.deploy.{op}": "true" for op in operands})
    return labels


def _node(name: str, labels: dict[str, str], taints: list[JSON], gpus: int, b: _Builder) -> JSON:
    capacity = {"cpu": "128" if gpus else "64", "memory": "1056451640Ki", "pods": "110", "ephemeral-storage": "1Ti"}
    if gpus:
        capacity["nvidia.com/gpu"] = str(gpus)
    base = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/zone": f"zone-{b.rng.choice('abc')}",
        "feature.node.kubernetes.io/kernel-version.major": "6",
        "feature.node.kubernetes.io/kernel-version.minor": "1",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": b.uid(), "creationTimestamp": CREATED, "labels": base | labels},
        "spec": {"taints": taints} if taints else {},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "nodeInfo": {"kubeletVersion": "v1.37.2", "operatingSystem": "linux", "architecture": "amd64"},
        },
    }


def _daemonset(op: str, uid: str, desired: int, scheduled: int, ready: int) -> JSON:
    name = OPERAND_DAEMONSETS[op]
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": uid, "labels": {"app": name}},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "nodeSelector": {f"nvidia.com/gpu.deploy.{op}": "true"},
                    "tolerations": [GPU_TOLERATION],
                    "containers": [{"name": op, "image": f"nvcr.io/nvidia/{name}:v25.3.0"}],
                },
            },
        },
        "status": {
            "desiredNumberScheduled": desired,
            "currentNumberScheduled": scheduled,
            "numberReady": ready,
            "numberAvailable": ready,
            "numberMisscheduled": 0,
            "updatedNumberScheduled": scheduled,
        },
    }


def _pod_status(phase: str, ready: bool, scheduled_message: str = "") -> JSON:
    if phase == "Pending":
        return {
            "phase": "Pending",
            "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": scheduled_message}
            ],
        }
    flag = "True" if ready else "False"
    return {
        "phase": phase,
        "startTime": CREATED,
        "conditions": [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Initialized", "status": "True"},
            {"type": "ContainersReady", "status": flag},
            {"type": "Ready", "status": flag},
        ],
    }


def _operand_pod(op: str, ds_uid: str, node: str, ready: bool, b: _Builder) -> JSON:
    ds = OPERAND_DAEMONSETS[op]
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": b.pod_name(NAMESPACE, f"{ds}-"),
            "namespace": NAMESPACE,
            "uid": b.uid(),
            "labels": {"app": ds},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds, "uid": ds_uid, "controller": True}
            ],
        },
        "spec": {
            "nodeName": node,
            "nodeSelector": {f"nvidia.com/gpu.deploy.{op}": "true"},
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
            },
            "tolerations": [GPU_TOLERATION],
            "containers": [{"name": op, "image": f"nvcr.io/nvidia/{ds}:v25.3.0"}],
        },
        "status": _pod_status("Running", ready),
    }


def _training_pod(product: str, node: str, b: _Builder, message: str = "") -> JSON:
    team = b.rng.choice(("ml", "research", "vision", "speech"))
    short = product.split("-")[1].lower()
    exprs = [
        {"key": "nvidia.com/gpu.product", "operator": "In", "values": [product]},
        {"key": TRAINING, "operator": "Exists"},
    ]
    spec: JSON = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}
            }
        },
        "tolerations": [GPU_TOLERATION],
        "containers": [
            {"name": "train", "image": "registry.example/train:1", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
        ],
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": b.pod_name(team, f"train-{short}-{b.suffix(10)}-"),
            "namespace": team,
            "uid": b.uid(),
            "labels": {"app": f"train-{short}"},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"train-{short}", "uid": b.uid()}
            ],
        },
        "spec": spec,
        "status": _pod_status("Running" if node else "Pending", True, message),
    }


def _cluster_policy(operands: Sequence[str]) -> JSON:
    spec = {section: {"enabled": op in operands} for op, section in _POLICY_SECTIONS.items()}
    return {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": spec,
    }


def _unschedulable_message(total: int, tainted: int) -> str:
    """kube-scheduler's message for a pod whose affinity no node matches (taints are filtered first)."""
    reasons = [f"{total - tainted} node(s) didn't match Pod's node affinity/selector"]
    if tainted:
        reasons.append(f"{tainted} node(s) had untolerated taint(s)")
    tail = f" preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling."
    return f"0/{total} nodes are available: {', '.join(sorted(reasons))}.{tail}"


@dataclass(frozen=True)
class Plan:
    """What :func:`generate` decides per node before it builds an object: each node's name, machine and GPU
    count (CPU nodes have none), the nodes of each injected problem, the node of each running training pod and
    how many Pending pods. Each object is then built from its node's entry alone, so the cluster's shape per
    node is the plan's (``tests/unit/test_synth_shape.py`` compares 130,000 nodes' with 20,000's)."""

    names: list[str]
    machines: dict[str, Machine]
    counts: dict[str, int]
    problems: dict[str, list[str]]  # problem kind -> node names, ``pending`` empty (its pods are named when built)
    workloads: list[str]  # the node of each running training pod, in the order they are built
    pending: int  # Pending pods asking for a product no node has


def plan(
    nodes: int = 5000,
    *,
    seed: int = 0,
    gpu_fraction: float = 0.85,
    problem_rate: float = 0.01,
    operands: Sequence[str] = DEFAULT_OPERANDS,
    workloads_per_gpu_node: float = 0.25,
    rng: random.Random | None = None,
) -> Plan:
    """:func:`generate`'s decisions per node (``rng``: the generator's, seeded by ``seed`` if not given)."""
    rng = rng if rng is not None else random.Random(seed)
    machines: dict[str, Machine] = {}
    counts: dict[str, int] = {}
    names: list[str] = []
    for i in range(nodes):
        if rng.random() < gpu_fraction:
            m = rng.choices(MACHINES, weights=[x.weight for x in MACHINES])[0]
            name = f"{m.prefix}-{i:05d}"
            machines[name], counts[name] = m, rng.choice(m.counts)
        else:
            name = f"cpu-{i:05d}"
        names.append(name)
    gpu_nodes = [n for n in names if n in machines]
    per_kind = max(1, round(problem_rate * len(gpu_nodes))) if problem_rate > 0 else 0
    shuffled = rng.sample(gpu_nodes, len(gpu_nodes))
    node_kinds = [
        k for k in PROBLEMS if k != "pending" and (k != "toolkit-not-ready" or "container-toolkit" in operands)
    ]
    problems: dict[str, list[str]] = {k: [] for k in PROBLEMS}
    for k, problem in enumerate(node_kinds):
        problems[problem] = sorted(shuffled[k * per_kind : (k + 1) * per_kind])
    problem_of = {n: kind for kind, ns in problems.items() for n in ns}
    healthy = [n for n in gpu_nodes if problem_of.get(n) in (None, "not-a-number", "toolkit-not-ready")]
    workloads = [rng.choice(healthy) for _ in range(round(workloads_per_gpu_node * len(gpu_nodes)) if healthy else 0)]
    return Plan(names, machines, counts, problems, workloads, per_kind)


def generate(
    nodes: int = 5000,
    *,
    seed: int = 0,
    gpu_fraction: float = 0.85,
    problem_rate: float = 0.01,
    operands: Sequence[str] = DEFAULT_OPERANDS,
    workloads_per_gpu_node: float = 0.25,
    cluster_policy: bool = True,
) -> Synth:
    """A synthetic cluster of ``nodes`` nodes; the same arguments always give the same objects."""
    unknown = [op for op in operands if op not in OPERAND_DAEMONSETS]
    if unknown:
        raise ValueError(f"unknown operand {unknown[0]!r}; known: {', '.join(OPERAND_DAEMONSETS)}")
    b = _Builder(seed)
    planned = plan(
        nodes,
        gpu_fraction=gpu_fraction,
        problem_rate=problem_rate,
        operands=operands,
        workloads_per_gpu_node=workloads_per_gpu_node,
        rng=b.rng,
    )
    machines, counts = planned.machines, planned.counts
    problems = {k: list(v) for k, v in planned.problems.items()}
    problem_of = {n: kind for kind, ns in problems.items() for n in ns}

    out: list[JSON] = []
    ds_uid = {op: b.uid() for op in operands}
    pods: list[JSON] = []
    ready_count = dict.fromkeys(operands, 0)
    scheduled_count = dict.fromkeys(operands, 0)
    for name in planned.names:
        machine = machines.get(name)
        if machine is None:
            out.append(_node(name, {"pool": "cpu"}, [], 0, b))
            continue
        kind = problem_of.get(name)
        labels = _gpu_labels(name, machine, counts[name], operands, b)
        taints = [GPU_TAINT]
        if kind == "missing-labels":
            for key in b.rng.sample(["nvidia.com/gpu.product", "nvidia.com/gpu.count", "nvidia.com/gpu.memory"], 2):
                del labels[key]
        elif kind == "not-a-number":
            labels["nvidia.com/gpu.count"] = b.rng.choice(_NUMBER_WORDS)
        elif kind == "tainted":
            taints.append(
                {"key": "dedicated", "value": b.rng.choice(("training", "inference")), "effect": "NoSchedule"}
            )
        elif kind == "hazard":
            del labels[TRAINING]
            pods.append(_training_pod(machine.product, name, b))
        out.append(_node(name, labels, taints, counts[name], b))
        if kind == "tainted":
            continue  # joined with a taint the operands do not tolerate: none of them started
        for op in operands:
            ready = not (kind == "toolkit-not-ready" and op == "container-toolkit")
            pods.append(_operand_pod(op, ds_uid[op], name, ready, b))
            scheduled_count[op] += 1
            ready_count[op] += ready
    pods.extend(_training_pod(machines[node].product, node, b) for node in planned.workloads)
    message = _unschedulable_message(nodes, len(problems["tainted"]))
    for _ in range(planned.pending):
        pod = _training_pod(ABSENT_PRODUCT, "", b, message)
        problems["pending"].append(f"{pod['metadata']['namespace']}/{pod['metadata']['name']}")
        pods.append(pod)
    desired = len(machines) - len(problems["tainted"])
    out.extend(_daemonset(op, ds_uid[op], desired, scheduled_count[op], ready_count[op]) for op in operands)
    out.extend(pods)
    if cluster_policy:
        out.append(_cluster_policy(operands))
    return Synth(out, problems)


def objects(nodes: int = 5000, **options: Any) -> list[JSON]:
    """Just the objects of :func:`generate`, as the API's dicts."""
    return generate(nodes, **options).objects


def write_file(path: Path, nodes: int) -> None:
    """The snapshot of ``nodes`` nodes at ``path``, made by a process of its own (its objects, ~4 GB at 130,000
    nodes, go back with it) unless the file is there already."""
    if not path.exists():
        argv = [sys.executable, "-m", "bench.synth", "--nodes", str(nodes), "--out", str(path)]
        subprocess.run(argv, check=True, stderr=subprocess.DEVNULL, cwd=Path(__file__).resolve().parent.parent)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.synth", description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--out", required=True, metavar="FILE", help="the v1 List JSON to write; - for stdout")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--problem-rate", type=float, default=0.01, help="fraction of GPU nodes per problem kind")
    p.add_argument("--gpu-fraction", type=float, default=0.85)
    p.add_argument("--workloads-per-gpu-node", type=float, default=0.25)
    p.add_argument("--operands", default=",".join(DEFAULT_OPERANDS), help="comma-separated; default: %(default)s")
    p.add_argument("--no-cluster-policy", action="store_true", help="leave the ClusterPolicy out")
    a = p.parse_args(argv)
    import orjson

    start = time.perf_counter()
    synth = generate(
        a.nodes,
        seed=a.seed,
        gpu_fraction=a.gpu_fraction,
        problem_rate=a.problem_rate,
        operands=[op for op in a.operands.split(",") if op],
        workloads_per_gpu_node=a.workloads_per_gpu_node,
        cluster_policy=not a.no_cluster_policy,
    )
    built = time.perf_counter() - start
    data = orjson.dumps(synth.as_list(), option=orjson.OPT_INDENT_2) + b"\n"
    if a.out == "-":
        sys.stdout.buffer.write(data)
    else:
        Path(a.out).write_bytes(data)
    kinds: dict[str, int] = {}
    for obj in synth.objects:
        kinds[obj["kind"]] = kinds.get(obj["kind"], 0) + 1
    summary = " ".join(f"{k}={n}" for k, n in kinds.items())
    injected = " ".join(f"{k}={len(v)}" for k, v in synth.problems.items())
    print(
        f"synth: {summary}; problems {injected}; {len(data) / 1e6:.1f} MB; "
        f"built in {built:.2f}s, written in {time.perf_counter() - start - built:.2f}s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
