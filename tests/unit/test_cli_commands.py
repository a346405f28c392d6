"""The table of commands (``cli/commands.py``) that ``gpulabel --help`` is printed from agrees with the commands.

A run builds only its own command's parser, so the top-level help cannot read the summaries from the
parsers: it reads them from the table, and these tests keep the table true to what each group's
module adds (names, order, groups and summaries).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from gpulabel.cli.commands import COMMANDS, GROUPS, Commands
from gpulabel.cli.context import AddCommand
from gpulabel.cli.main import add_group, build_parser


def _added() -> list[tuple[str, str, str]]:
    """``(command, group, summary)`` of every command each group's module adds, in the order added."""
    rows: list[tuple[str, str, str]] = []
    for group in GROUPS:

        def add(name: str, func: object, help_: str, *_: object, group: str = group) -> argparse.ArgumentParser:
            rows.append((name, group, help_))
            return argparse.ArgumentParser(add_help=False)

        add_group(group, AddCommand(add))
    return rows


def _commands(parser: argparse.ArgumentParser) -> Commands:
    (sub,) = [a for a in parser._actions if isinstance(a, Commands)]
    return sub


def test_the_table_names_every_command_its_group_and_summary_in_order() -> None:
    assert _added() == list(COMMANDS)


def test_the_top_level_help_lists_the_built_commands_with_their_summaries() -> None:
    sub = _commands(build_parser())
    assert sub.built == set(sub.choices) == {name for name, _, _ in COMMANDS}
    listed = [(a.dest, a.help) for a in sub._choices_actions]
    assert listed == [(name, summary) for name, _, summary in COMMANDS]
    for name, parser in sub.choices.items():
        assert parser.prog == f"gpulabel {name}"
        assert parser.get_default("func") is not None, name  # the command's own parser, not a stand-in
        assert name == "pending" or parser.description == dict(listed)[name]  # pending's adds the GPU-pod rule


@pytest.mark.parametrize(("argv", "command"), [(["sanitize", "a b"], "sanitize"), (["-o", "json", "gpus"], "gpus")])
def test_a_run_builds_only_its_own_commands_parser(argv: list[str], command: str) -> None:
    parser = build_parser(every=False)
    assert parser.parse_args(argv).command == command
    assert _commands(parser).built == {command}


def test_help_imports_no_command_module_and_no_renderer() -> None:
    """What ``gpulabel --help`` imports of gpulabel: the table, the flags and the formats' names, nothing else
    (no command module, no check, no renderer, and not ``dataclasses``: start-up time, bench/startup.py)."""
    code = (
        "import sys, contextlib, io\nfrom gpulabel.cli.main import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n    main(['--help'])\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith(('gpulabel', 'dataclasses')))))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.split() == [
        "gpulabel",
        "gpulabel.cli",
        "gpulabel.cli.commands",
        "gpulabel.cli.context",
        "gpulabel.cli.main",
        "gpulabel.errors",
        "gpulabel.render",
        "gpulabel.render.formats",
    ]


def test_completion_offers_every_command() -> None:
    from gpulabel.cli.completion import script

    text = script(build_parser(every=False), "bash")
    for name, _, _ in COMMANDS:
        assert f"        {name}) opts='" in text, name
