"""``cudaskew``: GPU workloads failing because the node's driver is older than the CUDA they were built for.

A container image built for CUDA X.Y needs a driver that supports CUDA X.Y. Two lines say it did not get one,
each read from the pod's container messages (the runtime's error the kubelet writes on a container that
could not start, and a container's termination message: :mod:`gpulabel.model.terminations`):

- NVIDIA's container stack refuses to start it, from the image's ``NVIDIA_REQUIRE_CUDA``: libnvidia-container's
  ``nvidia-container-cli: requirement error: unsatisfied condition: cuda>=X.Y, please update your driver to a
  newer version, or use an earlier cuda container`` (``src/cli/dsl.c`` ``dsl_evaluate``, the condition being
  the predicate's first term; ``src/cli/configure.c`` prefixes ``requirement error:``; NVIDIA/libnvidia-container
  at 5823754 and 09df17a), or the Go toolkit's CSV mode ``requirements not met: unsatisfied condition:
  cuda>=X.Y (cuda=A.B)`` (NVIDIA/nvidia-container-toolkit d34b304, ``internal/requirements/constraints/
  binary.go`` and ``internal/modifier/csv.go``);
- the application's CUDA runtime fails to initialise: ``CUDA driver version is insufficient for CUDA runtime
  version``, what ``cudaGetErrorString`` says of ``cudaErrorInsufficientDriver`` (35; CUDA Runtime API, "Data
  types": "the installed NVIDIA CUDA driver is older than the CUDA runtime library"). This line names no
  version.

The node's driver is read from GPU Feature Discovery's labels (NVIDIA/k8s-device-plugin v0.20.0,
``internal/lm/nvml.go`` ``newVersionLabeler``): ``nvidia.com/cuda.runtime-version.{major,minor}`` is the CUDA
version the driver supports (NVML's ``SystemGetCudaDriverVersion``, since v0.15.0; before, the deprecated
``nvidia.com/cuda.runtime.{major,minor}``), and ``nvidia.com/cuda.driver-version.full`` the driver itself
(deprecated ``nvidia.com/cuda.driver.{major,minor,rev}``). The driver labels hold the driver's version (550),
not a CUDA version: the selector that keeps a pod on nodes new enough is on the runtime-version labels.

One error per node and needed version, with its pods, the node's driver, and the node affinity that keeps
the pods on nodes whose driver is new enough, checked against the cluster's nodes (which match, or that none
does). The CUDA runtime's line is judged on GPU nodes only (a node without a driver says it too). Not
modelled: CUDA forward compatibility (``cuda-compat`` in the image), the image's requirement when no line
names it, and Events (their text is the container's message, which is read).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from gpulabel.checks.operands.standalone import gpu_node
from gpulabel.k8s.nodeaffinity import compile_pod_spec
from gpulabel.k8s.taints import Taint
from gpulabel.model.cluster import ClusterState, Node, Pod
from gpulabel.model.findings import Finding
from gpulabel.model.severity import Reason

__all__ = [
    "CUDA_MAJOR",
    "CUDA_MINOR",
    "LINES",
    "REASONS",
    "SkewLine",
    "affinity",
    "cudaskew",
    "matched",
    "node_cuda",
    "selector_nodes",
]

CUDA_MAJOR = ("nvidia.com/cuda.runtime-version.major", "nvidia.com/cuda.runtime.major")
CUDA_MINOR = ("nvidia.com/cuda.runtime-version.minor", "nvidia.com/cuda.runtime.minor")
_DRIVER_FULL = "nvidia.com/cuda.driver-version.full"
_DRIVER_PARTS = (
    (
        "nvidia.com/cuda.driver-version.major",
        "nvidia.com/cuda.driver-version.minor",
        "nvidia.com/cuda.driver-version.revision",
    ),
    ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"),
)

REASONS: dict[str, Reason] = {
    "driver-too-old": Reason(
        "error",
        "GPU pods on the node fail because its driver supports an older CUDA than their image needs "
        "(unsatisfied condition: cuda>=X.Y; CUDA driver version is insufficient for CUDA runtime version)",
    ),
}


@dataclass(frozen=True, slots=True)
class SkewLine:
    """A line that says the driver is too old: its pattern (``needed``: the CUDA version, where it names one)."""

    pattern: re.Pattern[str]
    source: str


LINES: tuple[SkewLine, ...] = (
    SkewLine(
        re.compile(r"unsatisfied condition: cuda>=(?P<needed>\d+(?:\.\d+)*)(?: \(cuda=(?P<has>[\d.]+)\))?"),
        "NVIDIA's container stack refused to start it",
    ),
    SkewLine(
        re.compile(r"CUDA driver version is insufficient for CUDA runtime version"),
        "the application's CUDA runtime: cudaErrorInsufficientDriver",
    ),
)


def matched(message: str) -> tuple[SkewLine, re.Match[str]] | None:
    """The first line ``message`` holds, with its match, or ``None``."""
    for line in LINES:
        m = line.pattern.search(message)
        if m is not None:
            return line, m
    return None


def _version(text: str) -> tuple[int, int] | None:
    parts = text.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 and parts[1] else 0
    except ValueError:
        return None


def _first(node: Node, keys: Iterable[str]) -> str | None:
    return next((node.labels[k] for k in keys if k in node.labels), None)


def node_cuda(node: Node) -> tuple[int, int] | None:
    """The CUDA version the node's driver supports, from GFD's labels; ``None`` when they do not say."""
    major, minor = _first(node, CUDA_MAJOR), _first(node, CUDA_MINOR)
    if major is None or minor is None:
        return None
    return _version(f"{major}.{minor}")


def _driver(node: Node) -> str:
    if _DRIVER_FULL in node.labels:
        return node.labels[_DRIVER_FULL]
    for keys in _DRIVER_PARTS:
        parts = [node.labels.get(k, "") for k in keys]
        if parts[0]:
            return ".".join(p for p in parts if p)
    return ""


def affinity(needed: tuple[int, int]) -> dict[str, object]:
    """The required node affinity that takes exactly the nodes whose GFD labels say CUDA >= ``needed``: major
    above, or major equal and minor not below (``Gt`` takes integers only, hence two terms)."""
    major, minor = needed
    key_major, key_minor = CUDA_MAJOR[0], CUDA_MINOR[0]
    terms: list[dict[str, object]] = [
        {"matchExpressions": [{"key": key_major, "operator": "Gt", "values": [str(major - (minor == 0))]}]}
    ]
    if minor > 0:
        terms.append(
            {
                "matchExpressions": [
                    {"key": key_major, "operator": "In", "values": [str(major)]},
                    {"key": key_minor, "operator": "Gt", "values": [str(minor - 1)]},
                ]
            }
        )
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


@dataclass(frozen=True, slots=True)
class _Labels:
    """A node as the affinity sees it: its labels alone (no taint, schedulable)."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False


