"""``sanitize``, ``validate`` and ``sources``: label values, keys and who owns them."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpulabel.app.session import Outcome, Session
from gpulabel.errors import InputError
from gpulabel.k8s.nfd.master import NfdConfig
from gpulabel.model.findings import Cell, Finding, Result, Section

__all__ = [
    "SanitizeOptions",
    "SourcesOptions",
    "ValidateOptions",
    "run_sanitize",
    "run_sources",
    "run_validate",
]


@dataclass(frozen=True, slots=True)
class SanitizeOptions:
    values: tuple[str, ...]
    gfd: bool = False
    mig_profile: str | None = None
    shared: bool = False

    def __post_init__(self) -> None:
        if not self.gfd and (self.mig_profile or self.shared):
            raise InputError("--mig-profile/--shared", "only apply with --gfd")


def run_sanitize(opts: SanitizeOptions) -> Outcome:
    """One valid label value per input; a value with nothing usable left is a warning and exit 1."""
    from gpulabel.k8s.labels import is_valid_value
    from gpulabel.model.sanitize import sanitize, sanitize_gfd

    if opts.gfd:
        results = [sanitize_gfd(v, opts.mig_profile or "", opts.shared) for v in opts.values]
    else:
        results = [sanitize(v) for v in opts.values]
    rows: tuple[dict[str, Cell], ...] = tuple(
        {"input": v, "output": r, "valid": is_valid_value(r)} for v, r in zip(opts.values, results, strict=True)
    )
    result = Result("sanitize", sections=(Section("values", rows, tuple(results)),), ok="")
    # a value with nothing usable left: say so (stdout keeps one line per value)
    empty = [v for v, r in zip(opts.values, results, strict=True) if not r]
    why = "GFD writes no product label for it" if opts.gfd else "no character a label value may hold"
    return Outcome(result, 1 if empty else 0, tuple(f"sanitize: {value!r}: {why}" for value in empty))


@dataclass(frozen=True, slots=True)
class ValidateOptions:
    labels: tuple[str, ...]

    def __post_init__(self) -> None:
        for item in self.labels:
            if "=" not in item:  # checked for every argument before anything is printed
                raise InputError(item, "not KEY=VALUE (write KEY= for the empty value)")


def run_validate(opts: ValidateOptions) -> Outcome:
    from gpulabel.k8s.labels import label_errors, split_assignment

    findings: list[Finding] = []
    rows: list[dict[str, Cell]] = []
    for item in opts.labels:
        key, value = split_assignment(item)
        errors = label_errors(key, value)
        given = value if "=" in item else None
        rows.append({"label": item, "key": key, "value": value, "valid": not errors, "errors": tuple(errors)})
        findings.extend(Finding("validate", "invalid", key=key, value=given, detail=e) for e in errors)
    return Outcome.of_findings(Result("validate", tuple(findings), (Section("labels", tuple(rows)),), ok=""))


@dataclass(frozen=True, slots=True)
class SourcesOptions:
    keys: tuple[str, ...] = ()
    node: str | None = None
    nfd: NfdConfig = field(default_factory=NfdConfig)  # nfd-master's configuration: which rule produces a label

    def __post_init__(self) -> None:
        if not self.node and not self.keys:
            raise InputError("sources", "give label keys, or --node NAME")


def run_sources(session: Session, opts: SourcesOptions) -> Outcome:
    """Who owns each key; with ``node``, that node's labels with owner and last writer."""
    if opts.node:
        from gpulabel.checks.labels.sources import node_sources
        from gpulabel.k8s.nfd.objects import NFD_KINDS

        state = session.state(["Node", *NFD_KINDS])
        node = state.node(opts.node)
        if node is None:
            raise InputError(f"node {opts.node}", "not found")
        produced: dict[str, str] = {}
        if state.nfd.nodefeatures or state.nfd.rules:
            from gpulabel.checks.nfd.rules import producers

            produced = producers(state, opts.nfd, node.name)
        wanted = set(opts.keys)
        rows = [r for r in node_sources(node) if not wanted or r.key in wanted]
        cells: tuple[dict[str, Cell], ...] = tuple(
            {
                "key": r.key,
                "value": r.value,
                "owner": r.owner,
                "manager": r.written_by.manager if r.written_by else None,
                "operation": r.written_by.operation if r.written_by else None,
                "time": r.written_by.time if r.written_by else None,
                **({"produced_by": produced.get(r.key)} if produced else {}),
            }
            for r in rows
        )
        lines = tuple(
            r.line() + (f" produced-by={produced[r.key].replace(' ', '/')}" if r.key in produced else "") for r in rows
        )
        section = Section("labels", cells, lines)
        return Outcome(Result("sources", sections=(section,), ok="", fields={"node": node.name}))
    from gpulabel.model.vocabulary import owner_of

    owners = [(k, owner_of(k)) for k in opts.keys]
    section = Section("keys", tuple({"key": k, "owner": o} for k, o in owners), tuple(f"{k}={o}" for k, o in owners))
    return Outcome(Result("sources", sections=(section,), ok=""))
