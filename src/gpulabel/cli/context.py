"""What every command gets: its flags, its parsed arguments, the session that loads the cluster, one way to print.

Flags come in groups, and a command offers only the groups it uses:
``output`` (``-o``, ``--no-headers``), ``cluster`` (``--snapshot``,
``--kubeconfig``, ``--context``), ``nodes`` (``-l/--selector``) and ``pods``
(``-n``, ``-A``). Each may stand before or after the command name, as with
kubectl; ``--snapshot`` given on both sides combines in command-line order. A
flag of a group the command does not use is refused in one line, on either
side (``gpulabel: -A: not used by audit``, exit 2).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Sequence
from typing import IO, TYPE_CHECKING

from gpulabel.render.formats import FORMATS

if TYPE_CHECKING:
    from gpulabel.app.checks import Verdict
    from gpulabel.app.session import Outcome, Session, Source
    from gpulabel.model.findings import Result

__all__ = [
    "ALL_GROUPS",
    "GROUP_FLAGS",
    "SEVERITY_TABLE",
    "SHARED_DEFAULTS",
    "AddCommand",
    "Command",
    "Context",
    "add_all_pods_flag",
    "add_verdict_flags",
    "shared_flags",
]

# In a command's help text: the reasons of every registered check by severity, put in when the help is printed
# (checks.registry.severity_help(); so that building the parser imports no check).
SEVERITY_TABLE = "<the severity of every reason>"

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


def shared_flags(
    groups: Iterable[str] = ALL_GROUPS, *, after: bool = False, omit: Iterable[str] = ()
) -> argparse.ArgumentParser:
    """A parent parser with the flags of ``groups``; ``after``: for use after the command name.

    After the command name, the flags of the other groups are accepted too, unshown, so that a flag
    the command does not use is refused in one line (``-A: not used by audit``) on either side of it.
    """
    p = argparse.ArgumentParser(add_help=False)
    offered = set(groups)
    groups = (set(ALL_GROUPS) - set(omit)) if after else offered  # omit: groups whose flags the command reuses
    if "cluster" in groups:
        _cluster_flags(p, "cluster" in offered, after=after)
    if "nodes" in groups:
        _node_flags(p, "nodes" in offered)
    if "pods" in groups:
        _pod_flags(p, "pods" in offered)
    if "output" in groups:
        _output_flags(p, "output" in offered)
    return p


# default=SUPPRESS on every shared flag lets the same flag be given before
# or after the subcommand without the subparser's default wiping it out.
_UNSET = argparse.SUPPRESS


def _shown(offered: bool, text: str) -> str:
    """The help of a flag, hidden where the command does not use it."""
    return text if offered else argparse.SUPPRESS


def _cluster_flags(p: argparse.ArgumentParser, offered: bool, *, after: bool) -> None:
    """Where the objects come from: snapshots, or a kubeconfig and its context."""
    g = p.add_argument_group("cluster (default: the current kubeconfig context)")
    g.add_argument(
        "--snapshot",
        action="append",
        metavar="FILE",
        dest="snapshot_after" if after else "snapshot",
        default=_UNSET,
        help=_shown(
            offered,
            "read this snapshot (what kubectl get -o json|yaml writes) instead of a cluster; repeatable: "
            "objects are merged by kind, namespace and name, the later file winning",
        ),
    )
    g.add_argument(
        "--kubeconfig",
        metavar="FILE",
        default=_UNSET,
        help=_shown(offered, "kubeconfig file (default: $KUBECONFIG, ~/.kube/config)"),
    )
    g.add_argument(
        "--context",
        metavar="NAME",
        action=_Contexts,
        default=_UNSET,
        help=_shown(offered, "kubeconfig context to use (check and report: repeatable, one cluster each)"),
    )


def _node_flags(p: argparse.ArgumentParser, offered: bool) -> None:
    """Which nodes: a label selector."""
    g = p.add_argument_group("nodes")
    g.add_argument(
        "-l",
        "--selector",
        metavar="SELECTOR",
        default=_UNSET,
        help=_shown(
            offered,
            "only nodes with these labels, in the API server's syntax (-l 'nvidia.com/gpu.present=true,"
            "nvidia.com/gpu.product in (NVIDIA-A10,NVIDIA-L4),!node-role.kubernetes.io/control-plane')",
        ),
    )


def _pod_flags(p: argparse.ArgumentParser, offered: bool) -> None:
    """Which pods: one namespace, or every one."""
    g = p.add_argument_group("pods")
    # hidden, they are plain flags: argparse 3.11 cannot wrap a usage line with a hidden exclusive group
    ns = g.add_mutually_exclusive_group() if offered else g
    ns.add_argument(
        "-n", "--namespace", metavar="NS", default=_UNSET, help=_shown(offered, "only pods in this namespace")
    )
    ns.add_argument(
        "-A",
        "--all-namespaces",
        action="store_true",
        default=_UNSET,
        help=_shown(offered, "pods in every namespace (the default)"),
    )


def _output_flags(p: argparse.ArgumentParser, offered: bool) -> None:
    """How the result is printed: the format, and tables' headers."""
    g = p.add_argument_group("output")
    g.add_argument(
        "-o",
        "--output",
        choices=FORMATS,
        default=_UNSET,
        help=_shown(
            offered,
            "text (default, one finding per line, for scripts), wide (with explanations), json or yaml "
            "(the gpulabel/v1 envelope), table (for people), name (node/NAME, pod/NS/NAME)",
        ),
    )
    g.add_argument(
        "--no-headers",
        action="store_true",
        default=_UNSET,
        help=_shown(offered, "tables without their header lines"),
    )


