"""``gpulabel operands``: are the operands that should run on each node running, and in order?

The GPU Operator's status counts DaemonSet pods against
``desiredNumberScheduled``, which silently leaves out nodes whose labels are
wrong or whose taints the DaemonSet does not tolerate. This check works per
node, from the deploy labels and the pods that are actually there.

An operand's DaemonSet is found by what its pod template requires
(``nvidia.com/gpu.deploy.<operand>: "true"``), never by name, and its pods by
their ownerReferences.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpulabel.checks.operands.daemonsets import (
    daemonset_requirements,
    disabled_by_cluster_policy,
    operand_daemonsets,
    operand_order,
    target_node,
    untolerated_taints,
)
from gpulabel.k8s.nodeaffinity import PodRequirements
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, DaemonSet, LabelWrite, Node, Pod
from gpulabel.model.findings import Finding, Result, Section
from gpulabel.model.operands import CATALOGUE, WORKLOAD_LABEL, Operand, PolicyView, deploy_key
from gpulabel.model.severity import Reason

__all__ = [
    "CATALOGUE",
    "REASONS",
    "OperandReport",
    "check_operands",
    "not_ready",
    "operands_result",
]

REASONS: dict[str, Reason] = {
    "missing": Reason(
        "error",
        "expected on the node, and no pod of it is bound there (-o wide: the untolerated taint, "
        "the unmatched selector, the scheduler's message, or no DaemonSet at all)",
    ),
    "not-ready": Reason(
        "error", "its pod is bound to the node but not Running and Ready (-o wide: the waiting reason, restarts)"
    ),
    "out-of-order": Reason("error", "running while a prerequisite is not"),
    "unexpected": Reason("warning", "running where nothing expects it"),
    "empty-deploy": Reason(
        "warning", "the deploy label of an enabled operand is empty: the operator never scheduled it here"
    ),
    "paused": Reason(
        "info", "its deploy label is paused-for-mig-change or paused-for-driver-upgrade: stopped on purpose"
    ),
    "isolated": Reason("info", "the node has nvidia.com/gpu.deploy.operands=false: nothing is expected (key operands)"),
    "disabled": Reason(
        "info",
        "its deploy label is false, written by someone other than the operator (which never writes false): "
        "switched off on this node on purpose",
    ),
    "pre-installed": Reason("info", "its deploy label is pre-installed: provided on the host, outside the operator"),
    "nfd-label-mismatch": Reason(
        "error",
        "a GPU node NVIDIA's DRA driver's kubelet plugin does not take only because NFD spells its NVIDIA PCI "
        "label differently from the plugin's node affinity (pci-0302_10de vs pci-10de): no ResourceSlices, "
        "no DRA GPUs there (args: the node's label)",
    ),
    "noexecute-taint": Reason(
        "error",
        "a GPU node's NoExecute taint that the pods of the driver, toolkit, device plugin or GFD do not tolerate: "
        "they are evicted and not recreated, so the node's GPUs are lost (args: the taints)",
    ),
}

_PROVIDED_ELSEWHERE = frozenset({"false", "pre-installed"})
_PAUSED_PREFIX = "paused-"


@dataclass
class OperandReport:
    """The findings, plus a per-DaemonSet account of ``desiredNumberScheduled``."""

    findings: list[Finding]
    daemonsets: list[dict[str, Any]]


def _pods_by_owner(pods: Iterable[Pod]) -> dict[str, list[Pod]]:
    out: dict[str, list[Pod]] = {}
    for pod in pods:
        for kind, uid in pod.owners:
            if kind == "DaemonSet":
                out.setdefault(uid, []).append(pod)
    return out


def _missing_cause(
    operand: Operand | None, name: str, node: Node, dss: list[DaemonSet], reqs: Mapping[str, PodRequirements]
) -> tuple[str, dict[str, Any]]:
    label = ",".join(
        [f"{deploy_key(name)}=true", *(f"{k}={v}" for k, v in (operand.requires if operand else {}).items())]
    )
    if not dss:
        return f"no DaemonSet selects {label}", {"cause": "no-daemonset"}
    for ds in dss:
        taints = untolerated_taints(ds, node, reqs[ds.ref])
        if taints:
            return f"{ds.ref} does not tolerate taint {', '.join(taints)}", {
                "cause": "untolerated-taint",
                "taints": taints,
                "daemonset": ds.ref,
            }
    for ds in dss:
        result = reqs[ds.ref].match(node)
        if not result.fits:
            return f"{ds.ref} does not select this node: {result.reason}", {
                "cause": "not-selected",
                "reason": result.reason,
                "daemonset": ds.ref,
            }
    refs = ", ".join(d.ref for d in dss)
    return f"no pod of {refs} on this node", {"cause": "no-pod", "daemonsets": [d.ref for d in dss]}


def _deploy_value(labels: Mapping[str, str], name: str) -> str | None:
    return labels.get(deploy_key(name))


class _Writers:
    """Who last wrote each label of one node (managedFields), read only when first asked."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.found: dict[str, LabelWrite] | None = None

    def of(self, key: str) -> str | None:
        if self.found is None:
            self.found = self.node.label_writers()
        write = self.found.get(key)
        return write.manager if write is not None else None


