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


def test_kubectl_refuses_its_own_flags_before_the_plugin_name_and_the_plugin_reads_kubeconfig_instead(
    labcluster: LabCluster, make_node: Any
) -> None:
    """kubectl's rule (k8s.io/kubectl pkg/cmd/plugin.go HandlePluginCommand), as docs/install.md says it: the plugin
    is looked up by the words before the first flag, so a flag before its name never reaches it; KUBECONFIG does."""
    make_node("plugin-env-gpu", {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-L4"})
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("KUBECONFIG", None)
    kubectl = [str(labcluster.binary), "kubectl"]
    kubeconfig = str(labcluster.kubeconfig)

    def run(argv: list[str], extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, capture_output=True, text=True, env={**env, **extra}, stdin=subprocess.DEVNULL, timeout=120
        )

    before = run([*kubectl, "--kubeconfig", kubeconfig, "gpulabel", "audit"], {})
    assert before.returncode == 1 and before.stdout == ""
    assert before.stderr.strip() == "Error: flags cannot be placed before plugin name: --kubeconfig", before.stderr
    by_env = run([*kubectl, "gpulabel", "audit"], {"KUBECONFIG": f"{kubeconfig}.missing{os.pathsep}{kubeconfig}"})
    assert by_env.returncode == 1, by_env.stderr
    lines = [line for line in by_env.stdout.splitlines() if line.startswith("plugin-env-gpu ")]
    assert lines == ["plugin-env-gpu nvidia.com/gpu.count missing", "plugin-env-gpu nvidia.com/gpu.memory missing"]
