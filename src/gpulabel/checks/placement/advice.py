"""Advice for a workload that fits no node: the smallest label change that makes one node fit, and typo hints.

A proposed change must make the pod fit on that node by every filter gpulabel
models, not only NodeAffinity: a node that a cordon, a taint, ``spec.nodeName``,
its resources or its claims reject is never proposed, and each proposal is
checked by matching the relabelled node again (labels, taints, cordon, name)
and its capacity against the pod's requests. When no single label change
would do, :class:`Advice` says why (how many nodes match on labels but fail
another filter).

A selector value that no node carries is usually a typo in the manifest, not
a node to relabel: :func:`value_hints` names the value the fleet does have
("did you mean NVIDIA-A100-SXM4-80GB, on 12 nodes"), and values that differ
only by a suffix (``NVIDIA-L4`` against ``NVIDIA-L4-SHARED``, the product a
GPU time-slicing config renames) are noted as near misses. A change that
would write such a typo onto a node is not proposed. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gpulabel.k8s.labels import is_valid_value
from gpulabel.k8s.nodeaffinity import AFFINITY, PodRequirements, Result, Term
from gpulabel.k8s.resources import NodeCapacity
from gpulabel.model.changes import LabelChange
from gpulabel.model.cluster import Node

__all__ = ["Advice", "Fix", "advise", "closest_fix", "value_hints"]

_MAX_EDITS = 2  # edits between two label values (with the same numbers) taken as one mistyped
_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True, slots=True)
class Fix:
    """Label changes that would make ``node`` fit, through ``term`` (``None``: no affinity terms)."""

    node: str
    term: int | None
    changes: tuple[LabelChange, ...]

    def command(self) -> str:
        overwrite = " --overwrite" if any(c.previous is not None and c.value is not None for c in self.changes) else ""
        return f"kubectl label node {self.node}{overwrite} " + " ".join(c.arg() for c in self.changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "term": self.term,
            "changes": [{"key": c.key, "value": c.value, "old": c.previous, "owner": c.owner} for c in self.changes],
            "command": self.command(),
        }


@dataclass(frozen=True, slots=True)
class Advice:
    """The closest fix (or ``None``), why nodes that match on labels still fail, and typo hints."""

    fix: Fix | None
    blocked: tuple[tuple[str, int], ...] = ()  # (first other failing reason, nodes) of label-fixable nodes
    hints: tuple[str, ...] = ()

    def none_line(self) -> str:
        """Why no label change is proposed."""
        if not self.blocked:
            return "none (no node can be made to fit by changing labels alone)"
        why = ", ".join(f"{reason} on {n} node(s)" for reason, n in self.blocked)
        return f"none (no single label change makes a node fit: the nodes whose labels could match fail {why})"


def _wanted(req: PodRequirements) -> list[tuple[str, str]]:
    """``(key, value)`` pairs the pod asks for: ``nodeSelector`` and required ``In`` values, in order."""
    out = list(req.node_selector)
    for term in req.terms or ():
        out.extend((r.key, v) for r in term.expressions if r.operator == "In" for v in r.values)
    return list(dict.fromkeys(out))


def _fleet(nodes: Sequence[Node], keys: set[str]) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {k: Counter() for k in keys}
    for node in nodes:
        for key in keys:
            value = node.labels.get(key)
            if value is not None:
                out[key][value] += 1
    return out


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (label values are at most 63 characters)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def _similar(a: str, b: str) -> bool:
    """A likely typo: the same up to case, or one or two edits apart (by length) with the same numbers.

    The numbers must agree: ``NVIDIA-A100-SXM4-80G`` is a typo of
    ``NVIDIA-A100-SXM4-80GB``, but ``80GB`` is another GPU than ``40GB``, and
    ``A10`` than ``A100``.
    """
    la, lb = a.lower(), b.lower()
    if la == lb:
        return True
    allowed = min(_MAX_EDITS, min(len(la), len(lb)) // 6)  # short values ("a", "b") are never typos of each other
    return allowed > 0 and _DIGITS.findall(la) == _DIGITS.findall(lb) and _edits(la, lb) <= allowed


def _near_miss(want: str, have: str) -> bool:
    """``have`` extends ``want`` by a suffix or prefix (``NVIDIA-L4-SHARED`` for ``NVIDIA-L4``), or the reverse."""
    longer, shorter = (have, want) if len(have) > len(want) else (want, have)
    return longer != shorter and (longer.startswith(shorter + "-") or longer.endswith("-" + shorter))


def _typos(req: PodRequirements, fleet: Mapping[str, Counter[str]]) -> dict[tuple[str, str], tuple[str, int]]:
    """Wanted ``(key, value)`` on no node -> the most similar value some nodes carry, and on how many."""
    out: dict[tuple[str, str], tuple[str, int]] = {}
    for key, want in _wanted(req):
        values = fleet.get(key) or Counter()
        if want in values:
            continue
        close = [
            (difflib.SequenceMatcher(None, want.lower(), v.lower()).ratio(), n, v)
            for v, n in values.items()
            if _similar(want, v)
        ]
        if close:
            _, n, v = max(close)
            out[(key, want)] = (v, n)
    return out


def value_hints(req: PodRequirements, nodes: Sequence[Node]) -> tuple[str, ...]:
    """Hints on the values the pod asks for: likely typos (did you mean) and near misses."""
    wanted = _wanted(req)
    fleet = _fleet(nodes, {k for k, _ in wanted})
    typos = _typos(req, fleet)
    out = []
    for key, want in wanted:
        values = fleet[key]
        if (key, want) in typos:
            value, n = typos[(key, want)]
            out.append(f"{key}={want} is on no node: did you mean {value}, on {n} node(s)")
        for value, n in sorted(values.items()):
            if _near_miss(want, value) and (key, want) not in typos:
                on = f"on {values[want]} node(s)" if want in values else "on no node"
                out.append(f"{key}={want} ({on}) is not {value}, on {n} node(s): a near miss, not a match")
    return tuple(out)


def _key_change(
    node: str, key: str, cur: str | None, req: PodRequirements, term: Term | None
) -> LabelChange | bool | None:
    """The change ``key`` needs: ``None`` if none, ``False`` if no value can satisfy every requirement on it."""
    wants = [v for k, v in req.node_selector if k == key]
    exprs = [r for r in (term.expressions if term else ()) if r.key == key]

    def ok(value: str | None) -> bool:
        labels = {} if value is None else {key: value}
        return all(value == w for w in wants) and all(r.why_not(labels, "") is None for r in exprs)

    if ok(cur):
        return None
    if ok(None):
        return LabelChange(node, key, None, cur)
    candidates = [*wants]
    for r in exprs:
        if r.operator == "In":
            candidates.extend(r.values)
        elif r.operator in ("Gt", "Lt") and r.bound is not None:
            candidates.append(str(r.bound + 1 if r.operator == "Gt" else r.bound - 1))
    candidates += ["true", "1"]
    for value in candidates:
        if is_valid_value(value) and ok(value):
            return LabelChange(node, key, value, cur)
    return False


def _label_changes(req: PodRequirements, node: Node, term: Term | None) -> tuple[LabelChange, ...] | None:
    if term is not None and (
        term.empty or not term.parses or any(r.why_not({}, node.name) is not None for r in term.fields)
    ):
        return None
    keys = dict.fromkeys([k for k, _ in req.node_selector] + [r.key for r in (term.expressions if term else ())])
    out = []
    for key in keys:
        change = _key_change(node.name, key, node.labels.get(key), req, term)
        if change is False:
            return None
        if isinstance(change, LabelChange):
            out.append(change)
    return tuple(out)


def _cost(changes: tuple[LabelChange, ...]) -> tuple[int, int]:
    # Fewest changes, then fewest overwrites: adding a missing label is a smaller
    # change than rewriting a value another component reported (a GPU's product).
    return len(changes), sum(c.previous is not None and c.value is not None for c in changes)


def _relabelled(node: Node, changes: Sequence[LabelChange]) -> Node:
    labels = dict(node.labels)
    for c in changes:
        if c.value is None:
            labels.pop(c.key, None)
        else:
            labels[c.key] = c.value
    return dataclasses.replace(node, labels=labels)


def _other_failure(
    req: PodRequirements,
    node: Node,
    result: Result,
    changes: Sequence[LabelChange],
    capacities: Mapping[str, NodeCapacity],
    request: Mapping[str, int] | None,
) -> str | None:
    """Why ``node`` with ``changes`` applied would still not take the pod (``None``: it would)."""
    other = next((f for f in result.failures if f.filter != AFFINITY), None)
    if other is not None:  # a filter the labels do not decide (resources, claims) already failed
        return other.reason.partition(" ")[0] if other.filter != "NodeResourcesFit" else other.reason
    again = req.match(_relabelled(node, changes), full=True)
    if not again.fits:
        return again.failures[0].reason.partition(" ")[0]
    cap = capacities.get(node.name)
    lacking = cap.insufficient(request) if cap is not None and request else ()
    return lacking[0].reason if lacking else None


def advise(
    req: PodRequirements,
    nodes: Sequence[Node],
    results: Sequence[Result],
    *,
    capacities: Mapping[str, NodeCapacity] | None = None,
    request: Mapping[str, int] | None = None,
) -> Advice:
    """The fewest label changes that make one node fit by every filter, with typo hints.

    Candidates are the nodes NodeAffinity rejects; each is checked whole (see
    the module). ``Exists`` is satisfied with the value ``true``. Fewest
    changes wins, then fewest overwritten values, then the first node and the
    first term. Values that look like a typo of one the fleet has are never
    written.
    """
    caps = capacities or {}
    fleet = _fleet(nodes, {k for k, _ in _wanted(req)})
    typos = _typos(req, fleet)
    best: Fix | None = None
    blocked: Counter[str] = Counter()
    done: dict[Any, list[tuple[tuple[LabelChange, ...], int | None]]] = {}
    for node, result in zip(nodes, results, strict=True):
        if result.fits or not any(f.filter == AFFINITY for f in result.failures):
            continue
        sig = (tuple(node.labels.get(k) for k in req.label_keys), node.name if req.name_dependent else "")
        if sig not in done:
            options: list[tuple[tuple[LabelChange, ...], int | None]] = []
            terms: Sequence[Term | None] = req.terms if req.terms is not None else (None,)
            for term in terms:
                changes = _label_changes(req, node, term)
                if changes is not None and not any((c.key, c.value) in typos for c in changes):
                    options.append((changes, term.index if term is not None else None))
            done[sig] = sorted(options, key=lambda o: _cost(o[0]))
        first_why = None
        for changes, term_index in done[sig]:
            if best is not None and _cost(changes) >= _cost(best.changes):
                break
            mine = tuple(replace(c, node=node.name) for c in changes)
            why = _other_failure(req, node, result, mine, caps, request)
            if why is None:
                best, first_why = Fix(node.name, term_index, mine), None
                break
            first_why = first_why or why
        if first_why is not None:
            blocked[first_why] += 1
    ordered = tuple(sorted(blocked.items(), key=lambda kv: (-kv[1], kv[0])))
    return Advice(best, () if best is not None else ordered, value_hints(req, nodes))


def closest_fix(
    req: PodRequirements,
    nodes: Sequence[Node],
    results: Sequence[Result],
    *,
    capacities: Mapping[str, NodeCapacity] | None = None,
    request: Mapping[str, int] | None = None,
) -> Fix | None:
    """:func:`advise`'s fix alone."""
    return advise(req, nodes, results, capacities=capacities, request=request).fix
