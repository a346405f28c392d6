"""The registry of read-only checks that ``check``, ``report`` and their own commands run, with typed options.

A :class:`Check` names the kinds of object it reads (``check`` LISTs the
union once, so every check runs on the same picture of the cluster) and the
kinds it cannot do without (``requires``): when the input holds none of
those, for instance a nodes-only snapshot, the check is *skipped*, which is
neither OK nor a finding. Each check returns a :class:`Result` (findings plus
optional detail sections), which :mod:`gpulabel.render` turns into any output
format. Options are one plain dataclass, validated when built: the CLI turns
flags into it, and nothing below the CLI knows about argparse.

To add a check: write a function ``(ClusterState, CheckOptions) -> Result`` and
add a :class:`Check` row for it to :data:`BUILTIN`: ``check``, ``report``, the
monitor and the controller's metrics run it from then on; its own command can be
a two-liner over :func:`gpulabel.app.checks.run_named` (see
``docs/architecture.md``). What runs is a :class:`Registry` passed in
(``CheckOptions.registry``), so a caller (a test, an extension) runs
``BUILTIN.with_check(c)`` without changing what anyone else runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from gpulabel.checks.verdict import grade
from gpulabel.errors import InputError
from gpulabel.k8s.dra.objects import DRA_KINDS
from gpulabel.k8s.nfd.master import NfdConfig
from gpulabel.k8s.nfd.objects import NFD_KINDS
from gpulabel.model.cluster import KIND, ClusterState
from gpulabel.model.findings import Result
from gpulabel.model.operands import known_operands
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
    "mig_caveats",
    "operands_caveats",
    "pending_caveats",
    "reason_table",
    "run_check",
    "run_checks",
    "severity_help",
    "skip_reason",
    "stuck_detection_caveats",
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
    all_pods: bool = False  # pending: every Pending pod, not only GPU pods
    operator_namespace: str | None = None  # operands: only DaemonSets of this namespace are the operator's
    # the checks to run (check, report, diff, explain, the monitor): gpulabel's own unless told otherwise
    registry: Registry = field(default_factory=lambda: _builtin())
    # health: condition types the config adds ("<type>" -> the status that means a problem; "None" drops one)
    health_conditions: Mapping[str, str] = field(default_factory=dict)
    health_taints: tuple[str, ...] = ()  # health: the taint keys health agents set

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
    # its reason table (reason -> severity and meaning), imported when first asked for
    reasons: Callable[[], Mapping[str, Reason]] = dict


@dataclass(frozen=True, slots=True)
class Registry:
    """The checks that ``check``, ``report``, ``diff``, ``explain``, the monitor and sync's metrics run, in
    their order: a value passed in (``CheckOptions.registry``), never a list that grows. :data:`BUILTIN` holds
    gpulabel's own; ``BUILTIN.with_check(c)`` is another registry with ``c`` after them."""

    checks: tuple[Check, ...]

    def __post_init__(self) -> None:
        names = [c.name for c in self.checks]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"check {twice[0]!r} is registered twice")

    def __iter__(self) -> Iterator[Check]:
        return iter(self.checks)

    def named(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def kinds(self) -> list[str]:
        """What the checks read, together: the kinds one load for all of them needs."""
        return sorted({k for c in self.checks for k in c.kinds})

    def with_check(self, check: Check) -> Registry:
        return Registry((*self.checks, check))


def skip_reason(check: Check, state: ClusterState) -> str:
    """Why ``check`` cannot run on ``state`` (``"no pods in the input"``), or ``""`` if it can."""
    missing = [KIND[k].resource if k in KIND else k for k in check.requires if k not in state.kinds]
    return f"no {' or '.join(missing)} in the input" if missing else ""


def _audit(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.audit import audit

    return Result("audit", tuple(audit(state, strict=opts.strict)))


def _operands(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.eviction import noexecute_findings
    from gpulabel.checks.operands import operand_of_daemonset, operands_result
    from gpulabel.checks.standalone import standalone_findings

    result = operands_result(state, opts.disabled, opts.operator_namespace)
    gated = [ds for ds in state.daemonsets if operand_of_daemonset(ds)]
    caveats = operands_caveats(bool(gated), state, opts)
    found = [*result.findings, *standalone_findings(state, gated), *noexecute_findings(state, opts.operator_namespace)]
    order = {n.name: i for i, n in enumerate(state.nodes)}
    findings = tuple(sorted(found, key=lambda f: order.get(f.node, len(order))))  # by node, each node's as found
    return replace(result, findings=findings, caveats=caveats)


def _pending(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.pending import pending_result

    result = pending_result(
        state, opts.namespace, per_node=opts.per_node, all_pods=opts.all_pods, nfd_config=opts.nfd_config
    )
    claims = any(p.phase == "Pending" and not p.node_name and p.spec.get("resourceClaims") for p in state.pods)
    caveats = pending_caveats(claims, state)
    return replace(result, caveats=caveats) if caveats else result


def _hazards(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.pending import hazards

    return Result("hazards", tuple(hazards(state, opts.namespace)))


def _capacity(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.capacity import capacity

    return Result("capacity", tuple(capacity(state, opts.disabled)))


def _mig(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.mig import mig

    return Result("mig", tuple(mig(state, opts.now, opts.stuck_after)), caveats=mig_caveats(state))


def _sharing(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.sharing import sharing

    return Result("sharing", tuple(sharing(state)))


def _nfd(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.nfdrules import check

    return check(state, opts.nfd_config)


def _upgrade(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.upgrade import upgrade

    return Result("upgrade", tuple(upgrade(state, opts.now, opts.stuck_after)), caveats=stuck_detection_caveats(state))


def stuck_detection_caveats(state: ClusterState) -> tuple[str, ...]:
    """Stuck detection reads when labels were written (managedFields); without any, it is said to be off."""
    if state.nodes and not any(n.managed_fields for n in state.nodes):
        return ("stuck detection skipped (no managedFields: capture with gpulabel snapshot or --show-managed-fields)",)
    return ()


def mig_caveats(state: ClusterState) -> tuple[str, ...]:
    """What mig could not check: stuck states without managedFields, the strategy without a ClusterPolicy."""
    caveats = stuck_detection_caveats(state)
    if "ClusterPolicy" not in state.kinds and any("nvidia.com/mig.strategy" in n.labels for n in state.nodes):
        caveats += ("strategy check skipped (no ClusterPolicy in the input)",)
    return caveats


def operands_caveats(gated: bool, state: ClusterState, opts: CheckOptions) -> tuple[str, ...]:
    """With operand DaemonSets (``gated``) but no ClusterPolicy and no --disabled, every operand counts as on."""
    if gated and "ClusterPolicy" not in state.kinds and not opts.disabled:
        return ("no ClusterPolicy in the input: every operand counts as enabled (--disabled says otherwise)",)
    return ()


def pending_caveats(claims: bool, state: ClusterState) -> tuple[str, ...]:
    """Pending pods with ResourceClaims (``claims``) in an input without DRA objects: their claims are unchecked."""
    if claims and "ResourceSlice" not in state.kinds:
        return ("claims not checked (no DRA objects in the input: resource.k8s.io/v1 not served, or not captured)",)
    return ()


def _health(state: ClusterState, opts: CheckOptions) -> Result:
    from gpulabel.checks.health import health

    found = health(state, opts.now, opts.stuck_after, opts.health_conditions, opts.health_taints)
    return Result("health", tuple(found))


def _table(module: str, *names: str) -> Callable[[], Mapping[str, Reason]]:
    def load() -> Mapping[str, Reason]:
        import importlib

        mod = importlib.import_module(f"gpulabel.checks.{module}")
        return {k: v for name in names for k, v in getattr(mod, name).items()}

    return load


def _table_of(*parts: tuple[str, str]) -> Callable[[], Mapping[str, Reason]]:
    loads = [_table(module, name) for module, name in parts]
    return lambda: {k: v for load in loads for k, v in load().items()}


# ClusterPolicy is optional for every check that names it: without one, what it would say is skipped.
CHECKS: tuple[Check, ...] = (
    Check(
        "audit",
        ("Node",),
        ("Node",),
        _audit,
        "GPU labels of every nvidia.com/gpu.present=true node",
        reasons=_table("audit", "REASONS", "STRICT_REASONS"),
    ),
    Check(
        "operands",
        ("Node", "DaemonSet", "ClusterPolicy", "Pod"),
        ("Node", "DaemonSet", "Pod"),
        _operands,
        "operands missing, not ready, out of order or unexpected, per node",
        reasons=_table("operands", "REASONS"),
    ),
    Check(
        "pending",
        ("Node", "Pod", *DRA_KINDS, *NFD_KINDS),
        ("Node", "Pod"),
        _pending,
        "why each Pending pod fits no node",
        reasons=_table_of(("placement", "REASONS"), ("pending", "REASONS")),
    ),
    Check(
        "hazards",
        ("Node", "Pod"),
        ("Node", "Pod"),
        _hazards,
        "running pods whose node no longer matches",
        reasons=_table("placement", "REASONS"),
    ),
    Check(
        "capacity",
        ("Node", "ClusterPolicy"),
        ("Node",),
        _capacity,
        "GPUs advertised against the labels",
        reasons=_table("capacity", "REASONS"),
    ),
    Check(
        "mig",
        ("Node", "ClusterPolicy"),
        ("Node",),
        _mig,
        "MIG configuration and its state",
        reasons=_table("mig", "REASONS"),
    ),
    Check(
        "sharing", ("Node",), ("Node",), _sharing, "time-slicing and MPS labels", reasons=_table("sharing", "REASONS")
    ),
    Check(
        "upgrade",
        ("Node",),
        ("Node",),
        _upgrade,
        "driver upgrades stuck or failed",
        reasons=_table("upgrade", "REASONS"),
    ),
    Check(
        "nfd",
        ("Node", *NFD_KINDS),
        ("Node", "NodeFeature"),
        _nfd,
        "labels NodeFeatureRules and NodeFeatures should set that nodes lack, unexplained NFD labels, failing rules",
        reasons=_table("nfdrules", "REASONS"),
    ),
    Check(
        "health",
        ("Node", "Pod", *DRA_KINDS),
        ("Node",),
        _health,
        "GPUs lost (capacity minus allocatable), unhealthy devices, GPU health conditions and taints",
        reasons=_table("health", "REASONS"),
    ),
)
BUILTIN = Registry(CHECKS)  # gpulabel's own checks, in order
NODE_ONLY = ("Node", "ClusterPolicy")  # what the controller's node LIST can feed


def _builtin() -> Registry:
    return BUILTIN


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
    return grade(c.run(state, opts), c.reasons())


def run_checks(state: ClusterState, opts: CheckOptions, checks: Sequence[Check] | None = None) -> Result:
    """Every check of ``opts.registry`` (or ``checks``) over ``state``: one ``check`` result whose parts are
    the checks' results."""
    parts = tuple(run_check(c, state, opts) for c in (opts.registry if checks is None else checks))
    return Result("check", tuple(f for p in parts for f in p.findings), parts=parts, graded=True)
