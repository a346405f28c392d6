"""docs/health.md's labcluster recipe, pasted as a reader would: it prints what the page shows.

The ``sh`` block after the ``<!-- recipe: labcluster`` mark runs in bash with ``kubectl`` being
``labcluster kubectl`` and ``KUBECONFIG`` the session cluster's (as the page tells the reader to set up); its
standard output, less kubectl's own lines, must equal the ``text`` block that follows it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from labcluster_support import LabCluster

ROOT = Path(__file__).resolve().parents[2]
RECIPE = re.compile(r"<!-- recipe: labcluster[^\n]*-->\n```sh\n(.*?)```\n.*?```text\n(.*?)```", re.S)


def test_the_health_recipe_prints_what_docs_health_md_shows(labcluster: LabCluster, tmp_path: Path) -> None:
    found = RECIPE.search((ROOT / "docs" / "health.md").read_text())
    assert found is not None, "docs/health.md has no labcluster recipe"
    recipe, expected = found[1], found[2].splitlines()
    shims = tmp_path / "bin"
    shims.mkdir()
    kubectl = shims / "kubectl"
    kubectl.write_text(f'#!/bin/sh\nexec "{labcluster.binary}" kubectl "$@"\n')
    kubectl.chmod(0o755)
    path = os.pathsep.join((str(shims), str(Path(sys.executable).parent), os.environ.get("PATH", "")))
    env = {**os.environ, "PATH": path, "KUBECONFIG": str(labcluster.kubeconfig)}
    try:
        done = subprocess.run(
            ["bash", "-e", "-c", recipe],  # the last pipeline ends in grep: check exits 1 on findings
            capture_output=True,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        kubectl_said = ("node/h100-lab created", "node/h100-lab condition met", "node/h100-lab patched")
        printed = [line for line in done.stdout.splitlines() if line not in kubectl_said]
        assert printed == expected, "\n".join(["printed:", *printed, "stderr:", done.stderr])
    finally:
        labcluster.kubectl("delete", "node", "h100-lab", "--wait=false", "--ignore-not-found")
