"""The dependencies say the truth: declared = imported, and constraints.txt = what is installed.

- every runtime dependency in pyproject.toml is imported somewhere in src/;
- every module src/ imports is the standard library, gpulabel, or a declared
  runtime dependency (not something another package happens to pull in);
- every name constraints.txt pins is installed here, at that version, and
  every runtime dependency is pinned.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "gpulabel"


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return _normal(match.group(0))


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {_name(r) for r in project["dependencies"]}


@functools.cache
def _imported() -> dict[str, str]:
    """Top-level module -> a file importing it, for every non-stdlib, non-gpulabel import in src/."""
    found: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("gpulabel", "__future__"):
                    found.setdefault(top, str(path.relative_to(ROOT)))
    return found


@functools.cache
def _providers() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def _distributions_of(module: str) -> set[str]:
    return {_normal(d) for d in _providers().get(module, [])}


def test_every_declared_dependency_is_imported() -> None:
    imported = {dist for module in _imported() for dist in _distributions_of(module)}
    assert _declared() - imported == set()


def test_every_import_is_declared() -> None:
    undeclared = {module: where for module, where in _imported().items() if not _distributions_of(module) & _declared()}
    assert undeclared == {}


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep, f"constraints.txt: {line!r} is not name==version"
            pins[_normal(name)] = version
    return pins


def test_every_pinned_package_is_installed_at_its_version() -> None:
    installed = {_normal(d.metadata["Name"]): d.version for d in metadata.distributions()}
    wrong = {name: (pin, installed.get(name)) for name, pin in _pins().items() if installed.get(name) != pin}
    assert wrong == {}, "pinned (version, installed): regenerate constraints.txt from a fresh install"


def test_every_runtime_dependency_is_pinned() -> None:
    assert _declared() - _pins().keys() == set()
