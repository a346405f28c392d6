"""Where a command's cluster comes from (:class:`Source`), loading it once (:class:`Session`), and what it answers.

A :class:`Source` is the shared flags' part every reading command has: the
snapshots or the kubeconfig context, the node selector, the pods' namespace.
It is validated when made. A :class:`Session` loads from it at most once per
kind of request and owns the API client. Every application function returns
an :class:`Outcome`: the :class:`~gpulabel.model.findings.Result` to render and
the exit code (0 nothing found, 1 findings, as each command documents).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpulabel.errors import InputError
from gpulabel.k8s.selectors import Selector, parse_selector
from gpulabel.model.findings import Result

if TYPE_CHECKING:
    from gpulabel.cluster.client import KubeClient
    from gpulabel.model.cluster import ClusterState

__all__ = ["WRITER_BUDGET", "Outcome", "Session", "Source", "lease_defaults", "refuse_bad_controller_flags"]

WRITER_BUDGET = 60.0  # seconds a writer rides out an API server restart per operation (cluster/retry.py)


@dataclass(frozen=True, slots=True)
class Source:
    """The cluster a command reads: ``snapshots`` (files, merged in order) or the kubeconfig's ``context``.

    ``selector`` (``-l``) restricts nodes. The pods' namespace (``-n``) is not a
    Source: every command reads the same objects from a cluster as from a
    snapshot, and the command's own options say which pods it reports.
    """

    snapshots: tuple[str, ...] = ()
    kubeconfig: str | None = None
    context: str | None = None
    selector: str | None = None
    node_selector: Selector | None = field(init=False, default=None, compare=False)

    def __post_init__(self) -> None:
        if self.selector is not None:
            try:
                object.__setattr__(self, "node_selector", parse_selector(self.selector))
            except ValueError as err:
                raise InputError("-l/--selector", str(err)) from None

    @property
    def offline(self) -> bool:
        return bool(self.snapshots)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a command answers: the result to render and its exit code."""

    result: Result
    code: int = 0
    warnings: tuple[str, ...] = ()  # one line each on stderr, after the result
    page: str | None = None  # a document printed as it is, instead of the result (report --html -)

    @classmethod
    def of_findings(cls, result: Result) -> Outcome:
        """Exit 1 if ``result`` has findings, 0 if not (a skipped check is not a finding)."""
        return cls(result, 1 if result.findings else 0)


class Session:
    """The cluster (or the snapshots) of one command run, loaded on demand; ``warn`` gets one line per warning."""

    def __init__(self, source: Source, warn: Callable[[str], None] = lambda text: None) -> None:
        self.source = source
        self.warn = warn
        self._client: KubeClient | None = None

    def client(self, budget: float = 10.0) -> KubeClient:
        """The API client; ``budget`` is how many seconds an operation may spend retrying
        a server that is down or overloaded (cluster/retry.py)."""
        if self.source.offline:
            raise InputError("--snapshot", "this command needs a live cluster, not a snapshot")
        if self._client is None:
            from gpulabel.cluster.client import KubeClient
            from gpulabel.cluster.retry import RetryPolicy

            self._client = KubeClient(self.source.kubeconfig, self.source.context, retry=RetryPolicy(budget=budget))
        return self._client

    @property
    def client_made(self) -> KubeClient | None:
        """The API client if one was made (for its request counts)."""
        return self._client

    def state(self, kinds: Iterable[str], **selectors: str | None) -> ClusterState:
        """The cluster (or the snapshots), loaded once: only ``kinds``, nodes restricted by ``-l``."""
        from gpulabel.cluster import collector

        selector = self.source.node_selector
        # The state lives until the process ends: read with the collector paused, then frozen out of it (each
        # collection during the checks would walk the whole state: a few hundred thousand records at 20,000 nodes).
        with collector.kept():
            if self.source.offline:
                from gpulabel.cluster.snapshot import load_snapshots

                return self._selected(load_snapshots(self.source.snapshots, warn=self.warn, read=kinds))
            from gpulabel.cluster.live import load_cluster

            if selector is None:
                return load_cluster(self.client(), kinds, **selectors)
            selectors["node_selector"] = self.source.selector
            return dataclasses.replace(load_cluster(self.client(), kinds, **selectors), nodes_selected=True)

    def snapshot(self, path: str) -> ClusterState:
        """One snapshot file alone (``diff OLD NEW``), nodes restricted by ``-l``."""
        from gpulabel.cluster import collector
        from gpulabel.cluster.snapshot import load_snapshots

        with collector.kept():  # as state() does: a command's state lives until the process ends
            state = load_snapshots([path], warn=self.warn)
        return dataclasses.replace(self._selected(state), source=path)

    def _selected(self, state: ClusterState) -> ClusterState:
        """A snapshot's ``state`` with only the nodes ``-l`` selects (marked as chosen), or all without it."""
        selector = self.source.node_selector
        if selector is None:
            return state
        nodes = tuple(n for n in state.nodes if selector.matches(n.labels))
        return dataclasses.replace(state, nodes=nodes, nodes_selected=True)


def refuse_bad_controller_flags(
    metrics_port: int | None, lease_namespace: str | None, lease_name: str | None, identity: str | None
) -> None:
    """The long-running commands' shared flags (``sync --watch``, ``monitor``), refused in one line when bad."""
    if metrics_port is not None and not 1 <= metrics_port <= 65535:
        raise InputError("--metrics-port", f"must be a port from 1 to 65535, not {metrics_port}")
    for flag, value in (("--identity", identity), ("--lease-namespace", lease_namespace), ("--lease-name", lease_name)):
        if value is not None and not value.strip():
            raise InputError(flag, "must not be empty")


def lease_defaults(
    namespace: str | None, name: str | None, identity: str | None, default_name: str
) -> tuple[str, str, str]:
    """The Lease's namespace (default ``$POD_NAMESPACE``, else ``gpulabel``), its name and this instance's
    identity (default host_pid)."""
    import os
    import socket

    return (
        namespace or os.environ.get("POD_NAMESPACE") or "gpulabel",
        name or default_name,
        identity or f"{socket.gethostname()}_{os.getpid()}",
    )
