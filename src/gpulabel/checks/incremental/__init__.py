"""The monitor's incremental evaluator: each event reruns only the checks' pieces it can change.

:class:`IncrementalEvaluator` keeps the records exactly as
:class:`~gpulabel.checks.assessment.FullEvaluator` does (the same dictionaries,
so the state's order is the same), and beside them each check's result cut
into pieces (:mod:`.pieces`): per node for the node checks and operands, per
pod for pending and hazards, each node's share of the operands' table. An
event marks what it touches (:mod:`.evaluator`); :meth:`IncrementalEvaluator.assess`
reruns those pieces with the checks' own code and puts every check's result
back together in the full run's order, then judges it with the same
:func:`~gpulabel.checks.assessment.judged`. docs/monitor-evaluation.md says
what reruns when, and why the answer always equals the full one.
"""

from gpulabel.checks.incremental.evaluator import IncrementalEvaluator

__all__ = ["IncrementalEvaluator"]
