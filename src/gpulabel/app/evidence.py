"""Evidence for ``check``, ``explain`` and ``report``: why the blamed operand pods fail, live or from a bundle.

Live, the log tails and Events of the pods the findings blame are read
(``cluster/evidence.py``, bounded by :class:`EvidenceOptions`); from
``--snapshot`` files, what a support bundle (``snapshot --bundle``) carries;
from a plain snapshot, nothing (there is no log in it). The matching is pure
(``checks/explain/evidence.py``). What a bundle's capture could not read is said as recorded then
(:data:`RECORDED`), never as a failure of the offline run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from gpulabel.app.session import Session
from gpulabel.checks.explain.evidence import Diagnosis, blamed, diagnose_all
from gpulabel.errors import InputError
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Finding
from gpulabel.model.redaction import redact_line

__all__ = ["RECORDED", "EvidenceOptions", "gather_evidence"]

RECORDED = "(recorded when the bundle was captured; nothing is read now)"  # after a bundle's unread lines


@dataclass(frozen=True, slots=True)
class EvidenceOptions:
    """``--no-evidence`` (read no log and no Event), ``--log-lines``, ``--log-bytes``."""

    enabled: bool = True
    log_lines: int = 50
    log_bytes: int = 64 * 1024

    def __post_init__(self) -> None:
        if not 1 <= self.log_lines <= 10_000:
            raise InputError("--log-lines", f"must be from 1 to 10000, not {self.log_lines}")
        if not 1024 <= self.log_bytes <= 16 * 1024 * 1024:
            raise InputError("--log-bytes", f"must be from 1024 to 16777216, not {self.log_bytes}")


def gather_evidence(
    session: Session, state: ClusterState, findings: Iterable[Finding], opts: EvidenceOptions | None
) -> tuple[tuple[Diagnosis, ...], tuple[str, ...]]:
    """The diagnoses of the pods ``findings`` blame, and what could not be read (one line each)."""
    if opts is None or not opts.enabled:
        return (), ()
    blames = blamed(state, findings)
    if not blames:
        return (), ()
    if session.source.offline:
        from gpulabel.cluster.bundle import bundle_evidence

        evidence = bundle_evidence(session.source.snapshots)
        if evidence is None:
            return (), ()
        # what the capture could not read is history, not a failure of this run: said so wherever it is shown
        evidence = replace(evidence, unread=tuple(f"{u} {RECORDED}" for u in evidence.unread))
    else:
        from gpulabel.cluster.evidence import EvidenceLimits, collect_evidence
        from gpulabel.cluster.progress import Progress

        line = Progress("evidence")
        limits = EvidenceLimits(tail_lines=opts.log_lines, limit_bytes=opts.log_bytes)
        evidence = collect_evidence(session.client(), blames, limits, note=line.show)
        line.done()
    return diagnose_all(blames, evidence), tuple(f"evidence: {redact_line(u)}" for u in evidence.unread)
