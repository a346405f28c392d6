"""``gpulabel diff OLD NEW``: what changed between two pictures of a cluster, and what that did to the checks.

Pure: two :class:`ClusterState` in, one :class:`Result` out. Its findings, in
this order: nodes added and removed (``+ node N``, ``- node N``); per node
(sorted by name) its labels changed, sorted by key (``<node> <key> <old> ->
<new>``, ``(absent)`` for a label that is not there), then a cordon or
uncordon (``<node> cordoned``), taints added and removed (``<node>
taint-added <key>=<value>:<effect>``), a change of the Ready condition
(``<node> Ready True -> False``) and of ``status.allocatable`` per resource
(``<node> allocatable nvidia.com/gpu 8 -> 7``); then, per registered check, the
findings that appeared (``+ <check> <line>``) and those that were resolved
(``- <check> <line>``). A finding is the same one on both sides when its check,
pod, node, operand, key, reason and arguments agree (its explanation and node
count may differ). A check skipped on either side is not compared; the
``checks`` section says so.
"""

from __future__ import annotations

import dataclasses

from gpulabel.checks.registry import BUILTIN, CheckOptions, run_check
from gpulabel.k8s.resources import QuantityError, parse_quantity
from gpulabel.model.cluster import ClusterState, Node
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
        if before[name] is after[name]:
            continue  # one record on both sides (one file given twice): nothing changed
        a, b = before[name].labels, after[name].labels
        if a != b:
            for key in sorted(a.keys() | b.keys()):
                was, now = a.get(key), b.get(key)
                if was != now:
                    reason = "label-added" if was is None else "label-removed" if now is None else "label-changed"
                    out.append(Finding("diff", reason, node=name, key=key, old=was, value=now))
        out.extend(_node_changes(before[name], after[name]))
    return out


def _node_changes(a: Node, b: Node) -> list[Finding]:
    """A cordon, taints, the Ready condition and allocatable: what the scheduler sees besides labels."""
    out = []
    if a.unschedulable != b.unschedulable:
        out.append(Finding("diff", "cordoned" if b.unschedulable else "uncordoned", node=b.name))
    was, now = {str(t) for t in a.taints}, {str(t) for t in b.taints}
    out += [Finding("diff", "taint-added", node=b.name, args=(t,)) for t in sorted(now - was)]
    out += [Finding("diff", "taint-removed", node=b.name, args=(t,)) for t in sorted(was - now)]
    ready_was, ready_now = a.conditions.get("Ready"), b.conditions.get("Ready")
    if ready_was != ready_now:
        out.append(Finding("diff", "ready-changed", node=b.name, old=ready_was, value=ready_now))
    alloc_was, alloc_now = a.allocatable or {}, b.allocatable or {}
    for resource in sorted(alloc_was.keys() | alloc_now.keys()):
        old, new = alloc_was.get(resource), alloc_now.get(resource)
        if old != new and (old is None or new is None or _amount(old) != _amount(new)):
            out.append(Finding("diff", "allocatable-changed", node=b.name, args=(resource,), old=old, value=new))
    return out


def _amount(text: str) -> object:
    try:
        return parse_quantity(text)
    except QuantityError:
        return text


def diff_states(old: ClusterState, new: ClusterState, opts: CheckOptions | None = None) -> Result:
    """Nodes, labels, cordons, taints, Ready and allocatable that changed, and the check findings that changed."""
    opts = opts or BUILTIN.options()
    findings = _label_changes(old, new)
    # One file given twice is one state (the CLI reads it once): each check runs once.
    same = all(getattr(old, f.name) is getattr(new, f.name) for f in dataclasses.fields(old) if f.name != "source")
    rows = []
    for check in opts.registry:
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
