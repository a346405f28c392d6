"""Two checks that gpulabel does not ship, each one definition (what a new check is): used by
tests/unit/test_check_definition.py to show that ``check`` and both of the monitor's evaluators run a
definition they have never heard of, and agree on it.

- ``product``: one node at a time (:func:`~gpulabel.checks.engine.definition.node_check`): a GPU node's product
  label, read against whether the cluster has a ClusterPolicy (the rule's context);
- ``crowded``: a node with more than two pods bound to it, with a hand-written keeper of pieces (a node's
  finding reads the node and the pods bound to it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpulabel.checks.engine.definition import Check, CheckOptions, Fleet, NodeRule, ObjectKey, graded, node_check
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node, Pod
from gpulabel.model.findings import Finding, Result
from gpulabel.model.severity import Reason

__all__ = ["CROWDED", "PRODUCT", "crowded_keeper"]

PRODUCT_REASONS: Mapping[str, Reason] = {
    "product": Reason("info", "the GPU node's product label"),
    "product-unmanaged": Reason("warning", "the GPU node's product label, with no ClusterPolicy in the cluster"),
}
CROWDED_REASONS: Mapping[str, Reason] = {"crowded": Reason("warning", "more than two pods run on the node")}


def _product(node: Node, policy: Any, opts: CheckOptions) -> list[Finding]:
    product = node.labels.get(V.GPU_PRODUCT)
    if product is None:
        return []
    reason = "product" if policy else "product-unmanaged"
    return [Finding("product", reason, node=node.name, key=V.GPU_PRODUCT, value=product)]


def _policy(state: ClusterState, opts: CheckOptions, marked: bool) -> bool:
    return bool(state.cluster_policies)


PRODUCT: Check = node_check(
    "product",
    ("Node", "ClusterPolicy"),
    ("Node",),
    NodeRule(_product, context=_policy),
    reasons=lambda: PRODUCT_REASONS,
)


def _crowded(node: str, pods: list[Pod]) -> list[Finding]:
    running = [p for p in pods if not p.terminal]
    return [Finding("crowded", "crowded", node=node, args=(str(len(running)),))] if len(running) > 2 else []


def _run_crowded(state: ClusterState, opts: CheckOptions) -> Result:
    on: dict[str, list[Pod]] = {}
    for pod in state.pods:
        if pod.node_name:
            on.setdefault(pod.node_name, []).append(pod)
    return Result("crowded", tuple(f for n in state.nodes for f in _crowded(n.name, on.get(n.name, []))))


class _Crowded:
    """Each node's finding; a node's change, or a pod's bound to it (before or after), remakes its own."""

    def __init__(self, check: Check, wrong: bool = False) -> None:
        self.check, self.wrong = check, wrong
        self.found: dict[str, list[Finding]] = {}
        self.everything = True
        self.dirty: set[str] = set()

    def touched(self, kind: str, key: ObjectKey, old: Any | None, new: Any | None) -> None:
        if kind == "Node":
            self.dirty.update(n.name for n in (old, new) if n is not None)
        elif kind == "Pod" and not self.wrong:  # wrong: a pod's change is missed (the planted bug below)
            self.dirty.update(p.node_name for p in (old, new) if p is not None and p.node_name)

    def result(self, fleet: Fleet, opts: CheckOptions) -> Result:
        redo = fleet.names if self.everything else sorted(self.dirty)
        if self.everything:
            self.found = {}
        self.everything, self.dirty = False, set()
        for name in redo:
            self.found.pop(name, None)
            if name in fleet.nodes:
                found = _crowded(name, [fleet.pods[k] for k in fleet.bound(name)])
                if found:
                    self.found[name] = graded(self.check, found)
        return Result("crowded", tuple(f for n in sorted(self.found) for f in self.found[n]), graded=True)


def crowded_keeper(wrong: bool) -> Any:
    return lambda check: _Crowded(check, wrong)


CROWDED: Check = Check(
    "crowded",
    ("Node", "Pod"),
    ("Node", "Pod"),
    _run_crowded,
    "more than two pods on a node",
    reasons=lambda: CROWDED_REASONS,
    pieces=crowded_keeper(False),
)
