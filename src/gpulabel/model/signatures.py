"""The table of known operand failure lines (``signatures.toml``), as data.

Each :class:`Signature` says which operand's pod prints it (``*``: any), where
it is seen (a container's log or an Event), the pattern searched in each line,
the cause in a sentence, the fix, and where upstream the message comes from.
The matcher is :mod:`gpulabel.checks.explain.evidence`; the rows and their real lines
are tested in ``tests/unit/test_signatures.py``.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources

__all__ = ["SIGNATURES", "Signature", "signature_named"]

_ID = re.compile(r"^[a-z][a-z0-9-]{1,62}$")
_WHERE = ("log", "event")


@dataclass(frozen=True, slots=True)
class Signature:
    id: str
    operand: str  # a catalogue operand, or "*"
    where: str  # log | event
    pattern: re.Pattern[str]
    cause: str
    fix: str
    source: str

    def applies_to(self, operand: str, where: str) -> bool:
        return self.where == where and self.operand in ("*", operand)

    def found_in(self, line: str) -> bool:
        return self.pattern.search(line) is not None


def _load() -> tuple[Signature, ...]:
    from gpulabel.model.operands import CATALOGUE

    text = resources.files("gpulabel.model").joinpath("signatures.toml").read_text(encoding="utf-8")
    rows = tomllib.loads(text)["signature"]
    out: list[Signature] = []
    for i, row in enumerate(rows):
        where = f"signatures.toml: signature[{i}]"
        for key in ("id", "operand", "where", "pattern", "cause", "fix", "source"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise ValueError(f"{where}: {key} missing or empty")
        if not _ID.match(row["id"]) or any(s.id == row["id"] for s in out):
            raise ValueError(f"{where}: id {row['id']!r} is not a unique lower-case word")
        if row["operand"] != "*" and row["operand"] not in CATALOGUE:
            raise ValueError(f"{where}: operand {row['operand']!r} is not in operands.toml")
        if row["where"] not in _WHERE:
            raise ValueError(f"{where}: where must be one of {', '.join(_WHERE)}")
        out.append(
            Signature(
                row["id"],
                row["operand"],
                row["where"],
                re.compile(row["pattern"]),
                row["cause"],
                row["fix"],
                row["source"],
            )
        )
    return tuple(out)


SIGNATURES: tuple[Signature, ...] = _load()


def signature_named(name: str) -> Signature:
    for s in SIGNATURES:
        if s.id == name:
            return s
    raise KeyError(name)
