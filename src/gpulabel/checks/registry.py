"""The read-only checks that ``gpulabel check`` and ``report`` run together, with typed options.

Each check names the kinds of object it reads, so ``check`` LISTs the union
once and every check runs on the same snapshot of the cluster. Options are
plain dataclasses, validated when they are built: the CLI turns flags into
them, and nothing below the CLI knows about argparse.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gpulabel.errors import InputError
from gpulabel.k8s.dra.objects import DRA_KINDS
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Finding

__all__ = [
    "CHECKS",
    "DEFAULT_STUCK_AFTER",
    "NODE_ONLY",
    "Check",
    "CheckOptions",
    "check_named",
    "known_operands",
    "parse_duration",
    "run_checks",
]


def known_operands(names: Iterable[str], where: str = "--disabled") -> tuple[str, ...]:
    """``names`` if each is an operand of the catalogue; otherwise an :class:`InputError` naming the first unknown."""
    from gpulabel.checks.operands import CATALOGUE

    names = tuple(names)
    unknown = [n for n in names if n not in CATALOGUE]
    if unknown:
        raise InputError(where, f"unknown operand {unknown[0]!r}; known: {', '.join(CATALOGUE)}")
    return names


_DURATION = re.compile(r"(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?", re.ASCII)
DEFAULT_STUCK_AFTER = 1800.0


def parse_duration(text: str, where: str = "--stuck-after") -> float:
    """``30m``, ``1h30m``, ``90s`` or a number of seconds; an :class:`InputError` otherwise."""
    text = text.strip()
    if text.isdigit():
        return float(text)
    m = _DURATION.fullmatch(text)
    if not text or m is None or not any(m.groups()):
        raise InputError(where, f"{text!r} is not a duration such as 30m, 1h30m or 90s")
    h, mins, secs = (int(g or 0) for g in m.groups())
    return float(h * 3600 + mins * 60 + secs)


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """What the checks can be told.

    ``strict`` (audit), ``disabled`` operands, the pods' ``namespace``,
    ``stuck_after`` (seconds a MIG or driver-upgrade state may last) and
    ``now`` (the time ages are measured at; default: when the options are made).
    """

    strict: bool = False
    disabled: tuple[str, ...] = field(default=())
    namespace: str | None = None
    stuck_after: float = DEFAULT_STUCK_AFTER
    now: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __post_init__(self) -> None:
        known_operands(self.disabled)
        if self.stuck_after < 0:
            raise InputError("--stuck-after", "must not be negative")


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    kinds: tuple[str, ...]
    run: Callable[[ClusterState, CheckOptions], list[Finding]]


def _audit(state: ClusterState, opts: CheckOptions) -> list[Finding]:
    from gpulabel.checks.audit import audit

    return audit(state, strict=opts.strict)


def _operands(state: ClusterState, opts: CheckOptions) -> list[Finding]:
    from gpulabel.checks.operands import check_operands

    return check_operands(state, opts.disabled).findings


def _pending(state: ClusterState, opts: CheckOptions) -> list[Finding]:
    from gpulabel.checks.placement import pending

    return pending(state, opts.namespace)


def _hazards(state: ClusterState, opts: CheckOptions) -> list[Finding]:
    from gpulabel.checks.placement import hazards

    return hazards(state, opts.namespace)


def _capacity(state: ClusterState, opts: CheckOptions) -> list[Finding]:
    from gpulabel.checks.capacity import capacity

    return capacity(state, opts.disabled)


def _mig(state: ClusterState, opts: CheckOptions) -> list[Finding]:
    from gpulabel.checks.mig import mig

    return mig(state, opts.now, opts.stuck_after)


def _sharing(state: ClusterState, opts: CheckOptions) -> list[Finding]:
    from gpulabel.checks.sharing import sharing

    return sharing(state)


def _upgrade(state: ClusterState, opts: CheckOptions) -> list[Finding]:
    from gpulabel.checks.upgrade import upgrade

    return upgrade(state, opts.now, opts.stuck_after)


# ClusterPolicy is optional for every check that names it: without one, what it would say is skipped.
CHECKS: tuple[Check, ...] = (
    Check("audit", ("Node",), _audit),
    Check("operands", ("Node", "DaemonSet", "ClusterPolicy", "Pod"), _operands),
    Check("pending", ("Node", "Pod", *DRA_KINDS), _pending),
    Check("hazards", ("Node", "Pod"), _hazards),
    Check("capacity", ("Node", "ClusterPolicy"), _capacity),
    Check("mig", ("Node", "ClusterPolicy"), _mig),
    Check("sharing", ("Node",), _sharing),
    Check("upgrade", ("Node",), _upgrade),
)
NODE_ONLY = ("Node", "ClusterPolicy")  # what the controller's node LIST can feed


def check_named(name: str) -> Check:
    return next(c for c in CHECKS if c.name == name)


def run_checks(state: ClusterState, opts: CheckOptions) -> Sequence[tuple[str, list[Finding]]]:
    return [(c.name, c.run(state, opts)) for c in CHECKS]
