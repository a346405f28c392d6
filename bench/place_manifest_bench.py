"""Benchmark: ``place`` on a manifest of many pods (50,000 by default), against ``json.load`` of the same file.

Run: ``.venv/bin/python -m bench.place_manifest_bench [--pods N] [--shapes S] [--snapshot FILE]``.

``-o json`` holds a row per node per pod (the ``nodes`` section), so it grows
with pods x nodes; text output groups nodes.

The pods are the copies a Job or a Deployment makes: ``--shapes`` different pod
specs (GPU product, GPU count), each repeated; every pod has its own name. Both
commands run in a process of their own (``bench.measure``: CPU seconds and
peak RSS); the ratio is ``place``'s CPU time over ``json.load``'s. ``place``
checks and places each pod shape once (``cluster.manifests``, ``checks.placeview``).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile

from bench.measure import measure_code, measure_module

PRODUCTS = ["NVIDIA-A100-SXM4-40GB", "NVIDIA-L4", "Tesla-T4", "NVIDIA-H100-80GB-HBM3", "NVIDIA-A10"]


def manifest(pods: int, shapes: int) -> dict[str, object]:
    items = []
    for i in range(pods):
        s = i % shapes
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"train-{i}", "namespace": "ml", "labels": {"job": f"train-{s}"}},
                "spec": {
                    "nodeSelector": {"nvidia.com/gpu.product": PRODUCTS[s % len(PRODUCTS)]},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [
                        {
                            "name": "main",
                            "image": "registry.example.com/train:1.0",
                            "resources": {
                                "limits": {"nvidia.com/gpu": str(1 + s // len(PRODUCTS))},
                                "requests": {"cpu": "4", "memory": "16Gi"},
                            },
                        }
                    ],
                },
            }
        )
    return {"apiVersion": "v1", "kind": "List", "items": items}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pods", type=int, default=50_000)
    ap.add_argument("--shapes", type=int, default=10)
    ap.add_argument("--snapshot", default="examples/mixed-fleet.yaml")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "pods.json")
        with open(path, "w") as fh:
            json.dump(manifest(a.pods, a.shapes), fh)
        size = os.path.getsize(path) / 1e6
        base = measure_code("import json, sys\njson.load(open(sys.argv[1]))", path)
        runs = {
            fmt: measure_module("gpulabel", "place", "--snapshot", a.snapshot, path, "-o", fmt)
            for fmt in ("text", "json")
        }
    print(f"{a.pods} pods, {a.shapes} shapes, {size:.1f} MB of JSON")
    print(f"json.load: {base.cpu:.2f} s CPU, {base.rss_mb:.0f} MB peak")
    for fmt, m in runs.items():
        print(f"place -o {fmt}: {m.cpu:.2f} s CPU ({m.cpu / base.cpu:.1f}x json.load), {m.rss_mb:.0f} MB peak")
    return 0 if all(m.code in (0, 1) for m in runs.values()) else 2


if __name__ == "__main__":
    raise SystemExit(main())
