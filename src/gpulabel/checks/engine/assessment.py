"""The full evaluator: every check re-run on the whole state at each assessment (the monitor's oracle).

An :class:`~gpulabel.checks.engine.judging.Evaluator` is the monitor's pure core: it is
told every object of a kind (``reset``, after a LIST or a relist) and then each
change (``apply``), and answers an :class:`Assessment` when asked.
:class:`FullEvaluator` re-runs every check on the whole state each time: the
oracle that the incremental evaluator (:mod:`gpulabel.checks.engine.incremental`)
must always equal. :func:`judged` and the types are in :mod:`.judging` (named
here too, where the callers find them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from gpulabel.checks.engine.definition import CheckOptions, run_checks
from gpulabel.checks.engine.judging import Accepted, Assessment, Evaluator, ObjectKey, judged
from gpulabel.model.cluster import KIND, ClusterState

__all__ = ["Accepted", "Assessment", "Evaluator", "FullEvaluator", "ObjectKey", "judged"]


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

    def apply(self, kind: str, key: ObjectKey, record: Any | None) -> bool:
        store = self.records.setdefault(kind, {})
        old = store.get(key)
        if record is None:
            store.pop(key, None)
        else:
            store[key] = record
        return old != record

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
