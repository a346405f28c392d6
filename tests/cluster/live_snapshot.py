"""Every read-only command's live answer equals its answer on a snapshot of the same moment.

:func:`live_equals_snapshot` takes ``gpulabel snapshot``, runs each command of :func:`read_only_commands` live
and on that file (in this process: ``gpulabel.cli.main.main``), and takes a second snapshot after them. The
cluster held still while they ran when every command says the same on both snapshots; if it moved (a kwok
heartbeat does not change an answer, a pod bound meanwhile does), the round is taken again. Then each live
answer (exit code, stdout, stderr) must be the snapshot's.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence
from pathlib import Path

from gpulabel.cli.main import main

AT = "2026-12-04T00:00:00Z"  # every age is measured at one time on both sides
ROUNDS = 3


def run(argv: Sequence[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def read_only_commands(*, namespace: str, node: str, manifest: Path, expression: str) -> list[tuple[str, ...]]:
    """Each read-only command that reads the cluster, in its outputs and with the flags that change what it
    reads (``-n``, ``--all-pods``, ``--per-node``, ``--strict``, ``explain``'s NFD objects under ``-o wide``).
    ``report`` writes its page to stdout (``--html -``); ``diff`` compares a snapshot with itself."""
    at = ("--at", AT)
    cmds: list[tuple[str, ...]] = [
        ("check", *at, "--no-evidence"),
        ("check", *at, "--no-evidence", "-o", "json", "--all-pods", "--strict"),
        ("check", *at, "--no-evidence", "-n", namespace, "-o", "wide"),
        ("explain", f"node/{node}", *at, "--no-evidence", "-o", "json"),
        ("report", "--html", "-", *at, "--no-evidence"),
        ("audit", "-o", "json"),
        ("audit", "--strict"),
        ("sources", "nvidia.com/gpu.present", "nvidia.com/gpu.product", "kubernetes.io/hostname", "-o", "json"),
        ("sources", "--node", node),
        ("operands", "-o", "json"),
        ("place", str(manifest), "-o", "wide"),
        ("place", str(manifest), "--per-node", "-o", "json"),
        ("pending",),
        ("pending", "-o", "wide"),
        ("pending", "-o", "json", "--all-pods"),
        ("pending", "-n", namespace, "--per-node"),
        ("hazards", "-o", "json"),
        ("capacity", "-o", "json"),
        ("mig", *at, "-o", "json"),
        ("sharing", "-o", "json"),
        ("upgrade", *at, "-o", "json"),
        ("gpus", "-o", "json"),
        ("gpus", "--by", "kubernetes.io/hostname"),
        ("devices", "-o", "json"),
        ("cel", expression, "-o", "json"),
        ("migrate", str(manifest), "-o", "json"),
        ("rules", "-o", "json"),
    ]
    return cmds


# The report page names its input (the file, or the API endpoint) and when it was made: not the cluster's answer.
_PAGE_SOURCE = (
    (re.compile(r'<p class="meta">[^<]*? &middot; '), '<p class="meta">SOURCE &middot; '),
    (re.compile(r'"source":"[^"]*"'), '"source":"SOURCE"'),
    (re.compile(r"generated \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ"), "generated TIME"),
    (re.compile(r'"generated":"[^"]*"'), '"generated":"TIME"'),
)


def _answer(cmd: Sequence[str], *source: str) -> tuple[int, str, str]:
    code, out, err = run([*cmd, *source])
    if cmd[0] == "report":
        for pattern, fixed in _PAGE_SOURCE:
            out = pattern.sub(fixed, out)
    return code, out, err


def _answers(cmds: Sequence[tuple[str, ...]], *source: str) -> list[tuple[int, str, str]]:
    return [_answer(cmd, *source) for cmd in cmds]


def _snapshot(kubeconfig: Path, path: Path) -> None:
    code, out, err = run(["snapshot", "-o", str(path), "--force", "--kubeconfig", str(kubeconfig)])
    assert code == 0, (out, err)


def live_equals_snapshot(kubeconfig: Path, work: Path, **what: str) -> dict[str, int]:
    """Each read-only command live against the same on a snapshot of the moment; a failure names every command
    whose answers differ with both answers. ``what``: :func:`read_only_commands`' namespace, node, expression
    and manifest (a file name). Returns what was compared: commands, rounds, findings seen."""
    manifest = Path(what.pop("manifest"))
    cmds = read_only_commands(manifest=manifest, **what)
    first, second = work / "moment-a.json", work / "moment-b.json"
    rounds = 0
    while (rounds := rounds + 1) <= ROUNDS:
        _snapshot(kubeconfig, first)
        live = _answers(cmds, "--kubeconfig", str(kubeconfig))
        # a diff of the snapshot against the live cluster of the same moment finds nothing, as against itself
        live.append(run(["diff", str(first), "--kubeconfig", str(kubeconfig)]))
        _snapshot(kubeconfig, second)
        before = _answers(cmds, "--snapshot", str(first))
        if before == _answers(cmds, "--snapshot", str(second)):
            break
    if rounds > ROUNDS:
        after = _answers(cmds, "--snapshot", str(second))
        moved = [" ".join(c) for c, a, b in zip(cmds, before, after, strict=True) if a != b]
        raise AssertionError(f"the cluster kept changing under {ROUNDS} rounds of read-only commands: {moved}")
    before.append(run(["diff", str(first), str(first)]))
    names = [" ".join(cmd) for cmd in cmds] + [f"diff {first.name} (live)"]
    differ = [
        {"command": name, "live": got, "snapshot": want}
        for name, got, want in zip(names, live, before, strict=True)
        if got != want
    ]
    assert differ == [], json.dumps(differ, indent=1)
    errors = [(name, err) for name, (code, _, err) in zip(names, live, strict=True) if code == 2]
    assert errors == [], errors  # every command ran: a refused flag would make both sides equal and useless
    return {"commands": len(names), "rounds": rounds, "lines": sum(len(out.splitlines()) for _, out, _ in live)}
