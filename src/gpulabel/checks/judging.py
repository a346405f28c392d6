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

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from gpulabel.checks.rootcause import Cause, root_causes
from gpulabel.checks.verdict import IgnoreRule, apply_ignores, regrade
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Finding, Result, Section
from gpulabel.model.severity import Severity

__all__ = ["Accepted", "Assessment", "Evaluator", "ObjectKey", "judged"]

ObjectKey = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects


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
    causes_of: Callable[[Iterable[Finding]], list[Cause]] | None = None,
) -> tuple[Result, tuple[Cause, ...]]:
    """``result`` regraded and with the ignored findings dropped, and the root cause of each GPU node with a
    problem (worst first), found from the findings that remain. ``mark`` (``check --baseline``) marks the
    known findings before the causes are found: a known problem is no cause. ``causes_of``: what finds the
    causes from the findings (the incremental evaluator's kept ones); by default ``root_causes`` of the state."""
    labels = {n.name: n.labels for n in state.nodes} if accepted.ignore else {}  # read by node selectors only
    result = apply_ignores(regrade(result, accepted.severities), accepted.ignore, labels)
    if mark is not None:
        result = mark(result)
    causes: tuple[Cause, ...] = ()
    if result.parts:  # check: one root cause per GPU node first
        kept = (f for f in result.findings if not f.baseline)
        causes = tuple(causes_of(kept) if causes_of is not None else root_causes(state.nodes, kept))
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

    def apply(self, kind: str, key: ObjectKey, record: Any | None) -> bool:
        """One object added or changed (``record``), or deleted (``None``); False if the records are as they were
        (a status heartbeat changes nothing a record keeps): the monitor need not assess again for it."""

    def assess(self, at: float) -> Assessment:
        """The checks' judged result on the records as they are now."""
