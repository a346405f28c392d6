"""What the autoscaler verdict (issue 45 item 2) adds to ``pending``: the measurement issue 45 asks for.

Run: ``.venv/bin/python -m bench.autoscale_bench [--nodes 20000] [--nodepools 50] [--pending 5000]``.

The cluster is ``bench/new_kinds_bench.py``'s (``bench/synth.py``'s nodes and pods, ``--nodepools`` NodePools,
``--pending`` Pending GPU pods, a third selecting a product no node has), with no Kueue objects. The Pending
pods ask for 1 to 8 GPUs (``i % 8 + 1``), so their asks are distinct by product and count. The state is read
once; ``pending_result`` then runs on it with its NodePools (every pod that fits no node gets a verdict) and on
the same state without them (the baseline: no verdict), in turn, ``--rounds`` times. Printed: each one's
best CPU seconds, how many verdicts, and the ratio (goal, issue 45: under 1.20). The verdict is computed once
per distinct ask (``checks/pending/autoscale.autoscale_findings``), so its cost grows with asks x NodePools,
not pods x NodePools.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from bench import new_kinds_bench, synth


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.autoscale_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=20000)
    p.add_argument("--nodepools", type=int, default=50)
    p.add_argument("--pending", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args(argv)
    from gpulabel.checks.pending.autoscale import REASONS
    from gpulabel.checks.pending.rules import pending_result
    from gpulabel.k8s.karpenter.objects import KarpenterState
    from gpulabel.model.cluster import ClusterState

    objects = new_kinds_bench.extended(a.nodes, a.nodepools, 0, a.pending)
    for o in objects:
        if o["kind"] == "Pod" and o["metadata"].get("namespace") == "queued":
            i = int(o["metadata"]["name"].rsplit("-", 1)[1])
            o["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = str(i % 8 + 1)
    state = ClusterState.from_objects(("bench", o) for o in objects)
    without = replace(state, karpenter=KarpenterState())
    gc.collect()
    gc.freeze()
    best = {"with": float("inf"), "without": float("inf")}
    verdicts: Counter[str] = Counter()
    for _ in range(a.rounds):
        for name, s in (("with", state), ("without", without)):
            gc.collect()
            start = time.process_time()
            result = pending_result(s)
            best[name] = min(best[name], time.process_time() - start)
            if name == "with":
                verdicts = Counter(f.reason for f in result.findings if f.reason in REASONS)
    pods = sum(1 for p in state.pods if p.phase == "Pending")
    print(f"{a.nodes} nodes, {len(state.karpenter.nodepools)} NodePools, {pods} Pending pods, best of {a.rounds}")
    print(f"pending with NodePools: {best['with']:.2f} s CPU, verdicts {dict(sorted(verdicts.items()))}")
    print(f"pending without (baseline): {best['without']:.2f} s CPU")
    print(f"ratio: {best['with'] / best['without']:.3f}x (goal < 1.20x; synth ABSENT_PRODUCT {synth.ABSENT_PRODUCT})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
