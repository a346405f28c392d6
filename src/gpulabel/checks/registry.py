"""The registry of read-only checks that ``check``, ``report`` and their own commands run.

Each check is one definition (:class:`~gpulabel.checks.definition.Check`, in its
own module under :mod:`gpulabel.checks.builtin`): what it reads, its full run,
its reasons, its caveats and its pieces for the monitor's incremental evaluator.
When the input holds no object of a kind it ``requires`` (a nodes-only
snapshot), the check is *skipped*, which is neither OK nor a finding. Options
are one plain dataclass (:class:`~gpulabel.checks.definition.CheckOptions`),
validated when built: the CLI turns flags into it, and nothing below the CLI
knows about argparse.

To add a check: one module defining its ``Check`` (see ``docs/architecture.md``),
and its row in :data:`CHECKS`; or, without changing what anyone else runs, a
:class:`Registry` of your own (``BUILTIN.with_check(c)``) passed in as
``CheckOptions.registry``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpulabel.checks.builtin import audit, capacity, hazards, health, mig, nfd, operands, pending, sharing, upgrade
from gpulabel.checks.definition import DEFAULT_STUCK_AFTER, Check, CheckOptions, Registry, skip_reason
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Result
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


def run_check(check: Check | str, state: ClusterState, opts: CheckOptions) -> Result:
    """One check's graded result, or a skipped result when its inputs are absent."""
    c = opts.registry.named(check) if isinstance(check, str) else check
    why = skip_reason(c, state)
    if why:
        return Result(c.name, skipped=why)
    return c.result(state, opts)


def run_checks(state: ClusterState, opts: CheckOptions, checks: Sequence[Check] | None = None) -> Result:
    """Every check of ``opts.registry`` (or ``checks``) over ``state``: one ``check`` result whose parts are
    the checks' results."""
    parts = tuple(run_check(c, state, opts) for c in (opts.registry if checks is None else checks))
    return Result("check", tuple(f for p in parts for f in p.findings), parts=parts, graded=True)
