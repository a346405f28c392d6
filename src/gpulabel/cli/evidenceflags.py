"""The evidence flags of ``check``, ``explain``, ``report`` and ``snapshot --bundle``: turn log and Event reading
off, or bound it."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulabel.app.evidence import EvidenceOptions

__all__ = ["add_evidence_flags", "evidence_options"]


def add_evidence_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("evidence (live: the log tails and Events of the operand pods the findings blame)")
    g.add_argument(
        "--no-evidence",
        action="store_true",
        help="read no pod log and no Event (the role then needs no pods/log or events rights)",
    )
    g.add_argument(
        "--log-lines", type=int, default=50, metavar="N", help="the last N lines of each container read (default 50)"
    )
    g.add_argument(
        "--log-bytes",
        type=int,
        default=64 * 1024,
        metavar="BYTES",
        help="at most BYTES of each container's log (default 65536)",
    )


def evidence_options(args: argparse.Namespace) -> EvidenceOptions:
    from gpulabel.app.evidence import EvidenceOptions

    return EvidenceOptions(not args.no_evidence, args.log_lines, args.log_bytes)
