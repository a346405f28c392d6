"""The monitor's own sinks: one stderr line per change of the findings, and the findings as a file.

:class:`FindingsLog` writes ``appeared <severity> <check> <line>`` when a
finding appears and ``resolved ...`` when it goes, by finding identity.
:class:`FindingsDump` writes the current result, as ``check -o json`` would
print it, to a file after every evaluation, replaced atomically (written
beside it, then renamed): what the cluster tests and the benchmark compare
with ``check``.
"""

from __future__ import annotations

from collections.abc import Callable

from gpulabel.checks.engine.assessment import Assessment
from gpulabel.checks.engine.verdict import Identity, identity
from gpulabel.model.findings import Finding
from gpulabel.render.text import finding_line

__all__ = ["FindingsDump", "FindingsLog", "changes"]


def changes(
    before: dict[Identity, Finding], findings: tuple[Finding, ...]
) -> tuple[dict[Identity, Finding], list[Finding], list[Finding]]:
    """The findings by identity now, and what appeared and what was resolved since ``before``."""
    now = {identity(f): f for f in findings}
    appeared = [f for k, f in now.items() if k not in before]
    resolved = [f for k, f in before.items() if k not in now]
    return now, appeared, resolved


class FindingsLog:
    """One line per finding that appeared or was resolved (``say`` writes it: stderr)."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.current: dict[Identity, Finding] = {}

    def publish(self, assessment: Assessment) -> None:
        self.current, appeared, resolved = changes(self.current, assessment.findings)
        for verb, found in (("appeared", appeared), ("resolved", resolved)):
            for f in found:
                self.say(f"{verb} {f.severity or '-'} {f.check} {finding_line(f)}")


class FindingsDump:
    """The current result (``check -o json``'s envelope, plus the evaluation's unix time ``at``) in ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path

    def publish(self, assessment: Assessment) -> None:
        import orjson

        from gpulabel.cluster.files import write_file

        doc = {**assessment.result.envelope(), "at": assessment.at}
        data = orjson.dumps(doc, option=orjson.OPT_NON_STR_KEYS)  # starts with "apiVersion":"gpulabel/v1"
        write_file(self.path, data, marker=b'"apiVersion":"gpulabel/v1"')  # replaced atomically
