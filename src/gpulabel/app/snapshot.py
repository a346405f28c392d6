"""``snapshot``: what every check reads, captured from the live cluster into one file (or stdout)."""

from __future__ import annotations

from dataclasses import dataclass

from gpulabel.app.session import Outcome, Session
from gpulabel.model.findings import Result

__all__ = ["GENERATOR_MARK", "SnapshotOptions", "run_snapshot"]


@dataclass(frozen=True, slots=True)
class SnapshotOptions:
    output: str = "-"  # the file to write (cluster/files.py's rules: never replaces what gpulabel did not make)
    progress: bool = False  # the progress line on stderr even when it is not a terminal (one line per step)
    force: bool = False  # replace an existing file gpulabel did not write


GENERATOR_MARK = b'"generator": "gpulabel"'  # a top-level key of every snapshot gpulabel writes (before its items)


def run_snapshot(session: Session, opts: SnapshotOptions) -> Outcome:
    """Capture; the document is the outcome's page for ``-``, else written to the file; exit 0."""
    import orjson

    from gpulabel.cluster.capture import capture
    from gpulabel.cluster.progress import Progress

    notes: list[str] = []
    progress = Progress("snapshot", delay=0.0, force=True) if opts.progress else None
    doc = capture(session.client(), notes.append, progress)
    items = doc.pop("items")
    doc = {**doc, "generator": "gpulabel", "items": items}  # the mark cluster/files.py knows its own files by
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    if opts.output == "-":
        return Outcome(Result("snapshot", ok=""), warnings=tuple(f"snapshot: {n}" for n in notes), page=data.decode())
    from gpulabel.cluster.files import write_file

    write_file(opts.output, data, marker=GENERATOR_MARK, force=opts.force)
    line = f"{opts.output}: {notes[0]}" if notes else opts.output
    from gpulabel.model.findings import Section

    section = Section("written", (), (line,))
    return Outcome(Result("snapshot", sections=(section,), ok="", fields={"file": opts.output, "bytes": len(data)}))
