"""``sanitize`` and ``validate``: label values and keys, no cluster needed."""

from __future__ import annotations

from gpulabel.cli.context import AddCommand, Context

__all__ = ["add_label_commands"]


def add_label_commands(add: AddCommand) -> None:
    p = add(
        "sanitize",
        cmd_sanitize,
        "turn vendor strings into valid label values, one per line",
        groups=("output",),
        examples=("sanitize 'NVIDIA A100-SXM4-40GB'", "sanitize --gfd --mig-profile 1g.5gb 'NVIDIA A100-SXM4-40GB'"),
        exits="0 done, 2 bad input",
    )
    p.add_argument("values", nargs="+", metavar="VALUE")
    p.add_argument("--gfd", action="store_true", help="predict what GPU Feature Discovery writes instead")
    p.add_argument("--mig-profile", metavar="PROFILE", help="with --gfd: the MIG profile GFD appends")
    p.add_argument("--shared", action="store_true", help="with --gfd: a time-sliced GPU (GFD appends -SHARED)")

    p = add(
        "validate",
        cmd_validate,
        "check KEY=VALUE labels with the API server's rules",
        groups=("output",),
        examples=("validate nvidia.com/gpu.product='NVIDIA A100-SXM4-40GB' nvidia.com/gpu.count=4",),
        exits="0 all valid, 1 some invalid (one line per error), 2 bad input",
    )
    p.add_argument("labels", nargs="+", metavar="KEY=VALUE")


def cmd_sanitize(ctx: Context) -> int:
    from gpulabel.app.labels import SanitizeOptions, run_sanitize

    a = ctx.args
    opts = SanitizeOptions(values=tuple(a.values), gfd=a.gfd, mig_profile=a.mig_profile, shared=a.shared)
    return ctx.finish(run_sanitize(opts))


def cmd_validate(ctx: Context) -> int:
    from gpulabel.app.labels import ValidateOptions, run_validate

    return ctx.finish(run_validate(ValidateOptions(labels=tuple(ctx.args.labels))))
