"""The layers are folders, and the import contract in pyproject.toml keeps them honest.

These tests run import-linter on the real package (the contract holds) and on a
temporary copy with one planted upward import each (the contract catches it),
so a contract that silently stopped checking anything would fail here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(src: Path, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), "--no-cache", str(config)],
        cwd=src,
        env={"PYTHONPATH": f"{src}:{ROOT}", "PATH": "/usr/bin:/bin"},  # ROOT: the project's contract types (tools/)
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_package_keeps_its_import_contracts() -> None:
    done = _lint(ROOT / "src", ROOT / "pyproject.toml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "planted", "broken"),
    [
        ("k8s/labels.py", "import argparse", "gpulabel.k8s is not allowed to import argparse"),
        (
            "checks/audit/rules.py",
            "from gpulabel.cluster import client",
            "gpulabel.checks.audit.rules -> gpulabel.cluster.client",
        ),
        (
            "model/vocabulary.py",
            "from gpulabel.checks.audit import rules",
            "gpulabel.model.vocabulary -> gpulabel.checks.audit.rules",
        ),
        ("checks/audit/rules.py", "import kubernetes", "gpulabel.checks is not allowed to import kubernetes"),
        ("render/text.py", "from gpulabel.cli import context", "gpulabel.render.text -> gpulabel.cli.context"),
    ],
    ids=[
        "argparse in the Kubernetes mirrors is refused",
        "the API client in a check is refused",
        "a check imported by the model is refused",
        "the kubernetes library in a check is refused",
        "the CLI imported by a renderer is refused",
    ],
)
def test_a_planted_upward_import_breaks_the_contract(tmp_path: Path, module: str, planted: str, broken: str) -> None:
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "gpulabel", src / "gpulabel", ignore=shutil.ignore_patterns("__pycache__"))
    target = src / "gpulabel" / module
    target.write_text(
        target.read_text().replace(
            "from __future__ import annotations\n", f"from __future__ import annotations\n\n{planted}\n", 1
        )
    )
    done = _lint(src, ROOT / "pyproject.toml")
    assert done.returncode != 0
    assert broken in done.stdout, done.stdout


@pytest.mark.parametrize(
    ("module", "planted", "broken"),
    [
        ("cli/toolcmds.py", "from gpulabel.cli import main", "- .toolcmds -> .main"),
        ("model/vocabulary.py", "from gpulabel.model import changes", "- .vocabulary -> .changes"),
    ],
    ids=["the CLI's command modules importing its entry point", "a cycle inside the model"],
)
def test_a_planted_import_cycle_breaks_the_contract(tmp_path: Path, module: str, planted: str, broken: str) -> None:
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "gpulabel", src / "gpulabel", ignore=shutil.ignore_patterns("__pycache__"))
    target = src / "gpulabel" / module
    target.write_text(
        target.read_text().replace(
            "from __future__ import annotations\n", f"from __future__ import annotations\n\n{planted}\n", 1
        )
    )
    done = _lint(src, ROOT / "pyproject.toml")
    assert done.returncode != 0
    assert "No import cycle" in done.stdout and broken in done.stdout, done.stdout


@pytest.mark.parametrize(
    ("module", "planted", "broken"),
    [
        (
            "checks/engine/incremental/evaluator.py",
            "from gpulabel.checks.operands.rules import _missing_cause",
            "gpulabel.checks.engine.incremental.evaluator:11 imports _missing_cause from "
            "gpulabel.checks.operands.rules",
        ),
        (
            "render/report.py",
            "from ..checks.registry import _table",
            "gpulabel.render.report:16 imports _table from gpulabel.checks.registry",
        ),
    ],
    ids=["another check's helper", "a private name by a relative import"],
)
def test_a_planted_import_of_another_modules_private_name_breaks_the_contract(
    tmp_path: Path, module: str, planted: str, broken: str
) -> None:
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "gpulabel", src / "gpulabel", ignore=shutil.ignore_patterns("__pycache__"))
    target = src / "gpulabel" / module
    target.write_text(
        target.read_text().replace(
            "from __future__ import annotations\n", f"from __future__ import annotations\n\n{planted}\n", 1
        )
    )
    done = _lint(src, ROOT / "pyproject.toml")
    assert done.returncode != 0
    assert "internals are its own" in done.stdout and broken in " ".join(done.stdout.split()), done.stdout


def _planted(tmp_path: Path, module: str, planted: str) -> subprocess.CompletedProcess[str]:
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "gpulabel", src / "gpulabel", ignore=shutil.ignore_patterns("__pycache__"))
    target = src / "gpulabel" / module
    text = target.read_text()
    assert "from __future__ import annotations\n" in text
    target.write_text(
        text.replace("from __future__ import annotations\n", f"from __future__ import annotations\n\n{planted}\n", 1)
    )
    return _lint(src, ROOT / "pyproject.toml")


@pytest.mark.parametrize(
    ("module", "planted", "contract", "broken"),
    [
        (
            "app/report.py",
            "from gpulabel.checks.operands import check",
            "definition is its own",
            "gpulabel.app.report:5 imports gpulabel.checks.operands.check",
        ),
        (
            "checks/upgrade/check.py",
            "from gpulabel.checks.mig import check",
            "definition is its own",
            "gpulabel.checks.upgrade.check:6 imports gpulabel.checks.mig.check",
        ),
        (
            "checks/engine/incremental/evaluator.py",
            "from gpulabel.checks.operands import rules",
            "engine names no check",
            "imports gpulabel.checks.operands.rules (the engine imports no check)",
        ),
        (
            "checks/engine/judging.py",
            "from gpulabel.checks.health import rules",
            "engine names no check",
            "imports gpulabel.checks.health.rules (the engine imports no check)",
        ),
        (
            "checks/capacity/rules.py",
            "from gpulabel.checks.pending import specrows",
            "engine names no check",
            "gpulabel.checks.capacity.rules:12 imports gpulabel.checks.pending.specrows (not a named shared helper)",
        ),
        (
            "checks/engine/definition.py",
            "BUILTIN = __import__('importlib').import_module('gpulabel.checks.registry')",
            "graph sees",
            "gpulabel.checks.engine.definition:22 imports dynamically (import_module())",
        ),
        (
            "checks/engine/definition.py",
            "from importlib import import_module",
            "graph sees",
            "gpulabel.checks.engine.definition:22 imports dynamically (importlib.import_module)",
        ),
    ],
    ids=[
        "a command reaching into a check's definition",
        "one definition importing another",
        "the incremental evaluator naming a check",
        "the judging naming a check's rules",
        "a check's room reaching into another room's internals",
        "the options finding the registry by name at run time (the old hidden circle)",
        "importlib imported to import by name",
    ],
)
def test_a_planted_import_of_a_checks_internals_breaks_the_contract(
    tmp_path: Path, module: str, planted: str, contract: str, broken: str
) -> None:
    done = _planted(tmp_path, module, planted)
    out = " ".join(done.stdout.split())
    assert done.returncode != 0
    assert f"{contract}" in out and "BROKEN" in out and broken in out, done.stdout


def test_the_rooms_of_checks_are_folders_and_the_registry_names_every_check() -> None:
    """Each check is one folder under checks/ whose ``check`` module defines it; the registry lists exactly those."""
    from gpulabel.checks.registry import CHECKS

    checks = ROOT / "src" / "gpulabel" / "checks"
    defined = sorted(p.parent.name for p in checks.glob("*/check.py"))
    assert defined == sorted(c.name for c in CHECKS)
    # beside the rooms only the roster: the registry, the catalogue of every reason, diff (runs the registry twice)
    assert sorted(p.name for p in checks.glob("*.py")) == ["__init__.py", "diff.py", "reasons.py", "registry.py"]


PRIVATE_IMPORTS = [
    "from a import _x",
    "from a import b, _x",
    "from . import _x",
    "from.a import _x",
    "from .. a import _x",
    "from a import (\n    b,  # see f()\n    _x,\n)",
    "from a import (b,\n  # a comment (with parentheses)\n  _x)",
    "from a import \\\n    (_x)",
    "from a \\\n    import b, \\\n    _x",
    "def f():\n    if x:\n        from a import _x",
    "import b; from a import c as d, _x",
    "# taken from\nfrom a import _x",
    "class C:\n    try:\n        pass\n    except E:\n        from a import (\n            _x as y\n        )",
]


@pytest.mark.parametrize("source", PRIVATE_IMPORTS)
def test_the_text_filter_keeps_every_module_that_imports_a_private_name(source: str) -> None:
    import ast

    from tools.importcontracts import may_import_private

    names = [a.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom) for a in n.names]
    assert "_x" in names  # the case is what it says
    assert may_import_private(source)


@pytest.mark.parametrize(
    "source",
    [
        "from a import b\n\ndef _x():\n    return _y",
        "from a import (\n    b,  # not _x\n    c,\n)\n_x = 1",
        "import _x\nfrom a import b as c",
        "from a._x import b",
    ],
)
def test_the_text_filter_skips_a_module_without_one(source: str) -> None:
    from tools.importcontracts import may_import_private

    assert not may_import_private(source)
