"""Every read-only command's live answer equals its answer on a snapshot of the same moment.

:func:`live_equals_snapshot` takes ``gpulabel snapshot``, runs each command of :func:`read_only_commands` live
(in this process: ``gpulabel.cli.main.main``), takes a second snapshot, and runs each command on both files.
Each live answer (exit code, stdout, stderr) must be what the cluster said between the two: one of theirs,
or each of its lines one of theirs. A cluster that does not move between the snapshots (a kwok heartbeat
changes no answer) leaves one answer to equal.
"""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from gpulabel.cli.main import main

AT = "2026-12-04T00:00:00Z"  # every age is measured at one time on both sides
ROUNDS = 4
PAUSE = 5.0  # seconds before a round taken again, growing: a burst of scheduler retries should not span every round


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
# The page's data is one line of JSON: a line per value, so that :func:`_between` compares each Pending pod's
# message on its own (the scheduler's CEL errors name whichever device it tried first, retry by retry).
_PAGE_DATA = re.compile(r'(<script type="application/json" id="gpulabel-data">)(.*?)(</script>)', re.S)


def _data_lines(match: re.Match[str]) -> str:
    return f"{match[1]}\n{json.dumps(json.loads(match[2]), indent=1)}\n{match[3]}"


def _answer(cmd: Sequence[str], *source: str) -> tuple[int, str, str]:
    code, out, err = run([*cmd, *source])
    if cmd[0] == "report":
        for pattern, fixed in _PAGE_SOURCE:
            out = pattern.sub(fixed, out)
        out = _PAGE_DATA.sub(_data_lines, out, count=1)
    return code, out, err


def _answers(cmds: Sequence[tuple[str, ...]], *source: str) -> list[tuple[int, str, str]]:
    return [_answer(cmd, *source) for cmd in cmds]


def _snapshot(kubeconfig: Path, path: Path) -> None:
    code, out, err = run(["snapshot", "-o", str(path), "--force", "--kubeconfig", str(kubeconfig)])
    assert code == 0, (out, err)


def _between(live: tuple[int, str, str], a: tuple[int, str, str], b: tuple[int, str, str]) -> bool:
    """Whether ``live`` is what the cluster said at some moment between snapshots ``a`` and ``b``: one of them,
    or, line by line, each line one of theirs (the scheduler rewrites many Pending pods' messages while a LIST
    pages through them, each pod's as it was when read; the outputs put a pod's message on a line of its own)."""
    if live in (a, b):
        return True
    if live[0] not in (a[0], b[0]) or live[2] not in (a[2], b[2]):
        return False
    lines = [x[1].splitlines() for x in (live, a, b)]
    if len({len(x) for x in lines}) != 1:
        return False
    return all(got in (was, then) for got, was, then in zip(*lines, strict=True))


def _round(kubeconfig: Path, cmds: Sequence[tuple[str, ...]], first: Path, second: Path) -> tuple[list[Any], int]:
    """One round: snapshot A, every command live, snapshot B. Each live answer must be what the cluster said
    between them (:func:`_between`; ``diff A`` live: as ``diff A A`` or ``diff A B``).
    Returns the commands that fail that, with the three answers, and how many answered differently on A and B."""
    _snapshot(kubeconfig, first)
    live = [
        *_answers(cmds, "--kubeconfig", str(kubeconfig)),
        run(["diff", str(first), "--kubeconfig", str(kubeconfig)]),
    ]
    _snapshot(kubeconfig, second)
    on_a = [*_answers(cmds, "--snapshot", str(first)), run(["diff", str(first), str(first)])]
    on_b = [*_answers(cmds, "--snapshot", str(second)), run(["diff", str(first), str(second)])]
    names = [" ".join(cmd) for cmd in cmds] + [f"diff {first.name} (live)"]
    differ = [
        {"command": name, "live": got, "snapshot": a, **({"snapshot after": b} if b != a else {})}
        for name, got, a, b in zip(names, live, on_a, on_b, strict=True)
        if not _between(got, a, b)
    ]
    errors = [{"command": name, "refused": err} for name, (code, _, err) in zip(names, live, strict=True) if code == 2]
    moved = sum(a != b for a, b in zip(on_a, on_b, strict=True))
    return differ + errors, moved  # a refused flag would make both sides equal and the comparison useless


