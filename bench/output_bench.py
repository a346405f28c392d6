"""Output that scales: ``check``, ``pending`` (text, json, table) and ``report --html`` against ``audit``.

Run: ``.venv/bin/python -m bench.output_bench [--nodes 20000] [--pods 50000] [--pending 20] [--repeat 2]``.

Writes a synthetic snapshot (``bench/synth.py``: GPU nodes with their operand pods, a few training
pods, and exactly ``--pending`` Pending pods that fit no node), then runs each command as its own
process on it, best of ``--repeat``, and prints seconds, peak RSS (``wait4``'s ``ru_maxrss`` of that
process alone), output size, and the ratio to ``audit`` on the same snapshot in the same run. The
targets (issue 16): every ratio within 2x, every peak RSS under 500 MB, output that grows with the
findings (a few kilobytes), not with pods x nodes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = (
    ("audit", ["audit"]),
    ("check", ["check"]),
    ("pending", ["pending"]),
    ("pending -o json", ["pending", "-o", "json"]),
    ("pending -o table", ["pending", "-o", "table"]),
    ("report --html", ["report", "--html", "{html}"]),
)
RSS_LIMIT_MB = 500
RATIO_LIMIT = 2.0


def _write_snapshot(path: Path, nodes: int, pods: int, pending: int) -> str:
    """A snapshot with ``nodes`` nodes, about ``pods`` pods and exactly ``pending`` Pending pods."""
    import orjson

    from bench.synth import generate

    gpu_fraction = 0.82
    gpu_nodes = round(nodes * gpu_fraction)
    # three operand pods per GPU node; the rest of the pods are training workloads
    workloads = max(0.0, (pods - 3 * gpu_nodes) / gpu_nodes)
    synth = generate(
        nodes, seed=1, gpu_fraction=gpu_fraction, problem_rate=pending / gpu_nodes, workloads_per_gpu_node=workloads
    )
    kinds: dict[str, int] = {}
    for obj in synth.objects:
        kinds[obj["kind"]] = kinds.get(obj["kind"], 0) + 1
    data = orjson.dumps(synth.as_list())
    path.write_bytes(data)
    shown = ", ".join(f"{n:,} {k}" for k, n in kinds.items())
    return f"{shown}; {len(synth.problems['pending'])} Pending; {len(data) / 1e6:.0f} MB of JSON"


def _run(argv: list[str]) -> tuple[float, float, int]:
    """Seconds, peak RSS in MB and stdout bytes of one ``gpulabel`` process."""
    exe = str(Path(sys.executable).with_name("gpulabel"))
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen([exe, *argv], stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"output_bench: {' '.join(argv)} exited {proc.returncode}")
        size = out.tell()
    return elapsed, usage.ru_maxrss / 1024, size


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.output_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=20000)
    p.add_argument("--pods", type=int, default=50000)
    p.add_argument("--pending", type=int, default=20)
    p.add_argument("--repeat", type=int, default=2)
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        snapshot = Path(tmp) / "snapshot.json"
        print(f"snapshot: {_write_snapshot(snapshot, a.nodes, a.pods, a.pending)}")
        html = str(Path(tmp) / "report.html")
        results = {}
        for name, args in COMMANDS:
            runs = [_run([*(x.format(html=html) for x in args), "--snapshot", str(snapshot)]) for _ in range(a.repeat)]
            results[name] = (min(r[0] for r in runs), max(r[1] for r in runs), runs[0][2])
    base = results["audit"][0]
    failed = False
    print(f"{'command':<20} {'seconds':>8} {'peak RSS':>10} {'stdout':>10} {'x audit':>8}")
    for name, (seconds, rss, size) in results.items():
        ratio = seconds / base
        bad = ratio > RATIO_LIMIT or rss > RSS_LIMIT_MB
        failed = failed or bad
        flag = "  <- over the target" if bad else ""
        print(f"{name:<20} {seconds:>8.2f} {rss:>7.0f} MB {size:>10,} {ratio:>7.2f}x{flag}")
    print(f"targets: within {RATIO_LIMIT:g}x audit, peak RSS under {RSS_LIMIT_MB} MB: {'missed' if failed else 'met'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
