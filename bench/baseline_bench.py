"""Benchmark: ``--baseline`` with many findings (1,000,000 by default), against ``json.load`` of the same file.

Run: ``.venv/bin/python -m bench.baseline_bench [--findings N] [--case other|stale|all]
[--pythonpath SRC]`` (``--pythonpath /tmp/old/src`` measures another tree's gpulabel).

The baseline is a ``gpulabel -o json`` envelope whose findings look like
``audit``'s (check, reason, severity, node, key, detail, args; about 150 bytes
each). Cases, each ``gpulabel audit --snapshot examples/drifted-lab.yaml
--baseline FILE`` in a process of its own (``bench.measure``: CPU seconds,
peak RSS from ``VmHWM``):

- ``other``: the findings are of a check this run does not run (``hazards``):
  the baseline is read and checked, nothing of it is printed. This is the
  cost of reading the baseline itself; it should not grow with the file.
- ``stale``: the findings are ``audit``'s about nodes the fleet does not
  have: every one is printed as ``in the baseline, no longer found``, so the
  output (and the findings behind it) has a line per baseline entry.

The ratio is gpulabel's CPU time over ``json.load``'s of the same file.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile

from bench.measure import measure_code, measure_module

SNAPSHOT = "examples/drifted-lab.yaml"


def write_baseline(path: str, findings: int, check: str) -> None:
    """A ``-o json`` envelope of ``findings`` findings of ``check``, written piece by piece."""
    with open(path, "w") as fh:
        fh.write('{"apiVersion":"gpulabel/v1","kind":"AuditResult","findings":[')
        for i in range(findings):
            if i:
                fh.write(",")
            fh.write(
                f'{{"check":"{check}","reason":"missing","severity":"error","node":"gpu-node-{i:07d}",'
                f'"key":"nvidia.com/gpu.present","detail":"label missing on a node with GPUs ({i})",'
                f'"args":["nvidia.com/gpu.present"]}}'
            )
        fh.write(f'],"summary":{{"findings":{findings}}}}}\n')


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--findings", type=int, default=1_000_000)
    ap.add_argument("--case", choices=("other", "stale", "all"), default="all")
    ap.add_argument("--pythonpath", default="", help="the src directory of another gpulabel tree to measure")
    a = ap.parse_args()
    if a.pythonpath:
        os.environ["PYTHONPATH"] = os.path.abspath(a.pythonpath)
    cases = ("other", "stale") if a.case == "all" else (a.case,)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            path = os.path.join(tmp, f"{case}.json")
            write_baseline(path, a.findings, "hazards" if case == "other" else "audit")
            size = os.path.getsize(path) / 1e6
            base = measure_code("import json, sys\njson.load(open(sys.argv[1]))", path)
            m = measure_module("gpulabel", "audit", "--snapshot", SNAPSHOT, "--baseline", path)
            failed |= m.code not in (0, 1)
            lines = m.stdout.count(b"\n")
            digest = hashlib.sha256(m.stdout).hexdigest()[:16]
            print(f"{case}: {a.findings:,} findings, {size:.0f} MB;", end=" ")
            print(f"json.load {base.cpu:.2f} s CPU {base.rss_mb:.0f} MB")
            print(
                f"  gpulabel audit --baseline: exit {m.code}, {m.cpu:.2f} s CPU ({m.cpu / base.cpu:.1f}x json.load),"
                f" {m.rss_mb:.0f} MB peak, {lines:,} lines out (sha256 {digest})"
            )
            if m.code not in (0, 1):
                print("  " + m.stderr.decode(errors="replace").strip()[-300:])
    return 2 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
