"""Build and drive the Helm CLI (tools/helm, helm.sh/helm/v4 from the Go module proxy) from tests.

Like labcluster_support: nothing here skips; a failed build raises HelmError with the reason.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
HELM_DIR = REPO / "tools" / "helm"
HELM = HELM_DIR / "bin" / "helm"
CHART = REPO / "deploy" / "helm" / "gpulabel"


class HelmError(RuntimeError):
    """tools/helm could not be built or a helm command failed."""


def build_helm(timeout: float = 3600) -> Path:
    """Run tools/helm/build (a no-op when the binary is up to date)."""
    try:
        proc = subprocess.run(
            [str(HELM_DIR / "build")], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise HelmError(f"tools/helm/build could not run: {exc}") from exc
    if proc.returncode != 0:
        raise HelmError(f"tools/helm/build failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    if not HELM.is_file():
        raise HelmError(f"tools/helm/build succeeded but {HELM} is missing")
    return HELM


def run_helm(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(HELM), *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise HelmError(f"helm {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc


def template(*args: str, namespace: str = "gpulabel") -> str:
    """`helm template gpulabel deploy/helm/gpulabel --namespace NS ARGS...` as YAML text."""
    return run_helm("template", "gpulabel", str(CHART), "--namespace", namespace, *args).stdout


def objects(text: str) -> list[dict[str, Any]]:
    """The objects of a multi-document YAML stream, empty documents left out."""
    return [doc for doc in yaml.safe_load_all(text) if doc]
