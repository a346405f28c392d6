"""place refuses what the API server refuses, message for message: the pod's shape and the workload around it.

Each row of ``tests/workload_rows.py`` is sent to labcluster's API server as a
dry-run create; the server's ``message`` must equal what gpulabel's
ManifestError says after the file name, and the recorded message the unit table
checks against.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from labcluster_support import LabCluster
from tests.workload_rows import ROWS

from gpulabel.cluster.client import KubeClient
from gpulabel.cluster.manifests import workload_from_object
from gpulabel.errors import ManifestError

PLURALS = {"Pod": "pods", "Deployment": "deployments", "ReplicaSet": "replicasets", "StatefulSet": "statefulsets"}
PLURALS |= {"DaemonSet": "daemonsets", "Job": "jobs"}


def server_message(client: KubeClient, o: dict[str, Any]) -> str:
    kind = o["kind"]
    base = "/api/v1" if kind == "Pod" else f"/apis/{o['apiVersion']}"
    status, data = client.request_raw(
        "POST",
        f"{base}/namespaces/default/{PLURALS[kind]}",
        query=[("dryRun", "All")],
        body=json.dumps(o).encode(),
        content_type="application/json",
    )
    if status < 300:
        return ""
    assert status == 422, data[:300]
    return str(json.loads(data)["message"])


def ours(o: dict[str, Any]) -> str:
    try:
        workload_from_object(o, "m.yaml")
    except ManifestError as err:
        return err.message
    return ""


@pytest.mark.parametrize(("name", "upstream", "o", "recorded"), ROWS, ids=[r[0] for r in ROWS])
def test_shape_errors_are_the_servers(
    labcluster: LabCluster, name: str, upstream: str, o: dict[str, Any], recorded: str
) -> None:
    theirs = server_message(KubeClient(str(labcluster.kubeconfig)), o)
    assert (ours(o), recorded) == (theirs, theirs)
