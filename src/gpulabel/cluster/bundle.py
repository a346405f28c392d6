"""Support bundles: a snapshot, the evidence of the failing operand pods, redacted, in one ``.tar.gz``.

Members (all redacted by :mod:`gpulabel.cluster.redact`):

- ``snapshot.json``: what ``gpulabel snapshot`` captures (nodes, pods,
  DaemonSets, the ClusterPolicy with its status, NodeFeatures and
  NodeFeatureRules, the DRA kinds), as one List;
- ``evidence.json``: the log tails and Events read for the pods the findings
  blame (``model.evidence.Evidence``), and what could not be read;
- ``logs/<namespace>_<pod>_<container>[.previous].log``: the same tails as
  plain text, for people;
- ``redaction.txt``: what was redacted, by rule, with counts.

``check``, ``explain`` and ``report`` read a bundle given as ``--snapshot``
like a snapshot (its ``snapshot.json``), and its evidence like a live read.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterable
from typing import Any

from gpulabel.cluster.redact import Redactor
from gpulabel.errors import SnapshotError
from gpulabel.model.evidence import EventNote, Evidence, LogLine, LogTail

__all__ = ["GZIP_MAGIC", "bundle_evidence", "bundle_member", "make_bundle"]

GZIP_MAGIC = b"\x1f\x8b"
MAX_MEMBER_BYTES = 1 << 30


def _redacted_evidence(evidence: Evidence, r: Redactor) -> Evidence:
    logs = tuple(
        LogTail(
            t.pod,
            t.container,
            t.init,
            t.previous,
            tuple(LogLine(ln.time, r.redact_text(ln.text)) for ln in t.lines),
            r.redact_text(t.error),
        )
        for t in evidence.logs
    )
    events = tuple(
        EventNote(e.kind, e.namespace, e.name, e.type, e.reason, r.redact_text(e.message), e.time, e.count)
        for e in evidence.events
    )
    return Evidence(logs, events, tuple(r.redact_text(u) for u in evidence.unread))


def make_bundle(snapshot: dict[str, Any], evidence: Evidence, mtime: float = 0.0) -> tuple[bytes, str]:
    """The ``.tar.gz`` bytes of a bundle, and its redaction report."""
    import gzip

    import orjson

    r = Redactor()
    doc = r.redact_document(snapshot)
    ev = _redacted_evidence(evidence, r)
    members: list[tuple[str, bytes]] = [
        ("snapshot.json", orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"),
        ("evidence.json", orjson.dumps(ev.to_json(), option=orjson.OPT_INDENT_2) + b"\n"),
    ]
    for t in ev.logs:
        name = f"logs/{t.pod.replace('/', '_')}_{t.container}{'.previous' if t.previous else ''}.log"
        members.append((name, "".join(f"{ln.time} {ln.text}\n" for ln in t.lines).encode()))
    report = r.report()
    members.append(("redaction.txt", report.encode()))
    raw = io.BytesIO()
    with tarfile.TarFile(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:  # in memory: write_file writes it
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), int(mtime), 0o644
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=int(mtime)), report


def bundle_member(data: bytes, path: str, member: str) -> bytes | None:
    """One member of a bundle's bytes (``None`` if absent); a gzip that is no tar is refused in one line."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            try:
                info = tar.getmember(member)
            except KeyError:
                return None
            if not info.isfile() or info.size > MAX_MEMBER_BYTES:
                raise SnapshotError(path, f"{member} in the bundle is not a file of at most {MAX_MEMBER_BYTES} bytes")
            fh = tar.extractfile(info)
            return fh.read() if fh is not None else None
    except (tarfile.TarError, OSError, EOFError) as err:
        raise SnapshotError(path, f"gzip data but not a gpulabel bundle (tar.gz): {err}") from None


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as err:
        raise SnapshotError(path, err.strerror or str(err)) from None


def bundle_evidence(paths: Iterable[str]) -> Evidence | None:
    """The evidence of the bundles among ``paths`` (merged, in order); ``None`` when none is a bundle."""
    import orjson

    found: list[Evidence] = []
    for path in paths:
        if path == "-":
            continue
        data = _read(path)
        if data[:2] != GZIP_MAGIC:
            continue
        member = bundle_member(data, path, "evidence.json")
        if member is None:
            continue
        try:
            found.append(Evidence.from_json(orjson.loads(member)))
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as err:
            raise SnapshotError(f"{path}: evidence.json", f"not gpulabel evidence: {err}") from None
    if not found:
        return None
    return Evidence(
        tuple(t for e in found for t in e.logs),
        tuple(v for e in found for v in e.events),
        tuple(u for e in found for u in e.unread),
    )
