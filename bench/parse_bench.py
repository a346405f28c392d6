"""The snapshot path against the parse floor: each command's time and peak RSS as ratios to ``json.load``.

Run: ``.venv/bin/python -m bench.parse_bench --nodes 20000 [--forms indented,compact,yaml] [--keep DIR]``
(or ``--snapshot FILE`` for a file of your own, indented JSON).

Writes a synthetic snapshot (``bench/synth.py``) as indented JSON, what ``kubectl get -o json``
writes, and optionally the same objects as compact JSON and as YAML. For each form, in one run, each
command runs as its own process, as a user runs it: the floor (``json.load``, ``orjson.loads``, and
``yaml.load`` with the C loader for the YAML form), then ``audit``, ``check``, ``pending``,
``report --html`` and ``diff F F``. It prints wall seconds and peak RSS (``wait4``'s ``ru_maxrss`` of
that process alone) with their ratios to the form's floor (``json.load``; for YAML, ``yaml.load``).

Goals (issue 25): ``audit`` at most 1.0x, ``check``, ``pending``, ``report --html`` at most 1.5x,
``diff F F`` at most 2x the floor's time; every peak RSS at most the floor's. Exit 1 when one is missed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AT = "2026-12-01T00:00:00Z"
COMMANDS: tuple[tuple[str, list[str], float], ...] = (
    ("audit", ["audit", "--snapshot", "{F}"], 1.0),
    ("check", ["check", "--at", AT, "--snapshot", "{F}"], 1.5),
    ("pending", ["pending", "--snapshot", "{F}"], 1.5),
    ("report --html", ["report", "--html", os.devnull, "--at", AT, "--snapshot", "{F}"], 1.5),
    ("diff F F", ["diff", "{F}", "{F}"], 2.0),
)
FLOORS = {
    "json.load": "import json, sys; json.load(open(sys.argv[1]))",
    "orjson.loads": "import orjson, sys; orjson.loads(open(sys.argv[1], 'rb').read())",
    "yaml.load (C loader)": "import yaml, sys; yaml.load(open(sys.argv[1]), Loader=yaml.CSafeLoader)",
}


def measure(argv: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MB) and exit code of one process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, usage.ru_maxrss / 1024, proc.returncode


def write_forms(nodes: int, out: Path, forms: list[str], snapshot: str | None) -> dict[str, Path]:
    import json

    paths: dict[str, Path] = {}
    indented = Path(snapshot) if snapshot else out / f"synth-{nodes}.json"
    if not indented.exists():
        subprocess.run([sys.executable, "-m", "bench.synth", "--nodes", str(nodes), "--out", str(indented)], check=True)
    paths["indented"] = indented
    if "compact" in forms or "yaml" in forms:
        doc = json.loads(indented.read_bytes())
        if "compact" in forms:
            paths["compact"] = out / f"{indented.stem}-compact.json"
            if not paths["compact"].exists():
                paths["compact"].write_text(json.dumps(doc, separators=(",", ":")))
        if "yaml" in forms:
            import yaml

            paths["yaml"] = out / f"{indented.stem}.yaml"
            if not paths["yaml"].exists():
                with paths["yaml"].open("w") as fh:
                    yaml.dump(doc, fh, Dumper=yaml.CSafeDumper, sort_keys=False)
        del doc
    return {f: p for f, p in paths.items() if f in forms}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.parse_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=20000)
    parser.add_argument("--snapshot", help="an indented JSON snapshot to use instead of a synthetic one")
    parser.add_argument("--forms", default="indented", help="comma-separated: indented, compact, yaml")
    parser.add_argument("--keep", help="write the snapshots here and keep them (default: a temporary folder)")
    parser.add_argument("--only", action="append", help="these commands only (by name, e.g. audit)")
    args = parser.parse_args(argv)
    forms = [f for f in args.forms.split(",") if f]
    missed = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.keep or tmp)
        out.mkdir(parents=True, exist_ok=True)
        paths = write_forms(args.nodes, out, forms, args.snapshot)
        for form, path in paths.items():
            size = path.stat().st_size / 1e6
            print(f"\n{form}: {path} ({size:.1f} MB), {args.nodes} nodes")
            print("| command | time (s) | x floor | peak RSS (MB) | x floor RSS | goal |")
            print("|---|---|---|---|---|---|")
            floors = ["yaml.load (C loader)"] if form == "yaml" else ["json.load", "orjson.loads"]
            base_t = base_rss = 0.0
            for name in floors:
                t, rss, code = measure([sys.executable, "-c", FLOORS[name], str(path)])
                if not base_t:
                    base_t, base_rss = t, rss
                print(f"| `{name}` | {t:.2f} | {t / base_t:.2f} | {rss:.0f} | {rss / base_rss:.2f} | (floor) |")
            for name, cmd, goal in COMMANDS:
                if args.only and name.split()[0] not in args.only:
                    continue
                t, rss, code = measure([sys.executable, "-m", "gpulabel", *[a.replace("{F}", str(path)) for a in cmd]])
                ok = t / base_t <= goal and rss <= base_rss and code in (0, 1)
                missed += not ok
                verdict = "met" if ok else "MISSED" + (f" (exit {code})" if code not in (0, 1) else "")
                print(
                    f"| `{name}` | {t:.2f} | {t / base_t:.2f} | {rss:.0f} | {rss / base_rss:.2f} "
                    f"| <= {goal}x, RSS <= floor: {verdict} |",
                    flush=True,
                )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
