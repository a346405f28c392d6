"""The ``admission`` check, defined once: GPU pods the kubelet rejected at admission, node by node.

A node's findings read the node and the GPU pods bound to it that the kubelet rejected; the keeper remakes a
node's when the node changes or such a pod bound to it comes, changes or goes.
"""

from __future__ import annotations

from typing import Any

from gpulabel.checks.admission import rules as admission
from gpulabel.checks.engine.definition import Check, CheckOptions, Fleet, ObjectKey, graded
from gpulabel.model.cluster import ClusterState, Pod
from gpulabel.model.findings import Finding, Result

__all__ = ["CHECK"]


def _run(state: ClusterState, opts: CheckOptions) -> Result:
    return Result("admission", tuple(admission.admission(state, opts.namespace)))


def _rejected_on(pod: Pod | None) -> tuple[str, ...]:
    """The node whose findings a pod's change can alter: the one a rejected GPU pod is bound to."""
    return (pod.node_name,) if pod is not None and admission.rejected(pod) else ()


class _Pieces:
    """Each node's findings; a node's change, or a rejected GPU pod's bound to it, remakes its own."""

    def __init__(self, check: Check) -> None:
        self.check, self.table = check, check.reasons()
        self.found: dict[str, list[Finding]] = {}
        self.everything = True
        self.dirty: set[str] = set()

    def touched(self, kind: str, key: ObjectKey, old: Any | None, new: Any | None) -> None:
        for record in (old, new):
            if kind == "Node" and record is not None:
                self.dirty.add(record.name)
            elif kind == "Pod":
                self.dirty.update(_rejected_on(record))

    def result(self, fleet: Fleet, opts: CheckOptions) -> Result:
        if self.everything:
            self.found, redo = {}, set(fleet.names)
        else:
            redo = self.dirty
        self.everything, self.dirty = False, set()
        for name in redo:
            self.found.pop(name, None)
            node = fleet.nodes.get(name)
            if node is None:
                continue
            pods = (fleet.pods[k] for k in fleet.bound(name))
            found = admission.node_admission(node, pods, opts.namespace)
            if found:
                self.found[name] = graded(self.check, found, self.table)
        return Result("admission", tuple(f for n in sorted(self.found) for f in self.found[n]), graded=True)


CHECK: Check = Check(
    "admission",
    ("Node", "Pod"),
    ("Node", "Pod"),
    _run,
    "GPU pods the kubelet rejected at admission (UnexpectedAdmissionError, TopologyAffinityError), by node",
    reasons=lambda: admission.REASONS,
    pieces=_Pieces,
)
