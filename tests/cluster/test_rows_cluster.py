"""The workload-resources and ResourceSlice rows against labcluster's API server, message for message.

Each row of ``tests/resource_rows.py`` (container resources, field types) and
``tests/slice_rows.py`` (ResourceSlice required fields) is sent as a dry-run
create; the server's ``message`` (a 422 validation error or a 400 decoding
error; empty when it accepts the object) must equal gpulabel's, and the
recorded message the unit table checks against.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from labcluster_support import LabCluster
from tests.resource_rows import ROWS as RESOURCE_ROWS
from tests.slice_rows import ROWS as SLICE_ROWS

from gpulabel.cluster.client import KubeClient
from gpulabel.cluster.manifests import workload_from_object
from gpulabel.errors import ManifestError, SnapshotError
from gpulabel.k8s.dra.readers import slice_from_json

PLURALS = {"Pod": "pods", "Deployment": "deployments", "Job": "jobs"}


def server_message(client: KubeClient, o: dict[str, Any]) -> str:
    kind = o["kind"]
    if kind == "ResourceSlice":
        url = "/apis/resource.k8s.io/v1/resourceslices"
    elif kind == "Pod":
        url = "/api/v1/namespaces/default/pods"
    else:
        url = f"/apis/{o['apiVersion']}/namespaces/default/{PLURALS[kind]}"
    body = json.dumps(o).encode()
    status, data = client.request_raw(
        "POST", url, query=[("dryRun", "All")], body=body, content_type="application/json"
    )
    if status < 300:
        return ""
    assert status in (400, 422), data[:300]
    return str(json.loads(data)["message"])


def ours(o: dict[str, Any]) -> str:
    try:
        if o["kind"] == "ResourceSlice":
            slice_from_json(o, "s.yaml")
        else:
            workload_from_object(o, "m.yaml")
    except (ManifestError, SnapshotError) as err:
        return err.message
    return ""


ROWS = [("resources: " + r[0], *r[1:]) for r in RESOURCE_ROWS] + [("slice: " + r[0], *r[1:]) for r in SLICE_ROWS]


@pytest.mark.parametrize(("name", "upstream", "o", "recorded"), ROWS, ids=[r[0] for r in ROWS])
def test_rows_are_the_servers(
    labcluster: LabCluster, name: str, upstream: str, o: dict[str, Any], recorded: str
) -> None:
    theirs = server_message(KubeClient(str(labcluster.kubeconfig)), o)
    assert (ours(o), recorded) == (theirs, theirs)
