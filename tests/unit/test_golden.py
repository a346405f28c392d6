"""The read-only commands print, byte for byte, what they printed when the golden files were recorded.

The golden files (tests/unit/golden/) were recorded with ``python -m bench.golden
record tests/unit/golden examples/*.yaml examples/*.json`` before the snapshot
decoders were rewritten for speed, and recorded again when the severities, root
causes, NFD and DRA changes of the same release were merged; a difference here is
a change of behaviour, not of speed. Record again only for an intended change of output.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from bench.golden import COMMANDS, golden_name, normalize

from gpulabel.cli.main import main

ROOT = Path(__file__).parents[2]
GOLDEN = Path(__file__).parent / "golden"
EXAMPLES = sorted(
    f"examples/{p.name}"
    for p in (ROOT / "examples").iterdir()
    if p.suffix in (".yaml", ".json") and p.name != "gpulabel-config.yaml"  # a config file, not a snapshot
)


def run_in_process(command: str, path: str) -> bytes:
    argv = [a.replace("{F}", path) for a in COMMANDS[command]]
    if "{F}" not in COMMANDS[command]:
        argv += ["--snapshot", path]
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out, err)
    return b"exit %d\n--- stdout\n%s--- stderr\n%s" % (code, out.getvalue().encode(), err.getvalue().encode())


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("path", EXAMPLES)
def test_output_is_the_recorded_one(path: str, command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the outputs name the file as given, relative to the repository
    golden = GOLDEN / golden_name(path, command)
    assert normalize(run_in_process(command, path)) == normalize(golden.read_bytes())


def test_every_example_has_its_golden_files() -> None:
    assert len(EXAMPLES) >= 5
    expected = {golden_name(p, c) for p in EXAMPLES for c in COMMANDS}
    assert expected == set(os.listdir(GOLDEN))
