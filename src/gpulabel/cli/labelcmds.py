"""``sanitize`` and ``validate``: label values and keys, no cluster needed."""

from __future__ import annotations

from gpulabel.cli.context import AddCommand, Context
from gpulabel.errors import InputError

__all__ = ["add_label_commands"]


def add_label_commands(add: AddCommand) -> None:
    p = add("sanitize", cmd_sanitize, "turn vendor strings into valid label values, one per line")
    p.add_argument("values", nargs="+", metavar="VALUE")
    p.add_argument("--gfd", action="store_true", help="predict what GPU Feature Discovery writes instead")
    p.add_argument("--mig-profile", metavar="PROFILE", help="with --gfd: the MIG profile GFD appends")
    p.add_argument("--shared", action="store_true", help="with --gfd: a time-sliced GPU (GFD appends -SHARED)")

    p = add("validate", cmd_validate, "check KEY=VALUE labels with the API server's rules")
    p.add_argument("labels", nargs="+", metavar="KEY=VALUE")


def cmd_sanitize(ctx: Context) -> int:
    from gpulabel.model.sanitize import sanitize, sanitize_gfd

    a = ctx.args
    if a.gfd:
        results = [sanitize_gfd(v, a.mig_profile or "", a.shared) for v in a.values]
    else:
        if a.mig_profile or a.shared:
            raise InputError("--mig-profile/--shared", "only apply with --gfd")
        results = [sanitize(v) for v in a.values]
    if ctx.fmt == "json":
        from gpulabel.k8s.labels import is_valid_value
        from gpulabel.render.text import emit_json

        emit_json(
            [{"input": v, "output": r, "valid": is_valid_value(r)} for v, r in zip(a.values, results, strict=True)],
            ctx.out,
        )
    else:
        ctx.out.write("".join(r + "\n" for r in results))
    # a value with nothing usable left: say so (stdout keeps one line per value)
    empty = [v for v, r in zip(a.values, results, strict=True) if not r]
    for value in empty:
        why = "GFD writes no product label for it" if a.gfd else "no character a label value may hold"
        ctx.err.write(f"gpulabel: sanitize: {value!r}: {why}\n")
    return 1 if empty else 0


def cmd_validate(ctx: Context) -> int:
    from gpulabel.k8s.labels import label_errors, split_assignment

    rows = []
    for item in ctx.args.labels:
        if "=" not in item:  # checked for every argument before anything is printed
            raise InputError(item, "not KEY=VALUE (write KEY= for the empty value)")
    for item in ctx.args.labels:
        key, value = split_assignment(item)
        rows.append((item, key, value, label_errors(key, value)))
    if ctx.fmt == "json":
        from gpulabel.render.text import emit_json

        emit_json([{"label": i, "key": k, "value": v, "valid": not e, "errors": e} for i, k, v, e in rows], ctx.out)
    else:
        ctx.out.write("".join(f"{item}: {msg}\n" for item, _, _, errs in rows for msg in errs))
    return 1 if any(errs for *_, errs in rows) else 0
