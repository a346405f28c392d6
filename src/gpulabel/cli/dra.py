"""``gpulabel devices`` and ``gpulabel cel``: thin glue over checks.devices.

- ``devices``: ``<node> <driver>/<pool>/<device> <type> <product> free|allocated <ns>/<claim>``
  per device; ``-o wide`` adds attributes, capacity and taints; ``-o json`` all of it.
- ``migrate MANIFEST...``: per workload ``<ns>/<name> selector: <CEL>``, ``count: N``, ``keep: <requirement>``
  (stays node affinity) and ``warning: ...`` lines; product names and architectures are taken from
  the fleet's devices when the cluster (or snapshot) has ResourceSlices.
- ``cel EXPR [--class NAME]``: ``<node> <device> yes|no|class|error [message]`` per device
  (``class``: the class's selectors refuse it); exit 0 if some device is selected, 1 if
  none, 2 if the expression does not compile (the API server's message).
"""

from __future__ import annotations

from gpulabel.cli.context import AddCommand, Context

__all__ = ["add_dra_commands"]

_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim")


def add_dra_commands(add: AddCommand) -> None:
    add("devices", cmd_devices, "every DRA device per node and pool, with its attributes and the claim holding it")
    p = add("cel", cmd_cel, "which devices a DRA selector expression selects, and where it fails")
    p.add_argument("expression", metavar="EXPR", help='a CEL selector, e.g. device.attributes["gpu.nvidia.com"].x')
    p.add_argument("--class", dest="device_class", metavar="NAME", help="apply this DeviceClass's selectors first")
    p = add("migrate", cmd_migrate, "the DRA selector that selects the GPUs a workload's GFD node affinity selects")
    p.add_argument("manifests", nargs="+", metavar="MANIFEST", help="Pod/Deployment/Job/... YAML or JSON; - is stdin")


def cmd_devices(ctx: Context) -> int:
    from gpulabel.checks.devices import device_rows
    from gpulabel.render.text import emit_json, emit_table

    rows = device_rows(ctx.state(_KINDS).dra)
    if ctx.fmt == "json":
        emit_json({"devices": [r.to_json() for r in rows]}, ctx.out)
    elif ctx.fmt == "table":
        emit_table(
            ("node", "device", "type", "product", "allocated to"),
            [
                (r.node, r.id, str(r.attribute("type") or ""), str(r.attribute("productName") or ""), r.allocated_to)
                for r in rows
            ],
            ctx.out,
        )
    else:
        ctx.out.write("".join(r.line(ctx.fmt == "wide") + "\n" for r in rows))
    return 0


def cmd_cel(ctx: Context) -> int:
    from gpulabel.checks.devices import select
    from gpulabel.render.text import emit_json

    found = select(ctx.state(_KINDS).dra, ctx.args.expression, ctx.args.device_class)
    if ctx.fmt == "json":
        emit_json({"expression": ctx.args.expression, "devices": [s.to_json() for s in found]}, ctx.out)
    else:
        ctx.out.write("".join(s.line() + "\n" for s in found))
    return 0 if any(s.verdict == "yes" for s in found) else 1


def cmd_migrate(ctx: Context) -> int:
    from gpulabel.checks.devices import device_rows
    from gpulabel.checks.migrate import migrate
    from gpulabel.cluster.manifests import load_workloads
    from gpulabel.render.text import emit_json

    workloads = load_workloads(ctx.args.manifests)
    rows = device_rows(ctx.state(_KINDS).dra)
    products = [str(r.attribute("productName")) for r in rows if r.attribute("productName")]
    archs = [str(r.attribute("architecture")) for r in rows if r.attribute("architecture")]
    docs, lines = [], []
    for w in workloads:
        m = migrate(w.requirements, products, archs)
        docs.append({**w.to_json(), "selector": m.selector, "count": m.count, "keep": m.kept, "warnings": m.warnings})
        lines.append(f"{w.ref} selector: {m.selector or '(none: no GPU label requirements)'}")
        if m.count is not None:
            lines.append(f"{w.ref} count: {m.count}")
        lines.extend(f"{w.ref} keep: {k} (stays node affinity)" for k in m.kept)
        lines.extend(f"{w.ref} warning: {x}" for x in m.warnings)
    if ctx.fmt == "json":
        emit_json({"workloads": docs}, ctx.out)
    else:
        ctx.out.write("".join(line + "\n" for line in lines))
    return 0
