"""The table of known operand failure lines (``signatures.toml``), as data.

Each :class:`Signature` says which operand's pod prints it (``*``: any), where
it is seen (a container's log or an Event), the pattern searched in each line
(case-insensitively; one or several alternatives), the cause in a sentence, the
fix, and where upstream the message comes from (one entry per wording: file,
function and releases).
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
    sources: tuple[str, ...]

    @property
    def source(self) -> str:
        """Every source in one line (JSON ``signature_source``)."""
        return "; ".join(self.sources)

    def applies_to(self, operand: str, where: str) -> bool:
        return self.where == where and self.operand in ("*", operand)

    def found_in(self, line: str) -> bool:
        return self.pattern.search(line) is not None


def _strings(row: dict[str, object], key: str, where: str) -> tuple[str, ...]:
    """A key that holds one string or a list of them, none empty."""
    value = row.get(key)
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(v, str) and v.strip() for v in items):
        raise ValueError(f"{where}: {key} missing or empty")
    return tuple(str(v) for v in items)


def _load() -> tuple[Signature, ...]:
    from gpulabel.model.operands import CATALOGUE

    text = resources.files("gpulabel.model").joinpath("signatures.toml").read_text(encoding="utf-8")
    rows = tomllib.loads(text)["signature"]
    out: list[Signature] = []
    for i, row in enumerate(rows):
        where = f"signatures.toml: signature[{i}]"
        for key in ("id", "operand", "where", "cause", "fix"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise ValueError(f"{where}: {key} missing or empty")
        patterns, sources = _strings(row, "pattern", where), _strings(row, "source", where)
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
                re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE),
                row["cause"],
                row["fix"],
                sources,
            )
        )
    return tuple(out)


SIGNATURES: tuple[Signature, ...] = _load()


def signature_named(name: str) -> Signature:
    for s in SIGNATURES:
        if s.id == name:
            return s
    raise KeyError(name)
