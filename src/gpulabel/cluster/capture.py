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
from gpulabel.cluster.files import Output
from gpulabel.cluster.live import served_kinds
from gpulabel.cluster.progress import Progress
from gpulabel.model.cluster import KIND, KINDS

__all__ = ["capture", "capture_to"]


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

    def list_kind(kind: str, listing: _Listing) -> int:
        found, _ = client.list(kind, on_page=listing)
        items.extend(found if found else [_empty_list(kind)])
        return len(found)

    _note(note, _each_kind(client, progress, list_kind))
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def _each_kind(
    client: KubeClient, progress: Progress | None, list_kind: Callable[[str, _Listing], int]
) -> dict[str, int]:
    """Each served kind listed in turn by ``list_kind(kind, listing)`` (its objects' count), told on the progress
    line; the counts by kind."""
    counts: dict[str, int] = {}
    line = progress if progress is not None else Progress("snapshot")
    kinds = served_kinds(client, [k.kind for k in KINDS])
    for i, kind in enumerate(kinds):
        listing = _Listing(line, kind, f"{i + 1}/{len(kinds)}")
        listing.objects = counts[kind] = list_kind(kind, listing)
        listing.show(final=True)
    line.done()
    return counts


# The document's top as ``orjson.dumps(doc, option=OPT_INDENT_2)`` writes it, up to its items (run_snapshot's doc).
_TOP = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "generator": "gpulabel", "items": []}
_INDENT = b"    "  # an item's lines, two levels in (the document, its items)


def capture_to(
    client: KubeClient,
    out: Output,
    note: Callable[[str], None] = lambda text: None,
    progress: Progress | None = None,
) -> None:
    """:func:`capture`, each page's objects written to ``out`` as they arrive, never held: the bytes are those of
    ``orjson.dumps({**capture(...), "generator": "gpulabel"}, option=OPT_INDENT_2) + b"\\n"`` (what ``snapshot``
    writes), so a 20,000-node cluster takes one page's memory, not the cluster's. A LIST restarted from its
    first page (410 Gone) drops what it wrote."""
    import orjson

    top = orjson.dumps(_TOP, option=orjson.OPT_INDENT_2)
    head, empty = top[: -len(b"[]\n}")], b"[]\n}\n"
    out.write(head)
    written = 0

    def item(obj: dict[str, Any]) -> None:
        nonlocal written
        text = orjson.dumps(obj, option=orjson.OPT_INDENT_2).replace(b"\n", b"\n" + _INDENT)
        out.write((b",\n" if written else b"[\n") + _INDENT + text)
        written += 1

    def list_kind(kind: str, listing: _Listing) -> int:
        object_kind = KIND[kind].object_kind
        start, before = out.mark(), written

        def restart() -> None:
            nonlocal written
            out.back_to(start)
            written = before

        def with_kind(obj: dict[str, Any]) -> None:
            obj.setdefault("kind", object_kind)  # as client.list hands them on
            item(obj)

        found, _ = client.list_objects(
            client.kind_path(kind),
            with_kind,
            field_selector=KIND[kind].field_selector,
            on_page=listing,
            restarted=restart,
        )
        if not found:
            item(_empty_list(kind))
        return len(found)

    counts = _each_kind(client, progress, list_kind)
    out.write(b"\n  ]\n}\n" if written else empty)
    _note(note, counts)


def _note(note: Callable[[str], None], counts: dict[str, int]) -> None:
    skipped = [k.kind for k in KINDS if k.kind not in counts]
    note(
        ", ".join(f"{n} {kind}" for kind, n in counts.items())
        + (f"; not served: {', '.join(skipped)}" if skipped else "")
    )


def _empty_list(kind: str) -> dict[str, Any]:
    """The typed List of ``kind`` with no items (the API server's answer to its LIST, less the metadata)."""
    k = KIND[kind]
    api_version = f"{k.group}/{k.version}" if k.group else k.version
    return {"apiVersion": api_version, "kind": f"{k.object_kind}List", "items": []}
