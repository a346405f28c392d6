"""The monitor's incremental evaluator: each event reruns only the checks' pieces it can change.

:class:`IncrementalEvaluator` keeps the records exactly as
:class:`~gpulabel.checks.engine.assessment.FullEvaluator` does (the same dictionaries,
so the state's order is the same) and, for every check of the registry, the
keeper of pieces its definition brings (:class:`~gpulabel.checks.engine.definition.Check`,
``pieces``). It knows no check by name: an event goes to every keeper, which
marks what it can change; :meth:`IncrementalEvaluator.assess` asks each keeper
for its check's result (the check's own code rerun on what was marked), adds
the check's caveats, and judges the whole with the same
:func:`~gpulabel.checks.engine.judging.judged`. :mod:`.scope` says which Pending pods a
bound pod's change can re-judge. docs/monitor-evaluation.md says what reruns
when, and why the answer always equals the full one.
"""

from gpulabel.checks.engine.incremental.evaluator import IncrementalEvaluator

__all__ = ["IncrementalEvaluator"]
