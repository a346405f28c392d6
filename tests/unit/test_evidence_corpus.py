"""The measured figure: real operand failures from public reports (``tests/data/evidence-corpus.toml``), none of
them a line the table's tests hold, diagnosed as ``explain`` would; the figure in docs/evidence.md is this one.

A case of a known kind is named right (its expected signature, or a general row whose cause the report bears
out: ``accept``), missed (no cause, the lines shown) or named wrong (another cause). A case of an unknown kind
must name no cause and show its decisive line."""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gpulabel.checks.explain.evidence import Blame, Diagnosis, diagnose
from gpulabel.model.evidence import EventNote, Evidence, LogLine, LogTail
from gpulabel.model.signatures import SIGNATURES
from tests.signature_lines import LINES
from tests.unit.test_signatures import _pod

ROOT = Path(__file__).parents[2]
CORPUS = ROOT / "tests" / "data" / "evidence-corpus.toml"
DOC = ROOT / "docs" / "evidence.md"
CASES: list[dict[str, Any]] = tomllib.loads(CORPUS.read_text(encoding="utf-8"))["case"]


@dataclass(frozen=True)
class Verdict:
    case: str
    known: bool
    outcome: str  # right | missed | wrong | shown | hidden
    diagnosis: Diagnosis


def _evidence(case: dict[str, Any]) -> Evidence:
    lines = [ln for ln in case["text"].strip("\n").split("\n")]
    if case["where"] == "log":
        container, init = case.get("container", "ctr"), bool(case.get("init", False))
        said = tuple(LogLine("", t) for t in lines)
        tail = LogTail("gpu-operator/p-1", container, init=init, previous=not init, lines=said)
        return Evidence(logs=(tail,))
    notes = []
    for line in lines:
        reason, _, message = line.partition(": ")
        notes.append(EventNote("Pod", "gpu-operator", "p-1", "Warning", reason, message, "t"))
    return Evidence(events=tuple(notes))


def judge(case: dict[str, Any]) -> Verdict:
    d = diagnose(Blame("gpu-1", case["operand"], "operand-pod", _pod(), None), _evidence(case))
    named = d.signature.id if d.signature is not None else None
    if case["expected"]:
        right = {case["expected"], *case.get("accept", ())}
        outcome = "right" if named in right else "missed" if named is None else "wrong"
        return Verdict(case["id"], True, outcome, d)
    if named is not None:
        return Verdict(case["id"], False, "wrong", d)
    shown = any(case["decisive"] in ln.text for ln in d.lines)
    return Verdict(case["id"], False, "shown" if shown else "hidden", d)


VERDICTS = [judge(c) for c in CASES]


def figure(verdicts: list[Verdict]) -> str:
    """The sentence docs/evidence.md holds."""
    known = [v for v in verdicts if v.known]
    counts = Counter(v.outcome for v in verdicts)
    right = counts["right"]
    said = (
        f"{len(verdicts)} cases, {len(known)} of a known kind: {right} named right "
        f"({100 * right // len(known)}%), {counts['missed']} missed, {counts['wrong']} wrong"
        if known
        else f"{len(verdicts)} cases, none of a known kind, {counts['wrong']} wrong"
    )
    if len(known) == len(verdicts):
        return said
    return (
        f"{said}; {len(verdicts) - len(known)} of an unknown kind: {counts['shown']} shown by their decisive line, "
        f"{counts['hidden']} not"
    )


def test_no_case_names_a_wrong_cause() -> None:
    """In the fitted sets; a held-out set is a measurement, and its figure in the docs says what it found."""
    wrong = [
        (v.case, v.diagnosis.signature and v.diagnosis.signature.id)
        for v, c in zip(VERDICTS, CASES, strict=True)
        if v.outcome == "wrong" and not _held(c)
    ]
    assert wrong == []


def test_every_unknown_failure_is_shown_by_its_decisive_line() -> None:
    """In the fitted sets; a held-out set's misses are what its figure in the docs says."""
    assert [v.case for v, c in zip(VERDICTS, CASES, strict=True) if v.outcome == "hidden" and not _held(c)] == []


