"""Rules of the house that no linter states: what the benchmarks import, and how long a function may be."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[2]


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_benchmarks_import_only_the_product_and_their_own_helpers() -> None:
    wrong = {
        f"{path.relative_to(ROOT)}: {module}"
        for path in sorted((ROOT / "bench").glob("*.py"))
        for module in _imported_modules(path)
        if module == "tests" or module.startswith("tests.")
    }
    assert not wrong, sorted(wrong)