def _said_elsewhere(node: Node, name: str, value: str, workload: str, writers: _Writers) -> Finding | None:
    """``disabled`` (``false``) or ``pre-installed``: an operand of the node's workload config the operator
    would label ``true`` here, switched off or provided on the host; ``None`` when it says nothing.

    The operator labels only its workload config's operands (``gpuStateLabels``) and removes the other
    configs' labels, so a ``false`` outside the config is no choice of anyone's. It never writes ``false``
    itself; a ``false`` its field manager wrote (another version) is not a team's choice either. A label
    shared by two operands (the MPS control daemon's is the device plugin's) is said once, by its own.
    """
    op = CATALOGUE.get(name)
    if op is not None and (op.deploy != name or workload not in op.workloads):
        return None
    key = deploy_key(name)
    writer = writers.of(key)
    if value == "false":
        if writer == V.OPERATOR:
            return None
        by = f" (written by {writer})" if writer else ""
        detail = f"{key}=false{by}: switched off on this node on purpose; the operator keeps the value"
        return Finding("operands", "disabled", node=node.name, operand=name, value=value, detail=detail)
    detail = f"{key}=pre-installed: provided on the host, outside the operator; no pod of it is expected"
    return Finding("operands", "pre-installed", node=node.name, operand=name, value=value, detail=detail)


def not_ready(pods: list[Pod]) -> Finding | None:
    """A pod bound to the node that is not Running and Ready, explained as kubectl would show it."""
    if any(p.phase == "Running" and p.ready for p in pods):
        return None
    live = [p for p in pods if p.phase in ("Running", "Pending")]
    if not live:
        return None
    pod = live[0]
    if pod.waiting:
        why = f"{pod.phase}, waiting: {pod.waiting}"
    elif pod.phase == "Running":
        why = "Running but not Ready"
    else:
        why = "Pending on the node"
    data: dict[str, Any] = {"pod": pod.ref, "phase": pod.phase, "restarts": pod.restarts}
    if pod.waiting:
        data["waiting"] = pod.waiting
    if pod.waiting or pod.restarts:
        why += f", restarts {pod.restarts}"
    del data  # the detail says it in words; the finding's fields are typed
    return Finding("operands", "not-ready", detail=f"pod {pod.ref} {why}")


def _missing(node: Node, name: str, detail: str, data: Mapping[str, Any]) -> Finding:
    """A ``missing`` finding; of the cause's data, the DaemonSet concerned is kept as a typed field."""
    daemonset = data.get("daemonset")
    return Finding(
        "operands",
        "missing",
        node=node.name,
        operand=name,
        detail=detail,
        daemonset=daemonset if isinstance(daemonset, str) else "",
    )


def _unmet_needs(
    node: Node, name: str, needs: Iterable[str], present: Container[str], off: Container[str]
) -> list[Finding]:
    """``out-of-order``: the running operand ``name``'s prerequisites (``needs``) that are not Running and
    Ready on the node (``present``), unless disabled (``off``), provided elsewhere or paused."""
    found = []
    for need in needs:
        if need in present or need in off:
            continue
        need_value = _deploy_value(node.labels, need) or ""
        if need_value in _PROVIDED_ELSEWHERE or need_value.startswith(_PAUSED_PREFIX):
            continue
        found.append(
            Finding(
                "operands",
                "out-of-order",
                node=node.name,
                operand=name,
                args=(need,),
                detail=f"{name} is running but {need} is not running and ready on this node",
            )
        )
    return found


