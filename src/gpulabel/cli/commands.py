"""The commands by name, each with its one-line summary and the group whose module adds it.

``gpulabel --help`` is printed from this table alone: no command module is imported for it. Running a
command imports its group's module and builds that command's parser only (:class:`Commands`);
``gpulabel completion`` builds them all. ``tests/unit/test_cli_commands.py`` builds every command
and compares it with this table, names, order and summaries, so that the table cannot go stale.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from gpulabel.errors import GpulabelError

__all__ = ["COMMANDS", "GROUPS", "Commands", "Parser", "UsageError"]

# (command, group, summary) in the order of the top-level help; the group names the module that adds
# the command (gpulabel.cli.main.add_group), the summary is the command's help_ there
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("sanitize", "label", "turn vendor strings into valid label values, one per line"),
    ("validate", "label", "check KEY=VALUE labels with the API server's rules"),
    ("audit", "node", "check the GPU labels of every node with nvidia.com/gpu.present=true"),
    ("sources", "node", "who owns each label key; with --node, who last wrote each label"),
    ("operands", "node", "are the operands each node should run running, ready and in order?"),
    ("check", "node", "run every read-only check and summarise each"),
    (
        "explain",
        "node",
        "walk the chain that makes a node's GPUs usable, link by link with its evidence: NFD, gpu.present, "
        "deploy labels, DaemonSets, operand pods, MIG, allocatable, GFD labels, the node",
    ),
    ("sync", "write", "set node labels to their feature files (DIR/<node>.env), as field manager gpulabel"),
    ("isolate", "write", "take nodes off every GPU operand (nvidia.com/gpu.deploy.operands=false)"),
    (
        "monitor",
        "monitor",
        "watch the cluster and publish check's findings as they change: metrics, Events, a log line per change",
    ),
    (
        "kubeconfig",
        "kubeconfig",
        "write a kubeconfig that acts as a ServiceAccount (a TokenRequest), to run monitor or sync outside the "
        "cluster with exactly the chart's rights",
    ),
    ("place", "placement", "which nodes each workload in MANIFEST can be scheduled on, and why not the others"),
    (
        "pending",
        "placement",
        "why each Pending pod fits no node: one line per pod and reason with the number of nodes",
    ),
    ("hazards", "placement", "running pods whose required node affinity or nodeSelector no longer matches their node"),
    ("report", "report", "write every read-only check as one static HTML page, sortable and filterable"),
    ("devices", "dra", "every DRA device per node and pool, with its attributes and the claim holding it"),
    ("cel", "dra", "which devices a DRA selector expression selects, and where it fails"),
    ("migrate", "dra", "the DRA selector that selects the GPUs a workload's GFD node affinity selects"),
    ("capacity", "gpu", "GPU labels against status.allocatable: GPUs labelled but not advertised, or not"),
    ("mig", "gpu", "MIG reconfigurations failed or stuck, invalid or impossible layouts, strategy drift"),
    ("sharing", "gpu", "time-slicing and MPS labels that contradict each other"),
    ("upgrade", "gpu", "driver upgrades failed or stuck, operands left paused, deploy-label typos"),
    (
        "queues",
        "gpu",
        "Kueue's ResourceFlavors against the nodes: flavors that select no node or no GPU, quotas above the GPUs",
    ),
    ("gpus", "gpu", "the fleet inventory: nodes, GPUs, allocatable, usable, requested, free per kind of node"),
    (
        "rules",
        "nfd",
        "what nfd-master would write on each node from NodeFeatures and NodeFeatureRules, and why a rule did not match",
    ),
    (
        "diff",
        "tool",
        "what changed from OLD to NEW (snapshots; NEW omitted: the live cluster): nodes, labels, and findings",
    ),
    (
        "snapshot",
        "tool",
        "capture from the live cluster what every check reads (nodes with managedFields, pods, DaemonSets, "
        "ClusterPolicies, the DRA, NFD and Karpenter kinds where served) as one JSON List, for --snapshot later",
    ),
    ("version", "tool", "gpulabel's version and, from a live cluster, the API server's"),
    ("completion", "tool", "print a shell completion script"),
)

# group -> its commands, in the table's order
GROUPS: dict[str, tuple[str, ...]] = {}
for _name, _group, _ in COMMANDS:
    GROUPS[_group] = (*GROUPS.get(_group, ()), _name)


class UsageError(GpulabelError):
    """A command line argparse refused: the parser that refused it and argparse's message
    (cli/usage.py turns it into the command's usage and one line naming the mistake; exit 2)."""

    def __init__(self, parser: argparse.ArgumentParser, message: str, extras: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.parser = parser
        self.message = message
        self.extras = tuple(extras)  # what no parser took (argparse's "unrecognized arguments")


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors are raised (:class:`UsageError`) instead of printed with the usage of
    whichever parser met them: ``main`` says the mistake with the usage of the command it belongs to."""

    commands: Commands | None = None  # the top-level parser's COMMAND argument

    def error(self, message: str) -> NoReturn:
        raise UsageError(self, message)


if TYPE_CHECKING:
    _SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    _SubParsers = argparse._SubParsersAction


class Commands(_SubParsers):
    """The COMMAND argument: every command of :data:`COMMANDS` offered and listed with its summary, and
    the parser of the one chosen built when it is chosen, by :attr:`build` (its group and the names to build)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.build: Callable[[str, Collection[str]], None] = _unset
        self.built: set[str] = set()
        for name, _, summary in COMMANDS:
            self.add_parser(name, help=summary, add_help=False)  # replaced by the command's parser when built

    def command_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        """The parser of command ``name``, in place of the stand-in the table gave it (``add_parser``'s work)."""
        parser = Parser(prog=f"{self._prog_prefix} {name}", **kwargs)
        self._name_parser_map[name] = parser
        self.built.add(name)
        return parser

    def parser_of(self, name: str) -> argparse.ArgumentParser:
        """Command ``name``'s parser, built now if it was not."""
        if name not in self.built:
            self.build(GROUP_OF[name], (name,))
        return self._name_parser_map[name]

    def build_every(self) -> None:
        """Build every command's parser (shell completion reads them all)."""
        for group, names in GROUPS.items():
            wanted = [n for n in names if n not in self.built]
            if wanted:
                self.build(group, wanted)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        name = values[0] if isinstance(values, list) and values else None
        if name in GROUP_OF and name not in self.built:
            self.build(GROUP_OF[name], (name,))
        super().__call__(parser, namespace, values, option_string)


GROUP_OF: dict[str, str] = {name: group for name, group, _ in COMMANDS}


def _unset(group: str, names: Collection[str]) -> None:
    raise AssertionError("gpulabel.cli.main.build_parser sets Commands.build")
