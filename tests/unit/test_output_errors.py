"""Writing standard output fails: a full disk is one line and exit 2, a closed pipe ends quietly.

Run as a user runs them, in a process of their own: ``> /dev/full`` (ENOSPC
when the buffer is written) and a reader that has gone (``| head -c1``).
Before, each ended in an ``OSError`` traceback.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DRIFTED = str(ROOT / "examples" / "drifted-lab.yaml")
COMMANDS = {
    "check -o json": ["check", "--snapshot", DRIFTED, "-o", "json"],
    "check": ["check", "--snapshot", DRIFTED],
    "report --html -": ["report", "--snapshot", DRIFTED, "--html", "-"],
    "audit -o yaml": ["audit", "--snapshot", DRIFTED, "-o", "yaml"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_full_disk_on_stdout_is_one_line_and_exit_two(command: str) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "gpulabel", *COMMANDS[command]],
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    assert (done.returncode, done.stderr) == (2, b"gpulabel: standard output: No space left on device\n")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_closed_pipe_ends_quietly(command: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpulabel", *COMMANDS[command]], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line is written
    stderr = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(60) == 0
    assert stderr == b""  # no traceback, no "Exception ignored"
