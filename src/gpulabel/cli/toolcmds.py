"""``diff``, ``version`` and ``completion``: comparing two pictures of a cluster, and kubectl's habits."""

from __future__ import annotations

from gpulabel.cli.context import AddCommand, Context

__all__ = ["add_tool_commands"]


def add_tool_commands(add: AddCommand) -> None:
    _add_diff(add)
    _add_snapshot(add)
    _add_version(add)
    _add_completion(add)


def _add_diff(add: AddCommand) -> None:
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


def _add_snapshot(add: AddCommand) -> None:
    p = add(
        "snapshot",
        cmd_snapshot,
        "capture from the live cluster what every check reads (nodes with managedFields, pods, DaemonSets, "
        "ClusterPolicies, the DRA, NFD and Karpenter kinds where served) as one JSON List, for --snapshot later",
        groups=("cluster",),
        examples=("snapshot -o cluster.json", "check --snapshot cluster.json"),
        exits="0 written, 2 the cluster cannot be read or the file cannot be written",
        omit=("output",),  # its -o is a file, not the output format of the other commands
    )
    p.add_argument(
        "-o",
        "--output",
        dest="file",
        metavar="FILE",
        default="-",
        help="write here (default: stdout); a snapshot gpulabel wrote is replaced atomically; any other file, "
        "a FIFO, a device or a directory is refused (docs/hostile-input.md)",
    )
    p.add_argument("--force", action="store_true", help="replace an existing file gpulabel did not write")
    p.add_argument(
        "--progress",
        action="store_true",
        help="the progress line (per kind: objects and pages so far) on stderr even when it is not a terminal, "
        "one line per step; on a terminal it is drawn anyway once a capture takes over a second",
    )
    p.add_argument(
        "--bundle",
        metavar="FILE.tar.gz",
        help="write a support bundle instead: the snapshot, the log tails and Events of the operand pods the "
        "checks blame, and what was redacted (env values, Secret data, tokens in args, annotations and logs; "
        "docs/evidence.md)",
    )
    from gpulabel.cli.evidenceflags import add_evidence_flags

    add_evidence_flags(p)


def _add_version(add: AddCommand) -> None:
    add(
        "version",
        cmd_version,
        "gpulabel's version and, from a live cluster, the API server's",
        groups=("output", "cluster"),
        examples=("version", "version -o json"),
        exits="0 done (an unreachable cluster only leaves out the server line), 2 bad flags",
    ).add_argument("--client", action="store_true", help="only the client version: contact no cluster")


def _add_completion(add: AddCommand) -> None:
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


def cmd_diff(ctx: Context) -> int:
    from gpulabel.app.tools import DiffOptions, run_diff
    from gpulabel.checks.registry import BUILTIN

    a = ctx.args
    checks = BUILTIN.options(strict=a.strict, namespace=a.namespace)
    opts = DiffOptions(old=a.old, new=a.new, checks=checks, offline=bool(a.snapshot))
    return ctx.finish(run_diff(ctx.session(), opts))


def cmd_snapshot(ctx: Context) -> int:
    from gpulabel.app.snapshot import SnapshotOptions, run_snapshot
    from gpulabel.cli.evidenceflags import evidence_options

    a = ctx.args
    opts = SnapshotOptions(
        output=a.file, progress=a.progress, bundle=a.bundle, evidence=evidence_options(a), force=a.force
    )
    return ctx.finish(run_snapshot(ctx.session(), opts))


def cmd_version(ctx: Context) -> int:
    from gpulabel.app.tools import VersionOptions, run_version

    outcome = run_version(ctx.session(), VersionOptions(client_only=ctx.args.client))
    fields = outcome.result.fields
    if ctx.fmt in ("text", "wide"):
        lines = [f"Client Version: {fields['client']}"]
        if fields.get("server") is not None:
            lines.append(f"Server Version: {fields['server']}")
        ctx.out.write("".join(line + "\n" for line in lines))
    else:
        ctx.emit(outcome.result)
    for line in outcome.warnings:
        ctx.warn(line)
    return outcome.code


def cmd_completion(ctx: Context) -> int:
    from gpulabel.cli.completion import script

    assert ctx.parser is not None, "main() gives every command the parser"
    ctx.out.write(script(ctx.parser, ctx.args.shell))
    return 0
