"""What every command gets: the shared flags, its parsed arguments, and the cluster loaded once.

Every command accepts the shared flags (``--snapshot``, ``--kubeconfig``,
``--context``, ``-o``, ``-n``) before or after its name, as kubectl does.
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
    from gpulabel.model.findings import Finding

__all__ = ["SHARED_DEFAULTS", "AddCommand", "Command", "Context", "findings_exit", "shared_flags"]

SHARED_DEFAULTS: dict[str, Any] = {
    "snapshot": None,
    "kubeconfig": None,
    "context": None,
    "output": "text",
    "namespace": None,
}


def shared_flags() -> argparse.ArgumentParser:
    # default=SUPPRESS on every shared flag lets the same flag be given before
    # or after the subcommand without the subparser's default wiping it out.
    p = argparse.ArgumentParser(add_help=False)
    S = argparse.SUPPRESS
    g = p.add_argument_group("cluster input and output")
    g.add_argument(
        "--snapshot",
        action="append",
        metavar="FILE",
        default=S,
        help="read this snapshot (JSON/YAML from kubectl get -o json|yaml) instead of a cluster; repeatable",
    )
    g.add_argument(
        "--kubeconfig", metavar="FILE", default=S, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config)"
    )
    g.add_argument("--context", metavar="NAME", default=S, help="kubeconfig context to use")
    g.add_argument(
        "-o",
        "--output",
        choices=FORMATS,
        default=S,
        help="text (default, for scripts), wide (with explanations), json, or table (for people)",
    )
    g.add_argument("-n", "--namespace", metavar="NS", default=S, help="only this namespace (pods); default all")
    return p


@dataclass
class Context:
    """What a command gets: its parsed arguments and a way to load the cluster once."""

    args: argparse.Namespace
    out: IO[str]
    err: IO[str]
    _client: KubeClient | None = None

    @property
    def fmt(self) -> str:
        return str(self.args.output)

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

    def state(self, kinds: Iterable[str], **selectors: str | None) -> ClusterState:
        if self.args.snapshot:
            from gpulabel.cluster.snapshot import load_snapshots

            return load_snapshots(self.args.snapshot)
        from gpulabel.cluster.live import load_cluster

        return load_cluster(self.client(), kinds, namespace=self.args.namespace, **selectors)


Command = Callable[[Context], int]


def findings_exit(ctx: Context, findings: Sequence[Finding], check: str) -> int:
    from gpulabel.render.text import emit_findings

    emit_findings(findings, ctx.fmt, ctx.out, check=check)
    return 1 if findings else 0


AddCommand = Callable[[str, Command, str], argparse.ArgumentParser]
