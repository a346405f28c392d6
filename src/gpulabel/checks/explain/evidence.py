"""Why an operand fails, from its evidence: the pods a finding blames, matched against the signature table.

:func:`blamed` names, for the findings about a node, the operand pods behind
them (not every pod: those of an operand that is not ready, missing with a
pod that did not start, the MIG manager of a MIG finding, GFD when its labels
are missing or wrong), with their DaemonSet; the last two may be Running and
Ready while they fail, so their running containers are read too.
:func:`diagnose` matches what was read about one of them (its
containers' log tails and the Events of the pod, its DaemonSet and its node)
against ``model/signatures.toml``: the first row found in a line names the
cause, with that line as evidence. Every line is made readable and redacted
(``model/loglines.py`` ``shown``) before it is matched or shown, whatever read
it (live, a bundle). When no row matches, the lines that matter (the fatal line
and the errors before it, not the stack trace) are the evidence and there is no
cause: gpulabel does not guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from gpulabel.checks.engine.rootcause import link_of
from gpulabel.checks.operands.daemonsets import operand_of_daemonset, target_node
from gpulabel.model.cluster import ClusterState, DaemonSet, Pod
from gpulabel.model.evidence import EventNote, Evidence, LogTail
from gpulabel.model.findings import Cell, Finding, Result, Section
from gpulabel.model.loglines import decisive, shown
from gpulabel.model.signatures import SIGNATURES, Signature

__all__ = ["Blame", "Diagnosis", "Line", "blamed", "diagnose", "diagnose_all", "evidence_section", "with_evidence"]

UNKNOWN_LINES = 3  # the lines shown when no signature matches: the fatal one and the errors before it
_BLAMING = {("operands", "not-ready"), ("operands", "missing")}
_EFFECT = {"gfd-labels": "gpu-feature-discovery", "mig": "mig-manager"}  # a link whose operand may look healthy
# an operand whose failure another one on the node shows in its log while Running and Ready: the exporter of a
# standalone host engine (nvidia-dcgm) that went away keeps serving without metrics (Host engine connection invalid)
_DEPENDENT = {"dcgm": "dcgm-exporter"}
# the validator's image runs as an init container of other operands' pods too (the toolkit's driver-validation runs
# nvidia-validator with COMPONENT=driver: gpu-operator assets/state-container-toolkit/0500_daemonset.yaml, v23.3 to
# v26.7; mofed-validation in the driver pod): its words there are the validator's, so are its rows
_VALIDATOR = "operator-validator"
_VALIDATION_SUFFIX = "-validation"


@dataclass(frozen=True, slots=True)
class Blame:
    """An operand pod (or, with none on the node, its DaemonSet) behind a finding about ``node``."""

    node: str
    operand: str
    link: str  # the chain link the finding breaks
    pod: Pod | None
    daemonset: DaemonSet | None
    ready_read: bool = False  # the pod may be Running and Ready while its effect is missing: read it all the same


@dataclass(frozen=True, slots=True)
class Line:
    """One line of evidence: from a container's log or an Event."""

    source: str  # log | event
    where: str  # the container (log; "(previous)" when of the instance before the restart) or Kind/ns/name (event)
    text: str
    time: str

    def to_row(self) -> dict[str, Cell]:
        return {"source": self.source, "container": self.where, "line": self.text, "time": self.time or None}


