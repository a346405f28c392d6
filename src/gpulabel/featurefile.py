"""Feature files: NFD's ``features.d`` syntax, one file per node (``<node>.env``).

The syntax is NFD's local source: each line is trimmed; ``key=value`` splits
on the first ``=``; a bare ``key`` means ``true``; ``#`` starts a comment;
``# +expiry-time=<RFC3339>`` applies to the lines after it (until the next
such directive) and drops them once expired; ``# +no-label`` keeps the next
line from becoming a label. A key without a ``/`` gets NFD's default prefix
``feature.node.kubernetes.io/``. Files over 64 KiB and files whose name
starts with ``.`` are skipped, as NFD skips them.

Problems are data, not exceptions: an invalid line is reported with its
``file:line`` and left out, and the rest of the file still counts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gpulabel.labels import key_errors, value_errors

__all__ = [
    "DEFAULT_PREFIX",
    "MAX_FILE_BYTES",
    "FeatureFile",
    "Problem",
    "parse_feature_text",
    "read_feature_dir",
    "read_feature_file",
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

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

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


def read_feature_file(path: str, now: datetime | None = None) -> FeatureFile:
    name = os.path.basename(path)
    node = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            ff = FeatureFile(node=node, path=path, refused=True)
            ff.problems.append(Problem(path, f"{size} bytes, over NFD's 64 KiB limit; file refused"))
            return ff
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        ff = FeatureFile(node=node, path=path, refused=True)
        ff.problems.append(Problem(path, f"cannot read: {err.strerror or err}"))
        return ff
    return parse_feature_text(data, path, node, now)


def read_feature_dir(directory: str, now: datetime | None = None) -> tuple[list[FeatureFile], list[Problem]]:
    """Every ``<node>.env`` file in ``directory``; dotfiles skipped, other files warned about."""
    try:
        names = sorted(os.listdir(directory))
    except OSError as err:
        return [], [Problem(directory, f"cannot read directory: {err.strerror or err}")]
    files: list[FeatureFile] = []
    problems: list[Problem] = []
    for name in names:
        path = os.path.join(directory, name)
        if name.startswith(".") or os.path.isdir(path):
            continue
        if not name.endswith(SUFFIX) or name == SUFFIX:
            problems.append(Problem(path, "not named <node>.env; ignored", "warning"))
            continue
        files.append(read_feature_file(path, now))
    return files, problems