class _Contexts(argparse.Action):
    """``--context``: the last one given (``context``), and every one in order (``contexts``: a fleet)."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object, *_: object
    ) -> None:
        namespace.context = values
        namespace.contexts = [*getattr(namespace, "contexts", ()), values]


class Context:
    """What a command gets: its parsed arguments, the session that loads the cluster once, and a way to print.

    A plain class, not a dataclass: ``gpulabel --help`` imports this module, and ``dataclasses`` (with
    ``inspect``) would be most of its import time."""

    def __init__(
        self,
        args: argparse.Namespace,
        out: IO[str],
        err: IO[str],
        parser: argparse.ArgumentParser | None = None,  # the whole command line's (completion reads it)
    ) -> None:
        self.args = args
        self.out = out
        self.err = err
        self.parser = parser
        self._session: Session | None = None
        self._verdict: Verdict | None = None

    @property
    def fmt(self) -> str:
        return str(self.args.output)

    def warn(self, text: str) -> None:
        from gpulabel.render.escape import printable

        self.err.write(f"gpulabel: {printable(text)}\n")
        self.err.flush()

    def source(self) -> Source:
        """The shared cluster flags as the application layer's :class:`~gpulabel.app.session.Source`."""
        from gpulabel.app.session import Source

        a = self.args
        if len(getattr(a, "contexts", ())) > 1:
            from gpulabel.errors import InputError

            raise InputError("--context", "given more than once: only check, report and gpus read several clusters")
        return Source(
            snapshots=tuple(a.snapshot or ()),
            kubeconfig=a.kubeconfig,
            context=a.context,
            selector=a.selector,
        )

    def session(self) -> Session:
        """The one session of this run (made on first use, after the command's own options are checked)."""
        if self._session is None:
            from gpulabel.app.session import Session

            self._session = Session(self.source(), self.warn)
        return self._session

    def verdict(self) -> Verdict:
        """``--fail-level``, ``--config`` and ``--baseline`` as the application's verdict (read and checked once)."""
        if self._verdict is None:
            from gpulabel.app.checks import verdict_options

            a = self.args
            self._verdict = verdict_options(
                fail_level=getattr(a, "fail_level", None),
                config=getattr(a, "config", None),
                baseline=getattr(a, "baseline", None),
            )
        return self._verdict

    def emit(self, result: Result) -> None:
        from gpulabel.render.table import style_for
        from gpulabel.render.text import emit

        emit(result, self.fmt, self.out, style_for(self.out, headers=not self.args.no_headers))

    def finish(self, outcome: Outcome) -> int:
        """Print the outcome's result (or its page), then its warnings; its exit code."""
        if outcome.page is not None:
            self.out.write(outcome.page)
        else:
            self.emit(outcome.result)
        for line in outcome.warnings:
            self.warn(line)
        return outcome.code


Command = Callable[[Context], int]


def add_verdict_flags(p: argparse.ArgumentParser) -> None:
    """The flags of a command whose findings are graded: what fails it, what is accepted."""
    from gpulabel.model.severity import SEVERITIES

    g = p.add_argument_group("verdict")
    g.add_argument(
        "--fail-level",
        choices=SEVERITIES,
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


def add_all_pods_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--all-pods",
        action="store_true",
        help="every Pending pod, not only GPU pods (pods requesting nvidia.com/* or another GPU device plugin's "
        "resource, holding a DRA claim, or selecting nvidia.com/* or NFD's NVIDIA PCI label); without it the "
        "others are only counted, as info",
    )


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
        omit: Sequence[str] = (),
    ) -> argparse.ArgumentParser:
        """Add command ``name``: it offers the flag ``groups`` it uses; ``examples`` and ``exits`` go in its help;
        ``omit``: groups not even refused after it, whose flags (``-o``) it defines itself."""
        return self._add(name, func, help_, tuple(groups), tuple(examples), exits, tuple(omit))
