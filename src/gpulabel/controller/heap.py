"""The monitor's heap: what it holds after a LIST is kept out of the garbage collector's walks.

A monitor holds every record of its cluster for as long as it runs (20,000 nodes and 55,000 pods: about a
million objects), none of them in a reference cycle, and what an event makes is mostly freed by reference
counting. CPython's cyclic collector still walks them: a full collection, when enough objects have
survived, walks every one (26-56 ms at 20,000 nodes, on whichever event it falls), and each young
collection walks whatever references the young objects hold (the state's new tuple of every pod, after a
pod's event). So, once the records of a LIST are assessed, :func:`settle` collects once and freezes what
is alive (``gc.freeze``: later collections skip it; it is still freed when no longer referenced), and
the young generation is collected every :data:`YOUNG` allocations instead of 700. The cycles among the
objects frozen by one LIST are collected at the next (``gc.unfreeze`` first): they are few (about 120
objects over 1,000 events at 20,000 nodes, ``bench/README.md``). Measured by ``bench/monitor_replay.py``,
which calls this function where the monitor does.

After every other evaluation, :meth:`Heap.keep` freezes what that evaluation made and kept (``gc.freeze`` moves
the generations' lists onto the frozen one: constant time). Without it, the objects an event keeps wait in
the young generation until a later event's allocations set off a collection, which walks them all there:
a new Pending spec's row at 130,000 nodes (its per-node lists) made a taint 46-52 ms later cost that much
more (``bench.replay_parts``' ``gc:0``). The replayed streams make no cyclic garbage (none found by a
full collection after 300 events at 130,000 nodes); what another part of the monitor makes (an exception's
traceback) would be kept until the next :func:`settle`, so :meth:`Heap.keep` settles itself once the frozen
objects have grown past :data:`GROWTH` times what the last settle froze, plus :data:`SLACK`. Counting them
walks every frozen object (``gc.get_freeze_count``: 35-43 ms at 130,000 nodes), so it counts once every
:data:`COUNT_EVERY` calls.
"""

from __future__ import annotations

import gc

__all__ = ["COUNT_EVERY", "GROWTH", "SLACK", "YOUNG", "Heap", "settle"]

YOUNG = 10_000  # allocations between young collections (CPython's default: 700)
GROWTH = 2  # frozen objects, as a multiple of the last settle's, past which keep settles instead
SLACK = 100_000  # and this many more (a small cluster's heap doubles with a few hundred pods)
COUNT_EVERY = 1_000  # keep's calls between two counts of the frozen objects


def settle() -> None:
    """After a LIST or a relist is assessed: one full collection, then every object alive kept out of later ones."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG, middle, old)


class Heap:
    """One monitor's :func:`settle` and :meth:`keep`, with what ``keep`` counts between them."""

    def __init__(self) -> None:
        self.settled = 0  # how many objects the last settle froze
        self.calls = 0  # keep's calls since it last counted the frozen objects

    def settle(self) -> None:
        """:func:`settle`, and how many objects it froze."""
        settle()
        self.settled, self.calls = gc.get_freeze_count(), 0

    def keep(self) -> None:
        """After any other evaluation: what it made and kept frozen with the rest (constant time); every
        ``COUNT_EVERY``-th call, if the frozen objects have grown past ``GROWTH`` times the last settle's plus
        ``SLACK``, :meth:`settle` (a full collection) instead."""
        gc.freeze()
        self.calls += 1
        if self.calls >= COUNT_EVERY:
            self.calls = 0
            if gc.get_freeze_count() > GROWTH * self.settled + SLACK:
                self.settle()
