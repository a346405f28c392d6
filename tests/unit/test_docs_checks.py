"""docs/checks.md's reason table is the checks' own reason tables, and those tables are complete.

The table is generated (``python -m tools.reasons``); the first test fails when
someone edits a check's reasons without regenerating it, or edits the table by
hand. The second runs the checks on every bundled example and fails on a
reason that no table names.
"""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest
from tools import reasons

from gpulabel.checks.dra import rules as dra
from gpulabel.checks.reasons import catalogue
from gpulabel.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SNAPSHOTS = sorted(
    p.name for p in EXAMPLES.iterdir() if p.suffix in (".yaml", ".json") and p.name != "gpulabel-config.yaml"
)  # every example but the config file
PODS = sorted(str(p) for p in (EXAMPLES / "pods").iterdir())


def test_docs_checks_md_is_the_code() -> None:
    text = reasons.DOC.read_text()
    assert text == reasons.rendered(text), "docs/checks.md differs from the reason tables: python -m tools.reasons"


def test_every_reason_appears_once_per_command() -> None:
    seen = [(command, r.reason, r.form) for r in catalogue() for command in r.commands]
    assert len(seen) == len(set(seen))


def _findings(argv: list[str]) -> list[dict[str, object]]:
    """The findings of one command; for ``place``, its per-node refusals as findings."""
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "-o", "json"], out=out, err=err)
    assert code in (0, 1), err.getvalue()
    envelope = orjson.loads(out.getvalue())
    findings: list[dict[str, object]] = envelope["findings"]
    for row in envelope.get("nodes", []) if argv[0] == "place" else []:
        if not row["fits"]:
            head, *args = row["reason"].split(" ")
            findings.append({"check": "place", "reason": head, "args": args})
    return findings


def _key(finding: dict[str, object], command: str) -> tuple[str, str, str]:
    check = str(finding.get("check") or command)
    reason = str(finding["reason"])
    args = finding.get("args") or []
    assert isinstance(args, list)
    if reason == "claim" and args and args[-1] in dra.REASONS:  # claim <claim>/<request> <dra reason>
        return check, str(args[-1]), "claim <claim>/<request> {}"
    return check, reason, "{}"


@pytest.mark.parametrize("snapshot", SNAPSHOTS)
def test_every_reason_the_checks_give_is_in_the_table(snapshot: str) -> None:
    known = {(command, r.reason, r.form) for r in catalogue() for command in r.commands}
    path = str(EXAMPLES / snapshot)
    given: set[tuple[str, str, str]] = set()
    runs = [
        ["check", "--snapshot", path, "--at", "2026-11-30T04:00:00Z"],
        ["audit", "--strict", "--snapshot", path],
        ["pending", "--per-node", "--snapshot", path],
        ["hazards", "--snapshot", path],
    ]
    for argv in runs:
        given |= {_key(f, argv[0]) for f in _findings(argv)}
    if snapshot != "gpu-operator-cluster.yaml":  # the largest example; the workload manifests are for the labs
        for pod in PODS:
            given |= {_key(f, "place") for f in _findings(["place", pod, "--snapshot", path])}
    assert given - known == set()
    assert given, "the example gives no finding at all: the test would prove nothing"
