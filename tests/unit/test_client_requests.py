"""How a request is put together: URL, query quoting, headers and the bearer token.

``KubeClient`` builds requests from calls every supported ``kubernetes``
release has (``ApiClient.param_serialize`` exists only from 37). Where the
installed client has ``param_serialize``, the two are compared directly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpulabel.cluster.client import KubeClient

QUERIES = [
    [],
    [("limit", "500")],
    [("labelSelector", "nvidia.com/gpu.present=true,a in (x,y),!d,e>3"), ("limit", "500")],
    [("continue", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzfQ=="), ("fieldSelector", "spec.nodeName=lab node/1")],
    [("watch", "true"), ("resourceVersion", "12345"), ("allowWatchBookmarks", "true"), ("fieldManager", "gpulabel")],
    [("dryRun", "All"), ("force", "true"), ("fieldManager", "gpulabel-isolate")],
]


@pytest.fixture
def kube(tmp_path: Path) -> KubeClient:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443', insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {token: s3cret}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    return KubeClient(str(kubeconfig))


def test_the_url_the_token_and_the_headers(kube: KubeClient) -> None:
    url, headers = kube._serialize(
        "/api/v1/nodes", [("labelSelector", "a in (x,y),!d"), ("limit", "500")], {"Accept": "application/json"}
    )
    assert url == "https://127.0.0.1:6443/api/v1/nodes?labelSelector=a%20in%20%28x%2Cy%29%2C%21d&limit=500"
    assert headers["authorization"] == "Bearer s3cret"
    assert headers["Accept"] == "application/json"
    assert headers["User-Agent"]


@pytest.mark.parametrize("query", QUERIES, ids=[str(len(q)) for q in QUERIES])
def test_requests_are_what_the_official_client_would_send(kube: KubeClient, query: list[tuple[str, str]]) -> None:
    api = kube._api
    if not hasattr(api, "param_serialize"):
        pytest.skip("the installed kubernetes client has no param_serialize to compare with (before 37)")
    headers = {"Accept": "application/json", "Content-Type": "application/apply-patch+yaml"}
    _, want_url, want_headers, _, _ = api.param_serialize(
        "PATCH", "/api/v1/nodes/lab-node-1", query_params=query or None, header_params=dict(headers),
        auth_settings=["BearerToken"],
    )  # fmt: skip
    assert kube._serialize("/api/v1/nodes/lab-node-1", query, dict(headers)) == (want_url, want_headers)
