"""The ``report`` command: load the cluster once, run every read-only check, write one HTML page.

The page is informational:
exit 0 once it is written, whatever it reports; 2 (one line on stderr) when the
cluster or snapshot cannot be read or the file cannot be written. stdout gets one
line, ``<file>: <nodes> nodes, audit=N operands=N pending=N hazards=N`` (the
findings each check counts, as ``check`` counts them; ``skipped`` when the input
lacks what a check reads), or with ``-o json`` the same as data; ``--html -``
writes the page to stdout instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulabel.cli.context import AddCommand, Context

__all__ = ["add_report_command", "cmd_report"]


def add_report_command(add: AddCommand) -> None:
    """Register ``report`` with the CLI's ``add`` helper."""
    from gpulabel.cli.flags import OPERAND_NAMES

    p = add(
        "report",
        cmd_report,
        "write every read-only check as one static HTML page, sortable and filterable",
        examples=(
            "report --snapshot examples/drifted-lab.yaml --html report.html",
            "report --html - > report.html",
            "report --cluster lab=lab.yaml --cluster drifted=examples/drifted-lab.yaml --html fleet.html",
        ),
        exits="0 the page is written (whatever it reports), 2 bad input, an unusable cluster or an unwritable file",
    )
    p.add_argument("--html", required=True, metavar="FILE", help="the page to write (- for stdout)")
    p.add_argument("--force", action="store_true", help="replace an existing file gpulabel did not write")
    p.add_argument("--strict", action="store_true", help="audit with --strict")
    p.add_argument(
        "--disabled", action="append", default=[], metavar="OPERAND", help=f"as for operands; one of: {OPERAND_NAMES}"
    )
    from gpulabel.cli.gpucmds import add_stuck_after

    add_stuck_after(p)
    from gpulabel.cli.nfdcmds import nfd_config_flag

    nfd_config_flag(p)
    from gpulabel.cli.evidenceflags import add_evidence_flags

    add_evidence_flags(p)
    from gpulabel.cli.fleet import add_cluster_flag

    add_cluster_flag(p)


def cmd_report(ctx: Context) -> int:
    from datetime import UTC, datetime

    from gpulabel.app.report import ReportOptions, run_report
    from gpulabel.cli.evidenceflags import evidence_options
    from gpulabel.cli.gpucmds import options

    opts = ReportOptions(
        html=ctx.args.html,
        checks=options(ctx),  # every option checked before anything is read
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ"),
        evidence=evidence_options(ctx.args),
        force=ctx.args.force,
    )
    from gpulabel.cli.fleet import members_of

    members = members_of(ctx)
    if members is not None:  # several clusters: the fleet summary, then each cluster's report
        from gpulabel.app.fleetreport import run_fleet_report

        return ctx.finish(run_fleet_report(members, opts))
    return ctx.finish(run_report(ctx.session(), opts))
