"""The read-only checks as commands: ``check``, ``audit``, ``operands``, ``pending``, ``hazards`` and the GPU stack.

Their options are one :class:`~gpulabel.checks.registry.CheckOptions`, made
here from the flags' text (:func:`check_options`: durations, times and
operand names checked before anything is read). Each function loads what its
check reads, once, and returns the check runner's result with its exit code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from gpulabel.app.baseline import load_baseline
from gpulabel.app.config import Config, load_config, parse_duration
from gpulabel.app.evidence import EvidenceOptions, gather_evidence
from gpulabel.app.selected import refuse_empty
from gpulabel.app.session import Outcome, Session
from gpulabel.checks.registry import BUILTIN, DEFAULT_STUCK_AFTER, CheckOptions, Registry, run_check, run_checks
from gpulabel.errors import InputError
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding, Result, Section
from gpulabel.model.operands import known_operands
from gpulabel.model.severity import Severity

__all__ = [
    "LIVE_PODS",
    "ExplainOptions",
    "Verdict",
    "check_options",
    "judge",
    "parse_at",
    "parse_duration",
    "run_all",
    "run_audit",
    "run_explain",
    "run_named",
    "run_operands",
    "run_pending",
    "verdict_options",
]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What fails a check's run: ``fail_level`` and above, less what the ``config`` ignores and the
    ``baseline`` (a previous ``-o json``'s findings) already holds."""

    fail_level: Severity = "error"
    config: Config = field(default_factory=Config)
    baseline: Iterable[Mapping[str, object]] | None = None  # app.baseline.Baseline: read again when applied


def verdict_options(
    *, fail_level: str | None = None, config: str | None = None, baseline: str | None = None
) -> Verdict:
    """The verdict from the flags' text; the config file (``--config`` or a default location) and the
    baseline are read and checked here, before anything is read from the cluster."""
    from gpulabel.app.config import default_config_path
    from gpulabel.model.severity import parse_severity

    path = config or default_config_path()
    return Verdict(
        parse_severity(fail_level or "error"),
        load_config(path) if path else Config(),
        load_baseline(baseline) if baseline else None,
    )


def check_options(
    *,
    strict: bool = False,
    disabled: Iterable[str] = (),
    namespace: str | None = None,
    per_node: bool = False,
    stuck_after: str | None = None,
    at: str | None = None,
    nfd_config: str | None = None,
    all_pods: bool = False,
    config: Config | None = None,
) -> CheckOptions:
    """The check options from the flags' text: ``--disabled``, ``--stuck-after`` (``30m``; else the config's
    threshold), ``--at`` (RFC 3339), ``--all-pods``, ``--nfd-config`` (nfd-master's configuration file, read
    here); the config's operator namespace."""
    from gpulabel.app.nfd import load_nfd_config

    config = config or Config()
    disabled = known_operands(disabled)  # checked first: the first bad flag is the one named
    if stuck_after:
        seconds = parse_duration(stuck_after)
    else:
        seconds = DEFAULT_STUCK_AFTER if config.stuck_after is None else config.stuck_after
    opts = BUILTIN.options(
        strict=strict,
        disabled=disabled,
        namespace=namespace,
        per_node=per_node,
        stuck_after=seconds,
        all_pods=all_pods,
        operator_namespace=config.operator_namespace,
        nfd_config=load_nfd_config(nfd_config),
        health_conditions=config.health_conditions,
        health_taints=config.health_taints,
    )
    if at:
        opts = replace(opts, now=parse_at(at))
    return opts


def parse_at(at: str) -> datetime:
    """``--at``'s RFC 3339 time (the moment a snapshot's ages are judged at), or the one-line refusal."""
    from gpulabel.model.gpustack import parse_time

    when = parse_time(at)
    if when is None:
        raise InputError("--at", f"{at!r} is not an RFC 3339 time such as 2026-11-30T04:00:00Z")
    return when


def judge(result: Result, state: ClusterState, verdict: Verdict) -> Outcome:
    """``result`` with the config's severities and ignore rules and the baseline applied; exit 1 when a
    finding not in the baseline is at or above the fail level, 0 otherwise."""
    from functools import partial

    from gpulabel.checks.engine.assessment import Accepted, judged
    from gpulabel.checks.engine.verdict import apply_baseline, counted
    from gpulabel.model.severity import fails

    config = verdict.config
    mark = None if verdict.baseline is None else partial(apply_baseline, baseline=verdict.baseline)
    result, _ = judged(result, state, Accepted(config.severities, config.ignore), mark)
    return Outcome(result, 1 if fails(counted(result), verdict.fail_level) else 0)


def run_named(session: Session, name: str, opts: CheckOptions, verdict: Verdict | None = None) -> Outcome:
    """One registered check over the kinds it reads."""
    check = opts.registry.named(name)
    state = session.state(check.kinds)
    outcome = judge(run_check(check, state, opts), state, verdict or Verdict())
    return refuse_empty(outcome, session.source, state, opts.namespace)


