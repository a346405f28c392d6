"""Feature files: NFD's ``features.d`` syntax, one file per node (``<node>.env``).

The syntax is NFD's local source: each line is trimmed; ``key=value`` splits
on the first ``=``; a bare ``key`` means ``true``; ``#`` starts a comment;
``# +expiry-time=<RFC3339>`` applies to the lines after it (until the next
such directive) and drops them once expired; ``# +no-label`` keeps the next
line from becoming a label. A key without a ``/`` gets NFD's default prefix
``feature.node.kubernetes.io/``. Files over 64 KiB and files whose name
starts with ``.`` are skipped, as NFD skips them.

Problems are data, not exceptions: an invalid line is reported with its
``file:line`` and left out, and the rest of the file still counts. Reading the
files from disk is :mod:`gpulabel.cluster.featurefiles`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from gpulabel.k8s.labels import key_errors, value_errors

__all__ = [
    "DEFAULT_PREFIX",
    "MAX_FILE_BYTES",
    "FeatureFile",
    "Problem",
    "parse_feature_text",
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


def _parse_expiry(text: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def parse_feature_text(data: bytes, path: str, node: str, now: datetime | None = None) -> FeatureFile:
    """Parse one feature file's bytes. ``now`` decides expiry (default: the current time)."""
    now = now or datetime.now(UTC)
    ff = FeatureFile(node=node, path=path)
    if b"\x00" in data:
        ff.problems.append(Problem(path, "binary data (NUL byte): not a feature file; nothing applied"))
        ff.refused = True
        return ff
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    expired = False
    no_label_next = False
    for number, raw in enumerate(data.split(b"\n"), start=1):
        where = f"{path}:{number}"
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            ff.problems.append(Problem(where, "not UTF-8 text; line skipped"))
            no_label_next = False
            continue
        if not line:
            continue
        if line.startswith("#"):
            directive = line[1:].strip()
            if directive.startswith("+expiry-time="):
                when = _parse_expiry(directive.partition("=")[2].strip())
                if when is None:
                    ff.problems.append(Problem(where, f"invalid expiry time {directive.partition('=')[2]!r}"))
                    expired = False
                else:
                    expired = when <= now
            elif directive == "+no-label":
                no_label_next = True
            continue
        if no_label_next:
            no_label_next = False
            continue
        if expired:
            continue
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip() if sep else "true"
        if key and "/" not in key:
            key = DEFAULT_PREFIX + key
        errs = key_errors(key) + value_errors(value)
        if errs:
            ff.problems.append(Problem(where, f"invalid label {key}={value}: {errs[0]}; not applied"))
            continue
        if key in ff.labels:
            first = ff.labels[key][1]
            ff.problems.append(
                Problem(where, f"{key} set again (first on line {first}); the last value wins", "warning")
            )
        ff.labels[key] = (value, number)
    return ff
