"""Every reason a check can give, gathered from the checks' own reason tables.

Each check keeps its reasons next to the code that gives them (``REASONS`` in audit, operands,
placement, pending, capacity, mig, sharing, upgrade, dra, nfdrules, health, managed, queues,
admission, stack, runtime, unrequested, cudaskew and operatorcrs;
``STRICT_REASONS`` in audit). This module only collects them, in the order
``check`` runs the checks, and renders the one table of docs/checks.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpulabel.checks.admission import rules as admission
from gpulabel.checks.audit import rules as audit
from gpulabel.checks.capacity import rules as capacity
from gpulabel.checks.cudaskew import rules as cudaskew
from gpulabel.checks.dra import rules as dra
from gpulabel.checks.health import rules as health
from gpulabel.checks.managed import rules as managed
from gpulabel.checks.mig import rules as mig
from gpulabel.checks.nfd import rules as nfdrules
from gpulabel.checks.operands import rules as operands
from gpulabel.checks.operatorcrs import rules as operatorcrs
from gpulabel.checks.pending import autoscale
from gpulabel.checks.pending import rules as pending
from gpulabel.checks.placement import fit as placement
from gpulabel.checks.queues import rules as queues
from gpulabel.checks.runtime import rules as runtime
from gpulabel.checks.sharing import rules as sharing
from gpulabel.checks.stack import rules as stack
from gpulabel.checks.unrequested import rules as unrequested
from gpulabel.checks.upgrade import rules as upgrade
from gpulabel.model.severity import Reason

__all__ = ["ReasonRow", "catalogue", "markdown_table"]


@dataclass(frozen=True, slots=True)
class ReasonRow:
    """One reason word of one or more commands: its severity and what it means."""

    commands: tuple[str, ...]
    reason: str
    severity: str
    meaning: str
    flag: str = ""  # the option a reason needs, e.g. --strict
    form: str = "{}"  # how the reason appears in a line

    def shown(self) -> str:
        return f"`{self.form.format(self.reason)}`" + (f" ({self.flag})" if self.flag else "")


def _rows(commands: tuple[str, ...], table: Mapping[str, Reason], flag: str = "", form: str = "{}") -> list[ReasonRow]:
    return [ReasonRow(commands, reason, r.severity, r.text, flag, form) for reason, r in table.items()]


def catalogue() -> tuple[ReasonRow, ...]:
    """Every reason, check by check, in the order of each check's own table."""
    return (
        *_rows(("audit",), audit.REASONS),
        *_rows(("audit",), audit.STRICT_REASONS, "--strict"),
        *_rows(("operands",), operands.REASONS),
        *_rows(("place", "pending", "hazards"), placement.REASONS),
        *_rows(("pending",), pending.REASONS, "--per-node"),
        *_rows(("pending",), autoscale.REASONS, "with NodePools"),
        # a claim finding is graded as its reason word, claim; the DRA reason is its argument
        *_rows(
            ("place", "pending"),
            {k: Reason(placement.REASONS["claim"].severity, v) for k, v in dra.REASONS.items()},
            form="claim <claim>/<request> {}",
        ),
        *_rows(("capacity",), capacity.REASONS),
        *_rows(("mig",), mig.REASONS),
        *_rows(("sharing",), sharing.REASONS),
        *_rows(("upgrade",), upgrade.REASONS),
        *_rows(("nfd",), nfdrules.REASONS),
        *_rows(("health",), health.REASONS),
        *_rows(("managed",), managed.REASONS),
        *_rows(("queues",), queues.REASONS),
        *_rows(("admission",), admission.REASONS),
        *_rows(("stack",), stack.REASONS),
        *_rows(("runtime",), runtime.REASONS),
        *_rows(("unrequested",), unrequested.REASONS),
        *_rows(("cudaskew",), cudaskew.REASONS),
        *_rows(("operatorcrs",), operatorcrs.REASONS),
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table(reasons: tuple[ReasonRow, ...]) -> str:
    """The table of docs/checks.md: one row per command group and reason, with its severity."""
    lines = ["| check | reason | severity | meaning |", "|---|---|---|---|"]
    for r in reasons:
        lines.append(f"| {', '.join(r.commands)} | {r.shown()} | {r.severity} | {_cell(r.meaning)} |")
    return "\n".join(lines) + "\n"
