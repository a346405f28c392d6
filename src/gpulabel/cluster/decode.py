"""Strict decoding of snapshot and manifest bytes: JSON and YAML as the API server's strict decoding reads them.

Refused while decoding, each as one :class:`~gpulabel.errors.SnapshotError`
naming the file and line:

- a key twice in one mapping (the API server's strict decoding: ``duplicate field``);
- nesting deeper than a limit (64 levels for a document);
- for YAML, excessive aliasing: the "billion laughs" document whose aliases
  expand to millions of nodes. The rule is go-yaml's (``decode.go``, which
  sigs.k8s.io/yaml and so the API server use): once a document has more than
  100 nodes from alias expansions and more than 1,000 in all, at most 99% of
  them may come from aliases up to 400,000 nodes, tapering to 10% at 4,000,000.
  The expanded size is computed per distinct node, never by expanding, so the
  check costs what the file's own nodes cost whatever the nesting.

JSON is parsed with jiter (which refuses duplicate keys and bounds nesting in
its Rust parser); the depth limit is imposed by wrapping the document in
enough arrays that jiter's own limit falls where gpulabel's is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jiter
import msgspec

from gpulabel.errors import GpulabelError, SnapshotError

__all__ = ["MAX_DEPTH", "JSONSyntaxError", "decode_json", "decode_json_items", "decode_yaml", "split_json_list"]

MAX_DEPTH = 64

# jiter refuses a value more than 200 levels below the root (measured): wrapped in W arrays, a value
# is accepted iff nothing in it is deeper than 200 - W below it.
_JITER_LEVELS = 200
_JITER_LINE = re.compile(r" at line (\d+) column \d+$")
_CHUNK = 512  # List items parsed per jiter call


class JSONSyntaxError(SnapshotError):
    """Not JSON at all (as opposed to JSON that strict decoding refuses): the caller may try YAML."""


def _depth_message() -> str:
    return f"nested deeper than {MAX_DEPTH} levels: not a Kubernetes object"


def _jiter(data: bytes, limit: int) -> Any:
    """``data`` parsed by jiter, refusing duplicate keys and values deeper than ``limit`` below the root."""
    wrap = _JITER_LEVELS - limit
    return _unwrapped(b"[" * wrap + data + b"]" * wrap, wrap)


def _unwrapped(text: bytes, wrap: int) -> Any:
    """``text``, ``data`` inside ``wrap`` arrays, parsed by jiter (duplicate keys refused), ``data``'s value."""
    value = jiter.from_json(text, catch_duplicate_keys=True, allow_inf_nan=False)
    for _ in range(wrap):
        value = value[0]
    return value


def _jiter_error(err: ValueError, where: str, first_line: int = 1) -> SnapshotError | None:
    """The SnapshotError for jiter's duplicate-key or depth error, or ``None`` for a syntax error."""
    text = str(err)
    m = _JITER_LINE.search(text)
    line = first_line - 1 + int(m.group(1)) if m else None
    at = f"{where}:{line}" if line is not None else where
    if text.startswith("Detected duplicate key "):
        key = text[len("Detected duplicate key ") : m.start() if m else len(text)]
        return SnapshotError(at, f"duplicate key {key} in one mapping (the API server refuses a duplicate field)")
    if text.startswith("recursion limit exceeded"):
        return SnapshotError(where, _depth_message())
    return None


def decode_json(data: bytes, where: str) -> Any:
    """One JSON document, strictly: duplicate keys and deep nesting refused, syntax errors as orjson words them."""
    import orjson

    try:
        return _jiter(data, MAX_DEPTH - 1)  # a document sits one level below the list of documents
    except ValueError as err:
        refused = _jiter_error(err, where)
        if refused is not None:
            raise refused from None
        try:
            orjson.loads(data)
        except orjson.JSONDecodeError as syntax:
            raise JSONSyntaxError(f"{where}:{syntax.lineno}", f"invalid JSON: {syntax.msg}") from None
        m = _JITER_LINE.search(str(err))
        raise JSONSyntaxError(f"{where}:{m.group(1)}" if m else where, f"invalid JSON: {err}") from None


def split_json_list(data: bytes) -> tuple[dict[str, Any], Sequence[Any]] | None:
    """A JSON List's top level (items left out) and its items unparsed, or ``None`` if ``data`` is not one.

    The split is msgspec's, which skips over each item without building it;
    the top level (its keys checked as strictly as the items are) is parsed by
    jiter with the items cut out. ``None`` means: read the file the general way.
    """
    try:
        top = msgspec.json.decode(data, type=_ListShape)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None  # msgspec's skip of a deep unknown value recurses; jiter then bounds the depth
    if not isinstance(top.kind, str) or not (top.kind == "List" or top.kind.endswith("List")):
        return None
    items = top.items
    skeleton = data
    if items:
        first, last = bytes(items[0]), bytes(items[-1])
        start, end = data.find(first), data.rfind(last)
        if start < 0 or end < start:
            return None
        skeleton = data[:start] + data[end + len(last) :]
    try:
        head = _jiter(skeleton, MAX_DEPTH - 1)
    except ValueError:
        return None  # a duplicate key or a deep value at the top: the general way names it
    if not isinstance(head, dict) or not isinstance(head.get("items"), list) or head["items"]:
        return None
    return head, items  # msgspec.Raw: views of ``data``, joined a chunk at a time, never copied one by one


