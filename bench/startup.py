"""Start-up cost: `gpulabel --help` and the import cost of candidate libraries.

Each figure is the best of N runs of a fresh interpreter, printed with its
ratio to a bare `python -c pass` measured in the same run (this machine is
noisy; ratios travel, absolute times do not).

    .venv/bin/python bench/startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import time

CANDIDATES = [
    ("argparse", "import argparse"),
    ("json", "import json"),
    ("orjson", "import orjson"),
    ("yaml (libyaml)", "import yaml; yaml.CSafeLoader"),
    ("rich.console", "import rich.console"),
    ("click", "import click"),
    ("typer", "import typer"),
    ("httpx", "import httpx"),
    ("urllib3", "import urllib3"),
    ("kubernetes.config + ApiClient", "from kubernetes import client, config; client.ApiClient"),
    ("kubernetes + V1Node model", "from kubernetes.client import V1Node"),
    ("lightkube", "import lightkube"),
    ("kr8s", "import kr8s"),
    ("gpulabel.cli.main", "import gpulabel.cli.main"),
]


def best_of(argv: list[str], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    py = sys.executable
    base = best_of([py, "-c", "pass"], args.runs)
    print(f"{'what':40} {'best s':>8} {'x bare python':>14}")
    print(f"{'python -c pass (baseline)':40} {base:8.3f} {1.0:14.1f}")
    gpulabel = os.path.join(os.path.dirname(py), "gpulabel")
    t = best_of([gpulabel, "--help"], args.runs)
    print(f"{'gpulabel --help':40} {t:8.3f} {t / base:14.1f}")
    t = best_of([gpulabel, "sanitize", "NVIDIA A100"], args.runs)
    print(f"{'gpulabel sanitize VALUE':40} {t:8.3f} {t / base:14.1f}")
    for name, code in CANDIDATES:
        top = code.replace(";", " ").split()[1].split(".")[0]
        if importlib.util.find_spec(top) is None:
            print(f"{name:40} {'not installed':>8}")
            continue
        t = best_of([py, "-c", code], args.runs)
        print(f"{name:40} {t:8.3f} {t / base:14.1f}")


if __name__ == "__main__":
    main()
