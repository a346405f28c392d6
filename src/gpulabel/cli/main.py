"""The command line: parse, dispatch, turn errors into one line and an exit code.

Exit codes: 0 nothing found, 1 findings, 2 bad input or an unusable cluster.
Heavy libraries are imported inside the commands that need them. Commands live
in one module per group; :mod:`gpulabel.cli.context` is the contract between them.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from typing import IO

from gpulabel import __version__
from gpulabel.cli.context import SHARED_DEFAULTS, Command, Context, shared_flags
from gpulabel.errors import GpulabelError

__all__ = ["build_parser", "main", "run"]


def build_parser() -> argparse.ArgumentParser:
    shared = shared_flags()
    parser = argparse.ArgumentParser(
        prog="gpulabel",
        parents=[shared],
        description="Find, explain and repair the node labels a GPU Kubernetes cluster runs on.",
        epilog="Exit codes: 0 all good, 1 findings, 2 bad input or cluster error.",
    )
    parser.add_argument("--version", action="version", version=f"gpulabel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, func: Command, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[shared], help=help_, description=help_)
        p.set_defaults(func=func)
        return p

    from gpulabel.cli.dra import add_dra_commands
    from gpulabel.cli.gpucmds import add_gpu_commands
    from gpulabel.cli.labelcmds import add_label_commands
    from gpulabel.cli.nodecmds import add_node_commands
    from gpulabel.cli.placement import add_placement_commands
    from gpulabel.cli.report import add_report_command
    from gpulabel.cli.writecmds import add_write_commands

    add_label_commands(add)  # sanitize, validate
    add_node_commands(add)  # audit, sources, operands, check
    add_write_commands(add)  # sync, isolate
    add_placement_commands(add)  # place, pending, hazards
    add_report_command(add)  # report --html
    add_dra_commands(add)  # devices, cel
    add_gpu_commands(add)  # capacity, mig, sharing, upgrade, gpus
    return parser


def main(argv: Sequence[str] | None = None, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    args = parser.parse_args(argv)
    for name, default in SHARED_DEFAULTS.items():
        if not hasattr(args, name):
            setattr(args, name, default)
    ctx = Context(args, out, err)
    try:
        return int(args.func(ctx))
    except GpulabelError as exc:
        out.flush()
        err.write(f"gpulabel: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        err.write("gpulabel: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0


def run() -> None:
    """Console-script entry point."""
    code = main()
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.flush()
    raise SystemExit(code)
