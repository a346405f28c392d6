"""What a team accepted: ignore rules and a baseline, applied to graded results before the exit code.

- An :class:`IgnoreRule` silences the findings it names: by check, reason,
  node label selector, namespace and pod name (a shell pattern, ``train-*``),
  every field given must match; each rule carries the comment saying why.
  Silenced findings are dropped and counted (``ignored`` in the summary).
- A baseline is a previous ``-o json``: findings already in it are kept and
  marked ``baseline`` (they no longer fail the run); its entries that are no
  longer found are listed as ``info`` findings with ``change: resolved``.

A finding's identity is what names it, never its explanation or counts:
check, reason, node, pod, operand, key, daemonset and args.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpulabel.model.findings import Finding, Result
from gpulabel.model.severity import Reason, Severity

__all__ = [
    "Identity",
    "IgnoreRule",
    "apply_baseline",
    "apply_ignores",
    "counted",
    "grade",
    "identity",
    "identity_of_json",
    "regrade",
]

Identity = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One accepted finding pattern; ``where`` names it in the config file (``config.yaml:12``)."""

    comment: str
    where: str = ""
    check: str = ""
    reason: str = ""
    nodes: Callable[[Mapping[str, str]], bool] | None = None  # a parsed label selector's ``matches``
    namespace: str = ""
    pod: str = ""

    def matches(self, f: Finding, labels: Mapping[str, Mapping[str, str]]) -> bool:
        if self.check and f.check != self.check:
            return False
        if self.reason and f.reason != self.reason:
            return False
        if self.nodes is not None and (f.node not in labels or not self.nodes(labels[f.node])):
            return False
        ns, _, name = (f.pod or f.daemonset).partition("/")
        if self.namespace and ns != self.namespace:
            return False
        return not self.pod or bool(f.pod and fnmatch.fnmatchcase(name, self.pod))


def _drop(result: Result, rules: Sequence[IgnoreRule], labels: Mapping[str, Mapping[str, str]]) -> Result:
    kept = tuple(f for f in result.findings if not any(r.matches(f, labels) for r in rules))
    ignored = len(result.findings) - len(kept)
    if not ignored:
        return result
    return dataclasses.replace(result, findings=kept, counts={**result.counts, "ignored": ignored})


def apply_ignores(result: Result, rules: Sequence[IgnoreRule], labels: Mapping[str, Mapping[str, str]]) -> Result:
    """``result`` without the findings a rule matches (``labels``: each node's labels, for node selectors)."""
    if not rules:
        return result
    if not result.parts:
        return _drop(result, rules, labels)
    parts = tuple(_drop(p, rules, labels) for p in result.parts)
    return dataclasses.replace(result, parts=parts, findings=tuple(f for p in parts for f in p.findings))


def grade(result: Result, table: Mapping[str, Reason]) -> Result:
    """``result`` with each finding's severity from its check's reason ``table``; a reason no table names (a
    check registered without one) keeps the severity it has, or is an ``error``. Overrides: :func:`regrade`."""
    return dataclasses.replace(result, findings=tuple(graded_findings(result.findings, table)), graded=True)


def graded_findings(findings: Iterable[Finding], table: Mapping[str, Reason]) -> list[Finding]:
    """``findings`` graded as :func:`grade` grades a result's (the incremental keepers grade piece by piece)."""
    out = []
    for f in findings:
        row = table.get(f.reason)
        out.append(f.graded(row.severity if row else f.severity or "error"))
    return out


def regrade(result: Result, overrides: Mapping[str, Severity]) -> Result:
    """``result`` with the config's severity overrides (``check/reason`` or ``reason``) applied, parts too: the
    one place an override is applied (to ``check``, the check commands, ``explain`` and the monitor alike)."""
    if not overrides:
        return result

    def one(r: Result) -> Result:
        findings = tuple(
            f.graded(overrides.get(f"{f.check}/{f.reason}") or overrides.get(f.reason) or f.severity)
            if f.severity
            else f
            for f in r.findings
        )
        return dataclasses.replace(r, findings=findings)

    parts = tuple(one(p) for p in result.parts)
    done = one(result)
    return dataclasses.replace(done, parts=parts) if parts else done


def counted(result: Result) -> tuple[Finding, ...]:
    """The findings that count towards the exit code: all but those already in the baseline."""
    return tuple(f for f in result.findings if not f.baseline)


def identity(f: Finding) -> Identity:
    return (f.check, f.reason, f.node, f.pod, f.operand, f.key, f.daemonset, *f.args)


def identity_of_json(doc: Mapping[str, object]) -> Identity:
    """The identity of a finding as ``-o json`` wrote it."""
    args = doc.get("args")
    fields = (str(doc.get(k) or "") for k in ("check", "reason", "node", "pod", "operand", "key", "daemonset"))
    return (*fields, *(str(a) for a in (args if isinstance(args, list) else ())))


def _stale(doc: Mapping[str, object], shared: dict[str, str]) -> Finding:
    """A baseline entry no longer found, as an info finding; its repeated texts (check, reason, key, args)
    are one string each through ``shared``: a million stale entries are a million findings to print."""

    def text(k: str) -> str:
        v = doc.get(k)
        return shared.setdefault(v, v) if isinstance(v, str) else ""

    args = doc.get("args")
    return Finding(
        text("check"),
        text("reason"),
        node=text("node"),
        pod=text("pod"),
        operand=text("operand"),
        key=text("key"),
        daemonset=text("daemonset"),
        args=tuple(shared.setdefault(a, a) for a in map(str, args)) if isinstance(args, list) else (),
        detail="in the baseline, no longer found",
        change="resolved",
        severity="info",
    )


def _mark(result: Result, known: set[Identity]) -> Result:
    marked = tuple(dataclasses.replace(f, baseline=True) if identity(f) in known else f for f in result.findings)
    return dataclasses.replace(result, findings=marked)


def apply_baseline(result: Result, baseline: Iterable[Mapping[str, object]]) -> Result:
    """Mark the findings the baseline (a previous ``-o json``'s findings) holds; list its stale entries as info.

    Only the checks this result ran are compared: a baseline entry of a
    check that was skipped or not run is not stale.
    """
    parts = result.parts
    ran = {p.command for p in parts if not p.skipped} if parts else {result.command}
    now = {identity(f) for f in result.findings}
    known: set[Identity] = set()  # at most the findings of this run: the baseline is read, never held
    stale: list[Finding] = []  # in the baseline's order
    shared: dict[str, str] = {}
    for d in baseline:
        if d.get("change") == "resolved":
            continue
        i = identity_of_json(d)
        if i in now:
            known.add(i)
        elif str(d.get("check")) in ran:
            stale.append(_stale(d, shared))
    parts = tuple(_mark(p, known) for p in parts) if parts else ()
    if parts:
        by_check: dict[str, list[Finding]] = {}
        for f in stale:
            by_check.setdefault(f.check, []).append(f)
        parts = tuple(dataclasses.replace(p, findings=(*p.findings, *by_check.get(p.command, ()))) for p in parts)
        return dataclasses.replace(result, parts=parts, findings=tuple(f for p in parts for f in p.findings))
    marked = _mark(result, known)
    return dataclasses.replace(marked, findings=(*marked.findings, *stale))
