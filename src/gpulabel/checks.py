"""The read-only checks that ``gpulabel check`` runs together.

Each check names the kinds of object it reads, so ``check`` LISTs the union
once and every check runs on the same snapshot of the cluster.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpulabel.findings import Finding
from gpulabel.model import ClusterState

__all__ = ["CHECKS", "Check", "run_checks"]


@dataclass(frozen=True)
class Check:
    name: str
    kinds: tuple[str, ...]
    run: Callable[[ClusterState, argparse.Namespace], list[Finding]]


def _audit(state: ClusterState, args: argparse.Namespace) -> list[Finding]:
    from gpulabel.audit import audit

    return audit(state, strict=bool(getattr(args, "strict", False)))


def _operands(state: ClusterState, args: argparse.Namespace) -> list[Finding]:
    from gpulabel.operands import check_operands

    return check_operands(state, getattr(args, "disabled", None) or ()).findings


def _pending(state: ClusterState, args: argparse.Namespace) -> list[Finding]:
    from gpulabel.placement import pending

    return pending(state, getattr(args, "namespace", None))


def _hazards(state: ClusterState, args: argparse.Namespace) -> list[Finding]:
    from gpulabel.placement import hazards

    return hazards(state, getattr(args, "namespace", None))


CHECKS: tuple[Check, ...] = (
    Check("audit", ("Node",), _audit),
    Check("operands", ("Node", "DaemonSet", "ClusterPolicy", "Pod"), _operands),
    Check("pending", ("Node", "Pod"), _pending),
    Check("hazards", ("Node", "Pod"), _hazards),
)


def run_checks(state: ClusterState, args: argparse.Namespace) -> Sequence[tuple[str, list[Finding]]]:
    return [(c.name, c.run(state, args)) for c in CHECKS]
