"""kubectl krew installs gpulabel from a local index, and ``kubectl gpulabel version`` runs against labcluster.

krew is built from the Go module proxy (tools/krew/build, cached like tools/helm). The index is a
local git repository holding ``plugins/gpulabel.yaml`` (tools/krew/archive.py's manifest) whose URI
points at a local HTTP server serving the archive; krew clones the index, downloads the archive,
checks its sha256 and links ``kubectl-gpulabel`` into ``$KREW_ROOT/bin``. kubectl is labcluster's
(``labcluster kubectl``: k8s.io/kubectl's own command with its plugin handler), which finds the plugin on
PATH. The zipapp runs with the ``python3`` first on PATH: this virtualenv's, which has the dependencies.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from labcluster_support import BINARY, REPO, LabCluster

KREW_DIR = REPO / "tools" / "krew"
KREW = KREW_DIR / "bin" / "krew"


@pytest.fixture(scope="module")
def krew() -> Path:
    proc = subprocess.run([str(KREW_DIR / "build")], capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return KREW


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTP server on 127.0.0.1 serving ``tmp_path/www``: its base URL and the directory."""
    www = tmp_path / "www"
    www.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(www)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", www
    finally:
        server.shutdown()
        server.server_close()


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    ident = [
        "-c",
        "user.name=gpulabel-test",
        "-c",
        "user.email=test@gpulabel.invalid",
        "-c",
        "init.defaultBranch=master",
    ]
    subprocess.run(["git", *ident, *args], cwd=cwd, check=True, capture_output=True, env=env)


def test_krew_installs_gpulabel_from_a_local_index_and_kubectl_runs_it(
    krew: Path, served: tuple[str, Path], labcluster: LabCluster, tmp_path: Path
) -> None:
    from tools.krew.archive import build

    base, www = served
    archive, plugin = build(www, f"{base}/kubectl-gpulabel.tar.gz")
    archive.rename(www / "kubectl-gpulabel.tar.gz")
    index = tmp_path / "index"
    (index / "plugins").mkdir(parents=True)
    (index / "plugins" / "gpulabel.yaml").write_text(plugin.read_text())
    _git(index, "init", "-q")
    _git(index, "add", ".")
    _git(index, "commit", "-q", "-m", "gpulabel")

    root = tmp_path / "krew-root"
    env = {
        **os.environ,
        "KREW_ROOT": str(root),
        "KREW_NO_UPGRADE_CHECK": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "PATH": os.pathsep.join([str(root / "bin"), str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }

    def krew_run(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(krew), *args], capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL
        )
        print(f"$ krew {' '.join(args)}\n{proc.stdout}{proc.stderr}")
        return proc

    added = krew_run("index", "add", "local", str(index))
    assert added.returncode == 0, added.stderr
    installed = krew_run("install", "local/gpulabel")
    assert installed.returncode == 0, installed.stderr
    assert (root / "bin" / "kubectl-gpulabel").exists()
    listed = krew_run("list")
    assert "local/gpulabel" in listed.stdout or "gpulabel" in listed.stdout

    run = subprocess.run(
        [str(BINARY), "kubectl", "gpulabel", "version", "--kubeconfig", str(labcluster.kubeconfig)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    print(run.stdout, run.stderr)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0].startswith("Client Version: ")
    assert "Server Version: v1.37" in run.stdout
