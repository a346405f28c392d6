"""Reading snapshot files: what ``kubectl get ... -o json`` or ``-o yaml`` writes.

A file holds one JSON document, or one or more YAML documents; each document
is a Kubernetes object or a ``List`` (``v1/List``, ``NodeList``, ...) of them.
Errors name the file and, where the parser knows it, the line.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from gpulabel.errors import SnapshotError
from gpulabel.model.cluster import KINDS, SUPPORTED_KINDS, ClusterState

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


def iter_objects(doc: Any, where: str, kinds: set[str] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(where, object)`` for a document that is an object or a List.

    ``kinds`` (when given) collects the kinds of typed Lists even when empty
    (an empty ``PodList`` says the input has pods, none of them).
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
            if isinstance(item, dict) and item_kind and "kind" not in item:
                item = {**item, "kind": item_kind}
            yield from iter_objects(item, here, kinds)
        return
    yield where, doc


def _identity(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    namespace = meta.get("namespace") or ("default" if obj.get("kind") in _NAMESPACED else "")
    return str(obj.get("kind")), str(namespace), str(meta.get("name") or "")


_NAMESPACED = frozenset(k.kind for k in KINDS if k.namespaced)


class _NotStreamable(Exception):
    """The file is not one JSON object of the usual shape: read it the general way."""


_WS = re.compile(r"[ \t\n\r]*")


def _stream_list(text: str, path: str, kinds: set[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The objects of a JSON document that is one object (a List, usually), item by item.

    ``kubectl get -o json`` writes one List; parsing it whole keeps every
    item's full JSON alive at once (600 MB for 20,000 nodes and 50,000 pods).
    Here each item is parsed and handed on alone, so the caller can keep only
    what it needs of it. Anything unusual raises :class:`_NotStreamable` (or a
    JSON error), and the file is read the general way, errors included.
    """
    import json

    decode = json.JSONDecoder().raw_decode

    def skip(text: str, i: int) -> int:
        m = _WS.match(text, i)
        return m.end() if m else i

    i = skip(text, 0)
    if text[i : i + 1] != "{":
        raise _NotStreamable
    i = skip(text, i + 1)
    top: dict[str, Any] = {}
    kindless: list[tuple[int, Any]] = []  # items without a kind, until the List's kind is known
    streamed = False
    while text[i : i + 1] != "}":
        key, i = decode(text, i)
        i = skip(text, i)
        if not isinstance(key, str) or text[i : i + 1] != ":":
            raise _NotStreamable
        i = skip(text, i + 1)
        if key == "items" and text[i : i + 1] == "[" and not streamed:
            streamed = True
            i = skip(text, i + 1)
            n = 0
            while text[i : i + 1] != "]":
                item, i = decode(text, i)
                if not _depth_ok(item, _MAX_DEPTH - 3):
                    raise SnapshotError(path, f"nested deeper than {_MAX_DEPTH} levels: not a Kubernetes object")
                if isinstance(item, dict) and "kind" not in item:
                    kindless.append((n, item))
                else:
                    yield from iter_objects(item, f"{path}: items[{n}]", kinds)
                n += 1
                i = skip(text, i)
                if text[i : i + 1] == ",":
                    i = skip(text, i + 1)
                    if text[i : i + 1] == "]":
                        raise _NotStreamable  # a trailing comma: let the JSON parser name it
                elif text[i : i + 1] != "]":
                    raise _NotStreamable
            i += 1
        else:
            value, i = decode(text, i)
            top[key] = value
            if not _depth_ok(value, _MAX_DEPTH - 2):
                raise SnapshotError(path, f"nested deeper than {_MAX_DEPTH} levels: not a Kubernetes object")
        i = skip(text, i)
        if text[i : i + 1] == ",":
            i = skip(text, i + 1)
        elif text[i : i + 1] != "}":
            raise _NotStreamable
    if skip(text, i + 1) != len(text):
        raise _NotStreamable
    kind = top.get("kind")
    if not streamed or not isinstance(kind, str) or not (kind == "List" or kind.endswith("List")):
        raise _NotStreamable  # a single object, or items that are not a List's: the general way
    item_kind = kind[:-4] if kind != "List" else ""
    if item_kind:
        kinds.add(item_kind)
    for n, item in kindless:
        yield from iter_objects({**item, "kind": item_kind} if item_kind else item, f"{path}: items[{n}]", kinds)


