"""The read-only checks that ``gpulabel check`` and ``report`` run together, with typed options.

Each check names the kinds of object it reads, so ``check`` LISTs the union
once and every check runs on the same snapshot of the cluster. Options are
plain dataclasses, validated when they are built: the CLI turns flags into
them, and nothing below the CLI knows about argparse.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from gpulabel.errors import InputError
from gpulabel.k8s.dra.objects import DRA_KINDS
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Finding

__all__ = ["CHECKS", "Check", "CheckOptions", "known_operands", "run_checks"]


def known_operands(names: Iterable[str], where: str = "--disabled") -> tuple[str, ...]:
    """``names`` if each is an operand of the catalogue; otherwise an :class:`InputError` naming the first unknown."""
    from gpulabel.checks.operands import CATALOGUE

    names = tuple(names)
    unknown = [n for n in names if n not in CATALOGUE]
    if unknown:
        raise InputError(where, f"unknown operand {unknown[0]!r}; known: {', '.join(CATALOGUE)}")
    return names


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """What the checks can be told: ``strict`` (audit), ``disabled`` operands, the pods' ``namespace``."""

    strict: bool = False
    disabled: tuple[str, ...] = field(default=())
    namespace: str | None = None

    def __post_init__(self) -> None:
        known_operands(self.disabled)


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


CHECKS: tuple[Check, ...] = (
    Check("audit", ("Node",), _audit),
    Check("operands", ("Node", "DaemonSet", "ClusterPolicy", "Pod"), _operands),
    Check("pending", ("Node", "Pod", *DRA_KINDS), _pending),
    Check("hazards", ("Node", "Pod"), _hazards),
)


def run_checks(state: ClusterState, opts: CheckOptions) -> Sequence[tuple[str, list[Finding]]]:
    return [(c.name, c.run(state, opts)) for c in CHECKS]
