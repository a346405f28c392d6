"""The CEL cost budget (``k8s/dra/celcost.py``) against labcluster's API server.

Each selector is sent in a DeviceClass as a dry-run create: the server refuses
it with ``spec.selectors[0].cel.expression: Forbidden: too complex, exceeds cost
limit`` exactly when gpulabel's compile says so.
"""

from __future__ import annotations

import json

import pytest
from labcluster_support import LabCluster
from tests.cel_cost_rows import ROWS
from tests.unit.test_cel_cost import bomb

from gpulabel.cluster.client import KubeClient
from gpulabel.k8s.dra.cel import COST_LIMIT_EXCEEDED, compile_selector


def _nested(depth: int) -> str:
    inner = "x < 100"
    for v in ("z5", "z4", "z3", "z2", "z", "y", "x")[-depth:]:
        inner = f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all({v}, {inner.replace('x < 100', f'{v} < 100')})"
    return inner


BOMBS = ((5, 10), (6, 10), (7, 10), (8, 10), (8, 2), (19, 2), (20, 2))
# upstream runs these rows with DRAListTypeAttributes on (alpha, off on labcluster): with it off the server types
# an attribute's value as 'any', which cannot be a comprehension's range, and refuses them as a compile error;
# gpulabel gives the same error (celcost.attribute_range_offset), checked below message for message
LIST_TYPE_ROWS = {
    "macro-on-list-of-int",
    "macro-on-list-of-string",
    "macro-on-list-of-semver",
    "macro-exists-on-version",
}
CASES = [
    *((f"bomb {lv}x{fan}", bomb(lv, fan)) for lv, fan in BOMBS),
    *((f"nested all {d}", _nested(d)) for d in (5, 6, 7)),
    *((f"row {name}", expr) for name, expr, _ in ROWS if name not in LIST_TYPE_ROWS),
]
ANY_RANGE = [
    *((f"row {name}", expr) for name, expr, _ in ROWS if name in LIST_TYPE_ROWS),
    ("bound", 'cel.bind(a, device.attributes["dra.example.com"].names, a.exists(x, x > 0))'),
    ("index", 'device.attributes["dra.example.com"]["names"].map(x, x).size() > 0'),
]


def _create_dry_run(labcluster: LabCluster, expression: str) -> tuple[int, bytes]:
    """A DeviceClass selecting by ``expression``, created with ``dryRun=All``: the server's status and body."""
    client = KubeClient(str(labcluster.kubeconfig))
    body = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "cost"},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }
    return client.request_raw(
        "POST",
        "/apis/resource.k8s.io/v1/deviceclasses",
        query=[("dryRun", "All")],
        body=json.dumps(body).encode(),
        content_type="application/json",
    )


@pytest.mark.parametrize(("name", "expression"), ANY_RANGE, ids=[c[0] for c in ANY_RANGE])
def test_a_comprehension_over_an_attribute_is_refused_as_the_server_refuses_it(
    labcluster: LabCluster, name: str, expression: str
) -> None:
    status, data = _create_dry_run(labcluster, expression)
    ours = compile_selector(expression).error
    assert status == 422 and ours is not None
    assert str(json.loads(data)["message"]).endswith(f": {ours}")


@pytest.mark.parametrize(("name", "expression"), CASES, ids=[c[0] for c in CASES])
def test_the_server_refuses_what_gpulabel_refuses(labcluster: LabCluster, name: str, expression: str) -> None:
    status, data = _create_dry_run(labcluster, expression)
    theirs = "" if status < 300 else str(json.loads(data)["message"])
    ours = compile_selector(expression).error
    refused = theirs.endswith(f"spec.selectors[0].cel.expression: Forbidden: {COST_LIMIT_EXCEEDED}")
    assert (ours == COST_LIMIT_EXCEEDED) == refused, (ours, theirs)
    if ours is None:
        assert theirs == ""
