"""An immutable sequence made of tuples: a state's pods and nodes, remade per event sharing every part unchanged.

The incremental evaluator's state lists every pod (55,000 at 20,000 nodes) and every node. A tuple of them
made again at each change costs its length twice (made, and the last one freed); :class:`Chunks` holds them in
parts of at most :data:`SIZE`, and a change makes its own part again (a node that comes or goes, every later
part: the order is by name) and a new :class:`Chunks` over the same other parts. It reads as the tuple of every
part's items in order: equal to it, of its length, iterated in that order, indexed (the flat tuple made once,
at the first index asked).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar, overload

__all__ = ["SIZE", "Chunks"]

T = TypeVar("T")
SIZE = 1024  # items per part: a pod's change remakes a tuple of at most this many


class Chunks(Sequence[T]):
    """The items of ``parts`` (tuples) in order, as one immutable sequence."""

    __slots__ = ("_flat", "_len", "_parts")

    def __init__(self, parts: Sequence[tuple[T, ...]]) -> None:
        self._parts = tuple(parts)
        self._len = sum(map(len, self._parts))
        self._flat: tuple[T, ...] | None = None

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[T]:
        return itertools.chain.from_iterable(self._parts)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if self._flat is None:
            self._flat = tuple(self)
        return self._flat[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Chunks):
            return self._len == other._len and all(map(_same, self, other))
        if isinstance(other, tuple):
            return self._len == len(other) and all(map(_same, self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))  # as the tuple it equals

    def __repr__(self) -> str:
        return repr(tuple(self))


def _same(a: Any, b: Any) -> bool:
    return a is b or bool(a == b)
