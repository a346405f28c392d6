"""Reading snapshot files: what ``kubectl get ... -o json`` or ``-o yaml`` writes.

A file holds one JSON document, or one or more YAML documents; each document
is a Kubernetes object or a ``List`` (``v1/List``, ``NodeList``, ...) of them.
Errors name the file and, where the parser knows it, the line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from gpulabel.cluster import collector
from gpulabel.cluster.bundle import GZIP_MAGIC, bundle_member
from gpulabel.cluster.decode import JSONSyntaxError, decode_json, decode_json_items, decode_yaml, split_json_list
from gpulabel.errors import SnapshotError
from gpulabel.model.cluster import KIND, KINDS, SUPPORTED_KINDS, ClusterState

__all__ = ["MAX_SNAPSHOT_BYTES", "iter_objects", "load_snapshots", "read_documents"]

# A 20,000-node cluster with its pods is about 162 MB of JSON; the limit is
# cluster/inputs.py's (this name kept for its importers).
MAX_SNAPSHOT_BYTES = 1 << 30


def _read_bytes(path: str) -> bytes:
    from gpulabel.cluster.inputs import read_input  # bounded while reading; FIFOs and devices (cluster/inputs.py)

    return read_input(path, SnapshotError)


def read_documents(data: bytes, where: str) -> list[Any]:
    """Parse ``data`` as JSON, or failing that as (multi-document) YAML, strictly (see :mod:`.decode`)."""
    if b"\x00" in data[:8192]:
        raise SnapshotError(where, "binary data, not JSON or YAML")
    head = data.lstrip()[:1]
    if head in (b"{", b"["):
        try:
            return [decode_json(data, where)]
        except JSONSyntaxError:
            if head == b"[" or not _looks_like_yaml_flow(data):
                raise
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise SnapshotError(f"{where}:{line}", "not UTF-8 text") from None
    return decode_yaml(text, where)


def _looks_like_yaml_flow(data: bytes) -> bool:
    # '{' may open a YAML flow mapping with unquoted keys; let YAML have a go.
    return b'"' not in data[:64]


def iter_objects(
    doc: Any, where: str, kinds: set[str] | None = None, *, release: bool = False
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(where, object)`` for a document that is an object or a List.

    ``kinds`` (when given) collects the kinds of typed Lists even when empty
    (an empty ``PodList`` says the input has pods, none of them). ``release``:
    drop each item from the List once it has been handed on, so that a caller
    keeping only records never holds the whole document and its records at once.
    """
    if not isinstance(doc, dict):
        raise SnapshotError(where, f"expected a Kubernetes object or List, found {type(doc).__name__}")
    kind = doc.get("kind")
    if not isinstance(kind, str) or not kind:
        raise SnapshotError(where, "document has no 'kind': not a Kubernetes object")
    if "items" in doc and (kind == "List" or kind.endswith("List")):
        items = doc["items"]
        if items is None:  # as an empty file: no objects (the API server writes an empty list as [])
            raise SnapshotError(where, f"{kind}.items is null: no Kubernetes objects")
        if not isinstance(items, list):
            raise SnapshotError(where, f"{kind}.items is not a list")
        item_kind = kind[:-4] if kind != "List" else ""
        if kinds is not None and item_kind:
            kinds.add(item_kind)
        for i, item in enumerate(items):
            here = f"{where}: items[{i}]"
            if release:
                items[i] = None
            if isinstance(item, dict) and item_kind and "kind" not in item:
                item = {**item, "kind": item_kind}
            yield from iter_objects(item, here, kinds, release=release)
        return
    yield where, doc


def _identity(obj: dict[str, Any]) -> tuple[str, str, str]:
    """(kind, namespace, name): what makes an object the same object in two files."""
    kind = obj.get("kind")
    meta = obj.get("metadata")
    if type(meta) is not dict:
        meta = {}
    namespace = meta.get("namespace") or ("default" if kind in _NAMESPACED else "")
    name = meta.get("name") or ""
    if type(kind) is str and type(namespace) is str and type(name) is str:
        return kind, namespace, name
    return str(kind), str(namespace), str(name)


