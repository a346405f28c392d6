"""A GPU node's NoExecute taint that the GPU stack's own pods do not tolerate: the chain's ``node`` link.

A NoSchedule taint keeps new pods off a node; a NoExecute taint also evicts the
pods already there (the taint manager), and the DaemonSet controller neither
keeps nor recreates a daemon pod on a node whose NoExecute taint it does not
tolerate. When the pods evicted are the driver's, the toolkit's, the device
plugin's or GFD's, every GPU of the node is lost, and the operator's status
stays ``ready`` (the node drops out of ``desiredNumberScheduled``). The
operands check gives one ``missing`` per operand (the DaemonSet link); this
finding names the taint once, on the node (``noexecute-taint``, args: the taints).

A DaemonSet counts when it would take the node but for its taints (its
selector and node affinity match), so a driver DaemonSet a ``pre-installed``
label keeps off, or a node isolated with ``deploy.operands=false``, says nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpulabel.checks.operands.daemonsets import daemonset_requirements, operand_of_daemonset
from gpulabel.checks.operands.standalone import gpu_node, standalone_kind
from gpulabel.model.cluster import ClusterState, DaemonSet
from gpulabel.model.findings import Finding
from gpulabel.model.operands import CHAIN_OPERANDS as CHAIN_KINDS

__all__ = ["noexecute_findings"]


def _chain_daemonsets(daemonsets: Iterable[DaemonSet], namespace: str | None) -> list[tuple[str, DaemonSet]]:
    """The DaemonSets of the chain with their kind: the operator's (in ``namespace``, when given) and standalone."""
    out = []
    for ds in daemonsets:
        operand = operand_of_daemonset(ds)
        if operand is not None and namespace and ds.namespace != namespace:
            continue
        kind = operand if operand is not None else standalone_kind(ds)
        if kind in CHAIN_KINDS:
            out.append((kind, ds))
    return sorted(out, key=lambda kd: (CHAIN_KINDS.index(kd[0]), kd[1].ref))


def noexecute_findings(state: ClusterState, namespace: str | None = None) -> list[Finding]:
    """One ``noexecute-taint`` finding per GPU node whose NoExecute taints evict pods of the chain."""
    tainted = [n for n in state.nodes if any(t.effect == "NoExecute" for t in n.taints) and gpu_node(n)]
    if not tainted:
        return []
    chain = [(kind, ds, daemonset_requirements(ds)) for kind, ds in _chain_daemonsets(state.daemonsets, namespace)]
    out = []
    for node in tainted:
        evicting: dict[str, list[str]] = {}  # taint -> the kinds whose pods it evicts
        for kind, _ds, req in chain:
            if not req.affinity_only().match(node).fits:
                continue  # the DaemonSet does not select the node whatever its taints
            for taint in node.taints:
                if taint.effect == "NoExecute" and not req.tolerates(taint):
                    kinds = evicting.setdefault(str(taint), [])
                    if kind not in kinds:
                        kinds.append(kind)
        if not evicting:
            continue
        kinds = sorted({k for ks in evicting.values() for k in ks}, key=CHAIN_KINDS.index)
        taints = tuple(sorted(evicting))
        detail = (
            f"not tolerated by the pods of {', '.join(kinds)}: evicted, and not recreated here by the DaemonSet "
            "controller, so the node's GPUs cannot be used"
        )
        out.append(Finding("operands", "noexecute-taint", node=node.name, args=taints, detail=detail))
    return out
