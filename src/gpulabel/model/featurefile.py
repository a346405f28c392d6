"""Feature files: NFD's ``features.d`` syntax, one file per node (``<node>.env``).

The rules are nfd-worker's ``local`` source (``source/local/local.go``:
``parseFeatureFile``, ``parseDirectives``, ``updateFeatures``), carried over
rule for rule; where NFD's docs and its code disagree, this follows the code:

- the file is split on ``\\n`` and each line trimmed of white space as Go's
  ``strings.TrimSpace`` trims it; empty lines are skipped;
- a line starting with ``#`` is a comment; it is a directive only when it
  starts with exactly ``# +`` (``#+no-label`` and ``#  +no-label`` are plain
  comments: reported as warnings, since they look like directives);
- a directive is ``# +NAME`` or ``# +NAME=VALUE``, split on the first ``=``
  with no trimming; ``no-label`` drops the next live line from the labels and
  removes a label of that key set earlier; ``no-feature`` concerns NFD's raw
  features, not labels; ``expiry-time=VALUE`` takes ``VALUE`` (trimmed) as
  Go's ``time.Parse(time.RFC3339, ...)`` does: date, ``T``, time and a zone
  (``Z`` or ``+hh:mm``) are all required; a directive that does not parse is
  reported and the earlier expiry stays in force; any other name is an unknown
  directive, reported;
- the expiry applies to the lines after it; a line is expired when the expiry
  is strictly before now (the start is "now": not expired); an expired line is
  skipped without ending a pending ``no-label``, which carries on to the next
  live line;
- a live line splits on the first ``=`` without trimming (``key = v`` has the
  key ``"key "``, which is invalid); a bare ``key`` means ``true``; each live
  line ends a pending ``no-label``; the last value of a key wins.

Then, as nfd-worker does with the source's labels: a key without a ``/`` gets
the prefix ``feature.node.kubernetes.io/``, and a label whose key or value the
API server would refuse is reported with its ``file:line`` and left out. Files
over 64 KiB and files whose name starts with ``.`` are skipped, as NFD skips
them; a file with a NUL byte is refused whole (gpulabel's rule: it is not text).

Problems are data, not exceptions; the rest of the file still counts. Reading
the files from disk is :mod:`gpulabel.cluster.featurefiles`.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone

from gpulabel.k8s.labels import key_errors, value_errors

__all__ = [
    "DEFAULT_PREFIX",
    "DIRECTIVES",
    "GO_SPACE",
    "MAX_FILE_BYTES",
    "FeatureFile",
    "Problem",
    "parse_feature_text",
    "parse_rfc3339",
]

MAX_FILE_BYTES = 64 * 1024
DEFAULT_PREFIX = "feature.node.kubernetes.io/"
SUFFIX = ".env"


@dataclass(frozen=True, slots=True)
class Problem:
    """An error or warning about a place in a feature file."""

    where: str
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.severity == "error" else f"{self.where}: warning: {self.message}"


@dataclass
class FeatureFile:
    """One node's desired labels: key -> (value, line number)."""

    node: str
    path: str
    labels: dict[str, tuple[str, int]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    refused: bool = False  # the whole file is unusable (unreadable, too large, binary): apply nothing

    def desired(self) -> dict[str, str]:
        return {k: v for k, (v, _) in self.labels.items()}


# Go's unicode.IsSpace: what strings.TrimSpace trims (Python's str.strip() also trims \x1c-\x1f).
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
GO_SPACE += "\u2028\u2029\u202f\u205f\u3000"
DIRECTIVE_PREFIX = "# +"
DIRECTIVES = ("expiry-time", "no-label", "no-feature")
_LOOKALIKE = re.compile(r"#\s*\+")

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:(Z)|([+-])(\d{2}):(\d{2}))", re.ASCII
)


