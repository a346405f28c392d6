"""``-l`` selects the nodes the API server selects, and refuses what it refuses with its words (differential).

Random selectors, valid and not, are sent to the real API server as ``labelSelector`` on a node LIST;
gpulabel's parser and matcher (what ``-l`` does on snapshots, and the check ``-l`` makes before any
request on a live cluster) must pick the same nodes among this test's nodes, or fail with the
server's message.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from gpulabel_run import gpulabel
from labcluster_support import LabCluster

from gpulabel.cluster.client import KubeClient
from gpulabel.k8s.selectors import parse_selector

KEYS = ["zone", "gpu", "count", "example.com/tier", "in", "notin"]
VALUES = ["a", "b", "1", "2", "8", "10", "in", ""]
JUNK = " =!(),<>xyz-_./A\t"


def random_labels(rng: random.Random) -> dict[str, str]:
    return {k: rng.choice(VALUES) for k in KEYS if rng.random() < 0.6}


def requirement(rng: random.Random) -> str:
    key = rng.choice(KEYS)
    shape = rng.random()
    if shape < 0.15:
        return key
    if shape < 0.25:
        return "!" + key
    if shape < 0.55:
        return f"{key}{rng.choice(['=', '==', '!='])}{rng.choice(VALUES)}"
    if shape < 0.8:
        values = ",".join(rng.choice(VALUES) for _ in range(rng.randint(0, 3)))
        return f"{key} {rng.choice(['in', 'notin'])} ({values})"
    return f"{key}{rng.choice(['>', '<'])}{rng.choice(['1', '5', '-2', 'x', '08', '+3'])}"


def random_selector(rng: random.Random) -> str:
    text = ",".join(requirement(rng) for _ in range(rng.randint(1, 3)))
    for _ in range(rng.choice([0, 0, 0, 1, 2])):  # about half are damaged somewhere
        at = rng.randint(0, len(text))
        text = text[:at] + rng.choice(JUNK) + text[at:]
    return text


def server_nodes(client: KubeClient, selector: str) -> tuple[set[str] | None, str]:
    status, data = client.request_raw("GET", "/api/v1/nodes?labelSelector=" + quote(selector, safe=""))
    doc: dict[str, Any] = json.loads(data)
    if status == 200:
        return {item["metadata"]["name"] for item in doc["items"]}, ""
    assert status == 400, (status, doc)
    return None, str(doc.get("message"))


def test_random_selectors_pick_the_servers_nodes_or_fail_with_its_message(
    labcluster: LabCluster, make_node: Callable[..., dict[str, Any]]
) -> None:
    rng = random.Random(16)
    tag = uuid.uuid4().hex[:6]
    labels = {f"sel-{tag}-{i}": random_labels(rng) for i in range(12)}
    for name, node_labels in labels.items():
        make_node(name, node_labels, ready=False)
    client = KubeClient(str(labcluster.kubeconfig), None)
    mismatches = []
    invalid = 0
    for _ in range(300):
        selector = random_selector(rng)
        wanted, message = server_nodes(client, selector)
        try:
            parsed = parse_selector(selector)
        except ValueError as err:
            invalid += 1
            if wanted is not None or not message.endswith(str(err)):
                mismatches.append((selector, "refused", str(err), wanted, message))
            continue
        if wanted is None:
            mismatches.append((selector, "accepted", "", None, message))
            continue
        mine = {name for name, node_labels in labels.items() if parsed.matches(node_labels)}
        if mine != wanted & set(labels):
            mismatches.append((selector, "matched", sorted(mine), sorted(wanted & set(labels)), ""))
    assert not mismatches, "\n".join(map(repr, mismatches[:10]))
    assert 30 <= invalid <= 270  # both sides of the rule were exercised


def test_minus_l_live_is_applied_by_the_server_and_refused_before_any_request(
    labcluster: LabCluster, make_node: Callable[..., dict[str, Any]]
) -> None:
    tag = uuid.uuid4().hex[:6]
    make_node(f"l-{tag}-a", {"nvidia.com/gpu.present": "true", "sel-test": tag}, ready=False)
    make_node(f"l-{tag}-b", {"sel-test": tag}, ready=False)
    done = gpulabel(labcluster.kubeconfig, "audit", "-l", f"sel-test={tag}", "-o", "json")
    assert done.returncode == 1, done.stderr
    assert {f["node"] for f in json.loads(done.stdout)["findings"]} == {f"l-{tag}-a"}
    refused = gpulabel(labcluster.kubeconfig, "audit", "-l", "a b", "--context", "no-such-context")
    assert refused.returncode == 2
    assert refused.stderr == (
        "gpulabel: -l/--selector: unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt\n"
    )


def test_version_names_the_client_and_the_live_server(labcluster: LabCluster) -> None:
    from gpulabel import __version__

    done = gpulabel(labcluster.kubeconfig, "version")
    assert done.returncode == 0, done.stderr
    client, server = done.stdout.splitlines()
    assert client == f"Client Version: {__version__}"
    assert server.startswith("Server Version: v1.")
    doc = json.loads(gpulabel(labcluster.kubeconfig, "version", "-o", "json").stdout)
    assert (doc["kind"], doc["client"], doc["server"]) == ("VersionResult", __version__, server.split(": ")[1])
