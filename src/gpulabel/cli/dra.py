"""``gpulabel devices``, ``cel`` and ``migrate``: thin glue over checks.devices and checks.migrate.

- ``devices``: ``<node> <driver>/<pool>/<device> <type> <product> free|allocated <ns>/<claim>``
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

__all__ = ["add_dra_commands"]

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
    from gpulabel.app.dra import run_devices

    return ctx.finish(run_devices(ctx.session()))


def cmd_cel(ctx: Context) -> int:
    from gpulabel.app.dra import CelOptions, run_cel

    opts = CelOptions(expression=ctx.args.expression, device_class=ctx.args.device_class)
    return ctx.finish(run_cel(ctx.session(), opts))


def cmd_migrate(ctx: Context) -> int:
    from gpulabel.app.dra import MigrateOptions, run_migrate

    return ctx.finish(run_migrate(ctx.session(), MigrateOptions(manifests=tuple(ctx.args.manifests))))
