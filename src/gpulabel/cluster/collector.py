"""The cyclic garbage collector, paused while a cluster or a snapshot is read.

Reading builds hundreds of thousands of small containers (the parsed JSON, the
records), all kept or freed by their reference counts: none is part of a cycle.
Left running, the collector is set off by each burst of allocations and walks
every object built so far: 30% of ``audit``'s time on a 5,000-node snapshot.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

__all__ = ["kept", "paused", "release", "while_paused"]

P = ParamSpec("P")
R = TypeVar("R")


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection inside the block; the collector runs again after it if it ran before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def kept() -> Iterator[None]:
    """:func:`paused`, and what is alive at the end of the block frozen out of the collector before it runs again.

    For what a command reads to run on (its cluster state, kept until the
    process ends). The objects built while paused all sit in the youngest
    generation with its allocation count far past the threshold: re-enabled
    as they are, the first allocation after the block sets off a collection
    that walks all of them (0.4 s on a 5,000-node snapshot), and older
    generations walk them again later. ``gc.freeze`` moves them out of every
    generation and resets the count; reference counting still frees them.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        release()  # first: what it allocates (ctypes, the first time) is frozen with the rest
        gc.freeze()
    finally:
        if enabled:
            gc.enable()


def release() -> None:
    """Hand the C heap's free pages back to the system (glibc's ``malloc_trim``; elsewhere nothing).

    Reading frees far more than it keeps (the parsed JSON of every object, a chunk at a time), and
    glibc keeps the pages it freed inside its heap: 282 MB resident after a 20,000-node snapshot is
    read, 142 MB once they are handed back. Called once a command's state is read."""
    import ctypes

    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def while_paused(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` with the collector paused for each call (see :func:`paused`)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with paused():
            return fn(*args, **kwargs)

    return wrapper
