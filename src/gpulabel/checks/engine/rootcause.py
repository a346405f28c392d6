"""One root cause per GPU node: the first broken link of the chain that makes its GPUs usable.

The chain, in order (what the GPU stack needs before the next step can work):

1. ``nfd``: NFD's NVIDIA PCI label (``feature.node.kubernetes.io/pci-10de.present``)
2. ``gpu.present``: the operator's ``nvidia.com/gpu.present=true``
3. ``deploy-labels``: the deploy labels of the operands (empty, a typo, a pause left behind)
4. ``driver-upgrade``: the driver upgrade's state (failed, stuck)
5. ``daemonset``: a DaemonSet selecting the node (none, its selector or nodeAffinity, a taint)
6. ``operand-pod``: the operand's pod on the node (missing, Pending, waiting, an init container)
7. ``mig``: the MIG layout (failed, stuck, invalid)
8. ``allocatable``: the device plugin advertising the GPUs in ``status.allocatable``
9. ``health``: GPUs the device plugin took out (capacity minus allocatable), devices pods report
   unhealthy, GPU health conditions, health taints, DRA devices not ready (``checks/health/rules.py``)
10. ``gfd-labels``: GFD's labels (product, count, memory; sharing)
11. ``node``: Ready, not cordoned, no NoExecute taint that evicts the pods of the chain

The operands of the chain are the driver, the container toolkit, the device
plugin and GFD, in that order, and NVIDIA's DRA driver's kubelet plugin (a GPU
node it does not take, NFD's label spelled otherwise than its affinity asks, is
``daemonset``); another operand's failure (dcgm-exporter, a
validator) is the last link, ``operand``, and costs no GPU. Each link is found
from the checks' own findings about the node (warning or worse), so the root
cause never disagrees with them.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpulabel.model import gpustack as G
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import Node
from gpulabel.model.dradriver import OPERAND as DRA_PLUGIN
from gpulabel.model.findings import Cell, Finding, Section
from gpulabel.model.operands import CHAIN_OPERANDS
from gpulabel.model.severity import at_or_above

__all__ = [
    "CHAIN",
    "CHAIN_OPERANDS",
    "POD_CAUSES",
    "Cause",
    "KeptCauses",
    "PodCause",
    "link_of",
    "node_findings",
    "node_gpus",
    "pod_causes",
    "root_causes",
]

CHAIN = (
    "nfd",
    "gpu.present",
    "deploy-labels",
    "driver-upgrade",
    "daemonset",
    "operand-pod",
    "mig",
    "allocatable",
    "health",
    "gfd-labels",
    "node",
    "operand",
)
_GFD_KEYS = (V.GPU_PRODUCT, V.GPU_COUNT, V.GPU_MEMORY)
_NOT_SCHEDULED = ("no DaemonSet selects", " does not tolerate taint ", " does not select this node")


def _operand_of_key(key: str) -> str:
    return key[len(V.DEPLOY_PREFIX) :] if key.startswith(V.DEPLOY_PREFIX) else ""


def link_of(f: Finding) -> str | None:
    """The chain link a finding about a node breaks, or ``None`` when it is not about the chain."""
    check, reason = f.check, f.reason
    if check == "audit":
        if reason == "no-pci-label":
            return "nfd"
        if reason == "bad-deploy-value":
            return None  # upgrade's bad-value says the same
        if reason == "empty-deploy":
            op = _operand_of_key(f.key)
            return "deploy-labels" if op in CHAIN_OPERANDS or op == "operands" else "operand"
        return "gfd-labels"
    if check == "capacity":
        if reason in ("missing", "unlabelled-gpus"):
            return "gpu.present"
        if reason in ("node-not-ready", "cordoned"):
            return "node"
        return "allocatable"
    if check == "operands":
        if reason == "unexpected":
            return None
        if reason == "noexecute-taint":
            return "node"
        if f.operand not in CHAIN_OPERANDS and f.operand != DRA_PLUGIN:  # DRA's kubelet plugin: DRA's device plugin
            return "operand"
        if reason == "nfd-label-mismatch":
            return "daemonset"
        if reason == "empty-deploy":
            return "deploy-labels"
        if reason == "missing" and any(m in f.detail or f.detail.startswith(m) for m in _NOT_SCHEDULED):
            return "daemonset"
        return "operand-pod"
    if check == "upgrade":
        if reason in ("upgrade-failed", "stuck", "slow") and f.key == G.DRIVER_UPGRADE_STATE:
            return "driver-upgrade"
        op = _operand_of_key(f.key)
        return "deploy-labels" if op in CHAIN_OPERANDS or op == "operands" else "operand"
    if check == "mig":
        return "mig"
    if check == "sharing":
        return "gfd-labels"
    if check == "health":
        return "health"
    if check == "operatorcrs":  # NVIDIADrivers that leave the node to no driver DaemonSet (none, refused, stale owner)
        return "daemonset" if reason in ("node-without-driver", "drivers-overlap", "owner-label-stale") else None
    if check == "admission":  # the kubelet rejected GPU pods: a link only where the node names the cause
        return {"device-plugin": "allocatable", "mig-manager": "mig"}.get(f.operand)
    return None


# Karpenter's providers' GPU count of a node's instance type, labelled before any GPU software runs
# (aws/karpenter-provider-aws, Azure/karpenter-provider-azure v1.14.1): what a node whose stack never came up has
KARPENTER_GPU_COUNTS = ("karpenter.k8s.aws/instance-gpu-count", "karpenter.azure.com/sku-gpu-count")


def node_gpus(node: Node) -> int | None:
    """The node's GPUs: the most of ``gpu.count``, a Karpenter provider's GPU count label and what capacity or
    allocatable has; ``None`` if nothing says."""
    found = [G.whole_number(node.labels.get(k)) for k in (V.GPU_COUNT, *KARPENTER_GPU_COUNTS)]
    found += [
        G.whole_number(str(a.get(G.GPU_RESOURCE, "")).strip() or None) for a in (node.capacity, node.allocatable or {})
    ]
    known = [n for n in found if n is not None]
    return max(known) if known else None


@dataclass(frozen=True, slots=True)
class Cause:
    node: str
    link: str
    gpus: int | None  # the GPUs it costs (None: the node does not say how many it has)
    finding: Finding
    also: int  # the node's other findings (warning or worse) behind this one

    def line(self) -> str:
        """``cause <node> <link> <n> GPU(s): <the finding, without the node> (<why>)``."""
        f = self.finding
        what = " ".join(p for p in (f.operand, f.key, f.reason, *f.args) if p)
        more = f"; {self.also} more finding(s) on the node" if self.also else ""
        gpus = "?" if self.gpus is None else self.gpus
        return f"cause {self.node} {self.link} {gpus} GPU(s): {what} ({f.detail}{more})"

    def row(self) -> dict[str, Cell]:
        f = self.finding
        return {
            "node": self.node,
            "link": self.link,
            "gpus": self.gpus,
            "check": f.check,
            "reason": f.reason,
            "severity": f.severity,
            "operand": f.operand or None,
            "key": f.key or None,
            "detail": f.detail,
            "more_findings": self.also,
        }


# A Pending pod's finding that is a cause of its own (no node's link): no autoscaler will make a node for it
# (checks/pending/autoscale.py). A pod a node is coming for (node-coming) or a NodePool can serve is no cause.
POD_CAUSES = {("pending", "no-autoscaler"): "autoscaler"}


@dataclass(frozen=True, slots=True)
class PodCause:
    """A Pending pod nothing will place: its finding (no autoscaler will make a node for it), after the nodes'
    causes in ``check``'s cause lines."""

    pod: str
    link: str
    finding: Finding

    def line(self) -> str:
        """``cause pod/<ns>/<name> <link>: <reason> <args> (<why>; fix: ...)``."""
        f = self.finding
        what = " ".join(p for p in (f.reason, *f.args) if p)
        return f"cause pod/{self.pod} {self.link}: {what} ({f.detail})"

    def row(self) -> dict[str, Cell]:
        f = self.finding
        return {
            "node": None,
            "link": self.link,
            "gpus": None,
            "check": f.check,
            "reason": f.reason,
            "severity": f.severity,
            "operand": None,
            "key": None,
            "detail": f.detail,
            "more_findings": 0,
            "pod": self.pod,
        }


