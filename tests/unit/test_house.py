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


# Functions over tools.longfunctions.LIMIT lines, each with the reason it stays long. Shorten one and remove its
# row; a new long function fails until it is split or given a reason here.
LONG_FUNCTIONS: dict[str, str] = {
    "gpulabel.cluster.yamlstream:stream_documents": "one loop over libyaml's parse events whose state is its "
    "locals (the YAML snapshot reader's hot loop, bench/parse_bench.py)",
    "gpulabel.k8s.resources:pod_requests": "a transcription of resource.PodRequests, kept in its upstream order "
    "so that it can be read beside it",
    "gpulabel.k8s.nfd.gotemplate:_parse": "a recursive-descent parser's one dispatch over Go template actions",
    "gpulabel.k8s.dra.allocator:Allocator._allocate_device": "a transcription of the structured allocator's "
    "allocateDevice (v0.37.2), its steps and each step's rollback in upstream's order, to be read beside it",
}


MAX_LONG_FUNCTIONS = 4  # issue 44: at most four functions over the limit, each a transcription or a hot loop
MAX_MODULE_LINES = 600


def test_no_module_is_longer_than_a_reader_can_hold() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in sorted((ROOT / "src" / "gpulabel").rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"over {MAX_MODULE_LINES} lines (split it by meaning): {long}"


def test_no_function_is_longer_than_a_reader_can_hold_without_a_reason() -> None:
    from tools.longfunctions import LIMIT, long_functions

    found = long_functions()
    unexplained = {name: lines for name, lines in found.items() if name not in LONG_FUNCTIONS}
    assert not unexplained, f"over {LIMIT} lines (split it, or give a reason in LONG_FUNCTIONS): {unexplained}"
    stale = sorted(set(LONG_FUNCTIONS) - set(found))
    assert not stale, f"no longer over {LIMIT} lines: remove from LONG_FUNCTIONS: {stale}"
    assert len(LONG_FUNCTIONS) <= MAX_LONG_FUNCTIONS, f"{len(LONG_FUNCTIONS)} allowed long functions: split some"


def test_every_test_the_fast_loop_leaves_out_by_name_exists() -> None:
    from tests.unit.conftest import FAST_SEEDS, SLOW

    for test_id in [*SLOW, *FAST_SEEDS]:
        path, name = test_id.split("::")
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        functions = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
        assert len(functions) == 1, test_id
        if test_id in FAST_SEEDS:  # the fast loop runs its first seeds
            assert "seed" in [a.arg for a in functions[0].args.args], test_id
