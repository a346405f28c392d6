"""Shell completion scripts (``gpulabel completion bash|zsh|fish``), generated from the parser itself.

Commands, each command's flags and the values of flags with choices (``-o``)
or with known values (``--disabled``: the operand names, never file names)
complete; the script is built from the same argparse parser the CLI runs, so
it never lists a flag a command does not take.
"""

from __future__ import annotations

import argparse

from gpulabel.cli.commands import Commands

__all__ = ["script"]


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, Commands):
            action.build_every()  # a run builds only its own command's parser
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _flags(parser: argparse.ArgumentParser) -> list[tuple[list[str], tuple[str, ...], str]]:
    """``(option strings, choices, help)`` of every flag ``parser`` offers (shown in its help)."""
    out = []
    for action in parser._actions:
        if action.option_strings and action.help != argparse.SUPPRESS:
            # choices, or the values a flag names without argparse checking them (--disabled OPERAND)
            choices = tuple(str(c) for c in action.choices) if action.choices else ()
            choices = choices or tuple(getattr(action, "completion_values", ()))
            out.append((list(action.option_strings), choices, str(action.help or "").split(";")[0]))
    return out


def _bash(prog: str, parser: argparse.ArgumentParser) -> str:
    fn = "_" + prog.replace("-", "_")
    cmds = _commands(parser)
    cases = []
    for name, sub in cmds.items():
        flags = " ".join(o for opts, _, _ in _flags(sub) for o in opts)
        cases.append(f"        {name}) opts='{flags}' ;;")
    choices = []
    for sub in cmds.values():
        for opts, values, _ in _flags(sub):
            if values:
                pattern = "|".join(opts)
                choices.append(
                    f"        {pattern}) COMPREPLY=($(compgen -W '{' '.join(values)}' -- \"$cur\")); return ;;"
                )
    choice_cases = "\n".join(dict.fromkeys(choices))
    return f"""# bash completion for {prog}
{fn}() {{
    local cur prev cmd opts i
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    case "$prev" in
{choice_cases}
    esac
    cmd=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in
            {"|".join(cmds)}) cmd="${{COMP_WORDS[i]}}"; break ;;
        esac
    done
    if [[ -z "$cmd" ]]; then
        COMPREPLY=($(compgen -W '{" ".join(cmds)} --help --version' -- "$cur"))
        return
    fi
    case "$cmd" in
{chr(10).join(cases)}
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
complete -F {fn} {prog}
"""


def _fish(prog: str, parser: argparse.ArgumentParser) -> str:
    lines = [f"# fish completion for {prog}", f"complete -c {prog} -f"]
    cmds = _commands(parser)
    for name, sub in cmds.items():
        desc = (sub.description or "").replace("'", "\\'")
        lines.append(f"complete -c {prog} -n '__fish_use_subcommand' -a {name} -d '{desc}'")
        for opts, values, help_ in _flags(sub):
            spec = []
            for o in opts:
                spec.append(f"-l {o[2:]}" if o.startswith("--") else f"-s {o[1:]}")
            extra = f" -xa '{' '.join(values)}'" if values else ""
            desc = help_.replace("'", "\\'")
            lines.append(
                f"complete -c {prog} -n '__fish_seen_subcommand_from {name}' {' '.join(spec)}{extra} -d '{desc}'"
            )
    return "\n".join(lines) + "\n"


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for ``shell`` (bash, zsh or fish) for the program ``parser`` describes."""
    prog = parser.prog.replace(" ", "-")  # "kubectl gpulabel" completes as the plugin's executable
    if shell == "fish":
        return _fish(prog, parser)
    text = _bash(prog, parser)
    if shell == "zsh":
        return "# zsh completion: bash's, through bashcompinit\nautoload -U +X bashcompinit && bashcompinit\n" + text
    return text
