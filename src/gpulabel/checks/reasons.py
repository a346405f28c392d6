"""Every reason a check can give, gathered from the checks' own reason tables.

Each check keeps its reasons next to the code that gives them (``REASONS`` in
audit, operands, placement, pending, capacity, mig, sharing, upgrade, dra and nfdrules;
``STRICT_REASONS`` in audit). This module only collects them, in the order
``check`` runs the checks, and renders the one table of docs/checks.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpulabel.checks import audit, capacity, dra, mig, nfdrules, operands, pending, placement, sharing, upgrade

__all__ = ["Reason", "catalogue", "markdown_table"]


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason word of one or more commands, and what it means."""

    commands: tuple[str, ...]
    reason: str
    meaning: str
    flag: str = ""  # the option a reason needs, e.g. --strict
    form: str = "{}"  # how the reason appears in a line

    def shown(self) -> str:
        return f"`{self.form.format(self.reason)}`" + (f" ({self.flag})" if self.flag else "")


def _rows(commands: tuple[str, ...], table: Mapping[str, str], flag: str = "", form: str = "{}") -> list[Reason]:
    return [Reason(commands, reason, meaning, flag, form) for reason, meaning in table.items()]


def catalogue() -> tuple[Reason, ...]:
    """Every reason, check by check, in the order of each check's own table."""
    return (
        *_rows(("audit",), audit.REASONS),
        *_rows(("audit",), audit.STRICT_REASONS, "--strict"),
        *_rows(("operands",), operands.REASONS),
        *_rows(("place", "pending", "hazards"), placement.REASONS),
        *_rows(("pending",), pending.REASONS, "--per-node"),
        *_rows(("place", "pending"), dra.REASONS, form="claim <claim>/<request> {}"),
        *_rows(("capacity",), capacity.REASONS),
        *_rows(("mig",), mig.REASONS),
        *_rows(("sharing",), sharing.REASONS),
        *_rows(("upgrade",), upgrade.REASONS),
        *_rows(("nfd",), nfdrules.REASONS),
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table(reasons: tuple[Reason, ...]) -> str:
    """The table of docs/checks.md: one row per command group and reason."""
    lines = ["| check | reason | meaning |", "|---|---|---|"]
    for r in reasons:
        lines.append(f"| {', '.join(r.commands)} | {r.shown()} | {_cell(r.meaning)} |")
    return "\n".join(lines) + "\n"