def run_audit(session: Session, opts: CheckOptions, verdict: Verdict | None = None) -> Outcome:
    """``audit``: the node labels; where NodeFeatures are in the input, NodeFeatureRule drift too
    (``check`` runs that as its own ``nfd`` check). No ``operands`` or ``upgrade`` check runs beside it, so
    audit says the empty deploy labels itself, live (nodes alone are read) as on a snapshot that holds pods and
    DaemonSets, and with ``--strict`` the deploy values the operator does not know."""
    from gpulabel.k8s.nfd.objects import NFD_KINDS

    opts = replace(opts, registry=Registry(tuple(opts.registry.named(name) for name in ("audit", "nfd"))))
    state = session.state(["Node", *NFD_KINDS])
    result = run_check("audit", state, opts)
    if state.nfd.nodefeatures:
        result = replace(result, findings=result.findings + run_check("nfd", state, opts).findings)
    return refuse_empty(judge(result, state, verdict or Verdict()), session.source, state)


def run_all(
    session: Session, opts: CheckOptions, verdict: Verdict | None = None, evidence: EvidenceOptions | None = None
) -> Outcome:
    """Every registered check over one load of the union of their kinds (``check``); with ``evidence``, why the
    blamed operand pods fail (wide: after each root cause; JSON: ``evidence``)."""
    from gpulabel.checks.explain.evidence import with_evidence

    kinds = opts.registry.kinds
    state = session.state(kinds)
    outcome = refuse_empty(
        judge(run_checks(state, opts), state, verdict or Verdict()), session.source, state, opts.namespace
    )
    diagnoses, unread = gather_evidence(session, state, outcome.result.findings, evidence)
    if not diagnoses and not unread:
        return outcome
    return replace(outcome, result=with_evidence(outcome.result, diagnoses), warnings=outcome.warnings + unread)


def run_operands(session: Session, opts: CheckOptions, verdict: Verdict | None = None) -> Outcome:
    """The operands check; live, only the operand DaemonSets' pods are listed (by selector), not every pod."""
    from gpulabel.checks.operands.daemonsets import operand_of_daemonset
    from gpulabel.checks.operands.standalone import standalone_kind

    if session.source.offline:
        state = session.state(["Node", "DaemonSet", "ClusterPolicy", "Pod"])
    else:
        from gpulabel.cluster import collector
        from gpulabel.cluster.live import with_daemonset_pods

        state = session.state(["Node", "DaemonSet", "ClusterPolicy"])
        operand_sets = [ds for ds in state.daemonsets if operand_of_daemonset(ds) or standalone_kind(ds)]
        with collector.kept():  # the pods join the state for the rest of the run, as session.state's objects do
            state = with_daemonset_pods(session.client(), state, operand_sets)
    return refuse_empty(judge(run_check("operands", state, opts), state, verdict or Verdict()), session.source, state)


# The pods pending reads: the Pending ones it reports, and every bound pod that is not terminal, whose requests
# take their node's room (ClusterState.capacities, as the scheduler's cache counts them). Only Succeeded and Failed
# pods are left out, by the server: "status.phase=Pending" alone made every node look empty (a pod asking for 8 GPUs
# "fitted" nodes whose 8 GPUs running pods held), where a snapshot of the same moment said Insufficient.
LIVE_PODS = "status.phase!=Succeeded,status.phase!=Failed"


def run_pending(
    session: Session, opts: CheckOptions, verdict: Verdict | None = None, *, explain: bool = False
) -> Outcome:
    """Why each Pending (GPU) pod fits no node. Live, the server leaves out the terminal pods (:data:`LIVE_PODS`).

    ``explain`` (wide and structured output) also reads the NodeFeatureRules behind a selected NFD label.
    """
    from gpulabel.k8s.dra.objects import DRA_KINDS
    from gpulabel.k8s.karpenter.objects import KARPENTER_KINDS
    from gpulabel.k8s.nfd.objects import NFD_KINDS
    from gpulabel.model.cluster import AUTOSCALER_KINDS

    # NodePools and NodeClaims, the autoscalers' pod Events and Cluster Autoscaler's status: the autoscaler's verdict
    # of a pod that fits no node (checks/pending/autoscale.py)
    kinds = ["Node", "Pod", *DRA_KINDS, *KARPENTER_KINDS, *AUTOSCALER_KINDS, *(NFD_KINDS if explain else ())]
    state = session.state(kinds, pod_field_selector=LIVE_PODS)
    outcome = judge(run_check("pending", state, opts), state, verdict or Verdict())
    # live lists no finished pod (LIVE_PODS), a snapshot holds them: a namespace of only finished pods would be
    # refused live and not on the snapshot, so live an empty namespace is an answer, not a mistake
    return refuse_empty(outcome, session.source, state, opts.namespace if session.source.offline else None)


