"""The state's nodes by name, in parts: a node's change, arrival or departure remakes the one part it falls in.

The incremental evaluator's state lists every node sorted by name
(:class:`~gpulabel.model.chunks.Chunks` of tuples). With parts of a fixed size, a
node that comes or goes moves every later node into another part, so every later
part was made again: a join at 130,000 nodes copied and freed half the nodes.
Here each part holds between one node and twice the size (:data:`~gpulabel.model.chunks.SIZE`):
a node goes into the part its name falls in (a part grown past twice the size is
cut in two), a node that leaves is taken from its part (an emptied part goes,
and a part left under half the size joins a neighbour they both fit in), and only that
part's tuple is made again.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from gpulabel.model.chunks import SIZE, Chunks
from gpulabel.model.cluster import Node

__all__ = ["NodeParts"]


def _name(node: Node) -> str:
    return node.name


class NodeParts:
    """Nodes sorted by name, in parts (tuples) of at most twice ``size``; :meth:`chunks` reads them."""

    __slots__ = ("_firsts", "_made", "_parts", "_size")

    def __init__(self, size: int = SIZE) -> None:
        self._size = size
        self._parts: list[tuple[Node, ...]] = []
        self._firsts: list[str] = []  # each part's first name: the part a name falls in, by bisection
        self._made: Chunks[Node] | None = None

    def fill(self, ordered: Iterable[Node]) -> None:
        """Every node at once, ``ordered`` by name."""
        nodes, size = list(ordered), self._size
        self._parts = [tuple(nodes[i : i + size]) for i in range(0, len(nodes), size)]
        self._firsts = [p[0].name for p in self._parts]
        self._made = None

    def chunks(self) -> Chunks[Node]:
        """The nodes in order, as one sequence over the parts (made again after a change)."""
        if self._made is None:
            self._made = Chunks(self._parts)
        return self._made

    def _part_of(self, name: str) -> int:
        """The part ``name`` falls in: the last whose first name is not after it (the first part, before all)."""
        return max(bisect.bisect_right(self._firsts, name) - 1, 0)

    def put(self, node: Node) -> None:
        """``node`` in its place: replacing the node of its name, or inserted among the others."""
        self._made = None
        if not self._parts:
            self._parts, self._firsts = [(node,)], [node.name]
            return
        p = self._part_of(node.name)
        part = self._parts[p]
        i = bisect.bisect_left(part, node.name, key=_name)
        if i < len(part) and part[i].name == node.name:
            self._parts[p] = (*part[:i], node, *part[i + 1 :])
            return
        part = (*part[:i], node, *part[i:])
        if len(part) > 2 * self._size:
            half = len(part) // 2
            self._parts[p : p + 1] = [part[:half], part[half:]]
            self._firsts[p : p + 1] = [part[0].name, part[half].name]
        else:
            self._parts[p], self._firsts[p] = part, part[0].name

    def drop(self, name: str) -> None:
        """The node named ``name`` out (none of that name: nothing changes)."""
        if not self._parts:
            return
        p = self._part_of(name)
        part = self._parts[p]
        i = bisect.bisect_left(part, name, key=_name)
        if i == len(part) or part[i].name != name:
            return
        self._made = None
        part = (*part[:i], *part[i + 1 :])
        if not part:
            del self._parts[p], self._firsts[p]
            return
        self._parts[p], self._firsts[p] = part, part[0].name
        if 2 * len(part) < self._size and len(self._parts) > 1:  # few left: joined to a neighbour if they fit
            q = p - 1 if p > 0 else p
            joined = self._parts[q] + self._parts[q + 1]
            if len(joined) <= 2 * self._size:
                self._parts[q : q + 2] = [joined]
                self._firsts[q : q + 2] = [joined[0].name]