def pod_causes(findings: Iterable[Finding]) -> list[PodCause]:
    """The pods' own causes among ``findings`` (warning or worse, as graded), by pod."""
    found = {
        f.pod: PodCause(f.pod, link, f)
        for f in findings
        if f.pod and (link := POD_CAUSES.get((f.check, f.reason))) and at_or_above(f.severity, "warning")
    }
    return [found[p] for p in sorted(found)]


def _order(f: Finding, link: str) -> tuple[int, int]:
    op = f.operand or _operand_of_key(f.key)
    return CHAIN.index(link), CHAIN_OPERANDS.index(op) if op in CHAIN_OPERANDS else len(CHAIN_OPERANDS)


def node_links(findings: Iterable[Finding]) -> list[tuple[str, Finding]]:
    """A node's findings at warning or worse with their link, in chain order."""
    linked = [(link, f) for f in findings if at_or_above(f.severity, "warning") and (link := link_of(f))]
    return sorted(linked, key=lambda lf: _order(lf[1], lf[0]))


def _cause(name: str, node: Node | None, found: Sequence[Finding]) -> Cause | None:
    """The node's cause from its findings (``None``: no broken link, or the node is not in the state)."""
    links = node_links(found)
    if not links or node is None:
        return None
    link, first = links[0]
    gpus = 0 if link == "operand" else node_gpus(node)
    health = [f.reason for lk, f in links if lk == "health"]
    if link == "health" and all(r == "gpus-lost" for r in health):  # a condition: all its GPUs
        gpus = sum(n for n, _ in G.lost_gpus(node).values())  # the devices taken out, not the node's all
    return Cause(name, link, gpus, first, len(links) - 1)


