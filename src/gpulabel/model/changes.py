"""A label change on one node: what ``sync`` restores or prunes, ``isolate`` sets or removes, and
``place -o wide`` proposes.

The plain line is the contract ``<node> <key> <value>`` (set) or ``<node> <key>-`` (removed), the
same words ``kubectl label`` takes after the node name.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpulabel.model.cluster import LabelWrite
from gpulabel.model.vocabulary import owner_of

__all__ = ["LabelChange"]


@dataclass(frozen=True, slots=True)
class LabelChange:
    """``key`` on ``node`` goes from ``previous`` to ``value``; ``None`` means absent (removed)."""

    node: str
    key: str
    value: str | None
    previous: str | None
    changed_by: LabelWrite | None = None  # who last wrote ``previous``, from managedFields

    @property
    def removes(self) -> bool:
        return self.value is None

    def arg(self) -> str:
        """The ``kubectl label`` argument: ``key=value`` or ``key-``."""
        return f"{self.key}-" if self.value is None else f"{self.key}={self.value}"

    def line(self) -> str:
        return f"{self.node} {self.key}-" if self.value is None else f"{self.node} {self.key} {self.value}"

    @property
    def owner(self) -> str:
        """Who writes this key (docs/nfd.md); a hand edit of another owner's key does not last."""
        return owner_of(self.key)

    def explanation(self) -> str:
        if self.previous is None:
            return "was absent"
        was = f"was {self.previous}"
        if self.changed_by is None:
            return was
        when = f" at {self.changed_by.time}" if self.changed_by.time else ""
        return f"{was}, set by {self.changed_by.manager}{when}"
