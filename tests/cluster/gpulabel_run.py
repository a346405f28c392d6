"""Run the gpulabel CLI against labcluster, as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def gpulabel(kubeconfig: Path | str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``gpulabel ARGS --kubeconfig KUBECONFIG`` in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "gpulabel", *args, "--kubeconfig", str(kubeconfig)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def monitor_argv(kubeconfig: Path | str, dump: Path | str, *extra: str) -> list[str]:
    """``gpulabel monitor`` with no metrics server, its findings in ``dump`` after every evaluation."""
    flags = ["--kubeconfig", str(kubeconfig), "--metrics-port", "0", "--dump", str(dump)]
    return [sys.executable, "-m", "gpulabel", "monitor", *flags, *extra]


def lines_about(output: str, *subjects: str) -> list[str]:
    """The output lines whose first word is one of ``subjects`` (other tests share the cluster)."""
    return [line for line in output.splitlines() if line.split(" ", 1)[0] in subjects]
