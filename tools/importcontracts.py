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
import fnmatch
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output

__all__ = [
    "PrivateNamesContract",
    "RoomsContract",
    "SealedContract",
    "StaticImportsContract",
    "dynamic_imports",
    "may_import_private",
    "private_imports",
]


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


def _sources(graph: ImportGraph, containers: list[str]) -> Iterator[tuple[str, str, Path, bool]]:
    """Each module of the graph under one of ``containers``: its name, its container, its file and whether it is a
    package (read from the container's top package's directory, without importing it)."""
    for module in sorted(graph.modules):
        root = next((c for c in containers if module == c or module.startswith(c + ".")), None)
        if root is None:
            continue
        found = _source(root.split(".")[0], module)
        if found is not None:
            yield module, root, found[0], found[1]


def _lines_of(graph: ImportGraph, importer: str, imported: str) -> str:
    """The lines of ``importer`` that import ``imported``: ``12, 40``."""
    return ", ".join(str(d["line_number"]) for d in graph.get_import_details(importer=importer, imported=imported))


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
        for module, root, path, is_package in _sources(graph, containers):
            broken.extend(private_imports(module, path, is_package, root))
        return ContractCheck(kept=not broken, metadata={"broken": broken})


class SealedContract(_ListedContract):
    """The modules that match ``modules`` (fnmatch patterns: ``gpulabel.checks.*.check``) are imported (directly,
    wherever the import is) only by their own package's ``__init__`` and by ``importers``: a check's definition is
    reached through the registry's ``Check`` values, never by importing its module."""

    modules = fields.ListField(subfield=fields.StringField())
    importers = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        patterns: list[str] = list(self.modules)  # type: ignore[call-overload]
        importers: set[str] = set(self.importers)  # type: ignore[call-overload]
        broken: list[str] = []
        for module in sorted(m for m in graph.modules if any(fnmatch.fnmatchcase(m, p) for p in patterns)):
            package = module.rpartition(".")[0]
            for importer in sorted(graph.find_modules_that_directly_import(module)):
                if importer in importers or importer == package:
                    continue
                where = _lines_of(graph, importer, module)
                broken.append(f"{importer}:{where} imports {module} (sealed: only {', '.join(sorted(importers))})")
        return ContractCheck(kept=not broken, metadata={"broken": broken})


def _room(container: str, module: str) -> str | None:
    """The room (``gpulabel.checks.pending``) of a module of ``container``, or None for a module of the container
    itself (``gpulabel.checks.registry``: the roster, beside the rooms)."""
    rest = module[len(container) + 1 :].split(".") if module.startswith(container + ".") else []
    return f"{container}.{rest[0]}" if len(rest) > 1 else None


class RoomsContract(_ListedContract):
    """The folders of ``container`` are rooms: ``engine`` (what a check is and how checks are run, judged and kept)
    imports no module of the container outside itself; any other room imports another room's module only when it
    matches ``shared`` (fnmatch patterns: the named shared helpers). Modules of the container itself (the registry,
    which names every check) are not rooms and may import any."""

    container = fields.StringField()
    engine = fields.StringField()
    shared = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        container, engine = str(self.container), str(self.engine)
        shared: list[str] = list(self.shared)  # type: ignore[call-overload]
        broken: list[str] = []
        for importer in sorted(graph.find_descendants(container)):
            room = _room(container, importer)
            if room is None:
                continue
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                other = _room(container, imported) if imported.startswith(container + ".") else None
                if imported.startswith(container + ".") and other != room:
                    if room == engine:
                        why = "the engine imports no check"
                    elif other == engine or any(fnmatch.fnmatchcase(imported, p) for p in shared):
                        continue
                    else:
                        why = "not a named shared helper"
                    where = _lines_of(graph, importer, imported)
                    broken.append(f"{importer}:{where} imports {imported} ({why})")
        return ContractCheck(kept=not broken, metadata={"broken": broken})


_DYNAMIC = ("import_module", "__import__")


def dynamic_imports(module: str, path: Path) -> list[str]:
    """``module:line imports dynamically (...)`` for each ``importlib.import_module`` or ``__import__`` call and
    each import of ``importlib`` other than ``importlib.resources``: an import the graph cannot see, so a circle it
    closes would be hidden from the other contracts."""
    text = path.read_text(encoding="utf-8")
    if "import" not in text:
        return []
    found = []
    for node in ast.walk(ast.parse(text, str(path))):
        what = ""
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in _DYNAMIC:
                what = f"{name}()"
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name == "importlib" or a.name.startswith("importlib.")]
            what = ", ".join(n for n in names if not n.startswith("importlib.resources"))
        elif isinstance(node, ast.ImportFrom) and node.module in ("importlib", "importlib.util"):
            names = [a.name for a in node.names if a.name != "resources"]
            what = ", ".join(f"{node.module}.{n}" for n in names)
        if what:
            found.append(f"{module}:{node.lineno} imports dynamically ({what})")
    return found


class StaticImportsContract(_ListedContract):
    """No module of ``containers`` imports a module by name at run time (``importlib.import_module``,
    ``__import__``): every import is one the graph sees, so no circle hides from the layers and cycles contracts."""

    containers = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        containers: list[str] = list(self.containers)  # type: ignore[call-overload]
        broken: list[str] = []
        for module, _, path, _ in _sources(graph, containers):
            broken.extend(dynamic_imports(module, path))
        return ContractCheck(kept=not broken, metadata={"broken": broken})
