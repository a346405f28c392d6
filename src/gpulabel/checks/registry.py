"""The registry of read-only checks that ``check``, ``report`` and their own commands run: the one place that
names every check.

Each check is one folder, ``gpulabel.checks.<name>``, whose ``check`` module defines it
(:class:`~gpulabel.checks.engine.definition.Check`): what it reads, its full run, its reasons, its caveats
and its pieces for the monitor's incremental evaluator. When the input holds no object of a kind it
``requires`` (a nodes-only snapshot), the check is *skipped*, which is neither OK nor a finding. Options
are one plain dataclass (:class:`~gpulabel.checks.engine.definition.CheckOptions`) that always says which
checks run: ``BUILTIN.options(...)`` for gpulabel's own. The engine names no check; this module does.

To add a check: one folder defining its ``Check`` (see ``docs/architecture.md``), and its import and row in
:data:`CHECKS` here; or, without changing what anyone else runs, a :class:`Registry` of your own
(``BUILTIN.with_check(c)``) whose ``options()`` run it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpulabel.checks.admission import check as admission
from gpulabel.checks.audit import check as audit
from gpulabel.checks.capacity import check as capacity
from gpulabel.checks.cudaskew import check as cudaskew
from gpulabel.checks.engine.definition import (
    DEFAULT_STUCK_AFTER,
    Check,
    CheckOptions,
    Registry,
    run_check,
    run_checks,
    skip_reason,
)
from gpulabel.checks.hazards import check as hazards
from gpulabel.checks.health import check as health
from gpulabel.checks.managed import check as managed
from gpulabel.checks.mig import check as mig
from gpulabel.checks.nfd import check as nfd
from gpulabel.checks.operands import check as operands
from gpulabel.checks.operatorcrs import check as operatorcrs
from gpulabel.checks.pending import check as pending
from gpulabel.checks.queues import check as queues
from gpulabel.checks.runtime import check as runtime
from gpulabel.checks.sharing import check as sharing
from gpulabel.checks.stack import check as stack
from gpulabel.checks.unrequested import check as unrequested
from gpulabel.checks.upgrade import check as upgrade
from gpulabel.model.severity import SEVERITIES, Reason

__all__ = [
    "BUILTIN",
    "CHECKS",
    "DEFAULT_STUCK_AFTER",
    "NODE_ONLY",
    "Check",
    "CheckOptions",
    "Registry",
    "check_named",
    "reason_table",
    "run_check",
    "run_checks",
    "severity_help",
    "skip_reason",
]

# gpulabel's own checks, in the order they run and are shown. ClusterPolicy is optional for every check that
# names it: without one, what it would say is skipped.
CHECKS: tuple[Check, ...] = (
    audit.CHECK,
    operands.CHECK,
    pending.CHECK,
    hazards.CHECK,
    capacity.CHECK,
    mig.CHECK,
    sharing.CHECK,
    upgrade.CHECK,
    nfd.CHECK,
    health.CHECK,
    managed.CHECK,
    queues.CHECK,
    admission.CHECK,
    stack.CHECK,
    runtime.CHECK,
    unrequested.CHECK,
    cudaskew.CHECK,
    operatorcrs.CHECK,
)
BUILTIN = Registry(CHECKS)  # gpulabel's own checks, in order
NODE_ONLY = ("Node", "ClusterPolicy")  # what the controller's node LIST can feed


def check_named(name: str, registry: Registry | None = None) -> Check:
    return (registry or BUILTIN).named(name)


def reason_table(check: Check | str, registry: Registry | None = None) -> Mapping[str, Reason]:
    """The check's reasons, each with its severity and meaning."""
    return (check_named(check, registry) if isinstance(check, str) else check).reasons()


def severity_help(checks: Sequence[Check] | None = None) -> str:
    """Each severity's reasons, one line per severity and check: what ``check --help`` prints."""
    lines = []
    for level in SEVERITIES:
        for c in CHECKS if checks is None else checks:
            names = [r for r, row in c.reasons().items() if row.severity == level]
            if names:
                lines.append(f"  {level:<7} {c.name}: {' '.join(names)}")
    return "\n".join(lines)
