"""``gpulabel isolate``: take nodes away from every GPU Operator operand, or give them back.

Isolation is the operator's own switch, ``nvidia.com/gpu.deploy.operands=false``:
the operator then removes the node's deploy labels and every operand pod
leaves it. gpulabel writes that one key as field manager
``gpulabel-isolate`` (kept apart from ``gpulabel`` so that ``sync`` never
releases it), and ``--undo`` removes the key again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import Node, Pod

__all__ = ["FIELD_MANAGER", "IsolationChange", "plan_isolation"]

FIELD_MANAGER = "gpulabel-isolate"


@dataclass(frozen=True, slots=True)
class IsolationChange:
    node: str
    isolate: bool
    previous: str | None
    leaving: tuple[str, ...] = ()  # operand pods that will leave the node

    def line(self) -> str:
        return f"{self.node} {V.DEPLOY_OPERANDS} false" if self.isolate else f"{self.node} {V.DEPLOY_OPERANDS}-"


def plan_isolation(
    nodes: Mapping[str, Node], names: Iterable[str], undo: bool, operand_pods: Iterable[Pod] = ()
) -> tuple[list[IsolationChange], list[str]]:
    """The changes for ``names`` (nodes already in the wanted state need none) and unknown names."""
    pods_on: dict[str, list[str]] = {}
    for pod in operand_pods:
        if pod.phase in ("Running", "Pending") and pod.node_name:
            pods_on.setdefault(pod.node_name, []).append(pod.ref)
    changes: list[IsolationChange] = []
    unknown: list[str] = []
    for name in dict.fromkeys(names):
        node = nodes.get(name)
        if node is None:
            unknown.append(name)
            continue
        current = node.labels.get(V.DEPLOY_OPERANDS)
        if undo and current is not None:
            changes.append(IsolationChange(name, False, current))
        elif not undo and current != "false":
            changes.append(IsolationChange(name, True, current, tuple(sorted(pods_on.get(name, ())))))
    return changes, unknown
