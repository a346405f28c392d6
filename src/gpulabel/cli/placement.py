"""The ``place``, ``pending`` and ``hazards`` commands: load, match, render.

Output contracts:

- ``place``: one line per verdict, ``yes <n> node(s): <names>`` or ``no <reason>
  <n> node(s): <names>`` (a few names, the group's best node first; with
  ``--per-node`` one line per node, ``<node> yes`` or ``<node> no <reason>``),
  prefixed with ``<namespace>/<name> `` when several workloads are placed;
  exit 0 when every workload fits some node, 1 otherwise, 2 for a bad manifest.
- ``pending``: ``<namespace>/<pod> <reason> <n> node(s) [args]`` for every pod
  and reason (``fits`` when node selection is not what holds the pod; with
  ``--per-node`` ``<namespace>/<pod> <node> <reason> [args]`` for every node),
  then ``<namespace>/<pod> scheduler: <the pod's PodScheduled message>``; exit
  1 if any pod is Pending.
- ``hazards``: ``<namespace>/<pod> <node> <reason>``; exit 1 if any.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpulabel.cli.context import findings_exit

if TYPE_CHECKING:
    from gpulabel.cli.context import AddCommand, Context

__all__ = ["add_placement_commands", "cmd_hazards", "cmd_pending", "cmd_place"]


def add_placement_commands(add: AddCommand) -> None:
    """Register the three commands with the CLI's ``add`` helper."""
    p = add(
        "place",
        cmd_place,
        "which nodes each workload in MANIFEST can be scheduled on, and why not the others",
        groups=("output", "cluster", "nodes"),
        examples=(
            "place examples/pods/train-b.yaml --snapshot examples/drifted-lab.yaml -o wide",
            "place deploy.yaml -l nvidia.com/gpu.present=true",
        ),
        exits="0 every workload fits some node, 1 one fits none, 2 bad manifest or an unusable cluster",
    )
    p.add_argument("manifests", nargs="+", metavar="MANIFEST", help="Pod/Deployment/Job/... YAML or JSON; - is stdin")
    p.add_argument(
        "--per-node", action="store_true", help="one line per node (<node> yes|no <reason>) instead of grouped"
    )
    p = add(
        "pending",
        cmd_pending,
        "why each Pending pod fits no node: one line per pod and reason with the number of nodes",
        examples=(
            "pending --snapshot examples/drifted-lab.yaml",
            "pending -o wide -n ml",
            "pending --per-node -l nvidia.com/gpu.product=NVIDIA-A10",
        ),
        exits="0 no Pending pod (or no pods in the input: skipped), 1 Pending pods, 2 bad input",
    )
    p.add_argument(
        "--per-node", action="store_true", help="one line per pod and node (<pod> <node> <reason>) instead of grouped"
    )
    add(
        "hazards",
        cmd_hazards,
        "running pods whose required node affinity or nodeSelector no longer matches their node",
        examples=("hazards --snapshot examples/drifted-lab.yaml -o wide",),
    )


# -- place --------------------------------------------------------------------------


def cmd_place(ctx: Context) -> int:
    from gpulabel.checks.placeview import place_result
    from gpulabel.cluster.manifests import load_workloads

    dra_objects: list[tuple[str, dict[str, Any]]] = []
    workloads = load_workloads(ctx.args.manifests, dra_objects)
    if any(w.resource_claims for w in workloads):
        import dataclasses

        from gpulabel.k8s.dra.objects import DRA_KINDS

        state = ctx.state(["Node", "Pod", *DRA_KINDS])
        ns = next((w.namespace for w in workloads if w.resource_claims), "default")
        state = dataclasses.replace(state, dra=state.dra.with_objects(dra_objects, ns))
    else:
        state = ctx.state(["Node", "Pod"])
    full = ctx.fmt not in ("text", "name")
    result, all_fit = place_result(state, workloads, full=full, per_node=bool(ctx.args.per_node))
    ctx.emit(result)
    return 0 if all_fit else 1


# -- pending and hazards ------------------------------------------------------------


def cmd_pending(ctx: Context) -> int:
    from gpulabel.checks.registry import CheckOptions, run_check
    from gpulabel.k8s.dra.objects import DRA_KINDS

    opts = CheckOptions(namespace=ctx.args.namespace, per_node=ctx.args.per_node)
    # live, only Pending pods are listed (the server filters on status.phase)
    result = run_check(
        "pending", ctx.state(["Node", "Pod", *DRA_KINDS], pod_field_selector="status.phase=Pending"), opts
    )
    ctx.emit(result)
    return 1 if result.counts.get("pods") else 0


def cmd_hazards(ctx: Context) -> int:
    from gpulabel.checks.registry import CheckOptions, run_check

    return findings_exit(
        ctx, run_check("hazards", ctx.state(["Node", "Pod"]), CheckOptions(namespace=ctx.args.namespace))
    )