@dataclass(frozen=True, slots=True)
class Diagnosis:
    blame: Blame
    signature: Signature | None
    lines: tuple[Line, ...]
    unread: tuple[str, ...] = ()

    @property
    def pod(self) -> str:
        return self.blame.pod.ref if self.blame.pod is not None else ""

    def rows(self) -> tuple[dict[str, Cell], ...]:
        """One row per line of evidence (JSON ``evidence``), with the cause of the signature it matched."""
        s = self.signature
        head: dict[str, Cell] = {
            "node": self.blame.node,
            "operand": self.blame.operand,
            "link": self.blame.link,
            "pod": self.pod or None,
            "daemonset": self.blame.daemonset.ref if self.blame.daemonset is not None else None,
            "signature": s.id if s else None,
            "cause": s.cause if s else None,
            "fix": s.fix if s else None,
            "signature_source": s.source if s else None,
        }
        return tuple({**head, **line.to_row()} for line in self.lines)

    def text(self, indent: str = "         ") -> list[str]:
        """What ``explain`` prints under the broken link."""
        who = self.pod or (self.blame.daemonset.ref if self.blame.daemonset else self.blame.operand)
        if self.signature is not None:
            out = [f"{indent}evidence {self.blame.operand} {who}: {self.signature.cause} [{self.signature.id}]"]
        elif self.lines:
            out = [f"{indent}evidence {self.blame.operand} {who}: no known signature; the lines that matter"]
        else:
            out = [f"{indent}evidence {self.blame.operand} {who}: nothing read"]
        for ln in self.lines:
            when = f" {ln.time}" if ln.time else ""
            out.append(f"{indent}  {ln.source} {ln.where}{when}: {ln.text}")
        if self.signature is not None:
            out.append(f"{indent}  fix: {self.signature.fix}")
        out.extend(f"{indent}  not read: {u}" for u in self.unread)
        return out

    def summary(self) -> str:
        """The cause in a few words for a root-cause line (``check -o wide``) or an Event message."""
        if self.signature is not None:
            return f"{self.signature.cause} [{self.signature.id}]"
        if self.lines:
            said = next((ln for ln in reversed(self.lines) if ln.source == "log"), self.lines[-1])
            return f'no known signature; "{said.text}"'
        return ""


def _operand_pods(state: ClusterState) -> dict[str, tuple[str, DaemonSet]]:
    """DaemonSet uid -> (operand, DaemonSet) for every operand DaemonSet."""
    out = {}
    for ds in state.daemonsets:
        op = operand_of_daemonset(ds)
        if op is not None:
            out[ds.uid] = (op, ds)
    return out


def blamed(state: ClusterState, findings: Iterable[Finding]) -> tuple[Blame, ...]:
    """The operand pods the node findings blame, once each, in the findings' order."""
    sets = _operand_pods(state)
    wanted: dict[tuple[str, str], str] = {}
    for f in findings:
        if not f.node or f.pod:
            continue
        if (f.check, f.reason) in _BLAMING and f.operand:
            op = f.operand
        elif link_of(f) in _EFFECT:
            op = _EFFECT[str(link_of(f))]
        else:
            continue
        wanted.setdefault((f.node, op), link_of(f) or "operand")
    ready: set[tuple[str, str]] = set()
    for (node, op), link in list(wanted.items()):
        dep = _DEPENDENT.get(op)
        if dep is not None and (node, dep) not in wanted:
            wanted[(node, dep)] = link
            ready.add((node, dep))
    if not wanted:
        return ()
    pods: dict[tuple[str, str], list[Pod]] = {}
    for pod in state.pods:
        owner = next((sets[uid] for kind, uid in pod.owners if kind == "DaemonSet" and uid in sets), None)
        if owner is None:
            continue
        node = pod.node_name or target_node(pod)
        if (node, owner[0]) in wanted:
            pods.setdefault((node, owner[0]), []).append(pod)
    by_operand: dict[str, DaemonSet] = {}
    for op, ds in sets.values():
        by_operand.setdefault(op, ds)
    out = []
    for (node, op), link in wanted.items():
        mine = sorted(pods.get((node, op), []), key=lambda p: (p.phase == "Running" and p.ready, p.terminal, p.name))
        first: Pod | None = mine[0] if mine else None
        ds_of: DaemonSet | None = by_operand.get(op)
        if first is not None:
            ds_of = next((sets[uid][1] for k, uid in first.owners if k == "DaemonSet" and uid in sets), ds_of)
        out.append(Blame(node, op, link, first, ds_of, ready_read=link in _EFFECT or (node, op) in ready))
    return tuple(out)


def _event_lines(b: Blame, events: Sequence[EventNote]) -> list[tuple[EventNote, Line]]:
    keys = {("Node", "", b.node)}
    if b.pod is not None:
        keys.add(("Pod", b.pod.namespace, b.pod.name))
    if b.daemonset is not None:
        keys.add(("DaemonSet", b.daemonset.namespace, b.daemonset.name))
    mine = [e for e in events if (e.kind, e.namespace if e.kind != "Node" else "", e.name) in keys]
    mine.sort(key=lambda e: e.time)
    return [(e, Line("event", e.about, shown(e.text), e.time)) for e in mine]


