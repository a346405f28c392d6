"""Findings: what a check returns, as data, before anything is rendered."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Finding", "summarize"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a check found wrong.

    The plain line is ``subject key reason args...`` with empty parts left
    out, e.g. ``lab-node-1 nvidia.com/gpu.count not-a-number``. ``detail``
    explains it for people (``-o wide``); ``data`` carries extra fields for
    ``-o json``.
    """

    check: str
    subject: str
    key: str
    reason: str
    args: tuple[str, ...] = ()
    detail: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        return " ".join(p for p in (self.subject, self.key, self.reason, *self.args) if p)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": self.check, "subject": self.subject}
        if self.key:
            out["key"] = self.key
        out["reason"] = self.reason
        if self.args:
            out["args"] = list(self.args)
        if self.detail:
            out["detail"] = self.detail
        out.update(self.data)
        return out


def summarize(findings: Iterable[Finding]) -> dict[str, int]:
    """Count findings by reason, most common first."""
    return dict(Counter(f.reason for f in findings).most_common())