def _set(name: str) -> list[Verdict]:
    return [v for v, c in zip(VERDICTS, CASES, strict=True) if c.get("set", "") == name]


SETS = {
    "": "Measured",
    "fitted-2": "Second corpus",
    "fitted-3": "Third corpus",
    "fitted-4": "Fourth corpus",
    "held-out": "Held out",
    "fitted-5": "Fifth corpus",
    "fitted-6": "Sixth corpus",
    "fitted-7": "Seventh corpus",
    "fitted-8": "Eighth corpus",
    "held-out-9": "Ninth corpus",
    "fitted-9": "Ninth corpus",
    "held-out-10": "Tenth corpus",
    "fitted-10": "Tenth corpus",
    "held-out-11": "Eleventh corpus",
    "fitted-11": "Eleventh corpus",
    "held-out-12": "Twelfth corpus",
    "fitted-12": "Twelfth corpus",
    "held-out-13": "Thirteenth corpus",
    "fitted-13": "Thirteenth corpus",
}


@pytest.mark.parametrize("name", sorted({c.get("set", "") for c in CASES}))
def test_the_figure_in_the_docs_is_the_measured_one(name: str) -> None:
    """Per set of cases: the corpus the table's changes were made from, the second corpus (held out, then
    fitted) and the cases collected after the table's last change (held out)."""
    label = SETS[name]
    said = re.search(rf"\*\*{label}:\*\* ([^.]*)\.", DOC.read_text(encoding="utf-8"))
    assert said is not None, f"docs/evidence.md has no **{label}:** figure"
    assert _set(name) and said.group(1).replace("\n", " ") == figure(_set(name))


def _reports(text: str) -> set[tuple[str, str]]:
    """(owner/repo, number) of every report a text names: a URL, owner/repo#N, and a bare #N after one."""
    out = {(m[0], m[1]) for m in re.findall(r"github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull)/(\d+)", text)}
    repo = ""
    for m in re.finditer(r"(?:([\w.-]+/[\w.-]+))?#(\d+)", text):
        repo = m.group(1) or repo
        if repo:
            out.add((repo, m.group(2)))
    return out


def test_the_corpus_is_not_the_tables_own_lines() -> None:
    """No failure line of the corpus is a line the table's tests hold (ordinary startup lines may be), and no
    report of the corpus is one a row or its test lines quote."""
    held = {line.strip() for rows in LINES.values() for line, _ in rows}
    cited = {r for rows in LINES.values() for _, src in rows for r in _reports(src)}
    cited |= {r for s in SIGNATURES for r in _reports(s.source)}
    assert ("NVIDIA/gpu-operator", "1726") in cited  # a bare #N after owner/repo#N counts
    for case in CASES:
        assert not {ln.strip() for ln in case["text"].split("\n") if ln.strip()} & held, case["id"]
        assert not _reports(case["url"]) & cited, case["id"]


def test_the_corpus_spans_every_operand_and_two_distribution_families() -> None:
    operands = {c["operand"] for c in CASES}
    assert {s.operand for s in SIGNATURES if s.where == "log"} <= operands
    assert len({c["distribution"] for c in CASES} - {"unknown"}) >= 2
    assert {c["where"] for c in CASES} == {"log", "event"}
    for c in CASES:
        assert c["url"].startswith("https://github.com/") and c["note"].strip()
        assert c["expected"] == "" or any(s.id == c["expected"] for s in SIGNATURES), c["id"]
        assert c["expected"] or c["decisive"], c["id"]


@pytest.mark.parametrize(("verdict", "case"), list(zip(VERDICTS, CASES, strict=True)), ids=[c["id"] for c in CASES])
def test_each_case(verdict: Verdict, case: dict[str, Any]) -> None:
    """One line per case, so a run says which ones a change moved (a miss is allowed, a wrong cause is not; in
    a held-out set both are measured, and its figure in the docs says so)."""
    assert verdict.outcome in ("right", "missed", "shown", *(("hidden", "wrong") if _held(case) else ()))


def _held(case: dict[str, Any]) -> bool:
    return str(case.get("set", "")).startswith("held-out")
