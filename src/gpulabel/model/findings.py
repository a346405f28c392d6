"""Findings and results: what a check or command returns, as typed data, before anything is rendered.

A :class:`Finding` is one thing found, with explicit fields (``node``, ``pod``,
``operand``, ``key``, ``reason``, ``args``, ``detail``, ...): every field means
the same in every command. A :class:`Result` is what one command or check
returns: its findings, optional detail :class:`Section` s (tables of named
cells, such as the operand DaemonSets' accounts or each Pending pod's
scheduler message), and ``skipped`` when its inputs were absent. The renderers
in :mod:`gpulabel.render` turn a ``Result`` into text, wide text, a table,
JSON, YAML or names, the same way for every command; the JSON form is the
envelope described by ``docs/schema/gpulabel-v1.json``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Protocol

from gpulabel.model.severity import severity_counts

__all__ = ["API_VERSION", "Cell", "Finding", "Result", "Section", "label_finding", "summarize"]

API_VERSION = "gpulabel/v1"

Cell = str | int | float | bool | None | tuple[str, ...]


class LabelledNode(Protocol):
    """What :func:`label_finding` reads of a node (``model.cluster.Node`` has it)."""

    @property
    def name(self) -> str: ...
    @property
    def labels(self) -> Mapping[str, str]: ...


"""What a section's cell may hold: a JSON scalar, or a list of strings."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a check found, with typed fields; empty fields are left out of every rendering.

    - ``check``: the check (or command) that found it: ``audit``, ``operands``, ``pending``, ...
    - ``reason``: one word, the contract scripts match on (``missing``, ``affinity``, ...)
    - ``node``, ``pod`` (``<namespace>/<name>``), ``operand``, ``key`` (always a label key), ``daemonset``
    - ``value`` and ``old``: a label's value now (or wanted) and before
    - ``args``: the reason's arguments (``term[0] nvidia.com/gpu.product In [NVIDIA-A10]``)
    - ``count`` and ``sample``: for a finding that stands for many nodes, how many and a few of their names
    - ``fits_elsewhere``: for a hazard, how many other nodes would take the pod (``sample`` names some)
    - ``change``: in ``diff``, ``appeared`` or ``resolved``
    - ``detail``: the explanation for people (``-o wide``)
    - ``severity``: ``error``, ``warning`` or ``info``, from the check's reason table
      (:mod:`gpulabel.model.severity`); ``""`` for what no table grades (label changes, diffs)

    The plain line is ``pod node operand key reason [<count> node(s)] args...``
    with empty parts left out, e.g. ``lab-node-1 nvidia.com/gpu.count not-a-number``.
    """

    check: str
    reason: str
    node: str = ""
    pod: str = ""
    operand: str = ""
    key: str = ""
    args: tuple[str, ...] = ()
    detail: str = ""
    value: str | None = None
    old: str | None = None
    daemonset: str = ""
    count: int | None = None
    sample: tuple[str, ...] = ()
    fits_elsewhere: int | None = None
    change: str = ""
    severity: str = ""
    baseline: bool = False  # in the --baseline file: known, it does not fail the run

    def graded(self, severity: str) -> Finding:
        """This finding with ``severity``: what ``dataclasses.replace(self, severity=severity)`` gives, at a
        third of its cost (every finding a check makes is graded, and the monitor grades as it goes)."""
        return self.varied(self.pod, severity, self.detail, self.sample, self.fits_elsewhere)

    def about(self, pod: str) -> Finding:
        """This finding about ``pod`` instead (a replica's: the same verdict, its own name): what
        ``dataclasses.replace(self, pod=pod)`` gives, at half its cost (a node's change re-tells every Pending
        pod of a spec at once)."""
        return self.varied(pod, self.severity, self.detail, self.sample, self.fits_elsewhere)

    def varied(
        self, pod: str, severity: str, detail: str, sample: tuple[str, ...], fits_elsewhere: int | None
    ) -> Finding:
        """This finding with these five fields, the ones the monitor's keepers tell again (a replica's pod, a
        severity, a hazard's count of other nodes): ``dataclasses.replace`` of them, positionally. Each slot is
        set through its own descriptor (:data:`_SLOTS`), as the frozen ``__init__`` does through
        ``object.__setattr__`` at twice the cost: a node's change tells hundreds of pods' findings again."""
        (
            s_check, s_reason, s_node, s_pod, s_operand, s_key, s_args, s_detail, s_value, s_old, s_daemonset,
            s_count, s_sample, s_fits_elsewhere, s_change, s_severity, s_baseline,
        ) = _SLOTS  # fmt: skip
        f: Finding = _new(Finding)
        s_check(f, self.check)
        s_reason(f, self.reason)
        s_node(f, self.node)
        s_pod(f, pod)
        s_operand(f, self.operand)
        s_key(f, self.key)
        s_args(f, self.args)
        s_detail(f, detail)
        s_value(f, self.value)
        s_old(f, self.old)
        s_daemonset(f, self.daemonset)
        s_count(f, self.count)
        s_sample(f, sample)
        s_fits_elsewhere(f, fits_elsewhere)
        s_change(f, self.change)
        s_severity(f, severity)
        s_baseline(f, self.baseline)
        return f

    def line(self) -> str:
        parts = [self.pod, self.node, self.operand, self.key, self.reason]
        if self.count is not None:
            parts.append(f"{self.count} node(s)")
        return " ".join(p for p in (*parts, *self.args) if p)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"check": self.check}
        for name in ("node", "pod", "operand", "key", "daemonset"):
            if v := getattr(self, name):
                out[name] = v
        out["reason"] = self.reason
        if self.severity:
            out["severity"] = self.severity
        if self.baseline:
            out["baseline"] = True
        if self.args:
            out["args"] = list(self.args)
        if self.value is not None:
            out["value"] = self.value
        if self.old is not None:
            out["old"] = self.old
        if self.count is not None:
            out["count"] = self.count
        if self.fits_elsewhere is not None:
            out["fits_elsewhere"] = self.fits_elsewhere
        if self.sample:
            out["sample"] = list(self.sample)
        if self.change:
            out["change"] = self.change
        if self.detail:
            out["detail"] = self.detail
        return out


_new = object.__new__
# each field's slot setter, in the fields' order (Finding.varied sets every one: a field it misses is unset)
_SLOTS = tuple(Finding.__dict__[f.name].__set__ for f in dataclass_fields(Finding))


@dataclass(frozen=True, slots=True)
class Section:
    """A detail section: rows of named cells (JSON/YAML, tables), and its lines for text and wide output.

    ``text`` lines are printed after the findings in plain and wide output;
    ``wide`` (when given) replaces them in wide output. A section without
    lines appears only in structured output and tables.
    """

    name: str
    rows: tuple[Mapping[str, Cell], ...] = ()
    text: tuple[str, ...] = ()
    wide: tuple[str, ...] | None = None

    def lines(self, wide: bool) -> tuple[str, ...]:
        return self.wide if wide and self.wide is not None else self.text

    def to_json(self) -> list[dict[str, object]]:
        return [{k: list(v) if isinstance(v, tuple) else v for k, v in row.items()} for row in self.rows]


@dataclass(frozen=True, slots=True)
class Result:
    """What one check or command returns.

    ``ok`` is the line printed when there are no findings (``""``: print
    nothing, for commands that list things rather than find them);
    ``skipped`` says why a check did not run (its inputs were absent), and is
    neither OK nor a finding. ``counts`` adds named totals to the summary
    (``pods`` for pending). ``fields`` are extra top-level scalars of the JSON
    envelope (``dry_run``, ``file``, ...).
    """

    command: str
    findings: tuple[Finding, ...] = ()
    sections: tuple[Section, ...] = ()
    skipped: str = ""
    ok: str = "OK"
    counts: Mapping[str, int] = field(default_factory=dict)
    fields: Mapping[str, Cell] = field(default_factory=dict)
    parts: tuple[Result, ...] = ()  # the checks a combined command (``check``) ran, in order
    graded: bool = False  # its findings carry severities (a check's): the summary counts them by severity
    # what is counted as info without a finding each: what -> how many ("other Pending pod(s), not GPU pods": 3)
    notes: Mapping[str, int] = field(default_factory=dict)
    # what the input could not support and so was not checked: "stuck detection skipped (no managedFields: ...)"
    caveats: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return "".join(w.capitalize() for w in self.command.split("-")) + "Result"

    def severities(self) -> dict[str, int]:
        """Its findings by severity (every severity, zeros included), the notes counted as info."""
        counts = severity_counts(f.severity for f in self.findings)
        counts["info"] += sum(self.notes.values()) + sum(n for p in self.parts for n in p.notes.values())
        return counts

    def summary(self) -> dict[str, object]:
        if self.skipped:
            return {"skipped": self.skipped}
        out: dict[str, object] = {"findings": len(self.findings), "reasons": summarize(self.findings)}
        if self.graded:
            out["severities"] = self.severities()
        out.update(self.counts)
        if self.parts:
            out["checks"] = {p.command: p.summary() for p in self.parts}
        return out

    def envelope(self) -> dict[str, object]:
        """The one JSON document every command writes with ``-o json`` (and ``-o yaml``)."""
        doc: dict[str, object] = {"apiVersion": API_VERSION, "kind": self.kind}
        if self.skipped:
            doc["skipped"] = self.skipped
        doc["findings"] = [f.to_json() for f in self.findings]
        caveats = [*self.caveats, *(f"{p.command}: {c}" for p in self.parts for c in p.caveats)]
        if caveats:
            doc["caveats"] = caveats
        doc["summary"] = self.summary()
        for s in self.sections:
            doc[s.name] = s.to_json()
        for k, v in self.fields.items():
            doc[k] = list(v) if isinstance(v, tuple) else v
        return doc


def summarize(findings: Iterable[Finding]) -> dict[str, int]:
    """Count findings by reason, most common first."""
    return dict(Counter(f.reason for f in findings).most_common())


def label_finding(check: str, reason: str, node: LabelledNode, key: str, detail: str) -> Finding:
    """A finding about one label of one node, carrying the label's current value."""
    return Finding(check, reason, node=node.name, key=key, value=node.labels.get(key), detail=detail)
