"""Where the monitor's findings go: every sink is told each judged picture, and finds the changes itself.

``publish`` is called after every evaluation (and once after the initial
LISTs) with the full current :class:`~gpulabel.checks.assessment.Assessment`;
a sink that reports changes (Events, a log line) finds what appeared and what
was resolved by finding identity (``checks.verdict.identity``).
"""

from __future__ import annotations

from typing import Protocol

from gpulabel.checks.assessment import Assessment

__all__ = ["Sink"]


class Sink(Protocol):
    def publish(self, assessment: Assessment) -> None: ...
