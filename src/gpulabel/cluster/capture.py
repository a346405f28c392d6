"""``gpulabel snapshot``: capture from a live cluster exactly what the checks read, as one List document.

Every kind of the table of kinds (``model.cluster.KINDS``): nodes (with their
managedFields, which stuck detection needs and ``kubectl get -o json`` leaves
out), pods, DaemonSets, ClusterPolicies and the DRA, NFD and Karpenter kinds where the server
serves them. Each is one paged LIST. The capture has a progress line of its
own on stderr (on a terminal, or always with ``--progress``): the kind being
listed, its objects and pages so far, and how many kinds are done.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpulabel.cluster.client import KubeClient
from gpulabel.cluster.live import served_kinds
from gpulabel.cluster.progress import Progress
from gpulabel.model.cluster import KIND, KINDS

__all__ = ["capture"]


@dataclass
class _Listing:
    """One kind's LIST as the progress line tells it: ``Pod 1200 object(s), 3 page(s); kind 2/9``."""

    line: Progress
    kind: str
    where: str
    objects: int = 0
    pages: int = 0

    def __call__(self, objects: int, pages: int) -> None:
        self.objects, self.pages = objects, pages
        self.show()

    def show(self, final: bool = False) -> None:
        self.line.show(f"{self.kind} {self.objects} object(s), {self.pages} page(s); kind {self.where}", final=final)


def capture(
    client: KubeClient, note: Callable[[str], None] = lambda text: None, progress: Progress | None = None
) -> dict[str, Any]:
    """``{"apiVersion": "v1", "kind": "List", "items": [...]}`` of every kind the checks read that is served; a kind
    whose LIST found nothing is an empty typed List among the items (``{"kind": "DaemonSetList", "items": []}``), so
    that a snapshot says what a live read says: the kind was read, and there is none of it.

    A kind listed empty is one empty typed List among the items (``{"kind": "DaemonSetList", "items": []}``),
    as the snapshot reader knows it: the input has that kind, none of its objects. So ``check`` on the file says
    what it says live (``operands: OK``, not ``skipped (no daemonsets in the input)``).

    ``progress``: the line to draw on (default: stderr's, on a terminal only).
    """
    items: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    line = progress if progress is not None else Progress("snapshot")
    kinds = served_kinds(client, [k.kind for k in KINDS])
    for i, kind in enumerate(kinds):
        listing = _Listing(line, kind, f"{i + 1}/{len(kinds)}")
        found, _ = client.list(kind, on_page=listing)
        listing.objects = len(found)
        listing.show(final=True)
        items.extend(found if found else [_empty_list(kind)])
        counts[kind] = len(found)
    line.done()
    skipped = [k.kind for k in KINDS if k.kind not in counts]
    note(
        ", ".join(f"{n} {kind}" for kind, n in counts.items())
        + (f"; not served: {', '.join(skipped)}" if skipped else "")
    )
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def _empty_list(kind: str) -> dict[str, Any]:
    """The typed List of ``kind`` with no items (the API server's answer to its LIST, less the metadata)."""
    k = KIND[kind]
    api_version = f"{k.group}/{k.version}" if k.group else k.version
    return {"apiVersion": api_version, "kind": f"{k.object_kind}List", "items": []}
