"""What every command gets: its flags, its parsed arguments, the cluster loaded once, and one way to print.

Flags come in groups, and a command offers only the groups it uses:
``output`` (``-o``, ``--no-headers``), ``cluster`` (``--snapshot``,
``--kubeconfig``, ``--context``), ``nodes`` (``-l/--selector``) and ``pods``
(``-n``, ``-A``). Each may stand before or after the command name, as with
kubectl; ``--snapshot`` given on both sides combines in command-line order.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

from gpulabel.errors import InputError
from gpulabel.render.text import FORMATS

if TYPE_CHECKING:
    from gpulabel.cluster.client import KubeClient
    from gpulabel.cluster.config import Config
    from gpulabel.k8s.selectors import Selector
    from gpulabel.model.cluster import ClusterState
    from gpulabel.model.findings import Result

__all__ = [
    "ALL_GROUPS",
    "GROUP_FLAGS",
    "SHARED_DEFAULTS",
    "AddCommand",
    "Command",
    "Context",
    "add_verdict_flags",
    "findings_exit",
    "shared_flags",
]

SHARED_DEFAULTS: dict[str, str | bool | None] = {
    "snapshot": None,
    "kubeconfig": None,
    "context": None,
    "output": "text",
    "no_headers": False,
    "namespace": None,
    "all_namespaces": False,
    "selector": None,
}

# flag group -> (the dests its flags set, the flag each dest is named by in errors)
GROUP_FLAGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "output": (("output", "no_headers"), ("-o", "--no-headers")),
    "cluster": (
        ("snapshot", "snapshot_after", "kubeconfig", "context"),
        ("--snapshot", "--snapshot", "--kubeconfig", "--context"),
    ),
    "nodes": (("selector",), ("-l",)),
    "pods": (("namespace", "all_namespaces"), ("-n", "-A")),
}
ALL_GROUPS = ("output", "cluster", "nodes", "pods")


def shared_flags(groups: Iterable[str] = ALL_GROUPS, *, after: bool = False) -> argparse.ArgumentParser:
    """A parent parser with the flags of ``groups``; ``after``: for use after the command name.

    After the command name, the flags of the other groups are accepted too, unshown, so that a flag
    the command does not use is refused in one line (``-A: not used by audit``) on either side of it.
    """
    # default=SUPPRESS on every shared flag lets the same flag be given before
    # or after the subcommand without the subparser's default wiping it out.
    p = argparse.ArgumentParser(add_help=False)
    offered = set(groups)
    groups = set(ALL_GROUPS) if after else offered

    def shown(group: str, text: str) -> str:
        """The help of a flag, hidden where the command does not use it."""
        return text if group in offered else argparse.SUPPRESS

    default = argparse.SUPPRESS
    if "cluster" in groups:
        g = p.add_argument_group("cluster (default: the current kubeconfig context)")
        g.add_argument(
            "--snapshot",
            action="append",
            metavar="FILE",
            dest="snapshot_after" if after else "snapshot",
            default=default,
            help=shown(
                "cluster",
                "read this snapshot (what kubectl get -o json|yaml writes) instead of a cluster; repeatable: "
                "objects are merged by kind, namespace and name, the later file winning",
            ),
        )
        g.add_argument(
            "--kubeconfig",
            metavar="FILE",
            default=default,
            help=shown("cluster", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config)"),
        )
        g.add_argument("--context", metavar="NAME", default=default, help=shown("cluster", "kubeconfig context to use"))
    if "nodes" in groups:
        g = p.add_argument_group("nodes")
        g.add_argument(
            "-l",
            "--selector",
            metavar="SELECTOR",
            default=default,
            help=shown(
                "nodes",
                "only nodes with these labels, in the API server's syntax (-l 'nvidia.com/gpu.present=true,"
                "nvidia.com/gpu.product in (NVIDIA-A10,NVIDIA-L4),!node-role.kubernetes.io/control-plane')",
            ),
        )
    if "pods" in groups:
        g = p.add_argument_group("pods")
        # hidden, they are plain flags: argparse 3.11 cannot wrap a usage line with a hidden exclusive group
        ns = g.add_mutually_exclusive_group() if "pods" in offered else g
        ns.add_argument(
            "-n", "--namespace", metavar="NS", default=default, help=shown("pods", "only pods in this namespace")
        )
        ns.add_argument(
            "-A",
            "--all-namespaces",
            action="store_true",
            default=default,
            help=shown("pods", "pods in every namespace (the default)"),
        )
    if "output" in groups:
        g = p.add_argument_group("output")
        g.add_argument(
            "-o",
            "--output",
            choices=FORMATS,
            default=default,
            help=shown(
                "output",
                "text (default, one finding per line, for scripts), wide (with explanations), json or yaml "
                "(the gpulabel/v1 envelope), table (for people), name (node/NAME, pod/NS/NAME)",
            ),
        )
        g.add_argument(
            "--no-headers",
            action="store_true",
            default=default,
            help=shown("output", "tables without their header lines"),
        )
    return p


@dataclass
class Context:
    """What a command gets: its parsed arguments, a way to load the cluster once, and a way to print."""

    args: argparse.Namespace
    out: IO[str]
    err: IO[str]
    parser: argparse.ArgumentParser | None = None  # the whole command line's (completion reads it)
    _client: KubeClient | None = None
    _config: Config | None = None
    _labels: dict[str, Mapping[str, str]] | None = None  # each loaded node's labels (ignore rules' selectors)

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

    def node_selector(self) -> Selector | None:
        """The parsed ``-l`` selector (validated as the API server does), or ``None``."""
        text = getattr(self.args, "selector", None)
        if text is None:
            return None
        from gpulabel.k8s.selectors import parse_selector

        try:
            return parse_selector(text)
        except ValueError as err:
            raise InputError("-l/--selector", str(err)) from None

    def config(self) -> Config:
        """The config file (``--config``, else the first default location; none: an empty one), read once."""
        if self._config is None:
            from gpulabel.cluster.config import Config, default_config_path, load_config

            path = getattr(self.args, "config", None) or default_config_path()
            self._config = load_config(path) if path else Config()
        return self._config

    def state(self, kinds: Iterable[str], **selectors: str | None) -> ClusterState:
        """The cluster (or the snapshots), loaded once: only ``kinds``, nodes restricted by ``-l``."""
        state = self._load(kinds, **selectors)
        self._labels = {n.name: n.labels for n in state.nodes}
        return state

    def _load(self, kinds: Iterable[str], **selectors: str | None) -> ClusterState:
        selector = self.node_selector()
        if self.args.snapshot:
            from gpulabel.cluster.snapshot import load_snapshots

            state = load_snapshots(self.args.snapshot, warn=self.warn)
            if selector is not None:
                import dataclasses

                state = dataclasses.replace(state, nodes=tuple(n for n in state.nodes if selector.matches(n.labels)))
            return state
        from gpulabel.cluster.live import load_cluster

        if selector is not None:
            selectors["node_selector"] = self.args.selector
        return load_cluster(self.client(), kinds, namespace=self.args.namespace, **selectors)

    def emit(self, result: Result) -> None:
        from gpulabel.render.table import style_for
        from gpulabel.render.text import emit

        emit(result, self.fmt, self.out, style_for(self.out, headers=not self.args.no_headers))


Command = Callable[[Context], int]


def add_verdict_flags(p: argparse.ArgumentParser) -> None:
    """The flags of a command whose findings are graded: what fails it, what is accepted."""
    g = p.add_argument_group("verdict")
    g.add_argument(
        "--fail-level",
        choices=("error", "warning", "info"),
        default=None,
        help="exit 1 when a finding is at or above this severity (default error); lower ones are printed, and exit 0",
    )
    g.add_argument(
        "--config",
        metavar="FILE",
        help="ignore rules, severity overrides and thresholds (docs/config.md; default: $GPULABEL_CONFIG, "
        "~/.config/gpulabel/config.yaml, /etc/gpulabel/config.yaml, the first that exists)",
    )
    g.add_argument(
        "--baseline",
        metavar="FILE",
        help="a previous -o json: its findings are marked baseline and do not fail the run; "
        "those no longer found are listed as info (resolved)",
    )


def findings_exit(ctx: Context, result: Result) -> int:
    """Print ``result``; the exit code of its findings (a skipped check is not a finding).

    A graded result (a check's) exits 1 when a finding is at or above
    ``--fail-level`` (default ``error``), 0 otherwise; any other result exits
    1 when it has findings.
    """
    from gpulabel.model.severity import fails, parse_severity

    if not result.graded:
        ctx.emit(result)
        return 1 if result.findings else 0
    from gpulabel.checks.verdict import apply_baseline, apply_ignores, counted, regrade

    config = ctx.config()
    result = apply_ignores(regrade(result, config.severities), config.ignore, ctx._labels or {})
    baseline = getattr(ctx.args, "baseline", None)
    if baseline:
        from gpulabel.cluster.config import load_baseline

        result = apply_baseline(result, load_baseline(baseline))
    ctx.emit(result)
    return 1 if fails(counted(result), parse_severity(getattr(ctx.args, "fail_level", None) or "error")) else 0


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
