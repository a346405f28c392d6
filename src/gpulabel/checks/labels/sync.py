"""``gpulabel sync``: make node labels equal to their feature files, and say who changed what.

Planning is pure: given the desired labels per node and the nodes as they are,
:func:`plan_node` returns the changes and the server-side apply body that
makes them. Writing is a :class:`gpulabel.cluster.writes.Writer`'s ``apply``, a
server-side apply with field manager ``gpulabel``, so ``managedFields`` show
gpulabel as the owner of the keys it restores.

Server-side apply removes a key the manager applied before and omits now. So
without ``--prune`` every key gpulabel owns is sent again at its current
value, and nothing is removed; with ``--prune`` the owned keys that left the
file are omitted, and the API server removes those and only those.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpulabel.model.changes import LabelChange
from gpulabel.model.cluster import Node
from gpulabel.model.findings import Finding

__all__ = ["FIELD_MANAGER", "NodePlan", "change_finding", "owned_keys", "plan_node"]

FIELD_MANAGER = "gpulabel"


@dataclass
class NodePlan:
    node: str
    changes: list[LabelChange] = field(default_factory=list)
    apply_labels: dict[str, str] = field(default_factory=dict)

    @property
    def needs_write(self) -> bool:
        return bool(self.changes)


def owned_keys(node: Node, manager: str = FIELD_MANAGER) -> set[str]:
    """Label keys ``manager`` holds through server-side apply on ``node``."""
    keys: set[str] = set()
    for entry in node.managed_fields:
        if entry.get("manager") != manager or entry.get("operation") != "Apply":
            continue
        labels = ((entry.get("fieldsV1") or {}).get("f:metadata") or {}).get("f:labels") or {}
        keys.update(k[2:] for k in labels if k.startswith("f:"))
    return keys


def plan_node(node: Node, desired: Mapping[str, str], prune: bool = False) -> NodePlan:
    """What to change on ``node`` so its labels match ``desired``.

    Only keys in ``desired`` are set; with ``prune``, keys gpulabel applied
    earlier and no longer desired are removed. No other key is touched.
    """
    plan = NodePlan(node.name)
    writers = node.label_writers()
    for key in sorted(desired):
        value = desired[key]
        current = node.labels.get(key)
        if current != value:
            plan.changes.append(LabelChange(node.name, key, value, current, writers.get(key)))
    owned = owned_keys(node)
    for key in sorted(owned - set(desired)):
        if key not in node.labels:
            continue
        if prune:
            plan.changes.append(LabelChange(node.name, key, None, node.labels[key], writers.get(key)))
        else:
            plan.apply_labels[key] = node.labels[key]
    plan.apply_labels.update(desired)
    return plan


def change_finding(change: LabelChange) -> Finding:
    """A change as a finding, for the shared renderings (the line is ``<node> <key> <value>`` or ``<node> <key>-``)."""
    return Finding(
        "sync",
        "restored" if change.value is not None else "pruned",
        node=change.node,
        key=change.key,
        value=change.value,
        old=change.previous,
        detail=change.explanation(),
    )
