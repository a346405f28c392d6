"""The output formats (``-o``): a module of its own so that the command line's flags name them without
importing the renderers (``gpulabel --help`` imports no renderer)."""

from __future__ import annotations

__all__ = ["FORMATS"]

FORMATS = ("text", "wide", "json", "yaml", "table", "name")
