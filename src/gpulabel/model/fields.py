"""Typed reads of the API's JSON: every field gpulabel takes from a snapshot has the type the API gives it.

A value of another JSON type (``"unschedulable": "false"``, a taint written as a
string, ``fieldsV1`` that is not an object) cannot come from the API server,
which refuses to decode it; :class:`Fields` turns it into one
:class:`~gpulabel.errors.SnapshotError` naming the file, the object and the field.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from gpulabel.errors import SnapshotError

__all__ = ["Fields", "interned"]

JSON = dict[str, Any]


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {json.dumps(shown, ensure_ascii=False)}"
    return "a list" if isinstance(value, list) else "a mapping"


def interned(mapping: dict[str, str] | None) -> dict[str, str]:
    """A copy of a string map (None: empty) with one copy of each key and value: label keys and values
    repeat across thousands of nodes. Raises TypeError for a key or value that is not a string."""
    if not mapping:
        return {}
    return dict(zip(map(sys.intern, mapping), map(sys.intern, mapping.values()), strict=True))


class Fields:
    """Reads fields of one object; a value of the wrong JSON type is one :class:`SnapshotError`.

    The API server refuses such an object (Go cannot decode it), so a snapshot
    holding one was not written by it: the error names the file, the object
    and the field, e.g. ``s.json: items[3] (node gpu-1): spec.unschedulable is
    the string "false", not a boolean``.
    """

    def __init__(self, here: str) -> None:
        self.here = here

    def fail(self, path: str, value: Any, expected: str) -> SnapshotError:
        if not path.isprintable():  # a key with a newline must not break the one-line error
            path = path.encode("unicode_escape").decode("ascii")
        return SnapshotError(self.here, f"{path} is {_describe(value)}, not {expected}")

    def mapping(self, value: Any, path: str) -> JSON:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(path, value, "a mapping")
        return value

    def string(self, value: Any, path: str) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self.fail(path, value, "a string")
        return value

    def boolean(self, value: Any, path: str) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self.fail(path, value, "a boolean")
        return value

    def integer(self, value: Any, path: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, value, "an integer")
        return value

    def items(self, value: Any, path: str) -> list[JSON]:
        """A list of objects (``[]v1.Taint``...); a null list is empty, a null item is refused."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, value, "a list")
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.fail(f"{path}[{i}]", item, "a mapping")
        return value

    def strings(self, value: Any, path: str) -> list[str]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, value, "a list")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(f"{path}[{i}]", item, "a string")
        return value

    def str_map(self, value: Any, path: str) -> dict[str, str]:
        mapping = self.mapping(value, path)
        # sys.intern refuses anything but a str, so this is also the type check; the loop below names what it refused.
        try:
            return interned(mapping)
        except TypeError:
            pass
        out = {}
        for k, v in mapping.items():
            if not isinstance(v, str):
                raise self.fail(f"{path}[{k}]", v, "a string")
            # Label keys and short values repeat across thousands of nodes: one copy of each.
            out[sys.intern(str(k))] = sys.intern(v) if len(v) <= 63 else v
        return out
