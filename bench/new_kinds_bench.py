"""What the checks of the newer kinds add to ``check``: issue 50 item 3's measurement.

Run: ``.venv/bin/python -m bench.new_kinds_bench --nodes 20000 [--nodepools 50] [--flavors 200] [--pending 5000]``.

The cluster is ``bench/synth.py``'s, with the kinds issues 45, 46 and 49 added on top: ``--nodepools``
Karpenter NodePools (each a GPU product's template labels), ``--flavors`` Kueue ResourceFlavors, a quarter
of them naming a product no node has, each offered by a ClusterQueue of its own, and ``--pending`` more
Pending GPU pods (a third selecting a product no node has). The state is read once; then every check of
gpulabel's registry runs on it (``run_checks``), and so does the registry without the checks those issues
added (``managed``, ``queues``, ``admission``, ``stack``, ``runtime``), in turn, ``--rounds`` times. Printed:
each one's best CPU seconds and their ratio (goal, issue 50: at most 1.20), and the same ratio with the
parse of the snapshot added on both sides (``json.loads`` of the same objects: what ``check`` pays before
any check runs). Also every check on synth's cluster without the new objects (``plain``): what the
objects themselves add, every check's cost with them over without. The checks' own keepers are the
monitor's business (``bench/monitor_replay.py``).
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Sequence
from typing import Any

from bench import synth

NEW_CHECKS = ("managed", "queues", "admission", "stack", "runtime")
JSON = dict[str, Any]


def nodepool(i: int, product: str) -> JSON:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": f"gpu-{i:03d}"},
        "spec": {
            "template": {
                "metadata": {"labels": {"example.com/pool": f"gpu-{i:03d}"}},
                "spec": {
                    "requirements": [
                        {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": [product]}
                    ],
                    "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
                    "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
                },
            },
            "limits": {"nvidia.com/gpu": "64"},
        },
    }


def flavor_and_queue(i: int, product: str) -> list[JSON]:
    name = f"flavor-{i:03d}"
    flavor = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": name},
        "spec": {"nodeLabels": {"nvidia.com/gpu.product": product}},
    }
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": f"queue-{i:03d}"},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [{"name": name, "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 16}]}],
                }
            ],
        },
    }
    return [flavor, queue]


def pending_pod(i: int, product: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"queued-{i:05d}", "namespace": "queued", "uid": f"queued-{i:05d}"},
        "spec": {
            "nodeSelector": {"nvidia.com/gpu.product": product},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [{"name": "main", "resources": {"requests": {"nvidia.com/gpu": "1"}}}],
        },
        "status": {"phase": "Pending"},
    }


def extended(nodes: int, nodepools: int, flavors: int, pending: int) -> list[JSON]:
    """synth's cluster with the newer kinds on top (the same arguments always give the same objects)."""
    products = [m.product for m in synth.MACHINES]
    out = synth.objects(nodes)
    out += [nodepool(i, products[i % len(products)]) for i in range(nodepools)]
    for i in range(flavors):  # every fourth flavor names a product no node has
        out += flavor_and_queue(i, synth.ABSENT_PRODUCT if i % 4 == 3 else products[i % len(products)])
    out += [pending_pod(i, synth.ABSENT_PRODUCT if i % 3 == 2 else products[i % len(products)]) for i in range(pending)]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.new_kinds_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=20000)
    p.add_argument("--nodepools", type=int, default=50)
    p.add_argument("--flavors", type=int, default=200)
    p.add_argument("--pending", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args(argv)
    from gpulabel.checks.engine.definition import Registry
    from gpulabel.checks.registry import BUILTIN, run_checks
    from gpulabel.model.cluster import ClusterState

    objects = extended(a.nodes, a.nodepools, a.flavors, a.pending)
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})
    start = time.process_time()
    json.loads(text)
    parse = time.process_time() - start
    state = ClusterState.from_objects(("bench", o) for o in objects)
    del text
    gc.collect()
    gc.freeze()  # the state stays: collections while a check runs walk only what it made, as in gpulabel check
    kinds = sorted({o["kind"] for o in objects})
    plain = ClusterState.from_objects(("bench", o) for o in synth.objects(a.nodes))  # without the new objects
    gc.collect()
    gc.freeze()
    older = Registry(tuple(c for c in BUILTIN if c.name not in NEW_CHECKS))
    best = {"all": float("inf"), "without": float("inf"), "plain": float("inf")}
    findings = {}
    for _ in range(a.rounds):
        for name, registry, on in (("all", BUILTIN, state), ("without", older, state), ("plain", BUILTIN, plain)):
            gc.collect()
            start = time.process_time()
            result = run_checks(on, registry.options())
            best[name] = min(best[name], time.process_time() - start)
            findings[name] = len(result.findings)
    print(f"{a.nodes} nodes, {len(objects)} objects ({', '.join(kinds)}), best of {a.rounds}")
    print(f"every check: {best['all']:.2f} s CPU, {findings['all']} finding(s)")
    print(f"without {', '.join(NEW_CHECKS)}: {best['without']:.2f} s CPU, {findings['without']} finding(s)")
    ratio = best["all"] / best["without"]
    with_parse = (best["all"] + parse) / (best["without"] + parse)
    print(f"checks alone: {ratio:.2f}x; with the parse ({parse:.2f} s json.loads): {with_parse:.2f}x (goal <= 1.20x)")
    print(
        f"every check on the cluster without the new objects: {best['plain']:.2f} s CPU, {findings['plain']} finding(s)"
    )
    print(f"with the new objects / without them, every check: {best['all'] / best['plain']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
