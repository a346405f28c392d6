"""``isolate``: take nodes off every GPU operand, or give them back (``--undo``).

:func:`isolate` is the one decision, the same for a run, its server dry run
and the offline plan (``--dry-run --snapshot``): only the
:class:`~gpulabel.cluster.writes.Writer` differs. A node running GPU pods is
refused without ``--force`` in all three, so a dry run predicts the run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpulabel.app.session import WRITER_BUDGET, Outcome, Session
from gpulabel.errors import GpulabelError, InputError
from gpulabel.model.findings import Cell, Finding, Result, Section

if TYPE_CHECKING:
    from gpulabel.checks.labels.isolate import Isolation
    from gpulabel.cluster.writes import Writer
    from gpulabel.model.cluster import ClusterState, Pod

__all__ = ["IsolateOptions", "isolate", "run_isolate"]


@dataclass(frozen=True, slots=True)
class IsolateOptions:
    """``isolate``'s options, refused before anything is contacted. ``offline``: the nodes come from snapshots."""

    nodes: tuple[str, ...]
    undo: bool = False
    dry_run: bool = False
    force: bool = False
    offline: bool = False

    def __post_init__(self) -> None:
        if self.offline and not self.dry_run:
            raise InputError("--snapshot", "only with --dry-run: isolate writes to a live cluster")
        for name in self.nodes:
            if not name.strip():
                raise InputError("NODE", "a node name must not be empty")


def run_isolate(session: Session, opts: IsolateOptions, on_node: Callable[[Result], None]) -> Outcome:
    """Read what isolating needs (the nodes, operand pods, the pods on each named node) and :func:`isolate`."""
    from functools import partial

    from gpulabel.checks.operands.daemonsets import operand_of_daemonset
    from gpulabel.cluster.writes import ApiWriter, PlanWriter
    from gpulabel.model.cluster import pod_from_json

    node_pods: list[Pod] = []
    writer: Writer
    if opts.offline:  # --dry-run --snapshot: the plan, nothing contacted
        state = session.state(["Node", "DaemonSet", "Pod"])
        wanted = set(opts.nodes)
        node_pods = [p for p in state.pods if p.node_name in wanted]
        writer = PlanWriter("snapshot")
    else:
        from gpulabel.cluster.live import with_daemonset_pods

        client = session.client(budget=WRITER_BUDGET)
        state = session.state(["Node", "DaemonSet"])
        if not opts.undo:
            state = with_daemonset_pods(client, state, [d for d in state.daemonsets if operand_of_daemonset(d)])
            known = {n.name for n in state.nodes}
            for name in dict.fromkeys(opts.nodes):
                if name in known:  # one LIST per node to isolate, as kubectl drain does
                    node_pods += client.list_objects(
                        client.kind_path("Pod"),
                        partial(pod_from_json, where=f"{client.endpoint} Pod"),
                        field_selector=f"spec.nodeName={name}",
                    )[0]
        writer = ApiWriter(client, opts.dry_run)
    return isolate(state, node_pods, opts, writer, on_node, session.warn)


def isolate(
    state: ClusterState,
    node_pods: Sequence[Pod],
    opts: IsolateOptions,
    writer: Writer,
    on_node: Callable[[Result], None],
    warn: Callable[[str], None],
) -> Outcome:
    """Plan and write: each node's result goes to ``on_node`` once written; ``warn`` gets refusals and failures."""
    from gpulabel.checks.labels.isolate import FIELD_MANAGER, plan_isolation
    from gpulabel.checks.operands.daemonsets import operand_of_daemonset
    from gpulabel.model.vocabulary import DEPLOY_OPERANDS

    operand_uids = {d.uid for d in state.daemonsets if operand_of_daemonset(d)}
    operand_pods = [p for p in state.pods if any(k == "DaemonSet" and u in operand_uids for k, u in p.owners)]
    changes, unknown = plan_isolation(
        {n.name: n for n in state.nodes}, list(opts.nodes), opts.undo, operand_pods, list(node_pods)
    )
    failed = bool(unknown)
    for name in unknown:
        warn(f"node {name}: not found; nothing written")
    done: list[Finding] = []
    refused: list[dict[str, Cell]] = []
    for item in changes:
        change = item.change
        if item.gpu_pods and not opts.force:  # refused by a dry run exactly as by the run
            pods = ", ".join(f"{ref} ({' '.join(res)})" for ref, res in item.gpu_pods)
            warn(
                f"node {change.node}: not isolated: GPU pods running: {pods} "
                "(they would keep their devices without driver or device plugin); --force to isolate anyway"
            )
            refused.append({"node": change.node, "gpu_pods": tuple(ref for ref, _ in item.gpu_pods)})
            failed = True
            continue
        try:
            if item.isolate:
                writer.apply(change.node, {DEPLOY_OPERANDS: "false"}, FIELD_MANAGER)
            else:
                writer.remove(change.node, [DEPLOY_OPERANDS], FIELD_MANAGER)
        except GpulabelError as err:
            warn(f"node {change.node}: not written: {err}")
            failed = True
            continue
        mine = _written(item)
        done.extend(mine)
        on_node(Result("isolate", tuple(mine), ok=""))
    sections = (Section("unknown", tuple({"node": n} for n in unknown)), Section("refused", tuple(refused)))
    result = Result("isolate", tuple(done), sections, ok="", fields={"dry_run": opts.dry_run})
    return Outcome(result, 1 if failed else 0)


def _written(item: Isolation) -> list[Finding]:
    """A node's change once written: isolated (with the operand pods leaving it) or returned, and the GPU pods
    it runs (isolated anyway: ``--force``)."""
    change = item.change
    leaving = ", ".join(item.leaving) or "no operand pods"
    return [
        Finding(
            "isolate",
            "isolated" if item.isolate else "returned",
            node=change.node,
            key=change.key,
            value=change.value,
            old=change.previous,
            sample=item.leaving,
            detail=f"was {change.previous or 'absent'}; leaving: {leaving}" if item.isolate else "",
        ),
        *(Finding("isolate", "gpu-pod", node=change.node, pod=ref, args=tuple(res)) for ref, res in item.gpu_pods),
    ]
