"""``gpulabel devices``, ``cel`` and ``migrate``: thin glue over checks.devices and checks.migrate.

- ``devices``: ``<node> <driver>/<pool>/<device> <type> <product> free|tainted <taints>|allocated <ns>/<claim>``
  per device; ``-o wide`` adds attributes, capacity and taints; ``-o json`` all of it (section ``devices``).
- ``cel EXPR [--class NAME]``: ``<node> <device> yes|no|class|error [message]`` per device
  (``class``: the class's selectors refuse it); exit 0 if some device is selected, 1 if
  none, 2 if the expression does not compile (the API server's message).
- ``migrate MANIFEST...``: per workload ``<ns>/<name> selector: <CEL>``, ``count: N``, ``keep: <requirement>``
  (stays node affinity) and ``warning: ...`` lines; product names and architectures are taken from
  the fleet's devices when the cluster (or snapshot) has ResourceSlices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulabel.cli.context import AddCommand, Context
    from gpulabel.model.findings import Cell

__all__ = ["add_dra_commands"]

_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim")
_GROUPS = ("output", "cluster")  # devices are listed per slice, not per node: no -l, no -n


def add_dra_commands(add: AddCommand) -> None:
    add(
        "devices",
        cmd_devices,
        "every DRA device per node and pool, with its attributes and the claim holding it",
        groups=_GROUPS,
        examples=("devices --snapshot examples/dra-lab.json", "devices -o wide"),
        exits="0 listed (also when there is no device), 2 bad input or an unusable cluster",
    )
    p = add(
        "cel",
        cmd_cel,
        "which devices a DRA selector expression selects, and where it fails",
        groups=_GROUPS,
        examples=(
            """cel 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB"'""",
            """cel 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0' --class X""",
        ),
        exits="0 some device selected, 1 none, 2 the expression does not compile (the API server's message)",
    )
    p.add_argument("expression", metavar="EXPR", help='a CEL selector, e.g. device.attributes["gpu.nvidia.com"].x')
    p.add_argument("--class", dest="device_class", metavar="NAME", help="apply this DeviceClass's selectors first")
    p = add(
        "migrate",
        cmd_migrate,
        "the DRA selector that selects the GPUs a workload's GFD node affinity selects",
        groups=_GROUPS,
        examples=("migrate examples/pods/exists-notin.yaml --snapshot examples/dra-lab.json",),
        exits="0 printed, 2 bad input or an unusable cluster",
    )
    p.add_argument("manifests", nargs="+", metavar="MANIFEST", help="Pod/Deployment/Job/... YAML or JSON; - is stdin")


def cmd_devices(ctx: Context) -> int:
    from gpulabel.checks.devices import device_rows
    from gpulabel.model.findings import Result, Section

    state = ctx.state(_KINDS)
    if "ResourceSlice" not in state.kinds:
        ctx.emit(Result("devices", skipped="no ResourceSlices in the input", counts={"devices": 0}))
        return 0
    rows = device_rows(state.dra)
    section = Section(
        "devices",
        tuple(r.cells() for r in rows),
        tuple(r.line() for r in rows),
        tuple(r.line(wide=True) for r in rows),
    )
    ctx.emit(Result("devices", sections=(section,), ok="", counts={"devices": len(rows)}))
    return 0


def cmd_cel(ctx: Context) -> int:
    from gpulabel.checks.devices import select
    from gpulabel.model.findings import Result, Section

    found = select(ctx.state(_KINDS).dra, ctx.args.expression, ctx.args.device_class)
    selected = sum(s.verdict == "yes" for s in found)
    section = Section("devices", tuple(s.cells() for s in found), tuple(s.line() for s in found))
    ctx.emit(
        Result(
            "cel",
            sections=(section,),
            ok="",
            counts={"devices": len(found), "selected": selected},
            fields={"expression": ctx.args.expression, "class": ctx.args.device_class},
        )
    )
    return 0 if selected else 1


def cmd_migrate(ctx: Context) -> int:
    from gpulabel.checks.devices import device_rows
    from gpulabel.checks.migrate import migrate
    from gpulabel.cluster.manifests import load_workloads
    from gpulabel.model.findings import Result, Section

    workloads = load_workloads(ctx.args.manifests)
    rows = device_rows(ctx.state(_KINDS).dra)
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
    ctx.emit(Result("migrate", sections=(Section("workloads", tuple(cells), tuple(lines)),), ok=""))
    return 0
