"""``snapshot -o FILE`` writes each page as it arrives: the file's bytes are those ``snapshot`` (to stdout) prints,
a LIST restarted from its first page (410 Gone) leaves no object twice, and a failed capture leaves no file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

import orjson
import pytest

from gpulabel.app.session import Session, Source
from gpulabel.app.snapshot import GENERATOR_MARK, SnapshotOptions, run_snapshot
from gpulabel.cluster.capture import capture, capture_to
from gpulabel.cluster.client import KubeClient
from gpulabel.cluster.files import Output
from gpulabel.errors import GpulabelError
from tests.unit.test_progress import PagedServer, Response, paged_client


def _session(client: KubeClient) -> Session:
    session = Session(Source(kubeconfig="unused"))
    session._client = client  # the paged fake, as Session.client() would make a real one
    return session


@pytest.mark.parametrize("counts", [{"nodes": 5, "pods": 3}, {"nodes": 0, "pods": 0}, {"nodes": 1}])
def test_the_streamed_file_is_what_stdout_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counts: dict[str, int]
) -> None:
    client = paged_client(tmp_path, monkeypatch, counts)
    printed = run_snapshot(_session(client), SnapshotOptions(output="-")).page
    path = tmp_path / "snap.json"
    outcome = run_snapshot(_session(client), SnapshotOptions(output=str(path)))
    assert printed is not None and path.read_bytes() == printed.encode()
    assert outcome.result.fields["bytes"] == len(printed.encode())
    # and both are the document capture() returns, as run_snapshot wrote it before it streamed
    doc = capture(client)
    items = doc.pop("items")
    whole = {**doc, "generator": "gpulabel", "items": items}
    assert path.read_bytes() == orjson.dumps(whole, option=orjson.OPT_INDENT_2) + b"\n"
    assert GENERATOR_MARK in path.read_bytes()[:4096]


class _Gone(PagedServer):
    """As PagedServer, but the first continuation of the pods' LIST is 410 Gone: the LIST starts over."""

    def __init__(self, counts: dict[str, int], limit: int) -> None:
        super().__init__(counts, limit)
        self.gone = False

    def __call__(self, method: str, path: str, query: Iterable[tuple[str, str]] = (), **kwargs: object) -> Response:
        query = list(query)
        if path.endswith("/pods") and dict(query).get("continue") and not self.gone:
            self.gone = True
            return 410, json.dumps({"kind": "Status", "code": 410, "reason": "Expired"}).encode()
        return super().__call__(method, path, query, **kwargs)


def test_a_list_restarted_after_410_writes_each_object_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = paged_client(tmp_path, monkeypatch, {"nodes": 3, "pods": 5})
    expected = run_snapshot(_session(client), SnapshotOptions(output="-")).page
    server = _Gone({"nodes": 3, "pods": 5}, limit=2)
    monkeypatch.setattr(client, "request_raw", server)
    path = tmp_path / "snap.json"
    run_snapshot(_session(client), SnapshotOptions(output=str(path)))
    assert server.gone and expected is not None and path.read_bytes() == expected.encode()
    names = [item["metadata"]["name"] for item in json.loads(path.read_bytes())["items"] if "metadata" in item]
    assert names == ["nodes-0", "nodes-1", "nodes-2", *[f"pods-{i}" for i in range(5)]]


def test_a_capture_that_fails_midway_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = paged_client(tmp_path, monkeypatch, {"nodes": 4, "pods": 4})
    path = tmp_path / "snap.json"
    run_snapshot(_session(client), SnapshotOptions(output=str(path)))
    before = path.read_bytes()
    server = PagedServer({"nodes": 4, "pods": 4}, limit=2)

    def broken(method: str, where: str, query: Iterable[tuple[str, str]] = (), **kwargs: object) -> Response:
        if where.endswith("/pods"):
            return 403, json.dumps({"kind": "Status", "code": 403, "message": "pods is forbidden"}).encode()
        return server(method, where, query, **kwargs)

    monkeypatch.setattr(client, "request_raw", broken)
    with pytest.raises(GpulabelError, match="forbidden"):  # the API's error as it is, not "cannot write"
        run_snapshot(_session(client), SnapshotOptions(output=str(path)))
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == sorted(p for p in os.listdir(tmp_path) if not p.startswith(".gpulabel-"))


def test_dev_null_runs_the_capture_and_keeps_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = paged_client(tmp_path, monkeypatch, {"nodes": 2, "pods": 1})
    printed = run_snapshot(_session(client), SnapshotOptions(output="-")).page
    outcome = run_snapshot(_session(client), SnapshotOptions(output=os.devnull))
    assert printed is not None and outcome.result.fields["bytes"] == len(printed.encode())


class _Held:
    """An Output that remembers the largest write (one object's text, never a page's or the cluster's)."""

    def __init__(self) -> None:
        self.largest = 0
        self.total = 0

    def write(self, data: bytes) -> None:
        self.largest = max(self.largest, len(data))
        self.total += len(data)


def test_each_write_is_one_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = paged_client(tmp_path, monkeypatch, {"nodes": 400, "pods": 600})
    held = _Held()
    out = Output(held)  # type: ignore[arg-type]
    capture_to(client, out)
    assert held.total == out.mark() > 100 * held.largest
