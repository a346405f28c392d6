"""A refused command line said at the mistake: the usage of the command it belongs to, then one line naming it.

argparse meets most mistakes in the wrong place: a command's flag given before the command
(``gpulabel --strict check``) is "unrecognized" by the top-level parser, which prints its own usage; a
flag that takes a value given before the command (``gpulabel --fail-level error check``) makes the value
the command (``invalid choice: 'error'``); kubectl's ``explain node NAME`` leaves ``NAME`` over. Here each
is told as what it is, about the command it belongs to, with the nearest spelling of what was misspelled::

    usage: gpulabel check [-h] [--snapshot FILE] ...
    gpulabel check: error: --stict: no such flag of check (did you mean --strict?)

Imported only when a command line is refused.
"""

from __future__ import annotations

import argparse
import difflib
import re

from gpulabel.cli.commands import GROUP_OF, Parser, UsageError

__all__ = ["mistake"]

_CHOICE = re.compile(r"^argument (?P<arg>[^:]+): invalid choice: '(?P<bad>.*)' \(choose from (?P<choices>.*)\)$")
_NODE_TYPES = ("node", "nodes", "no")  # kubectl's names of the node resource, as explain takes them
_NEAR = 0.75  # difflib's ratio a spelling must reach to be suggested (--stict/--strict 0.93, --short/--snapshot 0.70)
_REQUIRED = "the following arguments are required: "


def mistake(top: Parser, exc: UsageError, argv: list[str], args: argparse.Namespace | None) -> str:
    """The usage and the one line (``<prog>: error: <what>: <why>``) saying ``exc``, for stderr."""
    from gpulabel.render.escape import printable

    parser, line = _said(top, exc, argv, args)
    return f"{parser.format_usage()}{parser.prog}: error: {printable(line)}\n"  # the line echoes what was typed


def _said(
    top: Parser, exc: UsageError, argv: list[str], args: argparse.Namespace | None
) -> tuple[argparse.ArgumentParser, str]:
    """The parser whose usage to show, and the line."""
    if exc.extras and args is not None and top.commands is not None:
        command = str(args.command)
        parser = top.commands.parser_of(command)
        return parser, _extra(parser, command, exc.extras, args)
    choice = _CHOICE.match(exc.message)
    if choice and exc.parser is top and top.commands is not None:
        return _not_a_command(top, choice["bad"], argv)
    if exc.parser is not top and exc.message.startswith(_REQUIRED):  # argparse says "required" before "unknown"
        command = exc.parser.prog.split()[-1]
        unknown = _unknown_flag(exc.parser, argv[argv.index(command) + 1 :] if command in argv else argv)
        if unknown:
            return exc.parser, _flag(exc.parser, command, unknown)
    return exc.parser, _reworded(exc.message)


def _unknown_flag(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """The first flag in ``argv`` that is none of ``parser``'s (nor a prefix of one, which argparse takes)."""
    for token in argv:
        if token == "--":
            return None
        flag = token.split("=", 1)[0]
        if flag.startswith("-") and flag != "-" and not any(o.startswith(flag) for o in parser._option_string_actions):
            return flag
    return None


def _extra(parser: argparse.ArgumentParser, command: str, extras: tuple[str, ...], args: argparse.Namespace) -> str:
    """What no parser took: a flag (misspelled, or the command's own given before it) or an argument left over."""
    first = extras[0]
    if first.startswith("-") and first != "-":
        return _flag(parser, command, first.split("=", 1)[0])
    target = getattr(args, "target", None)
    if command == "explain" and target in _NODE_TYPES:  # kubectl's "TYPE NAME"; explain takes "TYPE/NAME"
        return f"{target} {first}: give the node as one argument (did you mean explain node/{first}?)"
    if first in GROUP_OF:
        return f"{first}: a second command; give one command at a time"
    return f"{first}: an argument {command} does not take"


def _flag(parser: argparse.ArgumentParser, command: str, flag: str) -> str:
    """A flag no parser took: the command's own, given before it, or none of its flags (with the nearest)."""
    own = parser._option_string_actions
    if flag in own:
        return f"{flag}: a flag of {command}, given before the command: put it after ({parser.prog} {flag} ...)"
    near = difflib.get_close_matches(flag, [f for f in own if f.startswith("--") == flag.startswith("--")], 1, _NEAR)
    return f"{flag}: no such flag of {command}" + (f" (did you mean {near[0]}?)" if near else "")


def _not_a_command(top: Parser, bad: str, argv: list[str]) -> tuple[argparse.ArgumentParser, str]:
    """``bad`` was taken as the command: misspelled, or the value of a flag given before the real one."""
    assert top.commands is not None
    at = argv.index(bad) if bad in argv else -1
    command = next((t for t in argv[at + 1 :] if t in GROUP_OF), None)
    before = argv[at - 1] if at > 0 else ""
    if command is not None and before.startswith("-"):  # gpulabel --fail-level error check
        parser = top.commands.parser_of(command)
        return parser, _flag(parser, command, before.split("=", 1)[0])
    near = difflib.get_close_matches(bad, list(GROUP_OF), 1, _NEAR)
    hint = f"did you mean {near[0]}?" if near else f"'{top.prog} --help' lists them"
    return top, f"{bad}: no such command ({hint})"


def _reworded(message: str) -> str:
    """argparse's message, led by what it is about (``-o/--output: ...``), with the nearest valid choice."""
    choice = _CHOICE.match(message)
    if choice:
        choices = [c.strip().strip("'") for c in choice["choices"].split(",")]
        near = difflib.get_close_matches(choice["bad"], choices, 1, _NEAR)
        hint = f"did you mean {near[0]}? " if near else ""
        return f"{choice['arg']}: {choice['bad']!r} is not a choice ({hint}choose from {', '.join(choices)})"
    if message.startswith(_REQUIRED):
        what = message[len(_REQUIRED) :]
        return f"{what}: required" + (" (--help lists the commands)" if what == "COMMAND" else "")
    if message.startswith("argument "):
        return message[len("argument ") :].replace(": not allowed with argument ", ": not allowed with ")
    return message
