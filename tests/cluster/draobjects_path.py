"""Import bench/draobjects.py from the cluster tests (their directory is on sys.path, the repository root is not)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_path = Path(__file__).resolve().parents[2] / "bench" / "draobjects.py"
_spec = importlib.util.spec_from_file_location("draobjects", _path)
assert _spec is not None and _spec.loader is not None
draobjects = importlib.util.module_from_spec(_spec)
sys.modules["draobjects"] = draobjects
_spec.loader.exec_module(draobjects)
