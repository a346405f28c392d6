"""How much a finding matters: ``error``, ``warning`` or ``info``, and the reason tables that say so.

Every check names its reasons in one table, ``REASONS: dict[str, Reason]``
(reason word -> its severity and what it means). The registry grades each
finding from its check's table (``checks/registry.py``), a config file may
override a reason's severity, and the exit code compares the findings with
``--fail-level``:

- ``error``: something is broken now and costs GPUs or workloads (a broken
  chain, a missing or failing operand, no allocatable GPUs, a pause left
  behind, a failed MIG change);
- ``warning``: something to look at that may be on its way to breaking, or
  that breaks only some workloads (an empty deploy value, a cordoned or
  NotReady GPU node, a state that looks stale but is below its stuck
  threshold, a Pending GPU pod);
- ``info``: a state that is intended or in progress (an isolated node, an
  operand paused while its change runs, one switched off on a node with its
  deploy label ``false`` or provided on the host, ``pre-installed``), said so
  that nobody mistakes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = ["SEVERITIES", "Reason", "Severity", "at_or_above", "fails", "parse_severity", "severity_counts"]

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")  # most severe first
_RANK: dict[str, int] = {s: i for i, s in enumerate(reversed(SEVERITIES))}  # info 0, warning 1, error 2


@dataclass(frozen=True, slots=True)
class Reason:
    """One row of a check's reason table: its severity and what it means."""

    severity: Severity
    text: str


def parse_severity(text: str) -> Severity:
    """``text`` as a severity; ``ValueError`` naming the three otherwise."""
    if text not in SEVERITIES:
        raise ValueError(f"{text!r} is not one of {', '.join(SEVERITIES)}")
    return text


def at_or_above(severity: str, level: Severity) -> bool:
    """Whether ``severity`` is ``level`` or worse; a finding no table grades (``""``) counts as an error."""
    return _RANK.get(severity, _RANK["error"]) >= _RANK[level]


class Graded(Protocol):
    @property
    def severity(self) -> str: ...


def fails(findings: Iterable[Graded], level: Severity) -> bool:
    """Whether any of ``findings`` is at or above ``level`` (what makes a check exit 1)."""
    return any(at_or_above(f.severity, level) for f in findings)


def severity_counts(severities: Iterable[str]) -> dict[str, int]:
    """How many of each severity, in the order error, warning, info (every one present, zeros included)."""
    counts: dict[str, int] = dict.fromkeys(SEVERITIES, 0)
    for s in severities:
        if s in counts:
            counts[s] += 1
    return counts
