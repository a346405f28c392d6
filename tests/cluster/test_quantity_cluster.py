"""gpulabel's quantity parser against kube-apiserver's: accepted or refused, and the form the server stores.

Each string of tests/quantity_inputs.py (hand-picked edge cases and seeded
random ones) is sent, in a server dry run (``POST ?dryRun=All``), twice:

- as a ResourceSlice device's capacity value: ``UnmarshalJSON`` then
  ``resource.ParseQuantity``; stored as ``String()``;
- as a pod's ``resources.requests.cpu``: the same, then ``SetDefaults_ResourceList``
  rounds it up to milli-units before it is stored.

The server answers 201 with the object as it would be stored (the quantity's
form), 400 "cannot be handled as a <Kind>: <ParseQuantity's error>" (refused),
or, for a negative pod request, 422 'Invalid value: "<form>": must be greater
than or equal to 0' (parsed). gpulabel must agree on every answer. The
answers must also equal tests/data/quantity_table.json, which
tests/unit/test_quantity.py checks without a cluster;
``GPULABEL_WRITE_QUANTITY_TABLE=1`` rewrites the table from the server's answers.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from labcluster_support import LabCluster
from tests.quantity_inputs import inputs

from gpulabel.cluster.client import KubeClient
from gpulabel.errors import QuantityError
from gpulabel.k8s.quantity import decode, resource_list_form

TABLE = Path(__file__).resolve().parent.parent / "data" / "quantity_table.json"
_NEGATIVE = re.compile(r'resources\.requests\[cpu\]: Invalid value: "(.*?)": must be greater than or equal to 0')
_UNDECODABLE = re.compile(r'in version "v1" cannot be handled as a \w+: (.*)$')


def _post(client: KubeClient, path: str, obj: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    status, data = client.request_raw(
        "POST",
        path,
        query=[("dryRun", "All")],
        body=json.dumps(obj, ensure_ascii=False).encode(),  # non-ASCII raw, as kubectl sends it
        content_type="application/json",
    )
    return status, json.loads(data)


def _answer(text: str, status: int, doc: dict[str, Any], stored: Callable[[dict[str, Any]], str]) -> list[str]:
    if status == 201:
        return ["ok", stored(doc)]
    message = str(doc.get("message", ""))
    if status == 422 and (m := _NEGATIVE.search(message)):
        return ["ok", m.group(1)]
    if status == 400 and (m := _UNDECODABLE.search(message)):
        return ["error", m.group(1)]
    raise AssertionError(f"{text!r}: unexpected answer {status}: {message}")


def slice_answer(client: KubeClient, text: str) -> list[str]:
    """``["ok", stored form]`` or ``["error", ParseQuantity's message]`` for a device capacity."""
    obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "quantity-differential"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "quantity-node",
            "devices": [{"name": "d", "capacity": {"memory": {"value": text}}}],
        },
    }
    status, doc = _post(client, "/apis/resource.k8s.io/v1/resourceslices", obj)
    return _answer(text, status, doc, lambda d: str(d["spec"]["devices"][0]["capacity"]["memory"]["value"]))


def pod_answer(client: KubeClient, ns: str, text: str) -> list[str]:
    """The same for a pod's cpu request (a ResourceList)."""
    container = {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": text}}}
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "quantity"}, "spec": {"containers": [container]}}
    status, doc = _post(client, f"/api/v1/namespaces/{ns}/pods", obj)
    return _answer(text, status, doc, lambda d: str(d["spec"]["containers"][0]["resources"]["requests"]["cpu"]))


def gpulabel_answer(text: str) -> list[str]:
    """What gpulabel says for the same string: ``[slice answer..., pod answer...]``."""
    try:
        return ["ok", str(decode(text)), "ok", resource_list_form(text)]
    except QuantityError as err:
        return ["error", str(err), "error", str(err)]


def test_quantities_parse_as_the_api_server_parses_them(labcluster: LabCluster, ns: str) -> None:
    client = KubeClient(str(labcluster.kubeconfig))
    cases = inputs()
    live = {text: slice_answer(client, text) + pod_answer(client, ns, text) for text in cases}
    disagreements = [(t, live[t], gpulabel_answer(t)) for t in cases if gpulabel_answer(t) != live[t]]
    refused = sum(1 for a in live.values() if a[0] == "error")
    print(f"\n{len(cases)} quantities: {len(cases) - refused} accepted, {refused} refused, "
          f"{len(disagreements)} disagreements (each sent twice: a device capacity and a pod request)")  # fmt: skip
    if os.environ.get("GPULABEL_WRITE_QUANTITY_TABLE") == "1":
        rows = ",\n".join(json.dumps([t, *live[t]], ensure_ascii=True) for t in cases)
        TABLE.write_text(
            '{"server": "kube-apiserver v1.37.2 (labcluster), server dry run",\n'
            '"columns": ["input", "device capacity: ok or error", "stored form or error message",'
            ' "pod cpu request: ok or error", "stored form or error message"],\n"rows": [\n' + rows + "\n]}\n"
        )
    assert disagreements == []
    assert len(cases) >= 200 and refused >= 20 and len(cases) - refused >= 100
    table = {row[0]: row[1:] for row in json.loads(TABLE.read_text())["rows"]}
    assert {t: live[t] for t in cases} == {t: table.get(t) for t in cases}, "the table differs from the server"
