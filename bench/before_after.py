"""Before and after, in one run: the DRA bench and a ``check`` of a synthetic snapshot, on two trees.

The ``before`` tree is ``git archive REV`` (src, bench, tests) in a temporary
directory; ``after`` is this checkout. The runs alternate (before, after,
before, ...) so a busy machine slows both alike; each figure is the best of
``--rounds``, and each ratio is after / before (below 1: faster). CPU
seconds (user + system) of the process are steadier than wall time on a shared machine.

    python -m bench.before_after --rev ee6d337 [--nodes 5000] [--rounds 3]

Measured: ``bench/dra_bench.py`` of each tree (its own API: the bench moves
with the code; 10,000 devices x 100 pending pods), and ``gpulabel check
--snapshot F`` (wall time and peak RSS of the process) on the snapshot
``bench.synth --nodes N`` writes once for both.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def export(rev: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "archive", rev, "src", "bench", "tests"], cwd=ROOT, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def run(tree: Path, args: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds, peak RSS (MB) and stdout of ``python ARGS`` with ``tree``'s code."""
    env = {**os.environ, "PYTHONPATH": f"{tree / 'src'}:{tree}"}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *args], cwd=tree, env=env, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # check exits 1 when it finds problems
        raise SystemExit(f"{tree}: {' '.join(args)} failed with {status}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def dra_figures(out: str) -> dict[str, float]:
    found = {}
    for key, pattern in (
        ("parse", r"parse into DRA objects:\s+([\d.]+) s"),
        ("explain", r"parse \+ explain[^:]*:\s+([\d.]+) s"),
    ):
        m = re.search(pattern, out)
        if m is None:
            raise SystemExit(f"dra_bench printed no {key} figure:\n{out}")
        found[key] = float(m.group(1))
    return found


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rev", required=True, help="the 'before' commit")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="before-after-") as tmp:
        (Path(tmp) / "before").mkdir()
        before = export(args.rev, Path(tmp) / "before")
        snapshot = Path(tmp) / "snapshot.json"
        run(ROOT, ["-m", "bench.synth", "--nodes", str(args.nodes), "--out", str(snapshot)])
        trees = {"before": before, "after": ROOT}
        best: dict[tuple[str, str], float] = {}

        def keep(tree: str, what: str, value: float) -> None:
            best[(tree, what)] = min(value, best.get((tree, what), value))

        for _ in range(args.rounds):
            for name, tree in trees.items():
                wall, cpu, rss, _ = run(tree, ["-m", "gpulabel", "check", "--snapshot", str(snapshot)])
                keep(name, f"check {args.nodes} nodes, wall s", wall)
                keep(name, f"check {args.nodes} nodes, CPU s", cpu)
                keep(name, f"check {args.nodes} nodes, peak RSS MB", rss)
        for name, tree in trees.items():  # dra_bench takes the best of 3 itself
            _, _, _, out = run(tree, ["-m", "bench.dra_bench"])
            for key, value in dra_figures(out).items():
                keep(name, f"dra_bench {key} s", value)
        print(f"before: {args.rev}, after: the working tree; best of {args.rounds} (dra_bench: its own best of 3)")
        for what in dict.fromkeys(w for _, w in best):
            b, a = best[("before", what)], best[("after", what)]
            print(f"{what:<36} before {b:8.3f}  after {a:8.3f}  ratio {a / b:.2f}")
    print(f"peak RSS of this script's children: {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