def _file_objects(path: str, kinds: set[str]) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """Every object of one snapshot file: streamed when it is one JSON List, else parsed whole.

    ``("", None)`` means: start over, the objects so far are read again the general way.
    """
    data = _read_bytes(path)
    if data.lstrip()[:1] == b"{" and b"\x00" not in data[:8192]:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = ""
        if text:
            del data  # the text is all the parser needs
            try:
                yield from _stream_list(text, path, kinds)
                return
            except (_NotStreamable, ValueError):
                yield "", None  # forget what was read so far: the general way below starts over
            data = _read_bytes(path)
    docs = read_documents(data, path)
    del data
    if not docs:
        raise SnapshotError(path, "empty: no Kubernetes objects")
    if not _depth_ok(docs):
        raise SnapshotError(path, f"nested deeper than {_MAX_DEPTH} levels: not a Kubernetes object")
    for n, doc in enumerate(docs):
        yield from iter_objects(doc, path if len(docs) == 1 else f"{path}: document {n + 1}", kinds)


# each kind's reader, from the one table of kinds (DRA objects are kept as read and built into one DraState)
_CONVERT: dict[str, Callable[[dict[str, Any], str], Any]] = {k.kind: k.read for k in KINDS}


def load_snapshots(paths: Iterable[str], warn: Callable[[str], None] | None = None) -> ClusterState:
    """Load one :class:`ClusterState` from every snapshot file given, in order.

    Objects are merged by kind, namespace and name: an object that appears in
    several files (yesterday's and today's) is taken from the last one, and
    ``warn`` gets one line naming the duplicates. The state's ``kinds`` are the
    kinds the files hold, so a check can tell "no pods in the input" from "no
    Pending pod". Each object is turned into its record as soon as it is read,
    so a large List never sits in memory whole.
    """
    merged: dict[tuple[str, str, str], Any] = {}
    duplicates: dict[tuple[str, str, str], None] = {}
    kinds: set[str] = set()
    names = list(paths)
    for path in names:
        mine: list[tuple[tuple[str, str, str], Any]] = []
        seen: set[str] = set()
        for where, obj in _file_objects(path, kinds):
            if obj is None:
                mine, seen = [], set()
                continue
            kind = str(obj.get("kind"))
            seen.add(kind)
            convert = _CONVERT.get(kind)
            if convert is not None:
                mine.append((_identity(obj), convert(obj, where)))
        if seen and not seen & set(SUPPORTED_KINDS):
            shown = sorted(k if k.isprintable() else repr(k) for k in seen)
            raise SnapshotError(
                path, f"holds {', '.join(shown)}, none of {', '.join(SUPPORTED_KINDS)}: wrong kind of file"
            )
        for ident, record in mine:
            if ident in merged:
                duplicates[ident] = None
                del merged[ident]  # the later file wins, and takes the later place
            merged[ident] = record
            kinds.add(ident[0])
    if duplicates and warn is not None:
        shown = [f"{k.lower()}/{f'{ns}/' if ns else ''}{name}" for k, ns, name in duplicates]
        more = f" and {len(shown) - 10} more" if len(shown) > 10 else ""
        warn(f"{len(shown)} object(s) in more than one snapshot, the later file wins: {', '.join(shown[:10])}{more}")
    records = ((kind, record) for (kind, _, _), record in merged.items())
    return ClusterState.of_records(records, ", ".join(names), kinds & set(SUPPORTED_KINDS))
