"""One judged picture of the cluster: what ``check`` answers and what ``gpulabel monitor`` publishes.

:func:`judged` applies what a team accepted (severity overrides, ignore rules)
to a check run's result and finds one root cause per GPU node; ``check``
(``app.checks.judge``) and the monitor both call it, so they cannot disagree.
An :class:`Evaluator` is the monitor's pure core (told every object of a kind,
then each change; asked for an :class:`Assessment`). Both evaluators
(:mod:`.assessment`'s full one, :mod:`.incremental`'s) build on this module,
which knows no check.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from gpulabel.checks.engine.rootcause import (
    POD_CAUSES,
    Cause,
    KeptCauses,
    PodCause,
    node_findings,
    pod_causes,
    root_causes,
)
from gpulabel.checks.engine.verdict import IgnoreRule, apply_ignores, regrade
from gpulabel.model.cluster import ClusterState, Node
from gpulabel.model.findings import Finding, Result, Section
from gpulabel.model.severity import Severity

__all__ = ["Accepted", "Assessment", "Evaluator", "KeptJudgment", "ObjectKey", "judged"]

ObjectKey = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects
_POD_CHECKS = frozenset(check for check, _ in POD_CAUSES)


@dataclass(frozen=True, slots=True)
class Accepted:
    """What a team accepted (a config file's part the checks' results see): severity overrides and ignore rules."""

    severities: Mapping[str, Severity] = field(default_factory=dict)
    ignore: tuple[IgnoreRule, ...] = ()


def judged(
    result: Result,
    state: ClusterState,
    accepted: Accepted,
    mark: Callable[[Result], Result] | None = None,
) -> tuple[Result, tuple[Cause, ...]]:
    """``result`` regraded and with the ignored findings dropped, and the root cause of each GPU node with a
    problem (worst first), found from the findings that remain; then, in the causes section only, each Pending
    pod no autoscaler will serve (:func:`~gpulabel.checks.engine.rootcause.pod_causes`: no node's GPUs are lost
    to it). ``mark`` (``check --baseline``) marks the known findings before the causes are found: a known
    problem is no cause."""
    labels = {n.name: n.labels for n in state.nodes} if accepted.ignore else {}  # read by node selectors only
    result = apply_ignores(regrade(result, accepted.severities), accepted.ignore, labels)
    if mark is not None:
        result = mark(result)
    causes: tuple[Cause, ...] = ()
    if result.parts:  # check: one root cause per GPU node first
        current = [f for f in result.findings if not f.baseline]
        causes = tuple(root_causes(state.nodes, current))
        section = _with_pods(
            Section("causes", tuple(c.row() for c in causes), tuple(c.line() for c in causes)), pod_causes(current)
        )
        result = replace(result, sections=(section, *result.sections))
    return result, causes


def _with_pods(section: Section, pods: Sequence[PodCause]) -> Section:
    """The causes section with the pods' causes after the nodes'."""
    if not pods:
        return section
    rows = (*section.rows, *(c.row() for c in pods))
    return Section(section.name, rows, (*section.text, *(c.line() for c in pods)))


class _Labels(Mapping[str, Mapping[str, str]]):
    """Each node's labels, read through the nodes by name (what an ignore rule's node selector reads)."""

    def __init__(self, nodes: Mapping[str, Node]) -> None:
        self._nodes = nodes

    def __getitem__(self, name: str) -> Mapping[str, str]:
        return self._nodes[name].labels

    def __iter__(self) -> Iterator[str]:
        return iter(self._nodes)

    def __len__(self) -> int:
        return len(self._nodes)


class KeptJudgment:
    """:func:`judged` kept check by check across evaluations (the monitor's incremental evaluator): a check's
    result equal to the one it had keeps its judged result and its findings by node; only the nodes whose
    findings (in a check that changed) or record changed get their root cause made again
    (:class:`~gpulabel.checks.engine.rootcause.KeptCauses`). The answer is :func:`judged`'s on the same checks'
    results (without ``mark``): each part regraded and its ignored findings dropped as :func:`judged` does
    them, the causes from the findings that remain, in the parts' order. With an ignore rule that selects
    nodes, a node's change judges every part again (its labels may silence findings of any check)."""

    def __init__(self, accepted: Accepted) -> None:
        self.accepted = accepted
        # raw, judged, by node, the pods' causes
        self._parts: dict[str, tuple[Result, Result, dict[str, list[Finding]], tuple[PodCause, ...]]] = {}
        self._causes = KeptCauses()
        self._findings: tuple[tuple[Result, ...], tuple[Finding, ...]] = ((), ())
        self._selects = any(rule.nodes is not None for rule in accepted.ignore)

    def judged(
        self, parts: Sequence[Result], nodes: Mapping[str, Node], changed: Iterable[str]
    ) -> tuple[Result, tuple[Cause, ...]]:
        """The checks' results ``parts`` judged, given every node by name and the nodes whose record changed
        since the last call."""
        accepted, dirty = self.accepted, set(changed)
        again = self._selects and bool(dirty)
        labels = _Labels(nodes)
        done: list[Result] = []
        for part in parts:
            was = self._parts.get(part.command)
            if was is not None and not again and was[0] == part:
                done.append(was[1])
                continue
            judged_part = apply_ignores(regrade(part, accepted.severities), accepted.ignore, labels)
            differ: list[Finding] | None = None  # the findings not where they were (_changed)
            if was is None:
                by_node = node_findings(f for f in judged_part.findings if not f.baseline)
                dirty.update(by_node)
            else:
                by_node = was[2]
                differ = _changed(was[1].findings, judged_part.findings)
                dirty.update(_regroup(by_node, was[1].findings, judged_part.findings, differ))
            pods: tuple[PodCause, ...] = ()
            if part.command in _POD_CHECKS:  # only these make pods' causes: the others' findings are not read
                if was is not None and differ is not None and _POD_REASONS.isdisjoint(map(_REASON, differ)):
                    pods = was[3]  # no finding of a reason that makes a pod's cause came or went: the same causes
                else:
                    pods = tuple(pod_causes(f for f in judged_part.findings if not f.baseline))
            self._parts[part.command] = (part, judged_part, by_node, pods)
            done.append(judged_part)
        kept = self._parts
        for name in dirty:
            found = [f for part in done for f in kept[part.command][2].get(name, ())]
            self._causes.node(name, nodes.get(name), found)
        causes, section = self._causes.told()
        told = [c for part in done for c in kept[part.command][3]]
        if told:  # judged()'s order: by pod across the checks (one check, pending, makes them)
            section = _with_pods(section, sorted(told, key=lambda c: c.pod))
        last = self._findings[0]
        if len(done) != len(last) or not all(map(operator.is_, done, last)):  # a part judged again
            self._findings = (tuple(done), tuple(itertools.chain.from_iterable(p.findings for p in done)))
        result = Result("check", self._findings[1], (section,) if done else (), parts=tuple(done), graded=True)
        return result, causes


def _changed(old: Sequence[Finding], new: Sequence[Finding]) -> list[Finding]:
    """The findings not in the same place in ``old`` and ``new`` (keepers make again only the findings that
    changed and keep the rest, the same objects): of equal length, those of the places holding another object;
    else those of the span between the longest common start and end. Found in C: a node's change tells
    hundreds of Pending pods' findings again, among thousands kept."""
    if len(old) == len(new):
        places = list(itertools.compress(range(len(new)), map(operator.is_not, old, new)))
        return [*map(old.__getitem__, places), *map(new.__getitem__, places)]
    start = next(itertools.compress(itertools.count(), map(operator.is_not, old, new)), min(len(old), len(new)))
    tail = next(itertools.compress(itertools.count(), map(operator.is_not, reversed(old), reversed(new))), 0)
    tail = min(tail, len(old) - start, len(new) - start)
    return [*old[start : len(old) - tail], *new[start : len(new) - tail]]


_NODE = operator.attrgetter("node")
_REASON = operator.attrgetter("reason")
_POD_REASONS = frozenset(reason for _, reason in POD_CAUSES)


def _regroup(
    by_node: dict[str, list[Finding]],
    old: Sequence[Finding],
    new: Sequence[Finding],
    changed: Sequence[Finding] | None = None,
) -> set[str]:
    """``by_node`` (``node_findings`` of ``old``, without the baseline's) made ``node_findings`` of ``new`` in
    place, and the nodes whose findings changed: the nodes of the findings :func:`_changed` finds (``changed``:
    found already)."""
    if changed is None:
        changed = _changed(old, new)
    nodes = {f.node for f in itertools.compress(changed, map(_NODE, changed)) if not f.pod}
    if not nodes:
        return set()
    fresh = node_findings(f for f in new if f.node in nodes and not f.baseline)
    moved = {n for n in nodes if by_node.get(n) != fresh.get(n)}
    for n in moved:
        if n in fresh:
            by_node[n] = fresh[n]
        else:
            del by_node[n]
    return moved


@dataclass(frozen=True, slots=True)
class Assessment:
    """Every check's judged result on one moment's ``state``, with its root causes; ``at`` is when it was made."""

    result: Result
    causes: tuple[Cause, ...]
    state: ClusterState
    at: float

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.result.findings


class Evaluator(Protocol):
    """The monitor's pure core: told every object of a kind, then each change; asked for an Assessment."""

    def reset(self, kind: str, records: Iterable[tuple[ObjectKey, Any]]) -> None:
        """Every object of ``kind`` now (a LIST or a relist): the kind's previous records are replaced."""

    def apply(self, kind: str, key: ObjectKey, record: Any | None) -> bool:
        """One object added or changed (``record``), or deleted (``None``); False if the records are as they were
        (a status heartbeat changes nothing a record keeps): the monitor need not assess again for it."""

    def assess(self, at: float) -> Assessment:
        """The checks' judged result on the records as they are now."""
