"""Errors at the mistake: three wrong usages per command family, each refused with exit 2 and ending in one line
that names the mistake (the flag or argument, with its nearest spelling where there is one), after the usage of
the command it belongs to when argparse met it (cli/usage.py). The families are cli/commands.py's groups."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gpulabel.cli.commands import GROUPS
from gpulabel.cli.main import main

S = ("--snapshot", str(Path(__file__).parents[2] / "examples" / "drifted-lab.yaml"))

# (family, argv, the last line on stderr, the command whose usage is shown: "" for the top-level usage)
ROWS: list[tuple[str, tuple[str, ...], str, str]] = [
    (
        "label",
        ("sanitize", "--strict", "x"),
        "gpulabel sanitize: error: --strict: no such flag of sanitize",
        "sanitize",
    ),
    ("label", ("validate",), "gpulabel validate: error: KEY=VALUE: required", "validate"),
    (
        "label",
        ("--output", "json", "sanitise", "x"),
        "gpulabel: error: sanitise: no such command (did you mean sanitize?)",
        "",
    ),
    (
        "node",
        ("--strict", "audit", *S),
        "gpulabel audit: error: --strict: a flag of audit, given before the command: put it after "
        "(gpulabel audit --strict ...)",
        "audit",
    ),
    (
        "node",
        ("explain", "node", "lab-node-3", *S),
        "gpulabel explain: error: node lab-node-3: give the node as one argument (did you mean explain "
        "node/lab-node-3?)",
        "explain",
    ),
    (
        "node",
        ("check", *S, "--stuck-afer", "1h"),
        "gpulabel check: error: --stuck-afer: no such flag of check (did you mean --stuck-after?)",
        "check",
    ),
    ("write", ("sync",), "gpulabel sync: error: DIR: required", "sync"),
    (
        "write",
        ("isolate", "--dryrun", "lab-node-1"),
        "gpulabel isolate: error: --dryrun: no such flag of isolate (did you mean --dry-run?)",
        "isolate",
    ),
    (
        "write",
        ("--force", "isolate", "lab-node-1"),
        "gpulabel isolate: error: --force: a flag of isolate, given before the command: put it after "
        "(gpulabel isolate --force ...)",
        "isolate",
    ),
    (
        "monitor",
        ("monitor", "--metrics-port", "http"),
        "gpulabel monitor: error: --metrics-port: invalid int value: 'http'",
        "monitor",
    ),
    (
        "monitor",
        ("monitor", "--leader-elect", "--lease-namespace"),
        "gpulabel monitor: error: --lease-namespace: expected one argument",
        "monitor",
    ),
    ("monitor", ("monitr",), "gpulabel: error: monitr: no such command (did you mean monitor?)", ""),
    (
        "kubeconfig",
        ("kubeconfig", "--namespce", "gpulabel"),
        "gpulabel kubeconfig: error: --namespce: no such flag of kubeconfig (did you mean --namespace?)",
        "kubeconfig",
    ),
    (
        "kubeconfig",
        ("kubeconfig", "--service-acount", "monitor", "-o", "k.yaml"),
        "gpulabel kubeconfig: error: --service-acount: no such flag of kubeconfig (did you mean --service-account?)",
        "kubeconfig",
    ),
    (
        "kubeconfig",
        ("kubeconfig", "-o", "k.yaml"),
        "gpulabel kubeconfig: error: --service-account: required",
        "kubeconfig",
    ),
    ("placement", ("place", *S), "gpulabel place: error: MANIFEST: required", "place"),
    (
        "placement",
        ("--per-node", "place", "x.yaml", *S),
        "gpulabel place: error: --per-node: a flag of place, given before the command: put it after "
        "(gpulabel place --per-node ...)",
        "place",
    ),
    (
        "placement",
        ("hazards", "-A", "-n", "ml", *S),
        "gpulabel hazards: error: -n/--namespace: not allowed with -A/--all-namespaces",
        "hazards",
    ),
    ("report", ("report", *S), "gpulabel report: error: --html: required", "report"),
    (
        "report",
        ("report", "--html", "-", *S, "--clusters", "a=b"),
        "gpulabel report: error: --clusters: no such flag of report (did you mean --cluster?)",
        "report",
    ),
    ("report", ("reprot", "--html", "-"), "gpulabel: error: reprot: no such command (did you mean report?)", ""),
    ("dra", ("devices", *S, "extra"), "gpulabel devices: error: extra: an argument devices does not take", "devices"),
    ("dra", ("cel", *S), "gpulabel cel: error: EXPR: required", "cel"),
    ("dra", ("migrate", *S), "gpulabel migrate: error: MANIFEST: required", "migrate"),
    ("gpu", ("gpus", *S, "--by"), "gpulabel gpus: error: --by: expected one argument", "gpus"),
    (
        "gpu",
        ("--stuck-after", "1h", "upgrade", *S),
        "gpulabel upgrade: error: --stuck-after: a flag of upgrade, given before the command: put it after "
        "(gpulabel upgrade --stuck-after ...)",
        "upgrade",
    ),
    (
        "gpu",
        ("capacity", *S, "-o", "jsn"),
        "gpulabel capacity: error: -o/--output: 'jsn' is not a choice (did you mean json? choose from text, wide, "
        "json, yaml, table, name)",
        "capacity",
    ),
    ("nfd", ("rules", *S, "--node"), "gpulabel rules: error: --node: expected one argument", "rules"),
    ("nfd", ("rules", *S, "lab-node-1"), "gpulabel rules: error: lab-node-1: an argument rules does not take", "rules"),
    ("nfd", ("rulse", *S), "gpulabel: error: rulse: no such command (did you mean rules?)", ""),
    ("tool", ("diff",), "gpulabel diff: error: OLD: required", "diff"),
    (
        "tool",
        ("snapshot", "--bundel", "x.tar.gz"),
        "gpulabel snapshot: error: --bundel: no such flag of snapshot (did you mean --bundle?)",
        "snapshot",
    ),
    (
        "tool",
        ("completion", "fsh"),
        "gpulabel completion: error: shell: 'fsh' is not a choice (did you mean fish? choose from bash, zsh, fish)",
        "completion",
    ),
]


def test_every_family_has_three_wrong_usages() -> None:
    families = [family for family, *_ in ROWS]
    assert {f: families.count(f) for f in GROUPS} == dict.fromkeys(GROUPS, 3)


@pytest.mark.parametrize(("family", "argv", "line", "usage"), ROWS, ids=[" ".join(r[1][:3]) for r in ROWS])
def test_a_wrong_usage_ends_in_one_line_naming_the_mistake(
    family: str, argv: tuple[str, ...], line: str, usage: str
) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    lines = err.getvalue().splitlines()
    assert (code, out.getvalue()) == (2, "")
    assert lines[-1] == line
    # the usage shown is the command's own (the top-level one for a command that does not exist), and the rest of
    # stderr is that usage, wrapped: one error line in all
    assert lines[0].startswith(f"usage: gpulabel {usage} [-h]" if usage else "usage: gpulabel [-h]"), lines[0]
    assert [x for x in lines[1:-1] if not x.startswith(" ")] == [], lines


def test_a_mistake_that_carries_control_characters_is_echoed_escaped() -> None:
    err = io.StringIO()
    assert main(["check", "--snap\x1b[2Jx"], io.StringIO(), err) == 2
    last = err.getvalue().splitlines()[-1]
    assert "\x1b" not in last and last.startswith("gpulabel check: error: --snap")


def test_a_node_name_misspelled_names_the_nearest_node() -> None:
    err = io.StringIO()
    assert main(["explain", "node/lab-nod-1", *S], io.StringIO(), err) == 2
    assert err.getvalue() == "gpulabel: node/lab-nod-1: not found (did you mean node/lab-node-1?)\n"
    err = io.StringIO()
    assert main(["explain", "node/zzz", *S], io.StringIO(), err) == 2
    assert err.getvalue() == "gpulabel: node/zzz: not found\n"  # nothing near: no guess