@dataclass
class _OperandPods:
    """The pods of the operands' DaemonSets by node: bound ones per operand, the ones not yet scheduled by the
    node their affinity pins them to, and the operands with a pod Running and Ready on each node."""

    bound: dict[str, dict[str, list[Pod]]] = dataclasses.field(default_factory=dict)
    unscheduled: dict[str, dict[str, list[Pod]]] = dataclasses.field(default_factory=dict)
    healthy: dict[str, set[str]] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, ds_by_operand: Mapping[str, list[DaemonSet]], pods: Iterable[Pod]) -> _OperandPods:
        out = cls()
        owned = _pods_by_owner(pods)
        for name, dss in ds_by_operand.items():
            for ds in dss:
                for pod in owned.get(ds.uid, ()):
                    out.add(name, pod)
        return out

    def add(self, name: str, pod: Pod) -> None:
        bound = pod.node_name
        if not bound:
            if target := target_node(pod):
                self.unscheduled.setdefault(target, {}).setdefault(name, []).append(pod)
            return
        at = self.bound.get(bound)
        if at is None:
            at = self.bound[bound] = {}
        mine = at.get(name)
        if mine is None:
            at[name] = [pod]
        else:
            mine.append(pod)
        if pod.phase == "Running" and pod.ready:
            ok = self.healthy.get(bound)
            if ok is None:
                self.healthy[bound] = {name}
            else:
                ok.add(name)


_NOTHING: dict[str, list[Pod]] = {}
_NO_OPERAND: frozenset[str] = frozenset()


@dataclass
class _Fleet:
    """What every node's operand findings are judged against: the operands' DaemonSets and their pods, what is
    switched off, and the deploy labels (two operands share the device plugin's)."""

    policy: PolicyView
    off: set[str]
    ds_by_operand: dict[str, list[DaemonSet]]
    reqs: dict[str, PodRequirements]
    pods: _OperandPods
    rank: dict[str, int]
    deploy_keys: dict[str, str]
    by_key: dict[str, list[str]]
    workloads: dict[str | None, str] = dataclasses.field(default_factory=dict)  # by the node's label value

    @classmethod
    def of(cls, state: ClusterState, disabled: Iterable[str], namespace: str | None) -> _Fleet:
        ds_by_operand = operand_daemonsets(state, namespace)
        operands = operand_order(ds_by_operand)
        deploy_keys = {name: deploy_key(name) for name in operands}
        by_key: dict[str, list[str]] = {}
        for name, key in deploy_keys.items():
            by_key.setdefault(key, []).append(name)
        return cls(
            policy=PolicyView(state.cluster_policies),
            off=set(disabled) | disabled_by_cluster_policy(state.cluster_policies),
            ds_by_operand=ds_by_operand,
            reqs={ds.ref: daemonset_requirements(ds) for dss in ds_by_operand.values() for ds in dss},
            pods=_OperandPods.of(ds_by_operand, state.pods),
            rank={name: i for i, name in enumerate(operands)},
            deploy_keys=deploy_keys,
            by_key=by_key,
        )

    def workload(self, labels: Mapping[str, str]) -> str:
        label = labels.get(WORKLOAD_LABEL)
        workload = self.workloads.get(label)
        if workload is None:
            workload = self.workloads[label] = self.policy.workload(labels)
        return workload


def check_operands(
    state: ClusterState,
    disabled: Iterable[str] = (),
    namespace: str | None = None,
) -> OperandReport:
    """Per-node operand findings over ``state``; sorted by node, then catalogue order.

    Reasons: ``missing`` (expected, no pod), ``not-ready`` (its pod is bound but not
    Running and Ready), ``out-of-order`` (running before a prerequisite), ``unexpected``
    (running where nothing expects it), ``paused`` (its deploy label is ``paused-*``:
    mig-manager or the driver upgrade stopped it on purpose), ``isolated`` (the node
    has ``nvidia.com/gpu.deploy.operands=false``: the operator removed every deploy label),
    ``disabled`` (its deploy label is ``false``, a team's choice) and ``pre-installed``
    (its deploy label says the host provides it).
    """
    fleet = _Fleet.of(state, disabled, namespace)
    labelled: dict[str, list[Node]] = {name: [] for name in fleet.ds_by_operand}  # the daemonsets table's nodes
    findings: list[Finding] = []
    for node in state.nodes:
        findings.extend(_node_findings(fleet, node, labelled))
    return OperandReport(findings, _daemonset_accounts(labelled, fleet.ds_by_operand, fleet.reqs))