def decode_json_items(
    data: bytes, items: Sequence[Any], where: str, skip: Callable[[str], bool] | None = None
) -> Iterator[Any]:
    """Each item of a List split by :func:`split_json_list`, parsed strictly, a few hundred per jiter call.

    An item sits two levels below the document (``items``, then the item), so
    its own nesting is limited to ``MAX_DEPTH - 3`` (the list of documents is
    the root, as for YAML). An item whose kind ``skip`` says is not read is not
    parsed: it comes as its identity alone (``kind``, ``metadata.name`` and
    ``metadata.namespace``, read by msgspec, which skips the rest without building it).
    """
    wrap = _JITER_LEVELS - (MAX_DEPTH - 2) + 1  # jiter's wrapping (_jiter), and the chunk's own array
    for start in range(0, len(items), _CHUNK):
        chunk = items[start : start + _CHUNK]
        # one copy of the chunk's text, wrapped for jiter; the heads are read from the array inside, in place
        wrapped = b"[" * wrap + b",".join(chunk) + b"]" * wrap
        if skip is not None and (heads := _heads(memoryview(wrapped)[wrap - 1 : len(wrapped) - wrap + 1])) is not None:
            read = [_parsed(head, skip) for head in heads]
            if all(read):
                yield from _jiter_items(data, chunk, where, wrapped)
                continue
            wanted = [raw for raw, parse in zip(chunk, read, strict=True) if parse]
            parsed = iter(_jiter_items(data, wanted, where) if wanted else ())
            for head, parse in zip(heads, read, strict=True):
                meta = head.metadata
                yield next(parsed) if parse or meta is None else _identity_of(head.kind, meta)
            continue
        yield from _jiter_items(data, chunk, where, wrapped)


def _parsed(head: _Head, skip: Callable[[str], bool]) -> bool:
    kind = head.kind
    return not (type(kind) is str and kind and head.metadata is not None and skip(kind))


def _identity_of(kind: str, meta: _HeadMeta) -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": meta.name, "namespace": meta.namespace}}


def _heads(chunk: memoryview) -> list[_Head] | None:
    """Each item's identity, from the chunk's JSON array; ``None`` when one is not an object of that shape (then
    every item is parsed)."""
    try:
        heads: list[_Head] = _HEADS.decode(chunk)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return heads


def _jiter_items(data: bytes, chunk: Sequence[Any], where: str, wrapped: bytes | None = None) -> list[Any]:
    """The items of ``chunk`` parsed by one jiter call; a bad item named with its line in the file.
    ``wrapped``: the chunk's array already wrapped as :func:`_jiter` wraps it (one copy of the text, not two)."""
    try:
        if wrapped is None:
            values: list[Any] = _jiter(b"[" + b",".join(chunk) + b"]", MAX_DEPTH - 2)
        else:
            values = _unwrapped(wrapped, _JITER_LEVELS - (MAX_DEPTH - 2))
    except ValueError:
        values = []
    else:
        return values
    for item in chunk:  # find the item, and its line in the file
        try:
            _jiter(bytes(item), MAX_DEPTH - 3)
        except ValueError as err:
            line = data[: data.find(item)].count(b"\n") + 1
            raise _jiter_error(err, where, line) or SnapshotError(f"{where}:{line}", f"invalid JSON: {err}") from None
    raise SnapshotError(where, "invalid JSON")  # pragma: no cover - the chunk failed, so one item does


class _HeadMeta(msgspec.Struct):
    name: Any = None
    namespace: Any = None


class _Head(msgspec.Struct):
    """An item as far as a skipped kind is read: what names it."""

    kind: Any = None
    metadata: _HeadMeta | None = None


_HEADS = msgspec.json.Decoder(list[_Head])  # made once: a Decoder per call costs as much as a chunk's heads


class _ListShape(msgspec.Struct):
    """A List as far as the split reads it: its kind, and its items unparsed."""

    kind: Any = None
    items: list[msgspec.Raw] = []  # msgspec copies a mutable default


# -- YAML ---------------------------------------------------------------------------

_ALIAS_HINT = re.compile(r"(?:^|[\s\[{,])[&*]", re.MULTILINE)
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _allowed_alias_ratio(nodes: int) -> float:
    """go-yaml's ``allowedAliasRatio``: 99% up to 400,000 nodes, 10% from 4,000,000, linear between."""
    low, high = 400_000, 4_000_000
    if nodes <= low:
        return 0.99
    if nodes >= high:
        return 0.10
    return 0.99 - 0.89 * (nodes - low) / (high - low)


class _Refused(GpulabelError):
    """A decoder's refusal, turned into a SnapshotError with the file's name (never shown as it is)."""

    def __init__(self, line: int | None, message: str) -> None:
        self.line, self.message = line, message