def node_findings(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    """The findings about a node (not about a pod on it) by node, in their order: what a node's cause is found from."""
    by_node: dict[str, list[Finding]] = {}
    for f in findings:
        if f.node and not f.pod:
            by_node.setdefault(f.node, []).append(f)
    return by_node


def _rank(c: Cause) -> tuple[bool, int, str]:
    return (c.gpus is None, -(c.gpus or 0), c.node)


def root_causes(nodes: Sequence[Node], findings: Iterable[Finding]) -> list[Cause]:
    """One cause per node with a broken link, the most GPUs lost first (then by node name)."""
    by_node = node_findings(findings)
    known: Mapping[str, Node] = {n.name: n for n in nodes}
    found = (c for name, found in by_node.items() if (c := _cause(name, known.get(name), found)) is not None)
    return sorted(found, key=_rank)


class KeptCauses:
    """:func:`root_causes` kept node by node across evaluations (the monitor's incremental evaluator): told a
    node whose record or findings changed, it remakes that node's cause alone and keeps every cause in
    :func:`root_causes`' order (a sorted list of their ranks), each with its row and line made once; so the
    answer is :func:`root_causes`' on the same nodes and findings, and an event costs what its nodes do."""

    def __init__(self) -> None:
        self._cause: dict[str, Cause] = {}
        self._order: list[tuple[bool, int, str]] = []  # the causes' ranks, sorted
        self._causes: list[Cause] = []  # the causes, their rows and their lines, in that order
        self._rows: list[dict[str, Cell]] = []
        self._lines: list[str] = []
        self._told: tuple[tuple[Cause, ...], Section] | None = None

    def node(self, name: str, node: Node | None, found: Sequence[Finding]) -> None:
        """Node ``name`` (``None``: not in the state) now has the findings ``found`` (in root_causes' order)."""
        cause = _cause(name, node, found) if found else None
        old = self._cause.get(name)
        if old == cause:
            return
        self._told = None
        if old is not None:
            del self._cause[name]
            i = bisect.bisect_left(self._order, _rank(old))
            del self._order[i], self._causes[i], self._rows[i], self._lines[i]
        if cause is not None:
            self._cause[name] = cause
            rank = _rank(cause)
            i = bisect.bisect_left(self._order, rank)
            self._order.insert(i, rank)
            self._causes.insert(i, cause)
            self._rows.insert(i, cause.row())
            self._lines.insert(i, cause.line())

    def told(self) -> tuple[tuple[Cause, ...], Section]:
        """The causes, ranked, and their section (``causes``: a row and a line each), made again only after a
        cause changed."""
        if self._told is None:
            self._told = (tuple(self._causes), Section("causes", tuple(self._rows), tuple(self._lines)))
        return self._told
