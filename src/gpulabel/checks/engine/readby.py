"""What a kept table's entries are read by: the incremental keepers' reference counts.

A keeper (pending's rows, hazards' fitting lists) keeps entries that the
findings of some pods read. :class:`ReadBy` keeps, per entry, the pods that
read it (each with what the keeper keeps of it there, if anything); an entry
whose last reader went is an orphan, forgotten at :meth:`ReadBy.prune` unless a
pod re-judged in the same batch reads it again.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import Any, Generic, TypeVar

__all__ = ["ReadBy"]

K = TypeVar("K")
P = TypeVar("P")


class ReadBy(Generic[K, P]):
    """Readers ``P`` of the entries ``K`` of ``table`` (the keeper's own dictionary, pruned in place)."""

    def __init__(self, table: MutableMapping[K, Any]) -> None:
        self.table = table
        self.users: dict[K, dict[P, Any]] = {}  # the readers of each entry, each with its value (own)
        self.orphans: set[K] = set()  # entries whose last reader went: forgotten at prune()

    def own(self, key: K, reader: P, value: Any = None) -> None:
        """``reader`` reads entry ``key``; ``value``: what the keeper keeps of it there (``users[key][reader]``)."""
        self.users.setdefault(key, {})[reader] = value

    def disown(self, key: K, reader: P) -> None:
        """``reader`` no longer reads it: forgotten at :meth:`prune` if by then nothing does."""
        users = self.users.get(key)
        if users is not None:
            users.pop(reader, None)
            if not users:
                del self.users[key]
                self.orphans.add(key)

    def readers(self, keys: Iterable[K]) -> set[P]:
        """Who reads any of ``keys``."""
        return {reader for key in keys for reader in self.users.get(key, ())}

    def clear(self) -> None:
        """Nothing reads any entry (every pod is judged again): forget those none reads after."""
        self.users, self.orphans = {}, set(self.table)

    def prune(self) -> None:
        """Forget what nothing reads (after a batch's pieces are remade: a pod re-judged reads it again)."""
        for key in [k for k in self.orphans if k not in self.users]:
            self.table.pop(key, None)
        self.orphans = set()
