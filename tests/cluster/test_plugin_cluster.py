"""`kubectl gpulabel ...`: kubectl finds the kubectl-gpulabel plugin on PATH and passes the flags through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from labcluster_support import LabCluster


def test_kubectl_runs_gpulabel_as_a_plugin(labcluster: LabCluster, make_node: Any) -> None:
    make_node("plugin-gpu", {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-L4"})
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    res = subprocess.run(
        [str(labcluster.binary), "kubectl", "gpulabel", "audit", "--kubeconfig", str(labcluster.kubeconfig)],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert res.returncode == 1, res.stderr
    lines = [line for line in res.stdout.splitlines() if line.startswith("plugin-gpu ")]
    assert lines == ["plugin-gpu nvidia.com/gpu.count missing", "plugin-gpu nvidia.com/gpu.memory missing"]