@dataclass(frozen=True, slots=True)
class ExplainOptions:
    """``explain node/NAME``: the node whose chain is walked; ``explain workload/NS/NAME``: the Kueue Workload
    (``workload`` ``NS/NAME``, ``node`` empty); ``explain pod/NS/NAME``: the pod (``pod`` ``NS/NAME``)."""

    node: str
    workload: str = ""
    pod: str = ""

    @classmethod
    def of(cls, target: str) -> ExplainOptions:
        from gpulabel.checks.queues.explain import WORKLOAD_TYPES

        kind, _, name = target.partition("/")
        if kind in WORKLOAD_TYPES:
            namespace, _, wl = name.partition("/")
            if not namespace or not wl or "/" in wl:
                raise InputError(target, "give workload/NAMESPACE/NAME")
            return cls("", f"{namespace}/{wl}")
        if kind in ("pod", "pods", "po"):  # kubectl's names of the Pod resource
            namespace, _, pod = name.partition("/")
            if not namespace or not pod or "/" in pod:
                raise InputError(target, "give pod/NAMESPACE/NAME")
            return cls("", pod=f"{namespace}/{pod}")
        if kind not in ("node", "nodes", "no") or not name:
            raise InputError(target, "give node/NAME, pod/NAMESPACE/NAME or workload/NAMESPACE/NAME")
        return cls(name)


def run_explain(
    session: Session,
    target: ExplainOptions,
    opts: CheckOptions,
    verdict: Verdict | None = None,
    evidence: EvidenceOptions | None = None,
) -> Outcome:
    """The node's chain, link by link, with the evidence of the operand pods its findings blame under their link;
    exit 1 when a link is broken at or above the fail level."""
    from gpulabel.checks.explain.chain import explain_node_chain
    from gpulabel.checks.explain.evidence import evidence_section
    from gpulabel.model.severity import fails

    verdict = verdict or Verdict()
    if target.workload or target.pod:  # app.explainworkload and app.explainpod walk a Workload, a pod
        raise InputError(
            f"workload/{target.workload}" if target.workload else f"pod/{target.pod}", "run_explain walks a node"
        )
    kinds = opts.registry.kinds
    state = session.state(kinds)
    node = state.node(target.node)
    if node is None:
        from gpulabel.app.selected import not_found

        raise InputError(f"node/{target.node}", not_found(target.node, state))
    one = replace(state, nodes=(node,), nodes_selected=True)  # the others left out by choice
    judged = judge(run_checks(one, opts), one, replace(verdict, baseline=None))
    findings = _cordon_tied(node, tuple(f for f in judged.result.findings if f.node == node.name and not f.pod))
    gpus, links = explain_node_chain(one, node, findings)
    first = next((link.name for link in links if link.status == "broken"), None)
    head = f"node/{node.name}: {'?' if gpus is None else gpus} GPU(s); " + (
        f"first broken link: {first}" if first else "every link ok"
    )
    diagnoses, unread = gather_evidence(session, one, findings, evidence)
    text = [head]
    for link in links:
        text.extend(link.lines())
        text.extend(line for d in diagnoses if d.blame.link == link.name for line in d.text())
    text.extend(_beside_the_chain(findings))
    sections = [Section("links", tuple(link.row() for link in links), tuple(text))]
    if any(d.lines for d in diagnoses):
        sections.append(evidence_section(diagnoses))
    # the node's findings are in its links (text) and rows (JSON), not repeated as finding lines
    fields = {"node": node.name, "gpus": gpus, "first_broken": first}
    result = Result("explain", (), tuple(sections), ok="", fields=fields)
    return Outcome(result, 1 if fails(findings, verdict.fail_level) else 0, warnings=unread)


def _beside_the_chain(findings: Iterable[Finding]) -> list[str]:
    """The node's findings at warning or worse that break no link of the chain (its GPUs are usable, and still
    something fails there: pods on a driver older than their CUDA), one line each after the links."""
    from gpulabel.checks.engine.rootcause import link_of
    from gpulabel.model.severity import at_or_above

    return [
        f"also   {f.check} {f.reason}{''.join(' ' + a for a in f.args)}: {f.detail}"
        for f in findings
        if at_or_above(f.severity, "warning") and link_of(f) is None
    ]


def _cordon_tied(node: Node, findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """The node's findings, its ``cordoned`` one saying who cordoned it when the input tells (model/repairs.py)."""
    from gpulabel.model.repairs import cordon_cause

    cause = cordon_cause(node, findings)
    if not cause:
        return findings
    return tuple(replace(f, detail=f"{f.detail}; {cause}") if f.reason == "cordoned" else f for f in findings)
