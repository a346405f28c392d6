"""The README's examples and the tour are a contract: every command in them prints exactly what they show.

Every ```console block of README.md and docs/*.md (the tour is docs/tour.md)
is split into commands (``$ ...``) and the lines under each. A line ``...``
elides lines of the real output; every other line must appear, in order,
contiguous with its neighbours. Commands run from a scratch
directory that sees the repository's ``examples/``, so ``report`` writes its
page there.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


DOCUMENTS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))


def _tour() -> list[tuple[str, list[str]]]:
    blocks = [block for doc in DOCUMENTS for block in re.findall(r"```console\n(.*?)```", doc.read_text(), re.S)]
    steps: list[tuple[str, list[str]]] = []
    for block in blocks:
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
    return steps


def _matches(expected: list[str], actual: list[str]) -> bool:
    if "..." not in expected:
        return expected == actual
    segments: list[list[str]] = [[]]
    for line in expected:
        if line == "...":
            segments.append([])
        else:
            segments[-1].append(line)
    pos = 0
    for i, seg in enumerate(segments):
        if not seg:
            continue
        if i == 0:
            if actual[: len(seg)] != seg:
                return False
            pos = len(seg)
            continue
        found = next((j for j in range(pos, len(actual) - len(seg) + 1) if actual[j : j + len(seg)] == seg), None)
        if found is None:
            return False
        pos = found + len(seg)
    return not segments[-1] or pos == len(actual)


STEPS = _tour()


def test_the_readme_has_a_tour() -> None:
    assert len(STEPS) >= 10


def test_the_readme_and_the_tour_both_show_examples() -> None:
    for doc in (ROOT / "README.md", ROOT / "docs" / "tour.md"):
        assert "```console\n$ gpulabel " in doc.read_text(), doc


@pytest.mark.parametrize(("command", "expected"), STEPS, ids=[c for c, _ in STEPS])
def test_the_readme_tour_prints_what_it_shows(tmp_path: Path, command: str, expected: list[str]) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}", COLUMNS="200")
    env.pop("NO_COLOR", None)
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    actual = done.stdout.splitlines()
    assert _matches(expected, actual), "\n".join(["expected:", *expected, "actual:", *actual, done.stderr])
