"""The read-only checks as commands: ``check``, ``audit``, ``operands``, ``pending``, ``hazards`` and the GPU stack.

Their options are one :class:`~gpulabel.checks.registry.CheckOptions`, made
here from the flags' text (:func:`check_options`: durations, times and
operand names checked before anything is read). Each function loads what its
check reads, once, and returns the check runner's result with its exit code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from gpulabel.app.session import Outcome, Session
from gpulabel.checks.registry import CHECKS, CheckOptions, check_named, run_check, run_checks
from gpulabel.errors import InputError
from gpulabel.model.operands import known_operands

__all__ = [
    "check_options",
    "parse_duration",
    "run_all",
    "run_audit",
    "run_named",
    "run_operands",
    "run_pending",
]

_DURATION = re.compile(r"(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?", re.ASCII)


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


def check_options(
    *,
    strict: bool = False,
    disabled: Iterable[str] = (),
    namespace: str | None = None,
    per_node: bool = False,
    stuck_after: str | None = None,
    at: str | None = None,
    nfd_config: str | None = None,
) -> CheckOptions:
    """The check options from the flags' text: ``--disabled``, ``--stuck-after`` (``30m``), ``--at`` (RFC 3339),
    ``--nfd-config`` (nfd-master's configuration file, read here)."""
    from gpulabel.app.nfd import load_nfd_config
    from gpulabel.model.gpustack import parse_time

    disabled = known_operands(disabled)  # checked first: the first bad flag is the one named
    opts = CheckOptions(
        strict=strict,
        disabled=disabled,
        namespace=namespace,
        per_node=per_node,
        stuck_after=parse_duration(stuck_after or "30m"),
        nfd_config=load_nfd_config(nfd_config),
    )
    if at:
        when = parse_time(at)
        if when is None:
            raise InputError("--at", f"{at!r} is not an RFC 3339 time such as 2026-11-30T04:00:00Z")
        opts = replace(opts, now=when)
    return opts


def run_named(session: Session, name: str, opts: CheckOptions) -> Outcome:
    """One registered check over the kinds it reads; exit 1 if it finds anything."""
    check = check_named(name)
    return Outcome.of_findings(run_check(check, session.state(check.kinds), opts))


def run_audit(session: Session, opts: CheckOptions) -> Outcome:
    """``audit``: the node labels; where NodeFeatures are in the input, NodeFeatureRule drift too
    (``check`` runs that as its own ``nfd`` check)."""
    from gpulabel.k8s.nfd.objects import NFD_KINDS

    state = session.state(["Node", *NFD_KINDS])
    result = run_check("audit", state, opts)
    if state.nfd.nodefeatures:
        result = replace(result, findings=result.findings + run_check("nfd", state, opts).findings)
    return Outcome.of_findings(result)


def run_all(session: Session, opts: CheckOptions) -> Outcome:
    """Every registered check over one load of the union of their kinds (``check``)."""
    kinds = sorted({k for c in CHECKS for k in c.kinds})
    return Outcome.of_findings(run_checks(session.state(kinds), opts))


def run_operands(session: Session, opts: CheckOptions) -> Outcome:
    """The operands check; live, only the operand DaemonSets' pods are listed (by selector), not every pod."""
    from gpulabel.checks.operands import operand_of_daemonset

    if session.source.offline:
        state = session.state(["Node", "DaemonSet", "ClusterPolicy", "Pod"])
    else:
        from gpulabel.cluster.live import with_daemonset_pods

        state = session.state(["Node", "DaemonSet", "ClusterPolicy"])
        operand_sets = [ds for ds in state.daemonsets if operand_of_daemonset(ds)]
        state = with_daemonset_pods(session.client(), state, operand_sets)
    return Outcome.of_findings(run_check("operands", state, opts))


def run_pending(session: Session, opts: CheckOptions, *, explain: bool = False) -> Outcome:
    """Why each Pending pod fits no node; exit 1 if any pod is Pending. Live, the server filters on the phase.

    ``explain`` (wide and structured output) also reads the NodeFeatureRules behind a selected NFD label.
    """
    from gpulabel.k8s.dra.objects import DRA_KINDS
    from gpulabel.k8s.nfd.objects import NFD_KINDS

    kinds = ["Node", "Pod", *DRA_KINDS, *(NFD_KINDS if explain else ())]
    state = session.state(kinds, pod_field_selector="status.phase=Pending")
    result = run_check("pending", state, opts)
    return Outcome(result, 1 if result.counts.get("pods") else 0)