def selector_nodes(needed: tuple[int, int], nodes: Sequence[Node]) -> list[str]:
    """The nodes :func:`affinity` takes, matched by gpulabel's scheduler mirror on their labels."""
    req = compile_pod_spec({"affinity": affinity(needed)})
    return [n.name for n in nodes if req.match(_Labels(n.name, dict(n.labels))).fits]


def _text(needed: tuple[int, int]) -> str:
    major, minor = needed
    if minor == 0:
        return f"{CUDA_MAJOR[0]} Gt {major - 1}"
    return f"{CUDA_MAJOR[0]} Gt {major}, or {CUDA_MAJOR[0]} In [{major}] and {CUDA_MINOR[0]} Gt {minor - 1}"


@dataclass
class _Group:
    pods: list[Pod] = field(default_factory=list)
    message: str = ""
    source: str = ""


def _line_of(message: str, m: re.Match[str]) -> str:
    """The line of ``message`` the match is on, trimmed (a hook's stderr holds several)."""
    start = message.rfind("\n", 0, m.start()) + 1
    end = message.find("\n", m.end())
    return message[start : end if end >= 0 else len(message)].strip()[:400]


def _needed(m: re.Match[str]) -> tuple[int, int] | None:
    named = m.groupdict().get("needed")
    return _version(named) if named else None


