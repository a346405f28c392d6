"""A fleet: several clusters read at once by ``check`` and ``report`` (``--context`` repeated, ``--cluster N=FILE``).

Each member is read and checked exactly as the single-cluster command reads and checks it (its own
:class:`~gpulabel.app.session.Session`); the fleet only runs them side by side, a bounded number at a
time, and puts the answers together in the members' order. A member that cannot be read fails the
whole command in one line naming the cluster (``gpulabel: cluster b: ...``), as a single cluster would.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from gpulabel.app.session import Source
from gpulabel.errors import GpulabelError, InputError

__all__ = ["FLEET_WORKERS", "Member", "fleet_members", "in_parallel", "refuse_bad_cluster_name"]

FLEET_WORKERS = 4  # clusters read at once: a read waits on its API server, the checks share one core (the GIL)
T = TypeVar("T")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def refuse_bad_cluster_name(name: str, flag: str = "--cluster-name") -> None:
    """A cluster's name is a Prometheus label value and a page's anchor a person types: letters, digits,
    ``.``, ``_`` and ``-``, at most 63 (the monitor's ``--cluster-name`` and the fleet's names alike)."""
    if not _NAME.fullmatch(name):
        raise InputError(flag, f"{name!r} is not a cluster name (letters, digits, '.', '_', '-'; at most 63)")


@dataclass(frozen=True, slots=True)
class Member:
    """One cluster of the fleet: its name (the context's, or ``--cluster``'s NAME) and what to read."""

    name: str
    source: Source


def fleet_members(
    clusters: Sequence[str],
    contexts: Sequence[str],
    *,
    kubeconfig: str | None = None,
    selector: str | None = None,
) -> list[Member]:
    """The members ``--cluster NAME=SNAPSHOT`` and ``--context NAME`` name, in that order; each bad item
    refused in one line (no ``=``, a bad name, a file that is not there, a name given twice)."""
    members: list[Member] = []
    for item in clusters:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise InputError("--cluster", f"{item!r} is not NAME=SNAPSHOT")
        refuse_bad_cluster_name(name, "--cluster")
        if not os.path.isfile(path):
            raise InputError("--cluster", f"{name}: {path}: no such file")
        members.append(Member(name, Source(snapshots=(path,), selector=selector)))
    for context in contexts:
        members.append(Member(context, Source(kubeconfig=kubeconfig, context=context, selector=selector)))
    seen: set[str] = set()
    for m in members:
        if m.name in seen:
            flag = "--context" if m.source.context is not None else "--cluster"
            raise InputError(flag, f"cluster {m.name!r} is named twice")
        seen.add(m.name)
    return members


class MemberError(GpulabelError):
    """A member's own one-line error, with the member's name in front."""

    def __init__(self, name: str, err: GpulabelError) -> None:
        super().__init__(f"cluster {name}: {err}")
        self.exit_code = err.exit_code


def in_parallel(members: Sequence[Member], work: Callable[[Member], T], workers: int = FLEET_WORKERS) -> list[T]:
    """``work(member)`` for every member, at most ``workers`` at once; the answers in the members' order.

    The first member (in order) whose work fails with gpulabel's one-line error fails the fleet with it,
    its cluster named; the others finish first (their threads are not cancelled mid-read).
    """
    from gpulabel.cluster import collector

    def one(m: Member) -> T:
        try:
            return work(m)
        except MemberError:
            raise
        except GpulabelError as err:
            raise MemberError(m.name, err) from None

    # one pause around the whole fleet: each read's own (collector.kept) then leaves the collector off for the others
    with collector.paused(), ThreadPoolExecutor(max_workers=max(1, min(workers, len(members)))) as pool:
        futures = [pool.submit(one, m) for m in members]
        return [f.result() for f in futures]
