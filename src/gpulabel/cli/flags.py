"""Flags several command modules share (each module imports these; none imports another command module)."""

from __future__ import annotations

import argparse

from gpulabel.model.operands import CATALOGUE

__all__ = ["OPERAND_NAMES", "disabled_flag"]

OPERAND_NAMES = ", ".join(CATALOGUE)  # --disabled's valid values, from the catalogue (data, not a check)


def disabled_flag(p: argparse.ArgumentParser, help_: str) -> None:
    """``--disabled OPERAND`` (repeatable); completion offers the operand names."""
    action = p.add_argument(
        "--disabled", action="append", default=[], metavar="OPERAND", help=f"{help_}; one of: {OPERAND_NAMES}"
    )
    action.completion_values = tuple(OPERAND_NAMES.split(", "))  # type: ignore[attr-defined]  # read by completion
