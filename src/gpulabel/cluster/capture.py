"""``gpulabel snapshot``: capture from a live cluster exactly what the checks read, as one List document.

Every kind of the table of kinds (``model.cluster.KINDS``): nodes (with their
managedFields, which stuck detection needs and ``kubectl get -o json`` leaves
out), pods, DaemonSets, ClusterPolicies and the DRA kinds where the server
serves them. Each is one paged LIST; the client draws a progress line on a
terminal's stderr for long ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpulabel.cluster.client import KubeClient
from gpulabel.cluster.live import served_kinds
from gpulabel.model.cluster import KINDS

__all__ = ["capture"]


def capture(client: KubeClient, note: Callable[[str], None] = lambda text: None) -> dict[str, Any]:
    """``{"apiVersion": "v1", "kind": "List", "items": [...]}`` of every kind the checks read that is served."""
    items: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    for kind in served_kinds(client, [k.kind for k in KINDS]):
        found, _ = client.list(kind)
        items.extend(found)
        counts[kind] = len(found)
    skipped = [k.kind for k in KINDS if k.kind not in counts]
    note(
        ", ".join(f"{n} {kind}" for kind, n in counts.items())
        + (f"; not served: {', '.join(skipped)}" if skipped else "")
    )
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}
