"""The command line: parse, dispatch, turn errors into one line and an exit code.

Exit codes: 0 nothing found (for a check: nothing at or above ``--fail-level``), 1 findings, 2 bad input
or an unusable cluster.
Heavy libraries are imported inside the commands that need them. Commands live
in one module per group; :mod:`gpulabel.cli.context` is the contract between them.
Run as ``kubectl-gpulabel`` (``kubectl gpulabel ...``), usage and help say so.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Collection, Sequence
from typing import IO, cast

from gpulabel import __version__
from gpulabel.cli.commands import Commands, Parser, UsageError
from gpulabel.cli.context import (
    ALL_GROUPS,
    GROUP_FLAGS,
    SEVERITY_TABLE,
    SHARED_DEFAULTS,
    AddCommand,
    Command,
    Context,
    shared_flags,
)
from gpulabel.errors import GpulabelError, InputError

__all__ = ["add_group", "build_parser", "main", "prog_name", "run"]


def prog_name(argv0: str | None = None) -> str:
    """``kubectl gpulabel`` when run as the kubectl plugin (``kubectl-gpulabel``), else ``gpulabel``."""
    base = os.path.basename(argv0 if argv0 is not None else sys.argv[0])
    return "kubectl gpulabel" if base.startswith("kubectl-gpulabel") else "gpulabel"


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Examples kept as written; option help wrapped at spaces only (operand names stay whole); the severity
    table of the registered checks' reasons put in where a help text asks for it, when it is printed."""

    def add_text(self, text: str | None) -> None:
        if text and SEVERITY_TABLE in text:
            from gpulabel.checks.registry import severity_help

            text = text.replace(SEVERITY_TABLE, severity_help())
        super().add_text(text)

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)


