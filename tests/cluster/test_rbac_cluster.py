"""Least privilege: each command works with exactly its ServiceAccount's ClusterRole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from gpulabel_run import gpulabel
from labcluster_support import LabCluster, namespace_usable

RBAC = Path(__file__).resolve().parents[2] / "deploy" / "rbac"


@pytest.fixture(scope="module")
def kubeconfig_for(labcluster: LabCluster, tmp_path_factory: pytest.TempPathFactory) -> Any:
    # another file on this session's cluster may have deleted namespace gpulabel just before, without waiting
    namespace_usable(labcluster, "gpulabel")
    labcluster.kubectl("apply", "-k", str(RBAC))
    admin = yaml.safe_load(labcluster.kubeconfig.read_text())
    cluster = admin["clusters"][0]
    directory = tmp_path_factory.mktemp("rbac")

    def make(account: str) -> Path:
        token = labcluster.kubectl("create", "token", account, "-n", "gpulabel", "--duration=1h").stdout.strip()
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [cluster],
            "users": [{"name": account, "user": {"token": token}}],
            "contexts": [{"name": account, "context": {"cluster": cluster["name"], "user": account}}],
            "current-context": account,
        }
        path = directory / f"{account}.kubeconfig"
        path.write_text(yaml.safe_dump(config))
        return path

    return make


def test_read_only_checks_work_with_the_readonly_role(kubeconfig_for: Any) -> None:
    config = kubeconfig_for("gpulabel-readonly")
    for command in (["audit"], ["operands"], ["check"], ["sources", "--node", "labcluster-probe-does-not-exist"]):
        res = gpulabel(config, *command)
        assert "forbidden" not in res.stderr, (command, res.stderr)
        assert "Traceback" not in res.stderr


def test_sync_with_the_readonly_role_names_the_forbidden_verb(
    kubeconfig_for: Any, make_node: Any, tmp_path: Path
) -> None:
    make_node("rbac-node", {"example.com/a": "0"})
    (tmp_path / "rbac-node.env").write_text("example.com/a=1\n")
    res = gpulabel(kubeconfig_for("gpulabel-readonly"), "sync", str(tmp_path))
    assert res.returncode == 2
    assert res.stdout == ""
    (line,) = res.stderr.splitlines()
    assert "403" in line and 'cannot patch resource "nodes"' in line


def test_sync_works_with_the_sync_role_and_nothing_more(kubeconfig_for: Any, make_node: Any, tmp_path: Path) -> None:
    make_node("rbac-sync", {"example.com/a": "0"})
    (tmp_path / "rbac-sync.env").write_text("example.com/a=1\n")
    config = kubeconfig_for("gpulabel-sync")
    res = gpulabel(config, "sync", str(tmp_path))
    assert (res.returncode, res.stdout) == (0, "rbac-sync example.com/a 1\n"), res.stderr
    denied = gpulabel(config, "operands")
    assert denied.returncode == 2
    assert 'cannot list resource "daemonsets"' in denied.stderr or 'cannot list resource "pods"' in denied.stderr


def test_isolate_works_with_the_isolate_role(kubeconfig_for: Any, make_node: Any) -> None:
    make_node("rbac-isolate")
    res = gpulabel(kubeconfig_for("gpulabel-isolate"), "isolate", "rbac-isolate", "--dry-run")
    assert (res.returncode, res.stdout) == (0, "rbac-isolate nvidia.com/gpu.deploy.operands false\n"), res.stderr