def _duplicate_key(node: Any) -> None:
    """Refuse a key given twice in one YAML mapping (merge keys ``<<`` aside: they may be overridden)."""
    seen: dict[tuple[str, str], int] = {}
    for key, _ in node.value:
        if key.id != "scalar" or key.tag == _MERGE_TAG:
            continue
        ident = (key.tag, key.value)
        if ident in seen:
            shown = key.value if len(key.value) <= 60 else key.value[:57] + "..."
            raise _Refused(
                key.start_mark.line + 1,
                f"duplicate key {shown!r} in one mapping, first at line {seen[ident]}"
                " (the API server refuses a duplicate field)",
            )
        seen[ident] = key.start_mark.line + 1


def _children(node: Any) -> list[Any]:
    if node.id == "mapping":
        return [part for pair in node.value for part in pair]
    return list(node.value)


def check_yaml_tree(root: Any, aliases_possible: bool) -> None:
    """Depth, duplicate keys and alias expansion of one composed YAML document (``yaml.Node`` graph).

    Without anchors in the text the graph is a tree: one walk, no memory of
    nodes. With them, each distinct node's expanded size and height are
    computed once (a DAG walk), which bounds the cost by the file, not by the
    expansion.
    """
    if aliases_possible:
        _check_graph(root)
    else:
        _check_tree(root)


def _check_tree(root: Any) -> None:
    """Depth and duplicate keys of a document without anchors: one walk, no memory of nodes."""
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if node.id == "scalar" or not node.value:
            continue
        if depth >= MAX_DEPTH:
            raise _Refused(None, _depth_message())
        if node.id == "mapping":
            _duplicate_key(node)
            for key, value in node.value:
                if key.id != "scalar":
                    stack.append((key, depth + 1))
                if value.id != "scalar":
                    stack.append((value, depth + 1))
        else:
            stack.extend((child, depth + 1) for child in node.value if child.id != "scalar")


def _check_graph(root: Any) -> None:
    """Depth, duplicate keys and alias expansion of a document that may have aliases: each distinct node's
    expanded size and height computed once, a cycle refused."""
    done: dict[int, tuple[int, int]] = {}  # id -> (expanded node count, height)
    active: set[int] = set()
    aliased = 0  # nodes that alias expansion adds
    walk: list[tuple[Any, bool]] = [(root, False)]
    while walk:
        node, finished = walk.pop()
        key = id(node)
        if finished:
            size, height = 1, 0
            for child in _children(node):
                child_size, child_height = done[id(child)]
                size += child_size
                height = max(height, child_height + 1)
            done[key] = (size, height)
            active.discard(key)
            continue
        if key in done:
            aliased += done[key][0]  # a second reference: an alias, expanded by whoever reads the data
            continue
        if key in active:
            raise _Refused(node.start_mark.line + 1, "an alias refers to a node that contains it")
        if node.id == "scalar":
            done[key] = (1, 0)
            continue
        if node.id == "mapping":
            _duplicate_key(node)
        active.add(key)
        walk.append((node, True))
        walk.extend((child, False) for child in reversed(_children(node)))
    size, height = done[id(root)]
    if height >= MAX_DEPTH:
        raise _Refused(None, _depth_message())
    if aliased > 100 and size > 1000 and aliased / size > _allowed_alias_ratio(size):
        raise _Refused(
            None,
            f"document contains excessive aliasing: its aliases expand it to {size} nodes (refused as the "
            "API server's YAML decoding refuses it)",
        )


def decode_yaml(text: str, where: str) -> list[Any]:
    """Every document of a YAML stream (null documents left out), strictly.

    Plain data is built straight from the parser's events (:mod:`.yamlstream`: no node graph, so
    no second copy of the document in memory); anything else (anchors and aliases, merge keys,
    other tags, and whatever is to be refused) is read again by composing each document and
    checking its graph before building it, which gives every refusal its one message.
    """
    from gpulabel.cluster.yamlstream import load_plain

    try:
        return load_plain(text, MAX_DEPTH)
    except Exception:  # read again below: that reading accepts or refuses the text, in its own words
        pass
    return _decode_composed(text, where)


def _decode_composed(text: str, where: str) -> list[Any]:
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    aliases_possible = _ALIAS_HINT.search(text) is not None

    class StrictLoader(base):  # type: ignore[valid-type, misc]
        def construct_document(self, node: Any) -> Any:
            check_yaml_tree(node, aliases_possible)
            return super().construct_document(node)

    try:
        return [d for d in yaml.load_all(text, Loader=StrictLoader) if d is not None]
    except _Refused as err:
        raise SnapshotError(f"{where}:{err.line}" if err.line else where, err.message) from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        at = f":{mark.line + 1}" if mark is not None else ""
        raise SnapshotError(f"{where}{at}", f"invalid YAML: {err.problem or err.context}") from None
    except yaml.reader.ReaderError as err:
        line = text[: err.position].count("\n") + 1
        raise SnapshotError(f"{where}:{line}", f"not YAML text: {err.reason} {err.character!r}") from None
    except (yaml.YAMLError, RecursionError) as err:
        raise SnapshotError(where, "invalid YAML: " + " ".join(str(err).split())) from None