_NAMESPACED = frozenset(k.object_kind for k in KINDS if k.namespaced)
_ALL = frozenset(k.object_kind for k in KINDS)


def _list_objects(
    data: bytes, path: str, kinds: set[str], skip: Callable[[str], bool] | None = None
) -> Iterator[tuple[str, dict[str, Any]]] | None:
    """The objects of a file that is one JSON List, item by item; ``None`` if it is not one.

    ``kubectl get -o json`` writes one List; parsing it whole keeps every
    item's full JSON alive at once (600 MB for 20,000 nodes and 50,000 pods).
    Here the List is split without building its items, then the items are
    parsed a few hundred at a time and handed on, so the caller keeps only
    what it needs of each. An item of a kind ``skip`` names comes as its identity alone, unparsed.
    """
    split = split_json_list(data)
    if split is None:
        return None
    top, items = split
    kind = top["kind"]
    item_kind = kind[:-4] if kind != "List" else ""
    if item_kind:
        kinds.add(item_kind)

    def objects() -> Iterator[tuple[str, dict[str, Any]]]:
        kindless: list[tuple[int, Any]] = []  # yielded last, as they always were
        for n, item in enumerate(decode_json_items(data, items, path, skip)):
            kind = item.get("kind") if type(item) is dict else None
            if type(kind) is str and kind and not (kind == "List" or kind.endswith("List")):
                yield f"{path}: items[{n}]", item  # an object, as iter_objects would hand it on
            elif isinstance(item, dict) and "kind" not in item:
                kindless.append((n, item))
            else:
                yield from iter_objects(item, f"{path}: items[{n}]", kinds)
        for n, item in kindless:
            yield from iter_objects({**item, "kind": item_kind} if item_kind else item, f"{path}: items[{n}]", kinds)

    return objects()


