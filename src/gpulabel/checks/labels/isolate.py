"""``gpulabel isolate``: take nodes away from every GPU Operator operand, or give them back.

Isolation is the operator's own switch, ``nvidia.com/gpu.deploy.operands=false``:
the operator then removes the node's deploy labels and every operand pod
leaves it. Pods already using GPUs keep their devices but lose the driver and
the device plugin from under them (the node then advertises 0 GPUs), so the
plan lists the GPU pods (pods requesting ``nvidia.com/*`` resources) running on
each node it isolates; the command refuses such nodes without ``--force``.
gpulabel writes that one key as field manager
``gpulabel-isolate`` (kept apart from ``gpulabel`` so that ``sync`` never
releases it), and ``--undo`` removes the key again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gpulabel.model import vocabulary as V
from gpulabel.model.changes import LabelChange
from gpulabel.model.cluster import Node, Pod

__all__ = ["FIELD_MANAGER", "Isolation", "plan_isolation"]

FIELD_MANAGER = "gpulabel-isolate"


@dataclass(frozen=True, slots=True)
class Isolation:
    """One node's isolation change, with the operand pods that will leave the node because of it."""

    change: LabelChange
    leaving: tuple[str, ...] = ()
    gpu_pods: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (namespace/name, its nvidia.com/* resources)

    @property
    def isolate(self) -> bool:
        return not self.change.removes


def plan_isolation(
    nodes: Mapping[str, Node],
    names: Iterable[str],
    undo: bool,
    operand_pods: Iterable[Pod] = (),
    node_pods: Iterable[Pod] = (),
) -> tuple[list[Isolation], list[str]]:
    """The changes for ``names`` (nodes already in the wanted state need none) and unknown names.

    ``operand_pods`` are the operands' pods (they leave); ``node_pods`` every pod on the
    named nodes, of which those requesting ``nvidia.com/*`` resources are the GPU pods.
    """
    pods_on: dict[str, list[str]] = {}
    for pod in operand_pods:
        if pod.phase in ("Running", "Pending") and pod.node_name:
            pods_on.setdefault(pod.node_name, []).append(pod.ref)
    gpu_on: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for pod in node_pods:
        if pod.phase in ("Running", "Pending") and pod.node_name and pod.gpu_resources:
            gpu_on.setdefault(pod.node_name, []).append((pod.ref, pod.gpu_resources))
    changes: list[Isolation] = []
    unknown: list[str] = []
    for name in dict.fromkeys(names):
        node = nodes.get(name)
        if node is None:
            unknown.append(name)
            continue
        current = node.labels.get(V.DEPLOY_OPERANDS)
        if undo and current is not None:
            changes.append(Isolation(LabelChange(name, V.DEPLOY_OPERANDS, None, current)))
        elif not undo and current != "false":
            leaving = tuple(sorted(pods_on.get(name, ())))
            gpu = tuple(sorted(gpu_on.get(name, ())))
            changes.append(Isolation(LabelChange(name, V.DEPLOY_OPERANDS, "false", current), leaving, gpu))
    return changes, unknown
