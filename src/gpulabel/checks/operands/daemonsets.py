"""Which DaemonSet runs which operand, and where its pods may run: found by what a DaemonSet's pod template
requires (``nvidia.com/gpu.deploy.<operand>: "true"``), never by its name; the ClusterPolicy's switches as the
operand findings read them. Shared by the operands check, capacity, explain and the evidence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpulabel.k8s.nodeaffinity import PodRequirements
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, DaemonSet, Node, Pod
from gpulabel.model.operands import CATALOGUE, PolicyView

__all__ = [
    "daemonset_requirements",
    "disabled_by_cluster_policy",
    "operand_daemonsets",
    "operand_of_daemonset",
    "operand_order",
    "policy_reading",
    "reading_off",
    "target_node",
    "untolerated_taints",
    "why_not_placed",
]


def operand_order(extra: Iterable[str] = ()) -> list[str]:
    """The catalogue's operands in its order, then any ``extra`` ones it does not know, sorted."""
    names = list(CATALOGUE)
    names += sorted(set(extra) - set(names))
    return names


def _required_labels(req: PodRequirements) -> dict[str, str] | None:
    """``key: value`` pairs a pod spec requires of every node it runs on, or None when it requires no deploy label.

    From the nodeSelector and, when every required node-affinity term asks for the same
    ``deploy.<x> In [true]``, from that term too (read from the template's compiled requirements).
    """
    required = dict(req.node_selector)
    found: set[str] = set()
    for term in req.terms or ():
        term_ops = {
            e.key
            for e in term.expressions
            if e.key.startswith(V.DEPLOY_PREFIX) and e.operator == "In" and e.values == ("true",)
        }
        if not term_ops:
            found = set()
            break  # a term that does not require a deploy label: the affinity does not gate
        found |= term_ops
    if len(found) == 1:
        required[found.pop()] = "true"
    if not any(k.startswith(V.DEPLOY_PREFIX) and v == "true" for k, v in required.items()):
        return None
    return required


def operand_of_daemonset(ds: DaemonSet) -> str | None:
    """The operand a DaemonSet runs, from the labels its pod template requires (never from its name).

    Among the catalogue's operands gated by the required deploy label, the one whose
    extra label requirements the template also has, most specific first: a template
    requiring ``deploy.device-plugin`` and ``mps.capable=true`` is the MPS control
    daemon, one requiring only ``deploy.device-plugin`` the device plugin. A deploy
    label the catalogue does not know names the operand itself.
    """
    required = _required_labels(ds.requirements)
    if required is None:
        return None
    deploys = [k[len(V.DEPLOY_PREFIX) :] for k, v in required.items() if k.startswith(V.DEPLOY_PREFIX) and v == "true"]
    if len(deploys) != 1:
        return None
    deploy = deploys[0]
    candidates = [
        op
        for op in CATALOGUE.values()
        if op.deploy == deploy and all(required.get(k) == v for k, v in op.requires.items())
    ]
    if not candidates:
        return deploy
    return max(candidates, key=lambda op: len(op.requires)).name


def disabled_by_cluster_policy(policies: Sequence[Mapping[str, Any]]) -> set[str]:
    """Operands the ClusterPolicy leaves off: ``enabled: false``, or absent where the operator's default is off."""
    view = PolicyView(policies)
    return {name for name, op in CATALOGUE.items() if not view.enabled(op)}


def policy_reading(policies: Sequence[Mapping[str, Any]]) -> tuple[bool, bool, str]:
    """What a node's operand findings read of the ClusterPolicies besides the operands they switch off
    (:func:`disabled_by_cluster_policy`): the inputs of :meth:`PolicyView.workload` (any policy, sandbox
    workloads on, their default config)."""
    view = PolicyView(policies)
    return view.known, view.sandbox, view.default_workload()


def reading_off(switched: Iterable[str]) -> frozenset[str]:
    """The operands whose cells on a node read whether one of ``switched`` is off: those themselves, and the
    operands that need one of them (``_unmet_needs`` reads ``need in off``, under any workload config)."""
    switched = frozenset(switched)
    needing = {name for name, op in CATALOGUE.items() if any(switched & set(n) for n in op.needs.values())}
    return switched | needing


def daemonset_requirements(ds: DaemonSet) -> PodRequirements:
    """The DaemonSet's node selection as its pods get it, the controller's tolerations included."""
    return ds.requirements


def untolerated_taints(ds: DaemonSet, node: Node, requirements: PodRequirements | None = None) -> list[str]:
    """The node's NoSchedule/NoExecute taints that the DaemonSet's pods do not tolerate."""
    req = requirements or daemonset_requirements(ds)
    return [str(t) for t in node.taints if t.effect in ("NoSchedule", "NoExecute") and not req.tolerates(t)]


def why_not_placed(ds: DaemonSet, node: Node, req: PodRequirements) -> str:
    """Why the DaemonSet controller places no pod of ``ds`` on ``node`` ("" when it does): an untolerated
    taint, or a node selection that does not match (the operand checks without a deploy label)."""
    taints = untolerated_taints(ds, node, req)
    if taints:
        return f"{ds.ref} does not tolerate taint {', '.join(taints)}"
    match = req.match(node)
    return "" if match.fits else f"{ds.ref} does not select this node: {match.reason}"


def target_node(pod: Pod) -> str:
    """The node a pod is bound to or, for a DaemonSet pod not yet scheduled, the node its
    ``matchFields metadata.name`` affinity names (the DaemonSet controller pins each pod that way)."""
    if pod.node_name:
        return pod.node_name
    return pod.spec.named_node(pod.pinned)


def operand_daemonsets(state: ClusterState, namespace: str | None = None) -> dict[str, list[DaemonSet]]:
    """Each operand's DaemonSets, found by what their template requires (:func:`operand_of_daemonset`);
    with ``namespace`` (the config's operator namespace) only that namespace's: another's are not the operator's."""
    out: dict[str, list[DaemonSet]] = {}
    for ds in state.daemonsets:
        if namespace and ds.namespace != namespace:
            continue
        name = operand_of_daemonset(ds)
        if name is not None:
            out.setdefault(name, []).append(ds)
    return out
