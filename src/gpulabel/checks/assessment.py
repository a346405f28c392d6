"""One judged picture of the cluster: what ``check`` answers and what ``gpulabel monitor`` publishes.

:func:`judged` applies what a team accepted (severity overrides, ignore rules)
to a check run's result and finds one root cause per GPU node; ``check``
(``app.checks.judge``) and the monitor both call it, so they cannot disagree.

An :class:`Evaluator` is the monitor's pure core: it is told every object of
a kind (:meth:`Evaluator.reset`, after a LIST or a relist) and then each
change (:meth:`Evaluator.apply`), and answers an :class:`Assessment` when
asked. :class:`FullEvaluator` re-runs every check on the whole state each
time: the oracle that an incremental evaluator must always equal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from gpulabel.checks.registry import CheckOptions, run_checks
from gpulabel.checks.rootcause import Cause, root_causes
from gpulabel.checks.verdict import IgnoreRule, apply_ignores, regrade
from gpulabel.model.cluster import KIND, ClusterState
from gpulabel.model.findings import Finding, Result, Section
from gpulabel.model.severity import Severity

__all__ = ["Accepted", "Assessment", "Evaluator", "FullEvaluator", "ObjectKey", "judged"]

ObjectKey = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects


@dataclass(frozen=True, slots=True)
class Accepted:
    """What a team accepted (a config file's part the checks' results see): severity overrides and ignore rules."""

    severities: Mapping[str, Severity] = field(default_factory=dict)
    ignore: tuple[IgnoreRule, ...] = ()


def judged(
    result: Result, state: ClusterState, accepted: Accepted, mark: Callable[[Result], Result] | None = None
) -> tuple[Result, tuple[Cause, ...]]:
    """``result`` regraded and with the ignored findings dropped, and the root cause of each GPU node with a
    problem (worst first), found from the findings that remain. ``mark`` (``check --baseline``) marks the
    known findings before the causes are found: a known problem is no cause."""
    labels = {n.name: n.labels for n in state.nodes}
    result = apply_ignores(regrade(result, accepted.severities), accepted.ignore, labels)
    if mark is not None:
        result = mark(result)
    causes: tuple[Cause, ...] = ()
    if result.parts:  # check: one root cause per GPU node first
        causes = tuple(root_causes(state.nodes, (f for f in result.findings if not f.baseline)))
        rows = tuple(c.row() for c in causes)
        section = Section("causes", rows, tuple(c.line() for c in causes))
        result = replace(result, sections=(section, *result.sections))
    return result, causes


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

    def apply(self, kind: str, key: ObjectKey, record: Any | None) -> None:
        """One object added or changed (``record``), or deleted (``None``)."""

    def assess(self, at: float) -> Assessment:
        """The checks' judged result on the records as they are now."""


class FullEvaluator:
    """Re-runs every check on the whole state at each :meth:`assess` (the oracle for incremental evaluation)."""

    def __init__(self, opts: CheckOptions, accepted: Accepted | None = None, source: str = "") -> None:
        self.opts = opts
        self.accepted = accepted or Accepted()
        self.source = source
        self.records: dict[str, dict[ObjectKey, Any]] = {}

    def reset(self, kind: str, records: Iterable[tuple[ObjectKey, Any]]) -> None:
        if kind not in KIND:
            raise KeyError(kind)
        self.records[kind] = dict(records)

    def apply(self, kind: str, key: ObjectKey, record: Any | None) -> None:
        store = self.records.setdefault(kind, {})
        if record is None:
            store.pop(key, None)
        else:
            store[key] = record

    def state(self) -> ClusterState:
        """The records as one ClusterState: every kind reset so far is in its ``kinds``."""
        pairs: Sequence[tuple[str, Any]] = [(k, r) for k, store in self.records.items() for r in store.values()]
        return ClusterState.of_records(pairs, self.source, self.records)

    def assess(self, at: float) -> Assessment:
        """Ages (stuck states) are measured at ``at``, as ``check`` measures them when it runs."""
        state = self.state()
        opts = replace(self.opts, now=datetime.fromtimestamp(at, UTC))
        result, causes = judged(run_checks(state, opts), state, self.accepted)
        return Assessment(result, causes, state, at)
