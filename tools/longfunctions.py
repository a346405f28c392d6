"""Functions longer than a reader can hold: every function of ``src/`` over ``--limit`` lines, longest first.

    python -m tools.longfunctions [--limit 60]

A function's length is its lines from ``def`` (decorators included) to its last line, docstring included;
a nested function counts within its parent and on its own. ``tests/unit/test_house.py`` fails on a
function over 60 lines that its allow-list does not name with a reason.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
LIMIT = 60


def _functions(tree: ast.AST, prefix: str) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from _functions(node, name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


def long_functions(limit: int = LIMIT, root: Path = SRC) -> dict[str, int]:
    """``module:qualified.name`` -> lines, for every function under ``root`` longer than ``limit`` lines."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for name, node in _functions(tree, ""):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = (node.end_lineno or node.lineno) - first + 1
            if lines > limit:
                out[f"{module}:{name}"] = lines
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.longfunctions", description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=LIMIT)
    args = parser.parse_args(argv)
    found = long_functions(args.limit)
    for name, lines in sorted(found.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{lines:4d} {name}")
    print(f"{len(found)} function(s) over {args.limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