def build_parser(prog: str = "gpulabel", *, every: bool = True) -> Parser:
    """The command line's parser; ``every=False``: a command's parser is built only when it is chosen
    (what a run needs: ``gpulabel --help`` lists the commands from :data:`~gpulabel.cli.commands.COMMANDS`)."""
    parser = Parser(
        prog=prog,
        parents=[shared_flags()],
        formatter_class=_Formatter,
        description="Find, explain and repair the node labels a GPU Kubernetes cluster runs on.",
        epilog=f"Exit codes: 0 all good (checks: nothing at or above --fail-level, default error), 1 findings, "
        "2 bad input or cluster error.\n"
        f"Run '{prog} COMMAND --help' for a command's options, examples and exit codes.",
    )
    parser.add_argument("--version", action="version", version=f"gpulabel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, action=Commands)
    assert isinstance(sub, Commands)
    parser.commands = sub

    def build(group: str, names: Collection[str]) -> None:
        def add(
            name: str,
            func: Command,
            help_: str,
            groups: tuple[str, ...],
            examples: tuple[str, ...],
            exits: str,
            omit: tuple[str, ...] = (),
        ) -> argparse.ArgumentParser:
            if name not in names:
                return argparse.ArgumentParser(add_help=False)  # another command of the group: not built now
            epilog = ""
            if examples:
                epilog += "examples:\n" + "".join(f"  {prog} {e}\n" for e in examples) + "\n"
            epilog += f"exit codes: {exits}"
            p = sub.command_parser(
                name,
                parents=[shared_flags(groups, after=True, omit=omit)],
                description=help_,
                epilog=epilog,
                formatter_class=_Formatter,
            )
            p.set_defaults(func=func, groups=groups)
            return p

        add_group(group, AddCommand(add))

    sub.build = build
    if every:
        sub.build_every()
    return parser


def add_group(group: str, helper: AddCommand) -> None:
    """The commands of one group of :data:`~gpulabel.cli.commands.COMMANDS` (each group's module adds its own)."""
    if group == "label":
        from gpulabel.cli.labelcmds import add_label_commands

        add_label_commands(helper)  # sanitize, validate
    elif group == "node":
        from gpulabel.cli.nodecmds import add_node_commands

        add_node_commands(helper)  # audit, sources, operands, check, explain
    elif group == "write":
        from gpulabel.cli.writecmds import add_write_commands

        add_write_commands(helper)  # sync, isolate
    elif group == "monitor":
        from gpulabel.cli.monitorcmds import add_monitor_command

        add_monitor_command(helper)
    elif group == "kubeconfig":
        from gpulabel.cli.monitorcmds import add_kubeconfig_command

        add_kubeconfig_command(helper)  # a ServiceAccount's, to run monitor outside the cluster
    elif group == "placement":
        from gpulabel.cli.placement import add_placement_commands

        add_placement_commands(helper)  # place, pending, hazards
    elif group == "report":
        from gpulabel.cli.report import add_report_command

        add_report_command(helper)  # report --html
    elif group == "dra":
        from gpulabel.cli.dra import add_dra_commands

        add_dra_commands(helper)  # devices, cel, migrate
    elif group == "gpu":
        from gpulabel.cli.gpucmds import add_gpu_commands

        add_gpu_commands(helper)  # capacity, mig, sharing, upgrade, gpus
    elif group == "nfd":
        from gpulabel.cli.nfdcmds import add_nfd_commands

        add_nfd_commands(helper)  # rules
    elif group == "tool":
        from gpulabel.cli.toolcmds import add_tool_commands

        add_tool_commands(helper)  # diff, snapshot, version, completion
    else:
        raise AssertionError(f"no group {group!r}")


def _settle_flags(args: argparse.Namespace) -> None:
    """Refuse flags given before a command that does not use them; combine ``--snapshot`` from both sides."""
    offered = set(getattr(args, "groups", ALL_GROUPS))
    for group, (dests, flags) in GROUP_FLAGS.items():
        for dest, flag in zip(dests, flags, strict=True):
            if group not in offered and hasattr(args, dest):
                raise InputError(flag, f"not used by {args.command}")
    both = [*(getattr(args, "snapshot", None) or ()), *(getattr(args, "snapshot_after", None) or ())]
    if hasattr(args, "snapshot_after"):
        del args.snapshot_after
    if both:
        args.snapshot = both
    for name, default in SHARED_DEFAULTS.items():
        if not hasattr(args, name):
            setattr(args, name, default)


class _OutputFailed(GpulabelError):
    """Writing standard output failed (a full disk, an I/O error); a closed pipe is BrokenPipeError instead."""

    def __init__(self, err: OSError) -> None:
        super().__init__(f"standard output: {err.strerror or err}")


class _Output:
    """The output stream, whose write errors are told apart from every other OSError of a command."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as err:
            raise _OutputFailed(err) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as err:
            raise _OutputFailed(err) from None

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def _quiet_stdout() -> None:
    """After a closed pipe: point stdout at /dev/null, so that the interpreter's last flush says nothing."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _parse(parser: Parser, argv: list[str], err: IO[str]) -> argparse.Namespace | None:
    """The parsed command line, or None when it was refused: then the usage of the command the mistake belongs
    to and one line naming the mistake (its nearest spelling where there is one) are on ``err``."""
    args: argparse.Namespace | None = None
    try:
        args, extras = parser.parse_known_args(argv)
        if extras:
            raise UsageError(parser, f"unrecognized arguments: {' '.join(extras)}", extras)
    except UsageError as exc:
        from gpulabel.cli.usage import mistake

        err.write(mistake(parser, exc, argv, args))
        return None
    return args


def main(argv: Sequence[str] | None = None, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run one command; a write error on ``out`` is one line and exit 2, a closed pipe ends quietly (exit 0)."""
    raw = out or sys.stdout
    out = cast("IO[str]", _Output(raw))
    err = err or sys.stderr
    prog = prog_name()
    parser = build_parser(prog, every=False)
    args = _parse(parser, list(sys.argv[1:] if argv is None else argv), err)
    if args is None:
        return 2
    ctx = Context(args, out, err, parser=parser)
    name = prog.split()[-1]
    try:
        try:
            _settle_flags(args)
            code = int(args.func(ctx))
        except _OutputFailed:
            raise
        except GpulabelError as exc:
            out.flush()
            from gpulabel.render.escape import printable

            err.write(f"{name}: {printable(str(exc))}\n")
            return exc.exit_code
        out.flush()  # a full disk shows when the buffer is written: here, not at exit
        return code
    except KeyboardInterrupt:
        err.write("gpulabel: interrupted\n")
        return 130
    except BrokenPipeError:
        if raw is sys.stdout:
            _quiet_stdout()
        return 0
    except _OutputFailed as exc:
        if raw is sys.stdout:
            _quiet_stdout()  # what is still buffered would fail again at exit
        err.write(f"{name}: {exc}\n")
        return exc.exit_code


def run() -> None:
    """Console-script entry point."""
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    except OSError as exc:
        _quiet_stdout()
        sys.stderr.write(f"{prog_name().split()[-1]}: standard output: {exc.strerror or exc}\n")
        code = 2
    raise SystemExit(code)
