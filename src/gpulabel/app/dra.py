"""``devices``, ``cel`` and ``migrate``: the DRA devices, a selector over them, and GFD affinity to selectors."""

from __future__ import annotations

from dataclasses import dataclass

from gpulabel.app.session import Outcome, Session
from gpulabel.model.findings import Cell, Result, Section

__all__ = ["DRA_READ", "CelOptions", "MigrateOptions", "run_cel", "run_devices", "run_migrate"]

DRA_READ = ("DeviceClass", "ResourceSlice", "ResourceClaim", "DeviceTaintRule")  # what the three read


@dataclass(frozen=True, slots=True)
class CelOptions:
    expression: str
    device_class: str | None = None  # apply this DeviceClass's selectors first


@dataclass(frozen=True, slots=True)
class MigrateOptions:
    manifests: tuple[str, ...]


def run_devices(session: Session) -> Outcome:
    """Every DRA device per node and pool; informational: exit 0."""
    from gpulabel.checks.health.devices import device_rows

    state = session.state(DRA_READ)
    if "ResourceSlice" not in state.kinds:
        return Outcome(Result("devices", skipped="no ResourceSlices in the input", counts={"devices": 0}))
    rows = device_rows(state.dra)
    section = Section(
        "devices",
        tuple(r.cells() for r in rows),
        tuple(r.line() for r in rows),
        tuple(r.line(wide=True) for r in rows),
    )
    return Outcome(Result("devices", sections=(section,), ok="", counts={"devices": len(rows)}))


def run_cel(session: Session, opts: CelOptions) -> Outcome:
    """Which devices ``opts.expression`` selects; exit 0 if some, 1 if none."""
    from gpulabel.checks.health.devices import select

    found = select(session.state(DRA_READ).dra, opts.expression, opts.device_class)
    selected = sum(s.verdict == "yes" for s in found)
    section = Section("devices", tuple(s.cells() for s in found), tuple(s.line() for s in found))
    result = Result(
        "cel",
        sections=(section,),
        ok="",
        counts={"devices": len(found), "selected": selected},
        fields={"expression": opts.expression, "class": opts.device_class},
    )
    return Outcome(result, 0 if selected else 1)


def run_migrate(session: Session, opts: MigrateOptions) -> Outcome:
    """Per workload, the DRA selector for its GFD node affinity; names come from the fleet's devices."""
    from gpulabel.checks.health.devices import device_rows
    from gpulabel.checks.labels.migrate import migrate
    from gpulabel.cluster.manifests import load_workloads

    workloads = load_workloads(opts.manifests)
    rows = device_rows(session.state(DRA_READ).dra)
    products = [str(r.attribute("productName")) for r in rows if r.attribute("productName")]
    archs = [str(r.attribute("architecture")) for r in rows if r.attribute("architecture")]
    cells: list[dict[str, Cell]] = []
    lines: list[str] = []
    for w in workloads:
        m = migrate(w.requirements, products, archs)
        cells.append(
            {
                "workload": w.ref,
                "kind": w.kind,
                "selector": m.selector or None,
                "count": m.count,
                "keep": tuple(m.kept),
                "warnings": tuple(m.warnings),
            }
        )
        lines.append(f"{w.ref} selector: {m.selector or '(none: no GPU label requirements)'}")
        if m.count is not None:
            lines.append(f"{w.ref} count: {m.count}")
        lines.extend(f"{w.ref} keep: {k} (stays node affinity)" for k in m.kept)
        lines.extend(f"{w.ref} warning: {x}" for x in m.warnings)
    return Outcome(Result("migrate", sections=(Section("workloads", tuple(cells), tuple(lines)),), ok=""))
