"""``diff``, ``version`` and ``completion``: comparing two pictures of a cluster, and kubectl's habits."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from gpulabel.cli.context import AddCommand, Context, findings_exit
from gpulabel.errors import InputError

if TYPE_CHECKING:
    from gpulabel.model.cluster import ClusterState

__all__ = ["add_tool_commands"]


def add_tool_commands(add: AddCommand) -> None:
    p = add(
        "diff",
        cmd_diff,
        "what changed from OLD to NEW (snapshots; NEW omitted: the live cluster): nodes, labels, and findings",
        examples=(
            "diff examples/lab-cluster.yaml examples/drifted-lab.yaml",
            "diff before-upgrade.json          # against the live cluster",
            "diff old.json new.json -o json | jq '.findings[] | select(.change == \"appeared\")'",
        ),
        exits="0 no difference, 1 differences, 2 bad input or an unusable cluster",
    )
    p.add_argument(
        "old", metavar="OLD", help="snapshot file (what kubectl get nodes,pods,daemonsets -A -o json writes)"
    )
    p.add_argument(
        "new", metavar="NEW", nargs="?", help="snapshot file; omitted: the live cluster (--kubeconfig, --context)"
    )
    p.add_argument("--strict", action="store_true", help="audit with --strict on both sides")

    add(
        "version",
        cmd_version,
        "gpulabel's version and, from a live cluster, the API server's",
        groups=("output", "cluster"),
        examples=("version", "version -o json"),
        exits="0 done, 2 the cluster cannot be reached (the client version is printed first)",
    ).add_argument("--client", action="store_true", help="only the client version: contact no cluster")

    p = add(
        "completion",
        cmd_completion,
        "print a shell completion script",
        groups=(),
        examples=(
            "completion bash > /etc/bash_completion.d/gpulabel",
            "source <(gpulabel completion zsh)",
            "completion fish > ~/.config/fish/completions/gpulabel.fish",
        ),
        exits="0 done, 2 unknown shell",
    )
    p.add_argument("shell", choices=("bash", "zsh", "fish"), help="bash, zsh or fish")


def _snapshot(ctx: Context, path: str) -> ClusterState:
    import dataclasses

    from gpulabel.cluster.snapshot import load_snapshots

    state = load_snapshots([path], warn=ctx.warn)
    selector = ctx.node_selector()
    if selector is not None:
        state = dataclasses.replace(state, nodes=tuple(n for n in state.nodes if selector.matches(n.labels)))
    return dataclasses.replace(state, source=path)


def _same_file(old: str, new: str) -> bool:
    try:
        return "-" not in (old, new) and os.path.samefile(old, new)
    except OSError:
        return False  # the load names the missing file


def cmd_diff(ctx: Context) -> int:
    import dataclasses

    from gpulabel.checks.diff import diff_states
    from gpulabel.checks.registry import CHECKS, CheckOptions

    a = ctx.args
    if a.snapshot:
        raise InputError("--snapshot", "diff takes its inputs as OLD and NEW")
    opts = CheckOptions(strict=a.strict, namespace=a.namespace)
    old = _snapshot(ctx, a.old)
    kinds = sorted({k for c in CHECKS for k in c.kinds})
    if a.new is not None and _same_file(a.old, a.new):
        new = dataclasses.replace(old, source=a.new)  # one file read once: diff_states sees one state
    else:
        new = _snapshot(ctx, a.new) if a.new is not None else ctx.state(kinds)
    return findings_exit(ctx, diff_states(old, new, opts))


def cmd_version(ctx: Context) -> int:
    from gpulabel import __version__
    from gpulabel.model.findings import Result

    fields: dict[str, str | None] = {"client": __version__}
    lines = [f"Client Version: {__version__}"]
    if not ctx.args.client and not ctx.args.snapshot:
        info = ctx.client().request("GET", "/version") or {}
        server = str(info.get("gitVersion") or "")
        fields["server"] = server
        lines.append(f"Server Version: {server}")
    if ctx.fmt in ("text", "wide"):
        ctx.out.write("".join(line + "\n" for line in lines))
    else:
        ctx.emit(Result("version", ok="", fields=fields))
    return 0


def cmd_completion(ctx: Context) -> int:
    from gpulabel.cli.completion import script
    from gpulabel.cli.main import build_parser, prog_name

    parser = build_parser(prog_name())
    ctx.out.write(script(parser, ctx.args.shell))
    return 0
