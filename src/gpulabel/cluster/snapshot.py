"""Reading snapshot files: what ``kubectl get ... -o json`` or ``-o yaml`` writes.

A file holds one JSON document, or one or more YAML documents; each document
is a Kubernetes object or a ``List`` (``v1/List``, ``NodeList``, ...) of them.
Errors name the file and, where the parser knows it, the line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from gpulabel.errors import SnapshotError
from gpulabel.model.cluster import SUPPORTED_KINDS, ClusterState

__all__ = ["MAX_SNAPSHOT_BYTES", "iter_objects", "load_snapshots", "read_documents"]

# A 5,000-node cluster with its pods as pretty JSON is about 200 MB; refuse
# anything far beyond that rather than exhaust memory.
MAX_SNAPSHOT_BYTES = 1 << 30
_MAX_DEPTH = 64


def _read_bytes(path: str) -> bytes:
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        size = os.path.getsize(path)
        if size > MAX_SNAPSHOT_BYTES:
            raise SnapshotError(path, f"file is {size} bytes, more than the {MAX_SNAPSHOT_BYTES} a snapshot may be")
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as err:
        raise SnapshotError(path, err.strerror or str(err)) from None


def _depth_ok(value: Any, limit: int = _MAX_DEPTH) -> bool:
    """Whether nothing in ``value`` sits deeper than ``limit`` (the root is depth 0).

    Walks one level at a time and keeps only containers, so the millions of
    scalars of a large snapshot are looked at once and never stacked.
    """
    level = [value] if isinstance(value, (dict, list)) else []
    depth = 0
    while level:
        nxt = []
        for item in level:
            if item and depth + 1 > limit:
                return False  # its children would sit deeper than the limit
            for child in item.values() if isinstance(item, dict) else item:
                if isinstance(child, (dict, list)):
                    nxt.append(child)
        level, depth = nxt, depth + 1
    return True


def read_documents(data: bytes, where: str) -> list[Any]:
    """Parse ``data`` as JSON, or failing that as (multi-document) YAML."""
    if b"\x00" in data[:8192]:
        raise SnapshotError(where, "binary data, not JSON or YAML")
    head = data.lstrip()[:1]
    if head in (b"{", b"["):
        import orjson

        try:
            return [orjson.loads(data)]
        except orjson.JSONDecodeError as err:
            if head == b"[" or not _looks_like_yaml_flow(data):
                raise SnapshotError(f"{where}:{err.lineno}", f"invalid JSON: {err.msg}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise SnapshotError(f"{where}:{line}", "not UTF-8 text") from None
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        docs = [d for d in yaml.load_all(text, Loader=loader) if d is not None]
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        at = f":{mark.line + 1}" if mark is not None else ""
        raise SnapshotError(f"{where}{at}", f"invalid YAML: {err.problem or err.context}") from None
    except yaml.reader.ReaderError as err:
        line = text[: err.position].count("\n") + 1
        raise SnapshotError(f"{where}:{line}", f"not YAML text: {err.reason} {err.character!r}") from None
    except (yaml.YAMLError, RecursionError) as err:
        raise SnapshotError(where, "invalid YAML: " + " ".join(str(err).split())) from None
    return docs


def _looks_like_yaml_flow(data: bytes) -> bool:
    # '{' may open a YAML flow mapping with unquoted keys; let YAML have a go.
    return b'"' not in data[:64]


def iter_objects(doc: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(where, object)`` for a document that is an object or a List."""
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
        for i, item in enumerate(items):
            here = f"{where}: items[{i}]"
            if isinstance(item, dict) and item_kind and "kind" not in item:
                item = {**item, "kind": item_kind}
            yield from iter_objects(item, here)
        return
    yield where, doc


def load_snapshots(paths: Iterable[str]) -> ClusterState:
    """Load one :class:`ClusterState` from every snapshot file given."""
    objects: list[tuple[str, dict[str, Any]]] = []
    names = list(paths)
    for path in names:
        docs = read_documents(_read_bytes(path), path)
        if not docs:
            raise SnapshotError(path, "empty: no Kubernetes objects")
        if not _depth_ok(docs):
            raise SnapshotError(path, f"nested deeper than {_MAX_DEPTH} levels: not a Kubernetes object")
        found: list[tuple[str, dict[str, Any]]] = []
        for n, doc in enumerate(docs):
            where = path if len(docs) == 1 else f"{path}: document {n + 1}"
            found.extend(iter_objects(doc, where))
        if found and not any(obj.get("kind") in SUPPORTED_KINDS for _, obj in found):
            kinds = sorted({str(obj.get("kind")) for _, obj in found})
            raise SnapshotError(
                path, f"holds {', '.join(kinds)}, none of {', '.join(SUPPORTED_KINDS)}: wrong kind of file"
            )
        objects.extend(found)
    return ClusterState.from_objects(objects, source=", ".join(names), kinds=("Node", "Pod", "DaemonSet"))