def _finding(
    node: Node, needed: tuple[int, int] | None, group: _Group, nodes: Sequence[Node], selected: bool
) -> Finding:
    has = node_cuda(node)
    driver = _driver(node)
    node_says = (
        f"the node's driver {driver or '(version not labelled)'} supports CUDA {has[0]}.{has[1]} "
        f"({CUDA_MAJOR[0]}/{CUDA_MINOR[0]})"
        if has
        else "the node has no GFD CUDA labels (nvidia.com/cuda.runtime-version.*): its driver's CUDA is unknown"
    )
    target = needed if needed is not None else ((has[0], has[1] + 1) if has else None)
    if needed is not None and has is not None and has >= needed:
        node_says += "; its labels say that suffices: they are stale (GFD not rerun since a driver change)"
    if target is None:
        avoid = "the message names no CUDA version and the node's labels none: no selector can be made"
    else:
        fit = [n for n in selector_nodes(target, nodes) if n != node.name]
        here = "of the nodes read (the input holds only some)" if selected else "here"
        where = (
            f"matches {len(fit)} node(s) {here} ({', '.join(fit[:5])}{' ...' if len(fit) > 5 else ''})"
            if fit
            else f"matches no node {here}: upgrade the driver, or use an image built for the node's CUDA"
        )
        avoid = f"required node affinity {_text(target)} {where}"
    wanted = f"cuda>={needed[0]}.{needed[1]}" if needed else "a newer CUDA than the driver's (the line names none)"
    names = ", ".join(p.ref for p in group.pods[:3]) + (
        f" and {len(group.pods) - 3} more" if len(group.pods) > 3 else ""
    )
    detail = (
        f"{len(group.pods)} pod(s) ({names}) need {wanted}; {node_says}. A container's status says: "
        f"{group.message} ({group.source}). To keep them off older drivers: {avoid}"
    )
    args: tuple[str, ...] = (f"cuda>={needed[0]}.{needed[1]}",) if needed else ("cuda-runtime",)
    args += (f"node-cuda={has[0]}.{has[1]}",) if has else ()
    return Finding("cudaskew", "driver-too-old", node=node.name, args=args, detail=detail)


def node_skew(
    node: Node, pods: Iterable[Pod], nodes: Sequence[Node], namespace: str | None = None, selected: bool = False
) -> list[Finding]:
    """The node's findings from the pods bound to it, one per needed version (the runtime's line apart)."""
    groups: dict[tuple[int, int] | None, _Group] = {}
    for pod in pods:
        if namespace is not None and pod.namespace != namespace:
            continue
        for message in pod.messages:
            found = matched(message)
            if found is None:
                continue
            line, m = found
            needed = _needed(m)
            if needed is None and not gpu_node(node):
                continue
            group = groups.setdefault(needed, _Group(message=_line_of(message, m), source=line.source))
            if pod not in group.pods:
                group.pods.append(pod)
            break
    order = sorted(groups, key=lambda k: (k is None, k or (0, 0)))
    return [_finding(node, k, groups[k], nodes, selected) for k in order]


def cudaskew(state: ClusterState, namespace: str | None = None) -> list[Finding]:
    """Every node's findings, by node; with only some nodes read (``-l``, explain), the selector's matches are
    said of those."""
    by_node: dict[str, list[Pod]] = {}
    for p in state.pods:
        if p.node_name and p.messages:
            by_node.setdefault(p.node_name, []).append(p)
    out: list[Finding] = []
    for node in state.nodes:
        if node.name in by_node:
            out.extend(node_skew(node, by_node[node.name], state.nodes, namespace, state.nodes_selected))
    return out
