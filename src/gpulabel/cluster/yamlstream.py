"""YAML documents built straight from libyaml's parse events: Python objects once, no node graph before them.

``yaml.load`` composes each document into a graph of ``yaml.Node`` objects
(each with two position marks) and then builds the Python objects from it, so
both sit in memory at once. Here the events of PyYAML's C parser become dicts,
lists and scalars as they arrive; each scalar's tag is resolved and its value
constructed by PyYAML's own safe resolver and constructors, so the values are
the ones ``yaml.load`` with the C safe loader gives.

Only plain data is read this way: a document with an anchor, an alias, a merge
key (``<<``), a key that is not a scalar, a tag beyond the core schema's, a key
given twice or nesting deeper than the limit makes :func:`stream_documents`
raise :class:`Unsupported`, and the caller reads the text again the composing
way, which refuses or accepts it with its own exact message. A snapshot written
by ``kubectl get -o yaml`` has none of these.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from yaml.nodes import ScalarNode

from gpulabel.errors import GpulabelError

__all__ = ["Unsupported", "stream_documents"]

_CORE = "tag:yaml.org,2002:"
_STR, _NULL, _MAP, _SEQ = _CORE + "str", _CORE + "null", _CORE + "map", _CORE + "seq"
# scalar tags built by SafeConstructor's own functions (merge and value keys are left to the composing reader)
_SCALARS = frozenset(_CORE + t for t in ("str", "null", "bool", "int", "float", "timestamp", "binary"))
_NO_KEY = object()


class Unsupported(GpulabelError):  # a signal to the caller, never shown
    """The text needs the composing reader (see the module's docstring)."""


def stream_documents(loader: Any, max_depth: int) -> list[Any]:
    """Every document of the loader's stream (null documents left out), from its parse events.

    ``loader`` is a ``yaml.CSafeLoader`` (or ``SafeLoader``) made on the text;
    a non-empty collection ``max_depth`` levels down (the document's root is
    level 1) raises :class:`Unsupported`, as everything the composing reader
    must judge does.
    """
    get_event = loader.get_event
    resolve = loader.resolve
    constructors = loader.yaml_constructors
    docs: list[Any] = []
    # open collections, innermost last: (the dict or list, for a dict its keys seen as (tag, text))
    stack: list[tuple[Any, set[tuple[str, str]] | None]] = []
    key: Any = _NO_KEY  # a mapping's key waiting for its value
    keys: list[Any] = []  # the waiting keys of the enclosing mappings
    root: Any = None

    def add(value: Any) -> None:
        nonlocal key, root
        if not stack:
            root = value
            return
        if len(stack) >= max_depth:
            raise Unsupported
        container, _ = stack[-1]
        if type(container) is list:
            container.append(value)
        else:
            container[key] = value
            key = _NO_KEY

    event = get_event()
    if type(event) is not StreamStartEvent:
        raise Unsupported
    while True:
        event = get_event()
        kind = type(event)
        if kind is ScalarEvent:
            if event.anchor is not None:
                raise Unsupported
            tag = event.tag
            text = event.value
            if tag is None or tag == "!":
                tag = resolve(ScalarNode, text, event.implicit)
            if tag == _STR:
                value: Any = text
            elif tag == _NULL:
                value = None
            elif tag in _SCALARS:
                value = constructors[tag](loader, ScalarNode(tag, text))
            else:
                raise Unsupported
            if stack and key is _NO_KEY and type(stack[-1][0]) is dict:
                seen = stack[-1][1]
                assert seen is not None
                ident = (tag, text)
                if ident in seen or len(stack) >= max_depth:
                    raise Unsupported
                seen.add(ident)
                key = value
            else:
                add(value)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            if event.anchor is not None or (stack and key is _NO_KEY and type(stack[-1][0]) is dict):
                raise Unsupported  # an anchor, or a collection as a mapping's key
            tag = event.tag
            mapping = kind is MappingStartEvent
            if tag not in (None, "!", _MAP if mapping else _SEQ):
                raise Unsupported
            keys.append(key)
            key = _NO_KEY
            stack.append(({}, set()) if mapping else ([], None))
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            container, _ = stack.pop()
            key = keys.pop()
            add(container)
        elif kind is DocumentStartEvent:
            root = None
        elif kind is DocumentEndEvent:
            if root is not None:
                docs.append(root)
        elif kind is StreamEndEvent:
            return docs
        elif kind is AliasEvent:
            raise Unsupported
        else:  # pragma: no cover - libyaml emits no other event
            raise Unsupported


def load_plain(text: str, max_depth: int) -> list[Any]:
    """:func:`stream_documents` over ``text`` with PyYAML's C safe loader (its pure-Python one without libyaml)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        return stream_documents(loader, max_depth)
    finally:
        loader.dispose()