def _log_lines(b: Blame, logs: Sequence[LogTail]) -> list[tuple[LogTail, list[Line]]]:
    if b.pod is None:
        return []
    out = []
    for t in logs:
        if t.pod == b.pod.ref:
            where = t.container + (" (previous)" if t.previous else "") + (" (init)" if t.init else "")
            out.append((t, [Line("log", where, shown(ln.text), ln.time) for ln in t.lines]))
    return out


def diagnose(b: Blame, evidence: Evidence) -> Diagnosis:
    """The first signature (table order) found in the blamed pod's log lines or Events, with the line; else the
    lines that matter of the first container read (``model/loglines.py`` decisive) and its Warning Events, and no
    cause."""
    logs = _log_lines(b, evidence.logs)
    events = _event_lines(b, evidence.events)
    for s in SIGNATURES:
        if s.where == "log":
            for tail, lines in logs:
                if not _applies(s, b.operand, tail):
                    continue
                hit = next((ln for ln in reversed(lines) if s.found_in(ln.text)), None)
                if hit is not None:
                    return Diagnosis(b, s, (hit,), _unread(b, evidence))
        elif s.operand in ("*", b.operand):
            hit = next((ln for _, ln in reversed(events) if s.found_in(ln.text)), None)
            if hit is not None:
                return Diagnosis(b, s, (hit,), _unread(b, evidence))
    last: list[Line] = []
    for _, lines in logs:
        if lines:
            last = [lines[i] for i in decisive([ln.text for ln in lines], UNKNOWN_LINES)]
            break
    warnings = [ln for e, ln in events if e.type == "Warning"][-UNKNOWN_LINES:]
    return Diagnosis(b, None, (*last, *warnings), _unread(b, evidence))


def _applies(s: Signature, operand: str, tail: LogTail) -> bool:
    """A log row applies to its operand's containers, and a validator row to a ``*-validation`` init container of
    any operand's pod (the validator's image)."""
    if s.operand in ("*", operand):
        return True
    return s.operand == _VALIDATOR and tail.init and tail.container.endswith(_VALIDATION_SUFFIX)


def _unread(b: Blame, evidence: Evidence) -> tuple[str, ...]:
    """What could not be read about this pod, and what could be read for no pod (a refused kind)."""
    ref = b.pod.ref if b.pod is not None else None
    general = ("pods/log:", "events:")
    mine = (u for u in evidence.unread if (ref is not None and ref in u) or u.startswith(general))
    return tuple(shown(u) for u in mine)


def diagnose_all(blames: Iterable[Blame], evidence: Evidence) -> tuple[Diagnosis, ...]:
    return tuple(diagnose(b, evidence) for b in blames)


def evidence_section(diagnoses: Sequence[Diagnosis]) -> Section:
    """The ``evidence`` section: one row per line of evidence (structured output and tables only)."""
    return Section("evidence", tuple(r for d in diagnoses for r in d.rows()))


def with_evidence(result: Result, diagnoses: Sequence[Diagnosis]) -> Result:
    """``check``'s result with each root-cause line's cause in wide output (``-- <cause> [<signature>]``) and the
    ``evidence`` section; the plain lines are unchanged."""
    if not diagnoses:
        return result
    by = {(d.blame.node, d.blame.operand): d for d in diagnoses}
    sections = []
    for s in result.sections:
        if s.name == "causes":
            wide = []
            for row, line in zip(s.rows, s.text, strict=True):
                operand = str(row.get("operand") or _EFFECT.get(str(row.get("link")), ""))
                d = by.get((str(row.get("node")), operand))
                said = d.summary() if d is not None else ""
                wide.append(f"{line} -- {said}" if said else line)
            s = replace(s, wide=tuple(wide))
        sections.append(s)
    section = evidence_section(diagnoses)
    if section.rows:  # nothing read (a kwok pod, a refused log): no evidence, as from a plain snapshot
        sections.append(section)
    return replace(result, sections=tuple(sections))
