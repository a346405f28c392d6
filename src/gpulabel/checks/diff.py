"""``gpulabel diff OLD NEW``: what changed between two pictures of a cluster, and what that did to the checks.

Pure: two :class:`ClusterState` in, one :class:`Result` out. Its findings, in
this order: nodes added and removed (``+ node N``, ``- node N``); labels
changed per node, sorted by node then key (``<node> <key> <old> -> <new>``,
``(absent)`` for a label that is not there); then, per registered check, the
findings that appeared (``+ <check> <line>``) and those that were resolved
(``- <check> <line>``). A finding is the same one on both sides when its check,
pod, node, operand, key, reason and arguments agree (its explanation and node
count may differ). A check skipped on either side is not compared; the
``checks`` section says so.
"""

from __future__ import annotations

import dataclasses

from gpulabel.checks.registry import CHECKS, CheckOptions, run_check
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Finding, Result, Section

__all__ = ["diff_states"]


def _identity(f: Finding) -> tuple[str, ...]:
    return (f.check, f.pod, f.node, f.operand, f.key, f.reason, *f.args)


def _label_changes(old: ClusterState, new: ClusterState) -> list[Finding]:
    before = {n.name: n for n in old.nodes}
    after = {n.name: n for n in new.nodes}
    out = [Finding("diff", "node-added", node=name) for name in sorted(after.keys() - before.keys())]
    out += [Finding("diff", "node-removed", node=name) for name in sorted(before.keys() - after.keys())]
    for name in sorted(before.keys() & after.keys()):
        a, b = before[name].labels, after[name].labels
        if a == b:
            continue
        for key in sorted(a.keys() | b.keys()):
            was, now = a.get(key), b.get(key)
            if was != now:
                reason = "label-added" if was is None else "label-removed" if now is None else "label-changed"
                out.append(Finding("diff", reason, node=name, key=key, old=was, value=now))
    return out


def diff_states(old: ClusterState, new: ClusterState, opts: CheckOptions | None = None) -> Result:
    """Nodes and labels that changed from ``old`` to ``new``, and the check findings that appeared or went away."""
    opts = opts or CheckOptions()
    findings = _label_changes(old, new)
    # One file given twice is one state (the CLI reads it once): each check runs once.
    same = all(getattr(old, f.name) is getattr(new, f.name) for f in dataclasses.fields(old) if f.name != "source")
    rows = []
    for check in CHECKS:
        before = run_check(check, old, opts)
        after = before if same else run_check(check, new, opts)
        skipped = before.skipped or after.skipped
        appeared: list[Finding] = []
        resolved: list[Finding] = []
        if not skipped:
            was = {_identity(f) for f in before.findings}
            now = {_identity(f) for f in after.findings}
            appeared = [dataclasses.replace(f, change="appeared") for f in after.findings if _identity(f) not in was]
            resolved = [dataclasses.replace(f, change="resolved") for f in before.findings if _identity(f) not in now]
            findings += appeared + resolved
        rows.append(
            {
                "check": check.name,
                "skipped": skipped or None,
                "before": len(before.findings),
                "after": len(after.findings),
                "appeared": len(appeared),
                "resolved": len(resolved),
            }
        )
    return Result(
        "diff",
        tuple(findings),
        (Section("checks", tuple(rows)),),
        ok="",
        fields={"old": old.source, "new": new.source},
    )
