"""Fixtures for tests that run against a real local control plane (labcluster).

The ``labcluster`` session fixture builds labcluster/bin/labcluster when
needed (labcluster/build is cached) and starts etcd, kube-apiserver,
kube-scheduler, kube-controller-manager and kwok in a temporary directory.
The ``gpu_operator`` session fixture is a second such cluster in which the
real NVIDIA GPU Operator runs as well (labcluster/gpu-operator/build, cached),
with the module's sample ClusterPolicy. Build or start failures make the
tests error with the reason.

When labcluster has never been built (labcluster/bin/labcluster is missing:
a cold build compiles Kubernetes, ~20 min), the tests here are skipped with
one line saying so, and likewise the GPU Operator's tests when its binary is
missing; ``GPULABEL_REQUIRE_CLUSTER=1`` (set by scripts/test.sh, what CI
runs) turns that into an error instead, so CI never passes by skipping.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from labcluster_support import (
    BINARY,
    GPU_OPERATOR_BINARY,
    LabCluster,
    LabClusterError,
    build,
    build_gpu_operator,
    gpu_node_manifest,
    node_is_ready,
    node_manifest,
    wait_for,
)

HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cluster: runs against the labcluster control plane")


NOT_BUILT = "labcluster is not built: run labcluster/build (a cold build compiles Kubernetes, ~20 min)"
OPERATOR_NOT_BUILT = "the GPU Operator is not built: run labcluster/gpu-operator/build (cold: 5-8 min)"


def _missing(binary: Path) -> bool:
    return not os.access(binary, os.X_OK)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.cluster)
    if os.environ.get("GPULABEL_REQUIRE_CLUSTER") == "1" and any(item.get_closest_marker("cluster") for item in items):
        for why, binary in ((NOT_BUILT, BINARY), (OPERATOR_NOT_BUILT, GPU_OPERATOR_BINARY)):
            if _missing(binary):
                raise pytest.UsageError(f"{why} (GPULABEL_REQUIRE_CLUSTER=1)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip before any fixture starts a cluster, from this one place (pytest -ra folds it into one line)."""
    if HERE not in Path(item.path).resolve().parents:
        return
    if _missing(BINARY):
        pytest.skip(NOT_BUILT)
    if {"gpu_operator", "make_gpu_node"} & set(getattr(item, "fixturenames", ())) and _missing(GPU_OPERATOR_BINARY):
        pytest.skip(OPERATOR_NOT_BUILT)


@pytest.fixture(scope="session")
def labcluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabCluster]:
    try:
        binary = build()
        cluster = LabCluster.start(tmp_path_factory.mktemp("labcluster"), binary)
    except LabClusterError as exc:
        pytest.fail(f"labcluster is unavailable: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def gpu_operator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabCluster]:
    """A labcluster with the real GPU Operator running (namespace ``gpu-operator``).

    The ClusterPolicy is the operator module's sample, ``gpu-cluster-policy``;
    tests that change it restore it (see ``cluster_policy``).
    """
    try:
        binary = build()
        build_gpu_operator()
        cluster = LabCluster.start(tmp_path_factory.mktemp("gpuop"), binary, gpu_operator=True)
    except LabClusterError as exc:
        pytest.fail(f"labcluster with the GPU Operator is unavailable: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def wait() -> Callable[..., Any]:
    """``wait_for(predicate, timeout=30)`` as a fixture."""
    return wait_for


def _dns_label(text: str, limit: int = 50) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:limit].rstrip("-")


@pytest.fixture
def ns(labcluster: LabCluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace for this test, deleted afterwards."""
    name = f"t-{_dns_label(request.node.name, 40)}-{uuid.uuid4().hex[:5]}"
    labcluster.kubectl("create", "namespace", name)
    wait_for(
        lambda: labcluster.kubectl("get", "serviceaccount", "default", "-n", name, check=False).returncode == 0,
        timeout=30,
        message=f"for ServiceAccount {name}/default",
    )
    yield name
    labcluster.kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found")


MakeNode = Callable[..., dict[str, Any]]


@pytest.fixture
def make_node(labcluster: LabCluster) -> Iterator[MakeNode]:
    """``make_node(name, labels=None, taints=None, unschedulable=False, ready=True)``.

    Creates a Node (kwok plays its kubelet), waits until it is Ready and its
    not-ready taint is gone (unless ready=False), and deletes it after the
    test. Nodes are cluster-scoped: give them names unique to the test.
    """
    created: list[str] = []

    def make(
        name: str,
        labels: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, str]] | None = None,
        unschedulable: bool = False,
        ready: bool = True,
    ) -> dict[str, Any]:
        labcluster.apply(node_manifest(name, labels, taints, unschedulable))
        created.append(name)
        if not ready:
            return labcluster.get("node", name)  # type: ignore[no-any-return]

        def ready_node() -> dict[str, Any] | None:
            node: dict[str, Any] = labcluster.get("node", name)
            return node if node_is_ready(node) else None

        return wait_for(ready_node, timeout=60, message=f"for node {name} to become Ready")

    yield make
    if created:
        labcluster.kubectl("delete", "node", *created, "--wait=false", "--ignore-not-found")


@pytest.fixture
def make_gpu_node(gpu_operator: LabCluster) -> Iterator[MakeNode]:
    """``make_gpu_node(name, labels=None, taints=None, gpu=True, gpus=None, **nodeinfo)`` on the operator's cluster.

    A Node with NFD's NVIDIA PCI, kernel and OS labels (``gpu=False``: kernel
    and OS only) and ``status.nodeInfo.containerRuntimeVersion`` set, as the
    operator's node labeller needs; waits until Ready, deleted after the test.
    """
    created: list[str] = []

    def make(
        name: str,
        labels: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, str]] | None = None,
        gpu: bool = True,
        **nodeinfo: Any,
    ) -> dict[str, Any]:
        gpu_operator.apply(gpu_node_manifest(name, labels, taints, gpu=gpu, **nodeinfo))
        created.append(name)

        def ready_node() -> dict[str, Any] | None:
            node: dict[str, Any] = gpu_operator.get("node", name)
            return node if node_is_ready(node) else None

        return wait_for(ready_node, timeout=60, message=f"for node {name} to become Ready")

    yield make
    if created:
        gpu_operator.kubectl("delete", "node", *created, "--wait=false", "--ignore-not-found")