def parse_rfc3339(text: str) -> datetime | None:
    """``time.Parse(time.RFC3339, text)``, or ``None`` where Go returns an error.

    Date, ``T``, time and zone are required; fractional seconds (after ``.`` or
    ``,``) are accepted, as Go accepts them when parsing; every field is range
    checked (the day against its month). Year 0, which Python cannot hold, is
    taken as the earliest time Python can.
    """
    m = _RFC3339.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.group(1, 2, 3, 4, 5, 6))
    if not (1 <= month <= 12 and hour <= 23 and minute <= 59 and second <= 59):
        return None
    if not 1 <= day <= (calendar.monthrange(year or 2000, month)[1]):
        return None
    zone = UTC
    if m.group(8) is None:
        zh, zm = int(m.group(10)), int(m.group(11))
        if zh > 23 or zm > 59:
            return None
        sign = -1 if m.group(9) == "-" else 1
        zone = timezone(sign * timedelta(hours=zh, minutes=zm))
    if year == 0:
        return datetime.min.replace(tzinfo=UTC)
    micro = int((m.group(7) or "0")[:6].ljust(6, "0"))
    try:
        return datetime(year, month, day, hour, minute, second, micro, tzinfo=zone)
    except (ValueError, OverflowError):
        return None


def _show(text: str) -> str:
    """Text fit to print: bytes that are not UTF-8 shown as ``\\xNN``."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _label_key(raw: str) -> str:
    return raw if "/" in raw else DEFAULT_PREFIX + raw


class _Directives:
    """The parsing state ``parseDirectives`` keeps: the expiry in force and a pending ``no-label``."""

    def __init__(self, now: datetime) -> None:
        self.expiry = now
        self.skip_label = False

    def apply(self, line: str, where: str, problems: list[Problem]) -> None:
        if not line.startswith(DIRECTIVE_PREFIX):
            if _LOOKALIKE.match(line):
                problems.append(
                    Problem(
                        where, f"{_show(line)!r} is a plain comment: a directive starts with exactly '# +'", "warning"
                    )
                )
            return
        name, sep, value = line[len(DIRECTIVE_PREFIX) :].partition("=")
        if name == "expiry-time":
            if not sep:
                problems.append(Problem(where, "invalid directive: should be '# +expiry-time=<RFC 3339 time>'"))
                return
            when = parse_rfc3339(value.strip(GO_SPACE))
            if when is None:
                problems.append(
                    Problem(
                        where,
                        f"invalid expiry time {_show(value)!r}: not RFC 3339 with a time zone "
                        "(e.g. 2026-12-31T23:59:59Z); the earlier expiry stays in force",
                    )
                )
                return
            self.expiry = when
        elif name == "no-label":
            self.skip_label = True
        elif name != "no-feature":  # no-feature concerns NFD's raw features only
            known = ", ".join(DIRECTIVES)
            problems.append(Problem(where, f"unknown directive {_show(name)!r} (NFD knows {known}); ignored"))


def parse_feature_text(data: bytes, path: str, node: str, now: datetime | None = None) -> FeatureFile:
    """Parse one feature file's bytes. ``now`` decides expiry (default: the current time)."""
    now = now or datetime.now(UTC)
    ff = FeatureFile(node=node, path=path)
    if b"\x00" in data:
        ff.problems.append(Problem(path, "binary data (NUL byte): not a feature file; nothing applied"))
        ff.refused = True
        return ff
    state = _Directives(now)
    raw: dict[str, tuple[str, int]] = {}  # the source's labels, keys as written
    for number, chunk in enumerate(data.split(b"\n"), start=1):
        where = f"{path}:{number}"
        line = chunk.decode("utf-8", "surrogateescape").strip(GO_SPACE)
        if not line:
            continue
        if line.startswith("#"):
            state.apply(line, where, ff.problems)
            continue
        if state.expiry < now:
            continue  # expired; a pending no-label waits for the next live line
        key, sep, value = line.partition("=")
        if state.skip_label:
            if key in raw:
                first = raw.pop(key)[1]
                ff.problems.append(Problem(where, f"+no-label removes {_show(key)} set on line {first}", "warning"))
        else:
            if key in raw:
                first = raw[key][1]
                ff.problems.append(
                    Problem(where, f"{_show(key)} set again (first on line {first}); the last value wins", "warning")
                )
            raw[key] = (value if sep else "true", number)
        state.skip_label = False
    for key, (value, number) in raw.items():
        full = _label_key(key)
        errs = key_errors(full) + value_errors(value)
        if errs:
            ff.problems.append(
                Problem(f"{path}:{number}", f"invalid label {_show(full)}={_show(value)}: {errs[0]}; not applied")
            )
            continue
        ff.labels[full] = (value, number)
    if data.startswith(b"\xef\xbb\xbf"):
        ff.problems.append(
            Problem(f"{path}:1", "starts with a byte order mark, which NFD keeps as part of the first line", "warning")
        )
    return ff
