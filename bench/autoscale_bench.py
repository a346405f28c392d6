"""What the autoscaler verdict (issue 45 item 2) adds to ``pending``: the measurement issue 45 asks for.

Run: ``.venv/bin/python -m bench.autoscale_bench [--nodes 20000] [--nodepools 50] [--pending 5000]``.

The cluster is ``bench/new_kinds_bench.py``'s (``bench/synth.py``'s nodes and pods, ``--nodepools`` NodePools,
each a GPU product's ``karpenter.k8s.aws/instance-gpu-name`` requirement, a ``nvidia.com/gpu`` taint and a limit),
with no Kueue objects, and ``--pending`` Pending GPU pods in a realistic mix, none of which fits a node (no node
carries the template-time label, and the rest ask for what no node has):

- a quarter select a product's template-time label (``karpenter.k8s.aws/instance-gpu-name``) that some NodePool
  serves: a NodePool can make their node (``nodepool-can``), or, where the NodePool Karpenter would choose (of
  equal weights, the last by name) is one of every fifth from the last, which have a NodeClaim in flight
  (launched, not registered; made 5 minutes before the time judged), a node is coming (``node-coming``);
- a quarter select GFD's ``nvidia.com/gpu.product`` (a key no template knows: ``no-autoscaler``, unknown key);
- a quarter select the seeds' NFD key ``feature.node.kubernetes.io/custom-gpu-training`` (unknown as well);
- a quarter select a template-time product no NodePool offers (a known key, no value: ``no-autoscaler``).

They ask for 1 to 8 GPUs (``i % 8 + 1``), so the asks are distinct by selector and count, as Deployments' and Jobs'
replicas share one (``--distinct``: each pod's cpu request its own, no two asks alike: the worst case). The
state is read once; ``pending_result`` then runs on it with its NodePools and NodeClaims
(every pod gets a verdict, judged at a fixed time, as ``check`` judges at its own) and on the same state without
them (the baseline: no verdict), in turn, ``--rounds`` times. Printed: each one's best CPU seconds, the verdicts
by reason, and the ratio (goal, issue 45: under 1.20), with the load average. The verdict is computed once per
distinct ask (``checks/pending/autoscale.autoscale_findings``), so its cost grows with asks x NodePools, not
pods x NodePools.
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from bench import new_kinds_bench, synth

JSON = dict[str, Any]
NOW = datetime(2026, 12, 4, 10, 5, tzinfo=UTC)  # the time judged: the NodeClaims in flight are 5 minutes old
TEMPLATE_GPU = "karpenter.k8s.aws/instance-gpu-name"


def nodeclaim(pool: int, product: str) -> JSON:
    """NodePool ``gpu-<pool>``'s NodeClaim in flight: launched, not registered, made 5 minutes before :data:`NOW`."""
    name = f"gpu-{pool:03d}"
    conditions = [
        {"type": "Launched", "status": "True", "reason": "Launched", "message": ""},
        {"type": "Registered", "status": "Unknown", "reason": "NotRegistered", "message": ""},
        {"type": "Initialized", "status": "Unknown", "reason": "NotRegistered", "message": ""},
    ]
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "name": f"{name}-x1",
            "labels": {"karpenter.sh/nodepool": name},
            "creationTimestamp": "2026-12-04T10:00:00Z",
        },
        "spec": {
            "requirements": [{"key": TEMPLATE_GPU, "operator": "In", "values": [product]}],
            "resources": {"requests": {"nvidia.com/gpu": "8"}},
            "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
            "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
        },
        "status": {"conditions": conditions},
    }


def ask(i: int, products: Sequence[str]) -> JSON:
    """Pending pod ``i``'s nodeSelector, by the mix above."""
    kind, product = i % 4, products[(i // 4) % len(products)]
    if kind == 0:
        return {TEMPLATE_GPU: product}
    if kind == 1:
        return {"nvidia.com/gpu.product": synth.ABSENT_PRODUCT}
    if kind == 2:
        return {synth.TRAINING: "true"}
    return {TEMPLATE_GPU: synth.ABSENT_PRODUCT}


def cluster(nodes: int, nodepools: int, pending: int, distinct: bool = False) -> list[JSON]:
    """synth's cluster, the NodePools, a NodeClaim in flight for every fifth, and the Pending pods of the mix
    (``distinct``: each pod's cpu request its own, so no two pods share an ask: the worst case)."""
    products = [m.product for m in synth.MACHINES]
    objects = new_kinds_bench.extended(nodes, nodepools, 0, pending)
    for o in objects:
        if o["kind"] == "Pod" and o["metadata"].get("namespace") == "queued":
            i = int(o["metadata"]["name"].rsplit("-", 1)[1])
            o["spec"]["nodeSelector"] = ask(i, products)
            requests = o["spec"]["containers"][0]["resources"]["requests"]
            requests["nvidia.com/gpu"] = str(i % 8 + 1)
            if distinct:
                requests["cpu"] = f"{i + 1}m"
        if o["kind"] == "NodePool":  # Ready, as Karpenter's status controller leaves a NodePool it can use
            ready = {"type": "Ready", "status": "True", "reason": "Ready", "message": ""}
            o["status"] = {"conditions": [ready | {"lastTransitionTime": "2026-12-04T08:00:00Z"}]}
    objects += [nodeclaim(i, products[i % len(products)]) for i in range(nodepools - 1, -1, -5)]
    return objects


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.autoscale_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=20000)
    p.add_argument("--nodepools", type=int, default=50)
    p.add_argument("--pending", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--distinct", action="store_true", help="no two Pending pods share an ask (the worst case)")
    a = p.parse_args(argv)
    from gpulabel.checks.pending.autoscale import REASONS
    from gpulabel.checks.pending.rules import pending_result
    from gpulabel.k8s.karpenter.objects import KarpenterState
    from gpulabel.model.cluster import ClusterState

    state = ClusterState.from_objects(("bench", o) for o in cluster(a.nodes, a.nodepools, a.pending, a.distinct))
    without = replace(state, karpenter=KarpenterState())
    gc.collect()
    gc.freeze()
    best = {"with": float("inf"), "without": float("inf")}
    verdicts: Counter[str] = Counter()
    load = os.getloadavg()
    for _ in range(a.rounds):
        for name, s in (("with", state), ("without", without)):
            gc.collect()
            start = time.process_time()
            result = pending_result(s, now=NOW)
            best[name] = min(best[name], time.process_time() - start)
            if name == "with":
                verdicts = Counter(f.reason for f in result.findings if f.reason in REASONS)
    pods = sum(1 for p in state.pods if p.phase == "Pending")
    claims = len(state.karpenter.nodeclaims)
    print(
        f"{a.nodes} nodes, {len(state.karpenter.nodepools)} NodePools, {claims} NodeClaims in flight, "
        f"{pods} Pending pods{' (every ask distinct)' if a.distinct else ''}, best of {a.rounds}"
    )
    print(f"pending with NodePools: {best['with']:.2f} s CPU, verdicts {dict(sorted(verdicts.items()))}")
    print(f"pending without (baseline): {best['without']:.2f} s CPU")
    after = os.getloadavg()
    print(
        f"ratio: {best['with'] / best['without']:.3f}x (goal < 1.20x); load average {load[0]:.2f} before, "
        f"{after[0]:.2f} after (1 min)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
