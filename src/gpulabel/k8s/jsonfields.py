"""Typed reads of one API object's fields, for the readers of CRD objects (NFD's, Karpenter's) and of
documents such as Cluster Autoscaler's status: a field of the wrong JSON type (which the server's schema
refuses) raises :class:`~gpulabel.errors.SnapshotError` naming the object and the field; an absent one is
its Go zero value.
"""

from __future__ import annotations

from typing import Any

from gpulabel.errors import SnapshotError

__all__ = ["Fields"]

JSON = dict[str, Any]


class Fields:
    """Reads fields of the object ``here`` names (``here`` is the start of every error)."""

    def __init__(self, here: str) -> None:
        self.here = here

    def fail(self, path: str, what: str) -> SnapshotError:
        return SnapshotError(self.here, f"{path} is not {what}")

    def mapping(self, v: Any, path: str) -> JSON:
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise self.fail(path, "a mapping")
        return v

    def items(self, v: Any, path: str) -> list[Any]:
        if v is None:
            return []
        if not isinstance(v, list):
            raise self.fail(path, "a list")
        return v

    def text(self, v: Any, path: str) -> str:
        if v is None:
            return ""
        if not isinstance(v, str):
            raise self.fail(path, "a string")
        return v

    def integer(self, v: Any, path: str) -> int | None:
        if v is None:
            return None
        if not isinstance(v, int) or isinstance(v, bool):
            raise self.fail(path, "an integer")
        return v

    def strmap(self, v: Any, path: str) -> dict[str, str]:
        return {k: self.text(x, f"{path}.{k}") for k, x in self.mapping(v, path).items()}
