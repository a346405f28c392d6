"""What a check is: one definition that ``check``, ``report``, ``explain`` and the monitor all run.

A :class:`Check` says what it reads (``kinds``; without any object of
``requires`` it is skipped), how a full run makes its result (``run``), its
reasons with their severities (``reasons``), its caveats (``caveats``: what it
could not check on this input, written once for every way it runs) and how its
result is cut into pieces (``pieces``): a factory of a :class:`Pieces` keeper,
which the monitor's incremental evaluator tells each change
(:meth:`Pieces.touched`) and asks for the result (:meth:`Pieces.result`). The
evaluator knows no check by name: it keeps the records and a few indexes every
check may read (:class:`Fleet`), and hands every change to every check's keeper.

A check whose findings come one node at a time needs no keeper of its own:
:func:`node_check` makes both its full run and its pieces from one per-node
function. A check without ``pieces`` is rerun whole at every evaluation
(correct, not incremental); :func:`whole` keeps its result until a kind it
reads changes.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from gpulabel.checks.engine.verdict import grade, graded_findings
from gpulabel.errors import InputError
from gpulabel.k8s.nfd.master import NfdConfig
from gpulabel.model.cluster import KIND, ClusterState, Node, Pod
from gpulabel.model.findings import Finding, Result
from gpulabel.model.operands import known_operands
from gpulabel.model.severity import Reason

__all__ = [
    "DEFAULT_STUCK_AFTER",
    "Check",
    "CheckOptions",
    "Fleet",
    "NodePieces",
    "NodeRule",
    "ObjectKey",
    "Pieces",
    "Registry",
    "caveated",
    "graded",
    "node_check",
    "run_check",
    "run_checks",
    "skip_reason",
    "whole",
]

DEFAULT_STUCK_AFTER = 1800.0

ObjectKey = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects


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
    # the checks to run (check, report, diff, explain, the monitor): always told, by the registry that makes the
    # options (``BUILTIN.options()``, checks/registry.py: gpulabel's own), since the engine names no check
    registry: Registry = field(kw_only=True)
    # health: condition types the config adds ("<type>" -> the status that means a problem; "None" drops one)
    health_conditions: Mapping[str, str] = field(default_factory=dict)
    health_taints: tuple[str, ...] = ()  # health: the taint keys health agents set

    def __post_init__(self) -> None:
        known_operands(self.disabled)
        if self.stuck_after < 0:
            raise InputError("--stuck-after", "must not be negative")


@dataclass(frozen=True, slots=True)
class Fleet:
    """What the incremental evaluator keeps for every check to read when it is asked for a result: the state,
    the nodes by name (``names`` sorted: the state's order), every pod by key with its place in the state's
    order (``order``: a pod's place never moves while it is there, a new pod's comes after every other's), and
    the pods bound to each node (``bound``, in that order)."""

    state: ClusterState
    nodes: Mapping[str, Node]
    names: Sequence[str]
    pods: Mapping[ObjectKey, Pod]
    order: Callable[[ObjectKey], int]
    bound: Callable[[str], list[ObjectKey]]


class Pieces(Protocol):
    """A check's result kept in pieces by the incremental evaluator. A new keeper has seen no change: its
    first :meth:`result` makes every piece from the fleet. :meth:`touched` is told every change after that
    (``old`` and ``new`` records, ``None`` when absent, never equal) and marks the pieces it can change;
    :meth:`result` remakes those and answers what the check's full run answers, graded, before its caveats."""

    def touched(self, kind: str, key: ObjectKey, old: Any | None, new: Any | None) -> None: ...

    def result(self, fleet: Fleet, opts: CheckOptions) -> Result: ...


@dataclass(frozen=True, slots=True)
class Check:
    """One check, defined once (see the module's docstring)."""

    name: str
    kinds: tuple[str, ...]  # what it reads
    requires: tuple[str, ...]  # without any object of these kinds in the input, it is skipped
    run: Callable[[ClusterState, CheckOptions], Result]  # the full run, before grading and caveats
    help: str = ""
    # its reason table (reason -> severity and meaning), imported when first asked for
    reasons: Callable[[], Mapping[str, Reason]] = dict
    # what it could not check on this input (the same lines, however it runs)
    caveats: Callable[[ClusterState, CheckOptions], tuple[str, ...]] = lambda state, opts: ()
    # its pieces for the incremental evaluator; None: rerun whole at every evaluation
    pieces: Callable[[Check], Pieces] | None = None

    def result(self, state: ClusterState, opts: CheckOptions) -> Result:
        """The full run, graded by the check's own table, with its caveats (when it is not skipped)."""
        return caveated(grade(self.run(state, opts), self.reasons()), self, state, opts)

    def keeper(self) -> Pieces:
        """A new keeper of this check's pieces (every piece made at its first result)."""
        return (self.pieces or whole(None))(self)


def caveated(result: Result, check: Check, state: ClusterState, opts: CheckOptions) -> Result:
    """``result`` with the check's caveats on ``state`` (however the result was made)."""
    caveats = check.caveats(state, opts)
    return replace(result, caveats=caveats) if caveats else result


def graded(check: Check, findings: Sequence[Finding], table: Mapping[str, Reason] | None = None) -> list[Finding]:
    """``findings`` with their severities from the check's table, as its full result is graded."""
    return graded_findings(findings, check.reasons() if table is None else table)


@dataclass(frozen=True, slots=True)
class Registry:
    """The checks that ``check``, ``report``, ``diff``, ``explain``, the monitor and sync's metrics run, in
    their order: a value passed in (``CheckOptions.registry``), never a list that grows. ``BUILTIN``
    (:mod:`gpulabel.checks.registry`) holds gpulabel's own; ``BUILTIN.with_check(c)`` is another registry
    with ``c`` after them."""

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

    def options(self, **told: Any) -> CheckOptions:
        """Options that run these checks (``told``: the other fields of :class:`CheckOptions`)."""
        return CheckOptions(registry=self, **told)


def skip_reason(check: Check, state: ClusterState) -> str:
    """Why ``check`` cannot run on ``state`` (``"no pods in the input"``), or ``""`` if it can."""
    missing = [KIND[k].resource if k in KIND else k for k in check.requires if k not in state.kinds]
    return f"no {' or '.join(missing)} in the input" if missing else ""


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


# -- a check rerun whole -----------------------------------------------------------------------------------------


class _Whole:
    """A check's whole result, kept until a kind of ``reads`` changes (``None``: rerun every time), or only a
    change that moves a view of ``views`` (see :func:`whole`)."""

    def __init__(
        self,
        check: Check,
        reads: frozenset[str] | None,
        views: Mapping[str, Callable[[Any], object]] | None = None,
        pods_needed: bool = False,
    ) -> None:
        self.check, self.reads = check, reads
        self.views = views or {}
        self.pods_needed = pods_needed
        self.viewed: set[ObjectKey] | None = None  # the pods with a view (pods_needed), from the first result on
        self.kept: Result | None = None

    def touched(self, kind: str, key: ObjectKey, old: Any | None, new: Any | None) -> None:
        if self.reads is not None and kind not in self.reads:
            return
        view = self.views.get(kind)
        if view is not None:
            before = None if old is None else view(old)
            after = None if new is None else view(new)
            if kind == "Pod" and self.viewed is not None:
                if after is None:
                    self.viewed.discard(key)
                else:
                    self.viewed.add(key)
            if before == after:
                return
        if self.pods_needed and kind != "Pod" and self.viewed is not None and not self.viewed:
            return  # no pod the result could tell of: no other change gives it a finding
        self.kept = None

    def result(self, fleet: Fleet, opts: CheckOptions) -> Result:
        if self.pods_needed and self.viewed is None:
            view = self.views["Pod"]
            self.viewed = {k for k, p in fleet.pods.items() if view(p) is not None}
        if self.kept is None or self.reads is None:
            self.kept = grade(self.check.run(fleet.state, opts), self.check.reasons())
        return self.kept


def whole(
    reads: Sequence[str] | None,
    views: Mapping[str, Callable[[Any], object]] | None = None,
    pods_needed: bool = False,
) -> Callable[[Check], Pieces]:
    """Pieces of one: the check's whole result, rerun when an object of ``reads`` changes (``None``: at every
    evaluation, for a check whose result may read anything, the clock too).

    ``views``: per kind, what of one object the result reads (``None``: nothing, as if it were absent); a
    change that leaves its object's view equal reruns nothing. ``pods_needed``: while no pod has a view
    (``views["Pod"]``), the result has no finding whatever the other kinds hold, so their changes rerun
    nothing (a monitor's every node and pod event walked every pod for such a check: issue 50)."""
    kinds = None if reads is None else frozenset(reads)
    if pods_needed and (views is None or "Pod" not in views):
        raise ValueError("pods_needed needs a view of pods")
    return lambda check: _Whole(check, kinds, dict(views or {}), pods_needed)


# -- a check one node at a time ----------------------------------------------------------------------------------

NodeFindings = Callable[[Node, Any, CheckOptions], list[Finding]]


Facts = frozenset[str]  # the fleet facts of a NodeRule that some node has


@dataclass(frozen=True, slots=True)
class NodeRule:
    """How a check finds one node's findings: ``find(node, context, opts)``; ``context(state, opts, facts)``
    is what it reads of the rest of the cluster, and ``caveats(state, opts, facts)`` what it could not check
    (``facts``: which of the rule's fleet ``facts``, each a predicate of one node, some node has; the
    incremental keeper keeps the nodes of each, so neither walks every node), and ``clock(node)`` whether the
    node's findings read ``opts.now`` (a state's age: remade every time)."""

    find: NodeFindings
    context: Callable[[ClusterState, CheckOptions, Facts], Hashable] = lambda state, opts, facts: None
    clock: Callable[[Node], bool] = lambda node: False
    facts: Mapping[str, Callable[[Node], bool]] = field(default_factory=dict)
    caveats: Callable[[ClusterState, CheckOptions, Facts], tuple[str, ...]] = lambda state, opts, facts: ()

    def facts_of(self, nodes: Iterable[Node]) -> Facts:
        """Which of the rule's facts some node of ``nodes`` has (the full run's walk)."""
        left, found = dict(self.facts), set()
        for node in nodes:
            if not left:
                break
            for name, holds in list(left.items()):
                if holds(node):
                    found.add(name)
                    del left[name]
        return frozenset(found)

    def run(self, state: ClusterState, opts: CheckOptions, name: str) -> Result:
        ctx, find = self.context(state, opts, self.facts_of(state.nodes)), self.find
        found: list[Finding] = []
        for node in state.nodes:
            found.extend(find(node, ctx, opts))
        return Result(name, tuple(found))


class _PerNode:
    """A node check's findings kept node by node; a node's change remakes its own, a change of the context
    remakes every node's, and the nodes whose findings read the clock are remade every time. The nodes of
    each fleet fact are kept too (the context and the caveats read which facts some node has)."""

    def __init__(self, check: Check, rule: NodeRule) -> None:
        self.check, self.rule = check, rule
        self.table = check.reasons()
        self.found: dict[str, list[Finding]] = {}
        self.everything = True
        self.dirty: set[str] = set()
        self.timed: set[str] = set()
        self.having: dict[str, set[str]] = {fact: set() for fact in rule.facts}  # fact -> the nodes that have it
        self.context: Hashable = None
        self.shown: Result | None = None  # the last result, while no node's findings change

    def _index(self, node: Node) -> None:
        if self.rule.clock(node):
            self.timed.add(node.name)
        for fact, holds in self.rule.facts.items():
            if holds(node):
                self.having[fact].add(node.name)

    def _facts(self) -> Facts:
        return frozenset(fact for fact, names in self.having.items() if names)

    def touched(self, kind: str, key: ObjectKey, old: Any | None, new: Any | None) -> None:
        if kind != "Node":
            return
        for node in (old, new):
            if node is not None:
                self.dirty.add(node.name)
                self.timed.discard(node.name)
                for names in self.having.values():
                    names.discard(node.name)
        if new is not None:
            self._index(new)

    def result(self, fleet: Fleet, opts: CheckOptions) -> Result:
        if self.everything:
            self.timed = set()
            self.having = {fact: set() for fact in self.rule.facts}
            for node in fleet.nodes.values():
                self._index(node)
        ctx = self.rule.context(fleet.state, opts, self._facts())
        if self.everything or ctx != self.context:
            self.found, redo, self.shown = {}, fleet.names, None
        else:
            redo = sorted(self.dirty | self.timed)
        self.context, self.everything, self.dirty = ctx, False, set()
        for name in redo:
            was = self.found.pop(name, None)
            present = fleet.nodes.get(name)
            found = self.rule.find(present, ctx, opts) if present is not None else []
            if found:
                now = self.found[name] = graded(self.check, found, self.table)
                if now != was:
                    self.shown = None
            elif was is not None:
                self.shown = None
        if self.shown is None:  # a node's findings changed, came or went: the same result otherwise
            names = sorted(self.found)
            self.shown = Result(self.check.name, tuple(f for n in names for f in self.found[n]), graded=True)
        return self.shown

    def caveats(self, fleet: Fleet, opts: CheckOptions) -> tuple[str, ...]:
        """The rule's caveats from the facts kept (the evaluator asks after :meth:`result`)."""
        return self.rule.caveats(fleet.state, opts, self._facts())


@dataclass(frozen=True, slots=True)
class NodePieces:
    """The pieces of a check made by a :class:`NodeRule` (``Check.pieces`` of :func:`node_check`)."""

    rule: NodeRule

    def __call__(self, check: Check) -> Pieces:
        return _PerNode(check, self.rule)


def node_check(
    name: str,
    kinds: tuple[str, ...],
    requires: tuple[str, ...],
    rule: NodeRule,
    help: str = "",
    reasons: Callable[[], Mapping[str, Reason]] = dict,
) -> Check:
    """A check whose findings come one node at a time: its full run, caveats and pieces from one
    :class:`NodeRule`."""
    return Check(
        name,
        kinds,
        requires,
        lambda state, opts: rule.run(state, opts, name),
        help,
        reasons=reasons,
        caveats=lambda state, opts: rule.caveats(state, opts, rule.facts_of(state.nodes)),
        pieces=NodePieces(rule),
    )
