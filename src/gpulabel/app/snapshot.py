"""``snapshot``: what every check reads, captured from the live cluster into one file (or stdout)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpulabel.app.evidence import EvidenceOptions
from gpulabel.app.session import Outcome, Session
from gpulabel.errors import InputError
from gpulabel.model.findings import Cell, Result, Section

if TYPE_CHECKING:
    from gpulabel.cluster.progress import Progress

__all__ = ["GENERATOR_MARK", "SnapshotOptions", "run_snapshot"]


@dataclass(frozen=True, slots=True)
class SnapshotOptions:
    output: str = "-"  # the file to write (cluster/files.py's rules: never replaces what gpulabel did not make)
    progress: bool = False  # the progress line on stderr even when it is not a terminal (one line per step)
    bundle: str | None = None  # a support bundle (.tar.gz): the snapshot, the blamed pods' evidence, redacted
    evidence: EvidenceOptions = field(default_factory=EvidenceOptions)
    force: bool = False  # replace an existing file gpulabel did not write

    def __post_init__(self) -> None:
        if self.bundle is not None and self.output != "-":
            raise InputError("--bundle", "writes its own file: give --bundle FILE or -o FILE, not both")
        if self.bundle == "-" or self.bundle == "":
            raise InputError("--bundle", "needs a file name (FILE.tar.gz)")
        if self.bundle is not None and not self.bundle.endswith((".tar.gz", ".tgz")):
            raise InputError(
                f"--bundle {self.bundle}", f"a bundle is a gzipped tar archive: name it {self.bundle}.tar.gz"
            )


GENERATOR_MARK = b'"generator": "gpulabel"'  # a top-level key of every snapshot gpulabel writes (before its items)


def run_snapshot(session: Session, opts: SnapshotOptions) -> Outcome:
    """Capture; the document is the outcome's page for ``-``, else written to the file; exit 0."""
    import orjson

    from gpulabel.cluster.capture import capture
    from gpulabel.cluster.progress import Progress

    notes: list[str] = []
    progress = Progress("snapshot", delay=0.0, force=True) if opts.progress else None
    if opts.bundle is None and opts.output != "-":
        return _streamed(session, opts, notes, progress)
    doc = capture(session.client(), notes.append, progress)
    if opts.bundle is not None:
        return _bundle(session, opts, opts.bundle, doc, notes, progress)
    items = doc.pop("items")
    doc = {**doc, "generator": "gpulabel", "items": items}  # the mark cluster/files.py knows its own files by
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    if opts.output == "-":
        return Outcome(Result("snapshot", ok=""), warnings=tuple(f"snapshot: {n}" for n in notes), page=data.decode())
    from gpulabel.cluster.files import write_file

    write_file(opts.output, data, marker=GENERATOR_MARK, force=opts.force)
    line = f"{opts.output}: {notes[0]}" if notes else opts.output
    section = Section("written", (), (line,))
    return Outcome(Result("snapshot", sections=(section,), ok="", fields={"file": opts.output, "bytes": len(data)}))


def _streamed(session: Session, opts: SnapshotOptions, notes: list[str], progress: Progress | None) -> Outcome:
    """``-o FILE``: each page written to the file as it arrives (cluster/capture.py ``capture_to``), so the
    capture's memory is a page's, whatever the cluster's size; the file is the one ``-`` prints."""
    from gpulabel.cluster.capture import capture_to
    from gpulabel.cluster.files import Output, write_stream

    client = session.client()
    size = 0

    def produce(out: Output) -> None:
        nonlocal size
        capture_to(client, out, notes.append, progress)
        size = out.mark()

    write_stream(opts.output, produce, marker=GENERATOR_MARK, force=opts.force)
    line_text = f"{opts.output}: {notes[0]}" if notes else opts.output
    section = Section("written", (), (line_text,))
    return Outcome(Result("snapshot", sections=(section,), ok="", fields={"file": opts.output, "bytes": size}))


def _bundle(
    session: Session, opts: SnapshotOptions, path: str, doc: dict[str, object], notes: list[str], progress: object
) -> Outcome:
    """Run the checks on the capture, read the evidence of the pods they blame, write the redacted bundle."""
    import time

    from gpulabel.app.checks import Verdict, check_options, judge
    from gpulabel.checks.explain.evidence import blamed
    from gpulabel.checks.registry import run_checks
    from gpulabel.cluster.bundle import BUNDLE_MARK, make_bundle
    from gpulabel.cluster.evidence import EvidenceLimits, collect_evidence
    from gpulabel.cluster.files import write_file
    from gpulabel.cluster.progress import Progress
    from gpulabel.cluster.snapshot import iter_objects
    from gpulabel.model.cluster import ClusterState
    from gpulabel.model.evidence import Evidence

    kinds: set[str] = set()  # with the kinds listed empty (their empty typed Lists), as a read of the file has them
    objects = list(iter_objects(doc, "capture", kinds))
    state = ClusterState.from_objects(objects, "capture", kinds)
    judged = judge(run_checks(state, check_options()), state, Verdict())
    blames = blamed(state, judged.result.findings)
    line = progress if isinstance(progress, Progress) else Progress("snapshot")
    evidence = Evidence()
    if opts.evidence.enabled and blames:
        limits = EvidenceLimits(tail_lines=opts.evidence.log_lines, limit_bytes=opts.evidence.log_bytes)
        evidence = collect_evidence(session.client(), blames, limits, note=lambda what: line.show(f"evidence: {what}"))
        line.show(f"evidence: {len(evidence.logs)} log tail(s), {len(evidence.events)} Event(s)", final=True)
    line.done()
    data, report = make_bundle(doc, evidence, mtime=time.time())
    write_file(path, data, marker=BUNDLE_MARK, force=opts.force)
    said = f"{len(blames)} blamed pod(s), {len(evidence.logs)} log tail(s), {len(evidence.events)} Event(s)"
    text = (f"{path}: {notes[0] if notes else 'snapshot'}; evidence: {said}", *report.rstrip("\n").splitlines())
    warnings = tuple(f"evidence: {u}" for u in evidence.unread)
    fields: dict[str, Cell] = {"file": path, "bytes": len(data), "blamed": len(blames)}
    result = Result("snapshot", sections=(Section("written", (), text),), ok="", fields=fields)
    return Outcome(result, warnings=warnings)