def _rounds() -> Iterator[int]:
    """The rounds' numbers, 1 to ROUNDS, pausing PAUSE seconds more before each after the first (a burst of
    scheduler retries or a namespace's deletion should not span every round)."""
    for rounds in range(1, ROUNDS + 1):
        if rounds > 1:
            time.sleep(PAUSE * (rounds - 1))
        yield rounds


def live_equals_snapshot(kubeconfig: Path, work: Path, **what: str) -> dict[str, Any]:
    """Each read-only command live against the same on snapshots of the moment; a failure names every command
    whose live answer is neither snapshot's, with the answers. A round that fails is taken again (a scheduler
    retry can change a Pending pod's message while a command LISTs its kinds one after another), up to ROUNDS,
    pausing PAUSE seconds more before each.
    ``what``: :func:`read_only_commands`' namespace, node, expression and manifest (a file name). Returns what
    was compared: commands, rounds, commands whose answer changed between the round's two snapshots."""
    manifest = Path(what.pop("manifest"))
    cmds = read_only_commands(manifest=manifest, **what)
    first, second = work / "moment-a.json", work / "moment-b.json"
    retried: list[str] = []  # the commands of rounds taken again, printed by the callers
    for rounds in _rounds():
        differ, moved = _round(kubeconfig, cmds, first, second)
        if not differ:
            return {"commands": len(cmds) + 1, "rounds": rounds, "moved": moved, "retried": retried}
        retried.extend(str(d["command"]) for d in differ)
    raise AssertionError(json.dumps(differ, indent=1) + "\n" + _summary(differ))


def _summary(differ: Sequence[dict[str, Any]]) -> str:
    """The last line of a failure (CI shows the tail): each command that differed, and its first line that
    differs from both snapshots' (or what was refused)."""
    said = []
    for d in differ:
        if "refused" in d:
            said.append(f"{d['command']}: refused: {d['refused'][:200]}")
            continue
        a, b = d["snapshot"], d.get("snapshot after", d["snapshot"])
        lines = [x[1].splitlines() for x in (d["live"], a, b)]
        rows = enumerate(zip(*lines, strict=False))
        first = next(
            (f"line {i + 1}: {got[:200]!r}" for i, (got, was, then) in rows if got not in (was, then)),
            f"exit {d['live'][0]} vs {a[0]}/{b[0]}; lines {len(lines[0])} vs {len(lines[1])}/{len(lines[2])}",
        )
        said.append(f"{d['command']}: {first}")
    return f"live differs from both snapshots in {len(differ)} command(s): " + " | ".join(said)


def live_as_on_a_snapshot(
    kubeconfig: Path, path: Path, argv: Sequence[str], *, live_only: Sequence[str] = ()
) -> tuple[int, Any]:
    """One command's live JSON answer, checked to be its answer on a snapshot of the same moment: snapshot
    ``path``, the command live (with ``live_only`` added), a second snapshot beside ``path``; the live answer
    must be one of the two snapshots' (this shared cluster moves between them: another test's namespace being
    deleted takes its objects away one by one). Taken again up to ROUNDS, pausing as :func:`live_equals_snapshot`.
    Returns the live exit code and parsed JSON; ``path`` is left holding the snapshot that was compared."""
    after = path.with_name(f"{path.stem}-after{path.suffix}")
    tried: list[str] = []
    for rounds in _rounds():
        _snapshot(kubeconfig, path)
        code, out, err = run([*argv, *live_only, "--kubeconfig", str(kubeconfig)])
        assert code != 2, err
        _snapshot(kubeconfig, after)
        live = (code, json.loads(out))
        on = [run([*argv, "--snapshot", str(p)]) for p in (path, after)]
        if live in [(c, json.loads(o)) for c, o, _ in on]:
            return live
        tried.append(f"round {rounds}: live exit {code}, {len(out)} chars; snapshots' exits {[c for c, _, _ in on]}")
    raise AssertionError(f"{' '.join(argv)}: live differs from both snapshots in every round: " + "; ".join(tried))
