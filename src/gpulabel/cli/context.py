"""What every command gets: its flags, its parsed arguments, the cluster loaded once, and one way to print.

Flags come in groups, and a command offers only the groups it uses:
``output`` (``-o``, ``--no-headers``), ``cluster`` (``--snapshot``,
``--kubeconfig``, ``--context``), ``nodes`` (``-l/--selector``) and ``pods``
(``-n``, ``-A``). Each may stand before or after the command name, as with
kubectl; ``--snapshot`` given on both sides combines in command-line order.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from gpulabel.errors import InputError
from gpulabel.render.text import FORMATS

if TYPE_CHECKING:
    from gpulabel.cluster.client import KubeClient
    from gpulabel.model.cluster import ClusterState
    from gpulabel.model.findings import Result

__all__ = [
    "ALL_GROUPS",
    "GROUP_FLAGS",
    "SHARED_DEFAULTS",
    "AddCommand",
    "Command",
    "Context",
    "findings_exit",
    "shared_flags",
]

SHARED_DEFAULTS: dict[str, Any] = {
    "snapshot": None,
    "kubeconfig": None,
    "context": None,
    "output": "text",
    "no_headers": False,
    "namespace": None,
    "all_namespaces": False,
    "selector": None,
}

# flag group -> (the dests its flags set, the flag named in errors)
GROUP_FLAGS: dict[str, tuple[tuple[str, ...], str]] = {
    "output": (("output", "no_headers"), "-o/--no-headers"),
    "cluster": (("snapshot", "snapshot_after", "kubeconfig", "context"), "--snapshot/--kubeconfig/--context"),
    "nodes": (("selector",), "-l/--selector"),
    "pods": (("namespace", "all_namespaces"), "-n/-A"),
}
ALL_GROUPS = ("output", "cluster", "nodes", "pods")


def shared_flags(groups: Iterable[str] = ALL_GROUPS, *, after: bool = False) -> argparse.ArgumentParser:
    """A parent parser with the flags of ``groups``; ``after``: for use after the command name."""
    # default=SUPPRESS on every shared flag lets the same flag be given before
    # or after the subcommand without the subparser's default wiping it out.
    p = argparse.ArgumentParser(add_help=False)
    S = argparse.SUPPRESS
    groups = set(groups)
    if "cluster" in groups:
        g = p.add_argument_group("cluster (default: the current kubeconfig context)")
        g.add_argument(
            "--snapshot",
            action="append",
            metavar="FILE",
            dest="snapshot_after" if after else "snapshot",
            default=S,
            help="read this snapshot (what kubectl get -o json|yaml writes) instead of a cluster; repeatable: "
            "objects are merged by kind, namespace and name, the later file winning",
        )
        g.add_argument(
            "--kubeconfig", metavar="FILE", default=S, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config)"
        )
        g.add_argument("--context", metavar="NAME", default=S, help="kubeconfig context to use")
    if "nodes" in groups:
        g = p.add_argument_group("nodes")
        g.add_argument(
            "-l",
            "--selector",
            metavar="SELECTOR",
            default=S,
            help="only nodes with these labels, in the API server's syntax (-l 'nvidia.com/gpu.present=true,"
            "nvidia.com/gpu.product in (NVIDIA-A10,NVIDIA-L4),!node-role.kubernetes.io/control-plane')",
        )
    if "pods" in groups:
        g = p.add_argument_group("pods")
        ns = g.add_mutually_exclusive_group()
        ns.add_argument("-n", "--namespace", metavar="NS", default=S, help="only pods in this namespace")
        ns.add_argument(
            "-A", "--all-namespaces", action="store_true", default=S, help="pods in every namespace (the default)"
        )
    if "output" in groups:
        g = p.add_argument_group("output")
        g.add_argument(
            "-o",
            "--output",
            choices=FORMATS,
            default=S,
            help="text (default, one finding per line, for scripts), wide (with explanations), json or yaml "
            "(the gpulabel/v1 envelope), table (for people), name (node/NAME, pod/NS/NAME)",
        )
        g.add_argument("--no-headers", action="store_true", default=S, help="tables without their header lines")
    return p


def _kept(state: ClusterState) -> ClusterState:
    """The state a command runs on lives until the process ends: the cyclic collector need not walk it again.

    ``gc.freeze`` moves every object alive now out of the collector's
    generations; they are still freed by reference counting. Without it each
    collection during the checks walks the whole state (a few hundred
    thousand records at 20,000 nodes).
    """
    import gc

    gc.freeze()
    return state


@dataclass
class Context:
    """What a command gets: its parsed arguments, a way to load the cluster once, and a way to print."""

    args: argparse.Namespace
    out: IO[str]
    err: IO[str]
    _client: KubeClient | None = None

    @property
    def fmt(self) -> str:
        return str(self.args.output)

    def warn(self, text: str) -> None:
        self.err.write(f"gpulabel: {text}\n")
        self.err.flush()

    def client(self, budget: float = 10.0) -> KubeClient:
        """The API client; ``budget`` is how many seconds an operation may spend retrying
        a server that is down or overloaded (cluster/retry.py)."""
        if self.args.snapshot:
            raise InputError("--snapshot", "this command needs a live cluster, not a snapshot")
        if self._client is None:
            from gpulabel.cluster.client import KubeClient
            from gpulabel.cluster.retry import RetryPolicy

            self._client = KubeClient(self.args.kubeconfig, self.args.context, retry=RetryPolicy(budget=budget))
        return self._client

    def node_selector(self) -> Any:
        """The parsed ``-l`` selector (validated as the API server does), or ``None``."""
        text = getattr(self.args, "selector", None)
        if text is None:
            return None
        from gpulabel.k8s.selectors import parse_selector

        try:
            return parse_selector(text)
        except ValueError as err:
            raise InputError("-l/--selector", str(err)) from None

    def state(self, kinds: Iterable[str], **selectors: str | None) -> ClusterState:
        """The cluster (or the snapshots), loaded once: only ``kinds``, nodes restricted by ``-l``."""
        selector = self.node_selector()
        if self.args.snapshot:
            from gpulabel.cluster.snapshot import load_snapshots

            state = load_snapshots(self.args.snapshot, warn=self.warn)
            if selector is not None:
                import dataclasses

                state = dataclasses.replace(state, nodes=tuple(n for n in state.nodes if selector.matches(n.labels)))
            return _kept(state)
        from gpulabel.cluster.live import load_cluster

        if selector is not None:
            selectors["node_selector"] = self.args.selector
        return _kept(load_cluster(self.client(), kinds, namespace=self.args.namespace, **selectors))

    def emit(self, result: Result) -> None:
        from gpulabel.render.table import style_for
        from gpulabel.render.text import emit

        emit(result, self.fmt, self.out, style_for(self.out, headers=not self.args.no_headers))


Command = Callable[[Context], int]


def findings_exit(ctx: Context, result: Result) -> int:
    """Print ``result``; exit 1 if it has findings, 0 if not (a skipped check is not a finding)."""
    ctx.emit(result)
    return 1 if result.findings else 0


class AddCommand:
    """The helper command modules register their commands with (see :func:`gpulabel.cli.main.build_parser`)."""

    def __init__(self, add: Callable[..., argparse.ArgumentParser]) -> None:
        self._add = add

    def __call__(
        self,
        name: str,
        func: Command,
        help_: str,
        *,
        groups: Sequence[str] = ALL_GROUPS,
        examples: Sequence[str] = (),
        exits: str = "0 nothing found, 1 findings, 2 bad input or an unusable cluster",
    ) -> argparse.ArgumentParser:
        """Add command ``name``: it offers the flag ``groups`` it uses; ``examples`` and ``exits`` go in its help."""
        return self._add(name, func, help_, tuple(groups), tuple(examples), exits)
