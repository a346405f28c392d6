"""Reading feature files from disk: one ``<node>.env`` per node, as NFD's local source reads ``features.d``."""

from __future__ import annotations

import os
from datetime import datetime

from gpulabel.model.featurefile import MAX_FILE_BYTES, SUFFIX, FeatureFile, Problem, parse_feature_text

__all__ = ["read_feature_dir", "read_feature_file"]


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
        if not os.path.isfile(path):  # local.go getFileContent reads regular files only (a FIFO would block)
            problems.append(Problem(path, "not a regular file: NFD reads nothing from it; ignored", "warning"))
            continue
        files.append(read_feature_file(path, now))
    return files, problems
