"""gpulabel's quantity parser against kube-apiserver's: accepted or refused, and the form the server stores.

Each string of tests/quantity_inputs.py (hand-picked edge cases and seeded
random ones) is sent as a pod's ``resources.requests.cpu`` in a server dry run
(``POST ?dryRun=All``): the API server decodes it with ``resource.ParseQuantity``
(after ``UnmarshalJSON`` trims white space) and answers with

- 201 and the pod as it would be stored: the quantity's canonical ``String()``;
- 400, "cannot be handled as a Pod: <ParseQuantity's error>": refused;
- 422, "Invalid value: "<String()>": must be greater than or equal to 0": parsed (a negative value).

gpulabel must agree on every one. The answers must also equal the table in
tests/data/quantity_table.json that tests/unit/test_quantity.py checks without
a cluster; ``GPULABEL_WRITE_QUANTITY_TABLE=1`` rewrites that table from the
server's answers instead.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from labcluster_support import LabCluster
from tests.quantity_inputs import inputs

from gpulabel.cluster.client import KubeClient
from gpulabel.errors import QuantityError
from gpulabel.k8s.quantity import decode

TABLE = Path(__file__).resolve().parent.parent / "data" / "quantity_table.json"
_NEGATIVE = re.compile(r'resources\.requests\[cpu\]: Invalid value: "(.*?)": must be greater than or equal to 0')
_UNDECODABLE = re.compile(r'Pod in version "v1" cannot be handled as a Pod: (.*)$')


def server_answer(client: KubeClient, ns: str, text: str) -> list[str]:
    """``["ok", stored form]`` or ``["error", ParseQuantity's message]``, as the API server answers."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "quantity", "namespace": ns},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {}}}]},
    }
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = text
    status, data = client.request_raw(
        "POST",
        f"/api/v1/namespaces/{ns}/pods",
        query=[("dryRun", "All")],
        body=json.dumps(pod).encode(),
        content_type="application/json",
    )
    doc: dict[str, Any] = json.loads(data)
    if status == 201:
        return ["ok", doc["spec"]["containers"][0]["resources"]["requests"]["cpu"]]
    message = str(doc.get("message", ""))
    if status == 422 and (m := _NEGATIVE.search(message)):
        return ["ok", m.group(1)]
    if status == 400 and (m := _UNDECODABLE.search(message)):
        return ["error", m.group(1)]
    raise AssertionError(f"{text!r}: unexpected answer {status}: {message}")


def gpulabel_answer(text: str) -> list[str]:
    try:
        return ["ok", str(decode(text))]
    except QuantityError as err:
        return ["error", str(err)]


def test_quantities_parse_as_the_api_server_parses_them(labcluster: LabCluster, ns: str) -> None:
    client = KubeClient(str(labcluster.kubeconfig))
    cases = inputs()
    live = {text: server_answer(client, ns, text) for text in cases}
    disagreements = [(t, live[t], gpulabel_answer(t)) for t in cases if gpulabel_answer(t) != live[t]]
    refused = sum(1 for a in live.values() if a[0] == "error")
    print(f"\n{len(cases)} quantities: {len(cases) - refused} accepted, {refused} refused, "
          f"{len(disagreements)} disagreements")  # fmt: skip
    if os.environ.get("GPULABEL_WRITE_QUANTITY_TABLE") == "1":
        rows = ",\n".join(json.dumps([t, *live[t]], ensure_ascii=True) for t in cases)
        TABLE.write_text(
            '{"server": "kube-apiserver v1.37.2 (labcluster), a pod\'s resources.requests.cpu, dry run",\n'
            '"columns": ["input", "ok or error", "stored form or error message"],\n"rows": [\n' + rows + "\n]}\n"
        )
    assert disagreements == []
    assert len(cases) >= 200 and refused >= 20 and len(cases) - refused >= 100
    table = {row[0]: row[1:] for row in json.loads(TABLE.read_text())["rows"]}
    assert {t: live[t] for t in cases} == {t: table.get(t) for t in cases}, "the table differs from the server"
