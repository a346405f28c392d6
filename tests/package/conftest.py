"""Fixtures for the packaging tests: the wheel, the Helm chart, and the kustomize base it mirrors.

The Helm CLI (tools/helm/build) and labcluster's kubectl (labcluster/build) are built when needed
(both builds are cached); a failed build makes the tests error with the reason, never skip.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "cluster"))  # labcluster_support, helm_support

from helm_support import HelmError, build_helm  # noqa: E402
from labcluster_support import LabClusterError, build  # noqa: E402


@pytest.fixture(scope="session")
def helm() -> Path:
    try:
        return build_helm()
    except HelmError as exc:
        pytest.fail(f"helm is unavailable: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def labcluster_binary() -> Path:
    """labcluster's multi-call binary (`labcluster kubectl kustomize ...`); no control plane is started."""
    try:
        return build()
    except LabClusterError as exc:
        pytest.fail(f"labcluster is unavailable: {exc}", pytrace=False)
