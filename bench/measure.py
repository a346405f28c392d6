"""One gpulabel (or Python) process, measured as its own: exit code, wall and CPU seconds, peak RSS.

The peak is the process's own ``VmHWM`` (``/proc/self/status``), read as it
exits. Not ``wait4``'s ``ru_maxrss``: Linux keeps, across ``exec``, the peak of
the memory the child was forked with, so every child of a large parent (a
benchmark that has read a snapshot, a test run) would report at least the
parent's size.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

__all__ = ["Measured", "measure_code", "measure_module"]

_WRAPPER = """
import atexit, os, sys
out = sys.argv.pop(1)
def _report():
    hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]
    t = os.times()
    with open(out, "w") as fh:
        fh.write(f"{hwm} {t.user + t.system}")
atexit.register(_report)
mode = sys.argv.pop(1)
if mode == "-m":
    import runpy
    sys.argv[0] = sys.argv[1]
    runpy.run_module(sys.argv.pop(1), run_name="__main__", alter_sys=True)
else:
    code = sys.argv.pop(1)
    exec(compile(code, "<measured>", "exec"), {"__name__": "__main__"})
"""


@dataclass(frozen=True)
class Measured:
    code: int
    stdout: bytes
    stderr: bytes
    wall: float
    cpu: float
    rss_mb: float


def _run(args: list[str], timeout: float, cwd: str | None) -> Measured:
    with tempfile.NamedTemporaryFile("r", suffix=".measure") as report:
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _WRAPPER, report.name, *args],
            capture_output=True,
            timeout=timeout,
            check=False,
            cwd=cwd,
        )
        wall = time.perf_counter() - started
        fields = report.read().split()
    hwm_kb, cpu = (int(fields[0]), float(fields[1])) if len(fields) == 2 else (0, float("nan"))
    return Measured(done.returncode, done.stdout, done.stderr, wall, cpu, hwm_kb / 1024)


def measure_module(module: str, *argv: str, timeout: float = 3600, cwd: str | None = None) -> Measured:
    """``python -m module ARGV``, measured."""
    return _run(["-m", module, *argv], timeout, cwd)


def measure_code(code: str, *argv: str, timeout: float = 3600, cwd: str | None = None) -> Measured:
    """``python -c code ARGV``, measured."""
    return _run(["-c", code, *argv], timeout, cwd)


if __name__ == "__main__":  # python -m bench.measure MODULE ARGS...: a quick look
    m = measure_module(*sys.argv[1:])
    print(f"exit {m.code}, {m.wall:.2f} s wall, {m.cpu:.2f} s CPU, {m.rss_mb:.0f} MB peak", file=sys.stderr)
    os._exit(0)