def _file_objects(
    path: str, kinds: set[str], skip: Callable[[str], bool] | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object of one snapshot file: streamed when it is one JSON List, else parsed whole."""
    data = _read_bytes(path)
    if data[:2] == GZIP_MAGIC:  # a support bundle (snapshot --bundle): its snapshot.json
        data = bundle_member(data, path, "snapshot.json") or b""
        if not data:
            raise SnapshotError(path, "a tar.gz without snapshot.json: not a gpulabel bundle")
    if data.lstrip()[:1] == b"{" and b"\x00" not in data[:8192]:
        listed = _list_objects(data, path, kinds, skip)
        if listed is not None:
            yield from listed
            return
    docs = read_documents(data, path)
    del data
    if not docs:
        raise SnapshotError(path, "empty: no Kubernetes objects")
    count = len(docs)
    docs.reverse()
    for n in range(count):
        doc = docs.pop()  # handed on and forgotten, with its items (release)
        yield from iter_objects(doc, path if count == 1 else f"{path}: document {n + 1}", kinds, release=True)
        del doc


def _shown(ident: tuple[str, str, str]) -> str:
    kind, ns, name = ident
    text = f"{kind.lower()}/{f'{ns}/' if ns else ''}{name}"
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")  # one line, always


def _twice_in_one_file(path: str, ident: tuple[str, str, str], first: str, second: str) -> SnapshotError:
    """Two objects of one kind and name in one file: the API server never lists such a pair."""
    positions = [w[len(path) + 2 :] if w.startswith(f"{path}: ") else "the whole file" for w in (first, second)]
    return SnapshotError(path, f"{_shown(ident)} appears twice in this file, at {positions[0]} and {positions[1]}")


def load_snapshots(
    paths: Iterable[str], warn: Callable[[str], None] | None = None, read: Iterable[str] | None = None
) -> ClusterState:
    """Load one :class:`ClusterState` from every snapshot file given, in order.

    Objects are merged by kind, namespace and name: an object that appears in
    several files (yesterday's and today's) is taken from the last one, and
    ``warn`` gets one line naming the duplicates. Two objects of one kind and
    name in one file are refused, naming both positions. The state's ``kinds`` are the
    kinds the files hold, so a check can tell "no pods in the input" from "no
    Pending pod". Each object is turned into its record as soon as it is read,
    so a large List never sits in memory whole. ``read`` (when given): the only kinds whose records are
    made, as a live load lists only those; the others are still named (a kind twice in one file is
    refused; of them the state's ``kinds`` names Pod alone, for "no pods in the input") but, in a JSON List, not
    parsed beyond that.
    """
    # the API kinds of the rows read (a row read in part of one, Event/Nominated, reads its kind's objects)
    objects = None if read is None else frozenset(KIND[k].object_kind if k in KIND else k for k in read)
    with collector.paused():  # nothing read is part of a cycle: see cluster/collector.py
        return _load(list(paths), warn, objects)


def _skipped(read: frozenset[str]) -> Callable[[str], bool]:
    """Whether an item of ``kind`` is left unparsed: not read, and not a List (whose items may be)."""
    return lambda kind: kind not in read and not (kind == "List" or kind.endswith("List"))


def _load(names: list[str], warn: Callable[[str], None] | None, read: frozenset[str] | None) -> ClusterState:
    merged: dict[tuple[str, str, str], Any] = {}
    duplicates: dict[tuple[str, str, str], None] = {}
    kinds: set[str] = set()
    # one reader per API kind (the rows read in part of one, as the autoscalers' Events, share its reader)
    converters = {k.object_kind: k.reader() for k in KINDS if read is None or k.object_kind in read}
    skip = None if read is None else _skipped(read)
    for path in names:
        mine: list[tuple[tuple[str, str, str], Any]] = []
        seen: set[str] = set()
        first_at: dict[tuple[str, str, str], str] = {}
        for where, obj in _file_objects(path, kinds, skip):
            ident = _identity(obj)
            seen.add(ident[0])
            if ident[0] in _ALL:
                if ident in first_at:
                    raise _twice_in_one_file(path, ident, first_at[ident], where)
                first_at[ident] = where
                convert = converters.get(ident[0])
                if convert is not None:
                    mine.append((ident, convert(obj, where)))
                elif ident[0] == "Pod":
                    # held by the file, not read by this command: "no pods in the input" stays apart from "no
                    # Pending pod"; no other unread kind is named, so a check never takes an unread kind for an
                    # empty one (gpus once judged pods without the DaemonSets that own the operands)
                    kinds.add(ident[0])
        if seen and not seen & set(SUPPORTED_KINDS):
            shown = sorted(k if k.isprintable() else repr(k) for k in seen)
            raise SnapshotError(
                path, f"holds {', '.join(shown)}, none of {', '.join(SUPPORTED_KINDS)}: wrong kind of file"
            )
        kinds.update(ident[0] for ident, _ in mine)
        if len(names) == 1:  # one file: its objects are the state, in its order (no object twice)
            listed = [(ident[0], record) for ident, record in mine]
            return ClusterState.of_records(listed, path, kinds & set(SUPPORTED_KINDS))
        for ident, record in mine:
            if ident in merged:
                duplicates[ident] = None
                del merged[ident]  # the later file wins, and takes the later place
            merged[ident] = record
    if duplicates and warn is not None:
        shown = [_shown(ident) for ident in duplicates]
        more = f" and {len(shown) - 10} more" if len(shown) > 10 else ""
        warn(f"{len(shown)} object(s) in more than one snapshot, the later file wins: {', '.join(shown[:10])}{more}")
    records = ((kind, record) for (kind, _, _), record in merged.items())
    return ClusterState.of_records(records, ", ".join(names), kinds & set(SUPPORTED_KINDS))
