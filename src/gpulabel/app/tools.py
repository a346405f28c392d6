"""``diff`` and ``version``: two pictures of a cluster compared, and the versions of client and server."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

from gpulabel.app.session import Outcome, Session
from gpulabel.checks.registry import BUILTIN, CheckOptions
from gpulabel.errors import InputError
from gpulabel.model.findings import Result

__all__ = ["DiffOptions", "VersionOptions", "run_diff", "run_version"]


@dataclass(frozen=True, slots=True)
class DiffOptions:
    old: str
    new: str | None = None  # None: the live cluster
    checks: CheckOptions = field(default_factory=BUILTIN.options)
    offline: bool = False  # --snapshot given: refused, diff takes its inputs as OLD and NEW

    def __post_init__(self) -> None:
        if self.offline:
            raise InputError("--snapshot", "diff takes its inputs as OLD and NEW")


def run_diff(session: Session, opts: DiffOptions) -> Outcome:
    """What changed from OLD to NEW: nodes, labels and findings; exit 1 if anything did, 2 when neither side holds
    a node (``-l`` selecting none, or snapshots without nodes: app/selected.py)."""
    from gpulabel.checks.diff import diff_states

    old = session.snapshot(opts.old)
    kinds = opts.checks.registry.kinds
    if opts.new is not None and _same_file(opts.old, opts.new):
        new = dataclasses.replace(old, source=opts.new)  # one file read once: diff_states sees one state
    else:
        new = session.snapshot(opts.new) if opts.new is not None else session.state(kinds)
    outcome = Outcome.of_findings(diff_states(old, new, opts.checks))
    if old.nodes or new.nodes:
        return outcome
    from gpulabel.app.selected import EMPTY_EXIT

    sides = f"{opts.old} and {opts.new or 'the cluster'}"
    selector = session.source.selector
    line = f"-l {selector}: selects no node of {sides}" if selector is not None else f"{sides} hold no Node"
    return dataclasses.replace(outcome, code=EMPTY_EXIT, warnings=(f"{line}; nothing was compared",))


def _same_file(old: str, new: str) -> bool:
    try:
        return "-" not in (old, new) and os.path.samefile(old, new)
    except OSError:
        return False  # the load names the missing file


@dataclass(frozen=True, slots=True)
class VersionOptions:
    client_only: bool = False  # contact no cluster


def run_version(session: Session, opts: VersionOptions) -> Outcome:
    """gpulabel's version and, unless ``client_only`` or offline, the API server's (``fields``: client, server)."""
    from gpulabel import __version__
    from gpulabel.errors import GpulabelError

    fields: dict[str, str | None] = {"client": __version__}
    warnings: tuple[str, ...] = ()
    if not opts.client_only and not session.source.offline:
        # as kubectl: the client version stands; the server's is a second line when a cluster answers
        try:
            info = session.client(budget=3.0).request("GET", "/version") or {}
        except GpulabelError as err:
            fields["server"] = None
            warnings = (f"no server version: {err}",)
        else:
            fields["server"] = str(info.get("gitVersion") or "")
    return Outcome(Result("version", ok="", fields=fields), warnings=warnings)
