"""Import-linter contract types of this project: a module's private names are its own; a sealed package's
modules are imported only by the modules named.

``private_names`` (pyproject.toml): no module of ``containers`` imports a name that starts with ``_``
(a dunder such as ``__version__`` aside) from another module, wherever the import is (module level or
inside a function). What two modules share is public and named so: a check's internals (its helpers,
its caches) are reached by nothing outside its own module. import-linter runs it with the other
contracts (``lint-imports``; it puts the working directory on ``sys.path``, so run it from the root).
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output

__all__ = ["PrivateNamesContract", "SealedContract", "may_import_private", "private_imports"]


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module an ``import from`` in ``module`` names."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


_FROM_IMPORT = re.compile(r"\bfrom\b[\s.\w\\]*?\bimport\b")
_PRIVATE = re.compile(r"(?<!\w)_\w")


def _lines(source: str, start: int) -> Iterator[str]:
    """The lines of ``source`` from offset ``start`` on, without copying the rest of it."""
    while True:
        end = source.find("\n", start)
        if end < 0:
            yield source[start:]
            return
        yield source[start:end]
        start = end + 1


def _names_after(source: str, start: int) -> str:
    """The text of the names a ``from ... import`` imports, its ``import`` ending at ``start``: up to its closing
    parenthesis, or to the end of its line (past backslash continuations); comments left out."""
    names = []
    head = start
    while head < len(source) and source[head] in " \t\\\r\n":
        head += 1
    if source.startswith("(", head):
        for line in _lines(source, head + 1):
            code = line.split("#", 1)[0]
            names.append(code.split(")", 1)[0])
            if ")" in code:
                break
        return " ".join(names)
    for line in _lines(source, start):
        code = line.split("#", 1)[0]
        names.append(code)
        if not code.rstrip().endswith("\\"):
            break
    return " ".join(names)


def may_import_private(source: str) -> bool:
    """Whether ``source`` may hold a ``from ... import`` of a ``_`` name: never false when it does (a name
    imported stands after ``import``, in its parentheses or on its continued line), so that a module for which
    it is false need not be parsed (parsing every module was most of ``lint-imports``' time)."""
    return any(_PRIVATE.search(_names_after(source, m.end())) for m in _FROM_IMPORT.finditer(source))


def private_imports(module: str, path: Path, is_package: bool, root: str) -> list[str]:
    """``module:line imports _name from other.module`` for each private name it takes from another module of
    ``root``."""
    text = path.read_text(encoding="utf-8")
    if not may_import_private(text):
        return []
    tree = ast.parse(text, str(path))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        source = _resolve(module, is_package, node)
        if source == module or not (source == root or source.startswith(root + ".")):
            continue
        for alias in node.names:
            name = alias.name
            if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                found.append(f"{module}:{node.lineno} imports {name} from {source}")
    return found


def _source(root: str, module: str) -> tuple[Path, bool] | None:
    """The file of ``module`` and whether it is a package, found from ``root``'s directory without importing
    it (a module that fails to import, a planted import cycle, is still read)."""
    spec = importlib.util.find_spec(root)
    if spec is None or not spec.submodule_search_locations:
        return None
    base = Path(next(iter(spec.submodule_search_locations))).joinpath(*module.split(".")[1:])
    if (base / "__init__.py").is_file():
        return base / "__init__.py", True
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py"), False
    return None


class _ListedContract(Contract):
    """A contract whose check lists each broken import as one line in ``metadata["broken"]``."""

    def render_broken_contract(self, check: ContractCheck) -> None:
        broken: Any = check.metadata.get("broken", [])
        for line in broken:
            output.print_error(line, bold=False)
            output.new_line()


class PrivateNamesContract(_ListedContract):
    """No module of ``containers`` imports another module's private (``_``) name."""

    containers = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        containers: list[str] = list(self.containers)  # type: ignore[call-overload]
        broken: list[str] = []
        for module in sorted(graph.modules):
            root = next((c for c in containers if module == c or module.startswith(c + ".")), None)
            if root is None:
                continue
            found = _source(root, module)
            if found is not None:
                broken.extend(private_imports(module, found[0], found[1], root))
        return ContractCheck(kept=not broken, metadata={"broken": broken})


class SealedContract(_ListedContract):
    """The modules of each package of ``packages`` are imported (directly, wherever the import is) only by
    their package's own ``__init__`` and by ``importers``: a check's definition (``gpulabel.checks.builtin.x``)
    is reached through the registry's ``Check`` values, never by importing its module."""

    packages = fields.ListField(subfield=fields.StringField())
    importers = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        packages: list[str] = list(self.packages)  # type: ignore[call-overload]
        importers: set[str] = set(self.importers)  # type: ignore[call-overload]
        broken: list[str] = []
        for package in packages:
            for module in sorted(graph.find_descendants(package)):
                for importer in sorted(graph.find_modules_that_directly_import(module)):
                    if importer in importers or importer == package:
                        continue
                    lines = graph.get_import_details(importer=importer, imported=module)
                    where = ", ".join(str(d["line_number"]) for d in lines)
                    broken.append(f"{importer}:{where} imports {module} (sealed: only {', '.join(sorted(importers))})")
        return ContractCheck(kept=not broken, metadata={"broken": broken})
