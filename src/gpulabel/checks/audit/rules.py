"""``gpulabel audit``: are the GPU labels on GPU nodes there and well formed?

Every node whose ``nvidia.com/gpu.present`` is ``true`` is checked, so a node
that joins the cluster is audited on the next run with no list to maintain.

An empty deploy label is ``operands``' finding wherever that check runs (it
knows whether the operand is enabled and gated in on the node, and its
``empty-deploy`` is the one that pages); audit says it only where operands
does not run: a node read alone, an input without pods or DaemonSets, the
``audit`` command. One label, one finding.

A node the GPU Operator labelled for its GPUCluster (DRA) stack runs no GPU Feature Discovery (v26.7.0
``gpuClusterStateLabels`` has no GFD label; ``updateGPUStateLabels`` sweeps it away): its product, count and
memory labels are absent by design there, so their absence is no finding (the values, when present, are still
checked). ``--strict`` also names a deploy label no release of the operator knows (a typo of one it does).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpulabel.k8s import labels as L
from gpulabel.model import deploylabels as D
from gpulabel.model import vocabulary as V
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding, label_finding
from gpulabel.model.sanitize import sanitize
from gpulabel.model.severity import Reason

__all__ = ["REASONS", "STRICT_REASONS", "audit", "audit_node"]

REASONS: dict[str, Reason] = {
    "missing": Reason("error", "the label is absent"),
    "not-a-number": Reason("error", "the value is not made of digits only"),
    "too-long": Reason("error", "the value is longer than 63 characters"),
    "bad-format": Reason("error", "the value is not a label value that starts and ends with a letter or digit"),
    "empty-deploy": Reason(
        "warning",
        "a deploy label is empty: the operator writes true, false or paused-for-*, never an empty value, so "
        "the operand was never scheduled here (gpu.deploy.nvsm, empty by the operator's default, excepted); "
        "said where operands does not run (a node read alone, no pods or DaemonSets in the input), else it is "
        "operands' empty-deploy",
    ),
}
STRICT_REASONS: dict[str, Reason] = {
    "no-pci-label": Reason("warning", "gpu.present=true but NFD reports no NVIDIA PCI device"),
    "bad-deploy-value": Reason("warning", "a deploy label whose value the GPU Operator does not know"),
    "unknown-deploy-label": Reason(
        "warning",
        f"a nvidia.com/gpu.deploy.* label no release of the GPU Operator (up to {D.NEWEST_RELEASE}) writes or "
        "selects on, usually a typo of one it does: no DaemonSet reads it",
    ),
}

_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_KNOWN_DEPLOY_VALUES = frozenset({"true", "false", "pre-installed"})
# nvsm's deploy label is written empty on every GPU node by the operator's default (healthy real nodes carry it)
_EMPTY_BY_DEFAULT = frozenset({V.DEPLOY_PREFIX + "nvsm"})


def _finding(node: Node, key: str, reason: str, detail: str) -> Finding:
    return label_finding("audit", reason, node, key, detail)


def audit_node(
    node: Node, strict: bool = False, operands_run: bool = False, upgrade_run: bool = False
) -> list[Finding]:
    """The audit findings for one node (which must be a GPU node). ``operands_run``: the ``operands`` check runs
    on the same input, and says the empty deploy labels itself (``operands`` ``empty-deploy``); ``upgrade_run``:
    the ``upgrade`` check does, and says every deploy value ``--strict`` would (``upgrade`` ``bad-value``)."""
    found: list[Finding] = []
    labels = node.labels
    for key in () if D.gpu_cluster_node(labels) else (V.GPU_PRODUCT, V.GPU_COUNT, V.GPU_MEMORY):
        if key not in labels:
            found.append(_finding(node, key, "missing", REASONS["missing"].text))
    for key in (V.GPU_COUNT, V.GPU_MEMORY):
        value = labels.get(key)
        if value is not None and not _DIGITS.fullmatch(value):
            found.append(_finding(node, key, "not-a-number", f"{value!r} is not a whole number"))
    product = labels.get(V.GPU_PRODUCT)
    if product is not None:
        if len(product) > L.LABEL_VALUE_MAX_LENGTH:
            found.append(_finding(node, V.GPU_PRODUCT, "too-long", f"{len(product)} characters, at most 63"))
        if not L.is_well_formed(product):
            detail = f"{product!r} is not a valid label value; gpulabel sanitize gives {sanitize(product)!r}"
            found.append(_finding(node, V.GPU_PRODUCT, "bad-format", detail))
    empty = () if operands_run else sorted(k for k, v in labels.items() if v == "" and k.startswith(V.DEPLOY_PREFIX))
    for key in empty:
        if key not in _EMPTY_BY_DEFAULT:
            detail = f'{key}="": no DaemonSet of the operator selects the node for this operand'
            found.append(_finding(node, key, "empty-deploy", detail))
    if strict:
        found.extend(_strict(node, upgrade_run))
    return found


def _strict(node: Node, upgrade_run: bool) -> Iterable[Finding]:
    if not V.has_nvidia_pci(node.labels):
        yield _finding(node, V.PCI_PRESENT[0], "no-pci-label", STRICT_REASONS["no-pci-label"].text)
    for key in sorted(node.labels):
        if key.startswith(V.DEPLOY_PREFIX) and D.known_deploy_key(key) is None:
            near = D.nearest_deploy_key(key)
            hint = f"; did you mean {near}?" if near else ""
            detail = f"no release of the GPU Operator up to {D.NEWEST_RELEASE} knows {key}{hint}"
            yield _finding(node, key, "unknown-deploy-label", detail)
    if upgrade_run:  # every value below is one upgrade's bad-value says (not one of its DEPLOY_VALUES)
        return
    for key in sorted(node.labels):
        if key.startswith(V.DEPLOY_PREFIX):
            value = node.labels[key]
            if value and value not in _KNOWN_DEPLOY_VALUES and not value.startswith("paused-"):  # "": empty-deploy
                yield _finding(
                    node, key, "bad-deploy-value", f"{value!r}: expected true, false, pre-installed or paused-*"
                )


def audit(
    state: ClusterState, strict: bool = False, operands_run: bool = False, upgrade_run: bool = False
) -> list[Finding]:
    """Audit every GPU node of ``state``; findings sorted by node, then key."""
    found: list[Finding] = []
    for node in state.nodes:
        if node.labels.get(V.GPU_PRESENT) == "true":
            found.extend(audit_node(node, strict, operands_run, upgrade_run))
    return found
