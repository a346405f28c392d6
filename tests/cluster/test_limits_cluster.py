"""The resource.k8s.io/v1 size limits (``tests/limit_rows.py``) against labcluster's API server.

Each row (an object at a limit, and one past it) is sent as a dry-run create;
the server's ``message`` (empty when it accepts the object) must equal
gpulabel's and the row's.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from labcluster_support import LabCluster
from tests.limit_rows import ROWS, UNENFORCED
from tests.unit.test_limit_rows import ours

from gpulabel.cluster.client import KubeClient

URLS = {
    "ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
    "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
    "ResourceClaim": "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims",
    "ResourceClaimTemplate": "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates",
}


def server_message(client: KubeClient, o: dict[str, Any]) -> str:
    body = json.dumps(o).encode()
    status, data = client.request_raw(
        "POST", URLS[o["kind"]], query=[("dryRun", "All")], body=body, content_type="application/json"
    )
    if status < 300:
        return ""
    assert status in (400, 422), data[:300]
    return str(json.loads(data)["message"])


@pytest.mark.parametrize(
    ("name", "upstream", "o", "message"), [*ROWS, *UNENFORCED], ids=[r[0] for r in [*ROWS, *UNENFORCED]]
)
def test_limit_rows_are_the_servers(
    labcluster: LabCluster, name: str, upstream: str, o: dict[str, Any], message: str
) -> None:
    theirs = server_message(KubeClient(str(labcluster.kubeconfig)), o)
    assert (ours(o), message) == (theirs, theirs)
