"""The wheel and sdist: `python -m build` (the wheel built from the sdist), complete metadata, and a
wheel that works installed into a fresh virtual environment outside the repository."""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest
from tests.buildlock import in_tree_build

import gpulabel

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ("lab-cluster.yaml", "drifted-lab.yaml")


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sdist and wheel, as `python -m build` writes them (the wheel is built from the unpacked sdist)."""
    out = tmp_path_factory.mktemp("dist")
    with in_tree_build(REPO):  # egg_info rewrites src/gpulabel.egg-info: one build in the tree at a time
        res = run(sys.executable, "-m", "build", "--outdir", out, REPO, cwd=REPO)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return out


def wheel_of(dist: Path) -> Path:
    (wheel,) = dist.glob("gpulabel-*-py3-none-any.whl")
    return wheel


def test_the_wheel_carries_complete_metadata(dist: Path) -> None:
    wheel = wheel_of(dist)
    assert wheel.name == f"gpulabel-{gpulabel.__version__}-py3-none-any.whl"
    info = f"gpulabel-{gpulabel.__version__}.dist-info"
    with zipfile.ZipFile(wheel) as zf:
        meta = email.message_from_bytes(zf.read(f"{info}/METADATA"))
        entry_points = zf.read(f"{info}/entry_points.txt").decode()
        names = set(zf.namelist())
    assert meta["Name"] == "gpulabel"
    assert meta["Version"] == gpulabel.__version__
    assert meta["License-Expression"] == "Apache-2.0"
    assert f"{info}/licenses/LICENSE" in names
    assert meta["Requires-Python"] == ">=3.11"
    assert meta["Summary"]
    assert meta["Description-Content-Type"] == "text/markdown"
    classifiers = meta.get_all("Classifier", [])
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert "Typing :: Typed" in classifiers
    assert "gpulabel/py.typed" in names
    # exactly the modules under src/ (a stale setuptools build/ directory must not leak old ones in)
    sources = {p.relative_to(REPO / "src").as_posix() for p in (REPO / "src" / "gpulabel").rglob("*.py")}
    assert {n for n in names if n.endswith(".py")} == sources
    requires = meta.get_all("Requires-Dist", [])
    assert any(r.startswith("kubernetes") for r in requires)
    assert "gpulabel = gpulabel.cli.main:run" in entry_points
    assert "kubectl-gpulabel = gpulabel.cli.main:run" in entry_points


def test_the_sdist_holds_what_a_rebuild_needs(dist: Path) -> None:
    (sdist,) = dist.glob("gpulabel-*.tar.gz")
    root = f"gpulabel-{gpulabel.__version__}"
    with tarfile.open(sdist) as tf:
        names = set(tf.getnames())
    for name in ("LICENSE", "README.md", "pyproject.toml", "src/gpulabel/__init__.py", "src/gpulabel/py.typed"):
        assert f"{root}/{name}" in names


def test_the_wheel_installed_in_a_fresh_venv_outside_the_repository_runs_check(
    dist: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    place = tmp_path_factory.mktemp("installed")
    assert REPO not in place.parents
    venv.EnvBuilder(with_pip=True, clear=True).create(place / "venv")
    bin_dir = place / "venv" / "bin"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    res = run(
        bin_dir / "python",
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "-c",
        REPO / "constraints.txt",
        wheel_of(dist),
        cwd=place,
        env=env,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    res = run(bin_dir / "python", "-c", "import gpulabel; print(gpulabel.__file__)", cwd=place, env=env)
    assert Path(res.stdout.strip()).is_relative_to(place / "venv"), res.stdout

    for name in EXAMPLES:  # the example copied next to the installation, not read from the repository
        shutil.copy(REPO / "examples" / name, place / name)
        got = run(bin_dir / "gpulabel", "check", "--snapshot", name, cwd=place, env=env)
        want = run(sys.executable, "-m", "gpulabel", "check", "--snapshot", REPO / "examples" / name, cwd=REPO)
        assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr), name
    assert want.returncode == 1  # the drifted lab has findings

    version = run(bin_dir / "gpulabel", "--version", cwd=place, env=env)
    assert (version.returncode, version.stdout.strip()) == (0, f"gpulabel {gpulabel.__version__}")
    plugin = run(bin_dir / "kubectl-gpulabel", "--help", cwd=place, env=env)
    assert plugin.returncode == 0, plugin.stderr
    assert plugin.stdout.startswith("usage: ")

    # a new user's first mistakes, on the installed commands: one wrong usage per command family of
    # tests/unit/test_wrong_usage.py, each ending in the one line that names it (cli/usage.py is in the wheel)
    from tests.unit.test_wrong_usage import ROWS

    firsts = {family: (argv, line) for family, argv, line, _ in reversed(ROWS)}
    for family, (argv, line) in firsts.items():
        wrong = run(bin_dir / "gpulabel", *argv, cwd=place, env=env)
        assert (wrong.returncode, wrong.stderr.splitlines()[-1]) == (2, line), (family, wrong.stderr)
    kubectl_style = run(bin_dir / "kubectl-gpulabel", "chekc", cwd=place, env=env)
    assert (
        kubectl_style.stderr.splitlines()[-1] == "kubectl gpulabel: error: chekc: no such command (did you mean check?)"
    )
