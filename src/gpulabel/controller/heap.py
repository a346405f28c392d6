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
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG", "settle"]

YOUNG = 10_000  # allocations between young collections (CPython's default: 700)


def settle() -> None:
    """After a LIST or a relist is assessed: one full collection, then every object alive kept out of later ones."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG, middle, old)
