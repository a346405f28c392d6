"""validate agrees with the real API server, accept and reject alike, message for message."""

from __future__ import annotations

import json
import random
from typing import Any

from labcluster_support import LabCluster

from gpulabel.cluster.client import KubeClient
from gpulabel.k8s.labels import label_errors

ALPHABET = "aZ09-_./ \u00e9A"


def valid_text(rng: random.Random) -> str:
    """Usually valid: alphanumeric ends, allowed characters inside, lengths around the limit."""
    size = rng.choice([1, 2, 8, 62, 63, 64])
    inner = "".join(rng.choice("abcXYZ019-_.") for _ in range(max(0, size - 2)))
    return (rng.choice("aZ9") + inner + rng.choice("bY8"))[:size]


def random_text(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.35:
        return valid_text(rng)
    if kind < 0.45:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-.") for _ in range(rng.choice([1, 62, 63, 64])))
    if kind < 0.3:
        return rng.choice(["", "-a", "a-", "A" * 63, "a" * 64, "NVIDIA A100-SXM4-40GB", "caf\u00e9"])
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))


def random_key(rng: random.Random) -> str:
    shape = rng.random()
    name = (valid_text(rng) if rng.random() < 0.6 else random_text(rng)).replace("/", "") or "x"
    if shape < 0.4:
        return name
    if shape < 0.8:
        prefix = rng.choice(
            [
                "nvidia.com",
                "example.com",
                "feature.node.kubernetes.io",
                "NVIDIA.com",
                "a_b.com",
                "",
                "-a.com",
                "a" * 254,
                "x." * 2 + "y",
            ]
        )
        return f"{prefix}/{name}"
    return "/".join(random_text(rng) for _ in range(rng.randint(1, 3)))


def server_errors(client: KubeClient, node: str, key: str, value: str) -> list[str]:
    body = json.dumps({"metadata": {"labels": {key: value}}}).encode()
    status, data = client.request_raw(
        "PATCH",
        client.node_path(node),
        query=[("dryRun", "All")],
        body=body,
        content_type="application/merge-patch+json",
    )
    if status < 300:
        return []
    assert status == 422, (status, data[:300])
    doc: dict[str, Any] = json.loads(data)
    return sorted(f"{c['field']}: {c['message']}" for c in doc["details"]["causes"])


def test_validate_agrees_with_the_api_server(labcluster: LabCluster, make_node: Any) -> None:
    node = "validate-diff"
    make_node(node)
    client = KubeClient(str(labcluster.kubeconfig))
    rng = random.Random(20261129)
    cases = [(random_key(rng), random_text(rng)) for _ in range(400)]
    cases += [("nvidia.com/gpu.product", "NVIDIA A100-SXM4-40GB"), ("/x", "1"), ("a/b/c", "1"), ("x", "a" * 64)]
    disagreements = []
    accepted = rejected = 0
    for key, value in cases:
        ours = sorted(label_errors(key, value))
        theirs = server_errors(client, node, key, value)
        if theirs:
            rejected += 1
        else:
            accepted += 1
        if ours != theirs:
            disagreements.append((key, value, ours, theirs))
    print(f"\n{len(cases)} labels: {accepted} accepted, {rejected} rejected, {len(disagreements)} disagreements")
    assert disagreements == []
    assert accepted > 50 and rejected > 50
