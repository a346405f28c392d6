"""The registry of read-only checks that ``check``, ``report`` and their own commands run, with typed options.

A :class:`Check` names the kinds of object it reads (``check`` LISTs the
union once, so every check runs on the same picture of the cluster) and the
kinds it cannot do without (``requires``): when the input holds none of
those, for instance a nodes-only snapshot, the check is *skipped*, which is
neither OK nor a finding. Each check returns a :class:`Result` (findings plus
optional detail sections), which :mod:`gpulabel.render` turns into any output
format. Options are one plain dataclass, validated when built: the CLI turns
flags into it, and nothing below the CLI knows about argparse.

To add a check: write a function ``(ClusterState, CheckOptions) -> Result``
and :func:`register` a :class:`Check` for it: ``check``, ``report`` and the
controller's metrics run it from then on; its own command can be a two-liner
over :func:`gpulabel.app.checks.run_named` (see ``docs/architecture.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gpulabel.errors import InputError
from gpulabel.k8s.dra.objects import DRA_KINDS
from gpulabel.k8s.nfd.master import NfdConfig
from gpulabel.k8s.nfd.objects import NFD_KINDS
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Result
from gpulabel.model.operands import known_operands

__all__ = [
    "CHECKS",
    "DEFAULT_STUCK_AFTER",
    "NODE_ONLY",
    "Check",
    "CheckOptions",
    "check_named",
    "register",
    "run_check",
    "run_checks",
    "skip_reason",
]


DEFAULT_STUCK_AFTER = 1800.0


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """What the checks can be told.

    ``strict`` (audit), ``disabled`` operands, the pods' ``namespace``,
    ``per_node`` (pending: one finding per pod and node instead of one per pod
    and reason), ``stuck_after`` (seconds a MIG or driver-upgrade state may
    last) and ``now`` (the time ages are measured at; default: when the
    options are made).
    """

    strict: bool = False
    disabled: tuple[str, ...] = field(default=())
    namespace: str | None = None
    per_node: bool = False
    stuck_after: float = DEFAULT_STUCK_AFTER
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    nfd_config: NfdConfig = field(default_factory=NfdConfig)  # nfd-master's configuration (--nfd-config)

    def __post_init__(self) -> None:
        known_operands(self.disabled)
        if self.stuck_after < 0:
            raise InputError("--stuck-after", "must not be negative")


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    kinds: tuple[str, ...]  # what it reads
    requires: tuple[str, ...]  # without any object of these kinds in the input, it is skipped
    run: Callable[[ClusterState, CheckOptions], Result]
    help: str = ""


_PLURAL = {"ClusterPolicy": "clusterpolicies"}


def skip_reason(check: Check, state: ClusterState) -> str:
    """Why ``check`` cannot run on ``state`` (``"no pods in the input"``), or ``""`` if it can."""
    missing = [_PLURAL.get(k, k.lower() + "s") for k in check.requires if k not in state.kinds]
    return f"no {' or '.join(missing)} in the input" if missing else ""


def _audit(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.audit import audit

    return Result("audit", tuple(audit(state, strict=opts.strict)))


def _operands(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.operands import operands_result

    return operands_result(state, opts.disabled)


def _pending(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.pending import pending_result

    return pending_result(state, opts.namespace, per_node=opts.per_node, nfd_config=opts.nfd_config)


def _hazards(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.pending import hazards

    return Result("hazards", tuple(hazards(state, opts.namespace)))


def _capacity(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.capacity import capacity

    return Result("capacity", tuple(capacity(state, opts.disabled)))


def _mig(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.mig import mig

    return Result("mig", tuple(mig(state, opts.now, opts.stuck_after)))


def _sharing(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.sharing import sharing

    return Result("sharing", tuple(sharing(state)))


def _nfd(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.nfdrules import check

    return check(state, opts.nfd_config)


def _upgrade(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.upgrade import upgrade

    return Result("upgrade", tuple(upgrade(state, opts.now, opts.stuck_after)))


# ClusterPolicy is optional for every check that names it: without one, what it would say is skipped.
CHECKS: list[Check] = [
    Check("audit", ("Node",), ("Node",), _audit, "GPU labels of every nvidia.com/gpu.present=true node"),
    Check(
        "operands",
        ("Node", "DaemonSet", "ClusterPolicy", "Pod"),
        ("Node", "DaemonSet", "Pod"),
        _operands,
        "operands missing, not ready, out of order or unexpected, per node",
    ),
    Check(
        "pending",
        ("Node", "Pod", *DRA_KINDS, *NFD_KINDS),
        ("Node", "Pod"),
        _pending,
        "why each Pending pod fits no node",
    ),
    Check("hazards", ("Node", "Pod"), ("Node", "Pod"), _hazards, "running pods whose node no longer matches"),
    Check("capacity", ("Node", "ClusterPolicy"), ("Node",), _capacity, "GPUs advertised against the labels"),
    Check("mig", ("Node", "ClusterPolicy"), ("Node",), _mig, "MIG configuration and its state"),
    Check("sharing", ("Node",), ("Node",), _sharing, "time-slicing and MPS labels"),
    Check("upgrade", ("Node",), ("Node",), _upgrade, "driver upgrades stuck or failed"),
    Check(
        "nfd",
        ("Node", *NFD_KINDS),
        ("Node", "NodeFeature"),
        _nfd,
        "labels NodeFeatureRules and NodeFeatures should set that nodes lack, unexplained NFD labels, failing rules",
    ),
]
NODE_ONLY = ("Node", "ClusterPolicy")  # what the controller's node LIST can feed


def register(check: Check) -> Check:
    """Add ``check`` to what ``check`` and ``report`` run (after the built-in ones); returns it."""
    if any(c.name == check.name for c in CHECKS):
        raise ValueError(f"check {check.name!r} is already registered")
    CHECKS.append(check)
    return check


def check_named(name: str) -> Check:
    for c in CHECKS:
        if c.name == name:
            return c
    raise KeyError(name)


def run_check(check: Check | str, state: ClusterState, opts: CheckOptions) -> Result:
    """One check's result, or a skipped result when its inputs are absent."""
    c = check_named(check) if isinstance(check, str) else check
    why = skip_reason(c, state)
    return Result(c.name, skipped=why) if why else c.run(state, opts)


def run_checks(state: ClusterState, opts: CheckOptions, checks: Sequence[Check] | None = None) -> Result:
    """Every registered check over ``state``: one ``check`` result whose parts are the checks' results."""
    parts = tuple(run_check(c, state, opts) for c in (CHECKS if checks is None else checks))
    return Result("check", tuple(f for p in parts for f in p.findings), parts=parts)
