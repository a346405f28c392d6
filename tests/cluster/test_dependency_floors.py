"""Every declared minimum version works: the floors of pyproject.toml, installed alone, against labcluster.

A fresh venv gets exactly ``pkg==floor`` for each runtime dependency (pip
resolves only what those pull in) and gpulabel with ``--no-deps``. Live
commands then run in it against the real API server: their output must be
what the development install prints for the same cluster, a sync must write
through the floor's HTTP stack, and ``sync --watch`` must serve its metrics
and restore a label from a watch event. Needs PyPI (or a pip cache), as
scripts/setup.sh does.

To try a lower floor before declaring it: ``GPULABEL_FLOORS=kubernetes==24.2.0``
(comma-separated ``name==version``) replaces those floors for one run.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tomllib
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from gpulabel_run import gpulabel
from labcluster_support import REPO, LabCluster, wait_for
from test_deploy_cluster import free_port, metric
from tests.buildlock import in_tree_build


def floors() -> dict[str, str]:
    """``name -> floor`` of every runtime dependency (each must declare one, as ``>=``)."""
    out: dict[str, str] = {}
    for requirement in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9._-]+)>=([0-9][0-9.]*)", requirement.replace(" ", ""))
        assert match, f"pyproject.toml: {requirement!r} has no floor (name>=version)"
        out[match.group(1)] = match.group(2)
    for pin in filter(None, os.environ.get("GPULABEL_FLOORS", "").split(",")):
        name, _, version = pin.partition("==")
        wanted = next((n for n in out if _normal(n) == _normal(name)), None)
        assert wanted and version, f"GPULABEL_FLOORS: {pin!r} is not name==version of a runtime dependency"
        out[wanted] = version
    return out


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _release(version: str) -> tuple[int, ...]:
    """``31`` and ``31.0.0`` are the same release."""
    parts = [int(p) for p in version.split(".")]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


@pytest.fixture(scope="module")
def floor_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("floors") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    wanted = floors()
    done = subprocess.run([*pip, *(f"{n}=={v}" for n, v in wanted.items())], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    with in_tree_build(REPO):  # pip builds in the tree (egg_info): one build there at a time
        done = subprocess.run([*pip, "--no-deps", str(REPO)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    freeze = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True
    ).stdout
    installed = dict(line.split("==", 1) for line in freeze.splitlines() if "==" in line)
    installed = {_normal(k): v for k, v in installed.items()}
    got = {n: _release(installed.get(_normal(n), "0")) for n in wanted}
    assert got == {n: _release(v) for n, v in wanted.items()}, freeze
    print("\nfloors installed:", ", ".join(f"{n}=={v}" for n, v in wanted.items()))
    return venv


def floor_gpulabel(venv: Path, kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "gpulabel"), *args, "--kubeconfig", str(kubeconfig)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",  # never the source tree: the venv's own install runs
    )


@pytest.fixture
def run_id() -> str:
    return f"floor-{uuid.uuid4().hex[:6]}"


def test_the_floor_venv_has_the_declared_minimums_and_no_more_of_ours(floor_venv: Path) -> None:
    code = "import gpulabel, sys; print(gpulabel.__file__)"
    where = subprocess.run([str(floor_venv / "bin" / "python"), "-c", code], capture_output=True, text=True, cwd="/")
    assert where.stdout.startswith(str(floor_venv)), where


@pytest.mark.parametrize(
    "command",
    [
        ["audit"],
        ["check"],
        ["audit", "-o", "yaml"],
        ["gpus", "-o", "json"],
        ["devices"],
        ["cel", 'device.driver == "gpu.nvidia.com"'],
        ["sources", "--node", "{node}"],
    ],
    ids=lambda c: " ".join(c),
)
def test_live_commands_print_the_same_on_the_floors(
    labcluster: LabCluster, make_node: Any, floor_venv: Path, run_id: str, command: list[str]
) -> None:
    node = f"{run_id}-gpu"
    make_node(node, {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "two", "example.com/run": run_id})
    args = [a.format(node=node) for a in command]
    if command[0] in ("audit", "check", "gpus"):
        args += ["-l", f"example.com/run={run_id}"]
    mine = gpulabel(labcluster.kubeconfig, *args)
    theirs = floor_gpulabel(floor_venv, labcluster.kubeconfig, *args)
    assert mine.returncode in (0, 1), mine.stderr
    assert (theirs.returncode, theirs.stdout, theirs.stderr) == (mine.returncode, mine.stdout, mine.stderr)


def test_sync_writes_and_watches_on_the_floors(
    labcluster: LabCluster, make_node: Any, floor_venv: Path, run_id: str, tmp_path: Path
) -> None:
    node = f"{run_id}-sync"
    make_node(node, {"example.com/run": run_id})
    files = tmp_path / "features.d"
    files.mkdir()
    (files / f"{node}.env").write_text("example.com/floor=yes\n")
    once = floor_gpulabel(floor_venv, labcluster.kubeconfig, "sync", str(files))
    assert (once.returncode, once.stdout) == (0, f"{node} example.com/floor yes\n"), once.stderr
    assert labcluster.get("node", node)["metadata"]["labels"]["example.com/floor"] == "yes"

    port = free_port()
    watch = subprocess.Popen(
        [
            *(str(floor_venv / "bin" / "gpulabel"), "sync", str(files), "--watch"),
            *("--metrics-port", str(port), "--kubeconfig", str(labcluster.kubeconfig)),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        wait_for(lambda: _serving(port), timeout=30, message="for the floor controller's /metrics")
        labcluster.kubectl("label", "--overwrite", "node", node, "example.com/floor=drifted")
        wait_for(
            lambda: labcluster.get("node", node)["metadata"]["labels"]["example.com/floor"] == "yes",
            timeout=20,
            message="for the floor controller to restore the label from a watch event",
        )
        series = f'gpulabel_labels_restored_total{{key="example.com/floor",node="{node}"}}'
        wait_for(lambda: metric(port, series) == 1.0, timeout=10, message=f"for {series} 1")
    finally:
        watch.send_signal(signal.SIGTERM)
        _, err = watch.communicate(timeout=30)
    assert watch.returncode == 0, err


def _serving(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
            return resp.status == 200
    except OSError:
        return False
