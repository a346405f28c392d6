"""``gpulabel sources``: who owns each label, and who last wrote it."""

from __future__ import annotations

from dataclasses import dataclass

from gpulabel.model.cluster import LabelWrite, Node
from gpulabel.model.vocabulary import nfd_owned_keys, owner_of

__all__ = ["LabelSource", "node_sources"]


@dataclass(frozen=True, slots=True)
class LabelSource:
    key: str
    value: str
    owner: str
    written_by: LabelWrite | None

    def line(self) -> str:
        parts = [f"{self.key}={self.owner}", f"value={self.value}"]
        if self.written_by is not None:
            parts.append(f"manager={self.written_by.manager}")
            if self.written_by.operation:
                parts.append(f"operation={self.written_by.operation}")
            if self.written_by.time:
                parts.append(f"time={self.written_by.time}")
        return " ".join(parts)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"key": self.key, "value": self.value, "owner": self.owner}
        if self.written_by is not None:
            out["manager"] = self.written_by.manager
            out["operation"] = self.written_by.operation
            out["time"] = self.written_by.time
        return out


def node_sources(node: Node) -> list[LabelSource]:
    """Every label of ``node``, sorted by key, with its owner and last writer."""
    nfd_keys = nfd_owned_keys(node.annotations)
    writers = node.label_writers()
    return [
        LabelSource(key, node.labels[key], owner_of(key, nfd_keys), writers.get(key)) for key in sorted(node.labels)
    ]