def _node_findings(fleet: _Fleet, node: Node, labelled: dict[str, list[Node]]) -> list[Finding]:
    """One node's operand findings, in catalogue order; the node is added to ``labelled`` for each operand
    whose DaemonSet it is labelled for."""
    labels = node.labels
    isolated = labels.get(V.DEPLOY_OPERANDS) == "false"
    findings: list[Finding] = []
    if isolated:
        detail = f"{V.DEPLOY_OPERANDS}=false: every deploy label is removed, no operand is expected"
        findings.append(Finding("operands", "isolated", node=node.name, operand="operands", detail=detail))
    here = fleet.pods.bound.get(node.name, _NOTHING)
    # the operands with a deploy label or a pod here; the rest expect nothing and run nothing
    names = {name for key in labels.keys() & fleet.by_key.keys() for name in fleet.by_key[key]}
    if here:
        names.update(here)
    if not names:
        return findings
    writers = _Writers(node)
    workload = fleet.workload(labels)
    present = fleet.pods.healthy.get(node.name, _NO_OPERAND)  # what a prerequisite needs: a pod Running and Ready
    for name in sorted(names, key=fleet.rank.__getitem__):
        value = labels.get(fleet.deploy_keys[name])
        op = CATALOGUE.get(name)
        gated = op is None or not op.requires or op.gates(labels)
        if value == "true" and gated:
            if name in labelled:
                labelled[name].append(node)
            if name in present and not isolated and name not in fleet.off:
                # expected, and a pod of it is Running and Ready (most cells): only its prerequisites speak
                if op is not None and (needs := op.needs_for(workload)):
                    findings.extend(_unmet_needs(node, name, needs, present, fleet.off))
                continue
        cell = _Cell(fleet, node, name, op, value, here.get(name, []), isolated=isolated, gated=gated)
        findings.extend(cell.findings(workload, writers, present))
    return findings


@dataclass
class _Cell:
    """One operand on one node that is not simply expected and healthy: what its deploy label and pods say."""

    fleet: _Fleet
    node: Node
    name: str
    op: Operand | None
    value: str | None  # its deploy label
    pods: list[Pod]  # its pods bound to the node
    isolated: bool
    gated: bool  # the node has the labels besides the deploy label that its DaemonSet requires

    def findings(self, workload: str, writers: _Writers, present: Container[str]) -> list[Finding]:
        node, name, op, value = self.node, self.name, self.op, self.value
        running = [p for p in self.pods if p.phase == "Running"]
        on = not self.isolated and name not in self.fleet.off and self.gated  # neither isolated nor switched off
        paused = on and (value or "").startswith(_PAUSED_PREFIX)
        expected = on and value == "true"
        found: list[Finding] = []
        if paused:
            detail = f"{deploy_key(name)}={value}: stopped on purpose, it comes back when the label returns to true"
            found.append(Finding("operands", "paused", node=node.name, operand=name, value=value, detail=detail))
        elif on and value in _PROVIDED_ELSEWHERE and not running:
            said = _said_elsewhere(node, name, value or "", workload, writers)
            if said is not None:
                found.append(said)
        elif on and value == "":
            detail = (
                f'{deploy_key(name)}="": the operand is enabled but the operator never set its '
                "deploy label to true, so it does not run here"
            )
            found.append(Finding("operands", "empty-deploy", node=node.name, operand=name, value=value, detail=detail))
        elif expected:
            found.extend(self._absent(present))
        if running and not expected and not paused:
            found.append(
                Finding(
                    "operands",
                    "unexpected",
                    node=node.name,
                    operand=name,
                    detail=f"pod {running[0].ref} running; {self._why_unexpected()}",
                )
            )
        if running and op is not None:
            found.extend(_unmet_needs(node, name, op.needs_for(workload), present, self.fleet.off))
        return found

    def _absent(self, present: Container[str]) -> list[Finding]:
        """An expected operand without a pod Running and Ready: ``missing`` (why) or ``not-ready``."""
        node, name, pods = self.node, self.name, self.pods
        causes = self.fleet.ds_by_operand.get(name, [])
        if not pods:
            detail, data = _missing_cause(self.op, name, node, causes, self.fleet.reqs)
            pinned = self.fleet.pods.unscheduled.get(node.name, _NOTHING).get(name, ())
            waiting = [p for p in pinned if p.phase == "Pending"]
            if waiting and data["cause"] == "no-pod":
                msg = waiting[0].condition_message("PodScheduled") or "not scheduled yet"
                detail = f"pod {waiting[0].ref} Pending: {msg}"
                data = {"cause": "pod-pending", "pod": waiting[0].ref, "message": msg}
            return [_missing(node, name, detail, data)]
        nr = None if name in present else not_ready(pods)
        if nr is not None:
            return [dataclasses.replace(nr, node=node.name, operand=name)]
        if any(p.phase == "Running" for p in pods):
            return []
        detail, data = _missing_cause(self.op, name, node, causes, self.fleet.reqs)
        failed = [p for p in pods if p.phase == "Failed"]
        if failed:
            detail, data = f"pod {failed[0].ref} Failed", {"cause": "pod-failed", "pod": failed[0].ref}
        return [_missing(node, name, detail, data)]

    def _why_unexpected(self) -> str:
        if self.isolated:
            return f"node isolated ({V.DEPLOY_OPERANDS}=false)"
        if self.name in self.fleet.off:
            return "operand disabled cluster-wide"
        if self.gated or self.op is None:
            return f"{deploy_key(self.name)}={self.value if self.value is not None else '<absent>'}"
        return "the node lacks " + ",".join(f"{k}={v}" for k, v in self.op.requires.items())


