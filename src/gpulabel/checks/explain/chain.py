"""``gpulabel explain node/NAME``: the root-cause chain of one node, every link with its evidence.

The seed's triage order made into a command: the labels, then the DaemonSets
selecting the node, then the node's pods, then what the device plugin
advertises, GFD's labels and the node itself. A link is ``broken`` when a
check's finding about the node (warning or worse) falls on it
(:func:`gpulabel.checks.engine.rootcause.link_of`), otherwise ``ok``; its evidence is
what the input says, whichever the status.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpulabel.checks.engine.rootcause import CHAIN, node_gpus, node_links
from gpulabel.checks.operands.daemonsets import daemonset_requirements, operand_of_daemonset, untolerated_taints
from gpulabel.checks.operands.standalone import standalone_kind
from gpulabel.model import gpustack as G
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.dradriver import OPERAND as DRA_PLUGIN
from gpulabel.model.findings import Cell, Finding
from gpulabel.model.operands import CHAIN_OPERANDS, deploy_key

__all__ = ["Link", "explain_node_chain"]


@dataclass(frozen=True, slots=True)
class Link:
    name: str
    status: str  # ok | broken
    evidence: str
    findings: tuple[Finding, ...] = ()

    def lines(self) -> list[str]:
        out = [f"{self.status:<6} {self.name}: {self.evidence}"]
        for f in self.findings:
            what = " ".join(p for p in (f.operand, f.key, f.reason, *f.args) if p)
            out.append(f"         {f.severity} {f.check} {what} ({f.detail})")
        return out

    def row(self) -> dict[str, Cell]:
        return {
            "link": self.name,
            "status": self.status,
            "evidence": self.evidence,
            "findings": tuple(f"{f.check} {f.reason}" for f in self.findings),
        }


def _values(labels: dict[str, str] | object, keys: Sequence[str]) -> str:
    assert isinstance(labels, dict)
    return ", ".join(f"{k}={labels[k]}" if k in labels else f"{k} absent" for k in keys)


_SERVING = (*CHAIN_OPERANDS, DRA_PLUGIN)  # the chain's DaemonSets, and NVIDIA's DRA driver's kubelet plugin


def _serving_sets(state: ClusterState, node: Node) -> tuple[list[str], list[str]]:
    """The node's chain DaemonSets (operand or standalone kind: ref, and whether it takes the node), and
    the pods of those on the node."""
    sets, pods = [], []
    by_uid = {}
    for ds in state.daemonsets:
        kind = operand_of_daemonset(ds) or standalone_kind(ds)
        if kind not in _SERVING:
            continue
        req = daemonset_requirements(ds)
        taints = untolerated_taints(ds, node, req)
        match = req.match(node)
        why = f"taint {', '.join(taints)}" if taints else ("takes it" if match.fits else match.reason)
        sets.append(f"{kind} {ds.ref} ({why})")
        by_uid[ds.uid] = kind
    for pod in state.pods:
        if pod.node_name != node.name:
            continue
        kind = next((by_uid[uid] for k, uid in pod.owners if k == "DaemonSet" and uid in by_uid), None)
        if kind is not None:
            state_text = "Ready" if pod.phase == "Running" and pod.ready else pod.waiting or pod.phase
            pods.append(f"{kind} {pod.ref} {state_text}")
    order = {op: i for i, op in enumerate(_SERVING)}
    return sorted(sets, key=lambda t: (order[t.split()[0]], t)), sorted(pods, key=lambda t: (order[t.split()[0]], t))


def _health_evidence(node: Node) -> str:
    """What the node says of its GPUs' health: capacity against allocatable, the other agents' conditions."""
    lost = G.lost_gpus(node)
    parts = [f"{r}: capacity {cap}, allocatable {cap - n}" for r, (n, cap) in sorted(lost.items())]
    if not lost:
        parts.append("no GPU lost (capacity = allocatable)" if node.amounts is not None else "allocatable not in input")
    shown = [f"{c.type}={c.status}" for c in node.other_conditions]
    parts.append(f"conditions {', '.join(shown)}" if shown else "no condition from a health agent")
    return "; ".join(parts)


def explain_node_chain(state: ClusterState, node: Node, findings: Sequence[Finding]) -> tuple[int | None, list[Link]]:
    """The node's GPUs and its chain, link by link."""
    labels = dict(node.labels)
    broken: dict[str, list[Finding]] = {}
    for link, f in node_links(f for f in findings if f.node == node.name and not f.pod):
        broken.setdefault(link, []).append(f)
    sets, pods = _serving_sets(state, node)
    deploy = [deploy_key(op) for op in CHAIN_OPERANDS]
    if V.DEPLOY_OPERANDS in labels:
        deploy.insert(0, V.DEPLOY_OPERANDS)
    managed = any(k.startswith(V.DEPLOY_PREFIX) for k in labels)
    advertised = G.gpu_resources(node.amounts or {}) if node.amounts is not None else None
    taints = [str(t) for t in node.taints if t.effect in ("NoSchedule", "NoExecute")]
    evidence = {
        "nfd": _values(labels, [next((k for k in V.PCI_PRESENT if k in labels), V.PCI_PRESENT[0])]),
        "gpu.present": _values(labels, [V.GPU_PRESENT]),
        "deploy-labels": _values(labels, deploy) if managed else "no deploy labels: not managed by the GPU Operator",
        "driver-upgrade": _values(labels, [G.DRIVER_UPGRADE_STATE]),
        "daemonset": "; ".join(sets) or "no device plugin, driver, toolkit or GFD DaemonSet in the input",
        "operand-pod": "; ".join(pods) or "no pod of those DaemonSets on the node",
        "mig": _values(labels, [G.MIG_CONFIG, G.MIG_CONFIG_STATE]),
        "allocatable": "not in the input"
        if advertised is None
        else (", ".join(f"{k}={v}" for k, v in sorted(advertised.items())) or "no GPU resource"),
        "health": _health_evidence(node),
        "gfd-labels": _values(labels, [V.GPU_PRODUCT, V.GPU_COUNT, V.GPU_MEMORY]),
        "node": f"Ready={node.conditions.get('Ready', 'unknown')}, "
        + ("cordoned" if node.unschedulable else "schedulable")
        + (f", taints {', '.join(taints)}" if taints else ""),
        "operand": "the other operands (dcgm, exporters, validators): no GPU depends on them",
    }
    links = [
        Link(name, "broken" if name in broken else "ok", evidence[name], tuple(broken.get(name, ()))) for name in CHAIN
    ]
    return node_gpus(node), links