def _daemonset_accounts(
    labelled: Mapping[str, list[Node]],
    ds_by_operand: Mapping[str, list[DaemonSet]],
    reqs: Mapping[str, PodRequirements],
) -> list[dict[str, Any]]:
    """Why each operand DaemonSet's desiredNumberScheduled differs from the nodes ``labelled`` for its operand
    (deploy label ``true`` and the operand's other labels, in the state's order)."""
    accounts = []
    kinds: dict[Any, int] = {}  # nodes with the same taints: the same answer (the taints hashed once per node)
    kind_of: dict[int, int] = {}  # id of a node (alive for the run) -> its taints' number
    for name, dss in sorted(ds_by_operand.items()):
        nodes = labelled[name]
        for ds in dss:
            by_kind: dict[int, list[str]] = {}
            excluded: dict[str, list[str]] = {}
            for n in nodes:
                if not n.taints:
                    continue  # nothing to tolerate
                kind = kind_of.get(id(n))
                if kind is None:
                    kind = kind_of[id(n)] = kinds.setdefault(n.taints, len(kinds))
                taints = by_kind.get(kind)
                if taints is None:
                    taints = by_kind[kind] = untolerated_taints(ds, n, reqs[ds.ref])
                if taints:
                    excluded[n.name] = list(taints)
            accounts.append(
                {
                    "daemonset": ds.ref,
                    "operand": name,
                    "labelled_nodes": len(nodes),
                    "desired_number_scheduled": ds.status.get("desiredNumberScheduled"),
                    "excluded": [{"node": n, "untolerated_taints": t} for n, t in sorted(excluded.items())],
                }
            )
    return accounts


def operands_result(state: ClusterState, disabled: Iterable[str] = (), namespace: str | None = None) -> Result:
    """:func:`check_operands` as the ``operands`` result: findings, and one row per operand DaemonSet."""
    report = check_operands(state, disabled, namespace)
    rows = tuple(
        {
            "daemonset": a["daemonset"],
            "operand": a["operand"],
            "labelled_nodes": a["labelled_nodes"],
            "desired_number_scheduled": a["desired_number_scheduled"],
            "excluded": tuple(
                f"{e['node']} untolerated-taint {','.join(e['untolerated_taints'])}" for e in a["excluded"]
            ),
        }
        for a in report.daemonsets
    )
    wide = tuple(
        f"# {r['daemonset']} operand={r['operand']} labelled={r['labelled_nodes']} "
        f"desired={r['desired_number_scheduled']}" + (f" excluded: {'; '.join(ex)}" if (ex := r["excluded"]) else "")
        for r in rows
    )
    return Result("operands", tuple(report.findings), (Section("daemonsets", rows, (), wide),))
