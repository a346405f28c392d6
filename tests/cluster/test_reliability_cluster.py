"""Reliability on the real control plane: expired continue tokens, dropped and expired
watches, error bursts, a concurrent writer, and an API server killed in the middle of a sync."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faultproxy import FaultProxy, Recorded
from gpulabel_run import gpulabel
from labcluster_support import LabCluster, restart_apiserver, wait_for

from gpulabel.cluster.client import KubeClient


@pytest.fixture
def proxy(labcluster: LabCluster) -> Iterator[FaultProxy]:
    p = FaultProxy(labcluster.kubeconfig)
    try:
        yield p
    finally:
        p.close()


def names(items: list[dict[str, Any]]) -> list[str]:
    return sorted(i["metadata"]["name"] for i in items)


def set_label(client: KubeClient, node: str, key: str, value: str | None) -> None:
    body = json.dumps({"metadata": {"labels": {key: value}}}).encode()
    client.request("PATCH", client.node_path(node), body=body, content_type="application/merge-patch+json")


def label(client: KubeClient, node: str, key: str) -> str | None:
    labels: dict[str, str] = client.request("GET", client.node_path(node))["metadata"].get("labels") or {}
    return labels.get(key)


def start_watch(kubeconfig: Path, directory: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gpulabel", "sync", str(directory), "--watch", "--kubeconfig", str(kubeconfig)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop_watch(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    return out, err


def restored_after_edit(admin: KubeClient, node: str, key: str, good: str, bad: str, timeout: float = 10) -> float:
    set_label(admin, node, key, bad)
    edited = time.monotonic()
    wait_for(
        lambda: label(admin, node, key) == good,
        timeout=timeout,
        interval=0.05,
        message=f"for {node} {key} to be restored",
    )
    return time.monotonic() - edited


def test_a_paged_list_whose_continue_token_expires_restarts_and_is_complete(
    labcluster: LabCluster, proxy: FaultProxy, make_node: Any, tmp_path: Path
) -> None:
    for i in range(5):
        make_node(f"rel-page-{i}")
    expected = names(labcluster.get("nodes")["items"])
    proxy.faults.expire_continue = 1
    client = KubeClient(str(proxy.kubeconfig(tmp_path / "kubeconfig")))
    items, _ = client.list_objects("/api/v1/nodes", lambda i: i, limit=2)
    assert names(items) == expected
    lists = proxy.requests(lambda r: r.path == "/api/v1/nodes")
    assert [r.status for r in lists].count(410) == 1
    # after the 410 the LIST started again from the first page
    after = lists[[r.status for r in lists].index(410) + 1]
    assert "continue" not in after.query


def test_watch_resumes_after_drops_and_relists_after_410(
    labcluster: LabCluster, proxy: FaultProxy, make_node: Any, tmp_path: Path
) -> None:
    node = "rel-watch"
    make_node(node, {"example.com/a": "1"})
    (tmp_path / f"{node}.env").write_text("example.com/a=1\n")
    proxy.faults.expire_watch = 1  # the first watch is answered 410: relist
    proxy.faults.drop_watch_after = 3  # every stream is cut after three events
    proc = start_watch(proxy.kubeconfig(tmp_path / "kubeconfig"), tmp_path)
    admin = KubeClient(str(labcluster.kubeconfig))
    try:
        wait_for(lambda: len(proxy.requests(lambda r: r.query.get("watch") == ["true"])) >= 2, timeout=20)
        for i in range(6):
            restored_after_edit(admin, node, "example.com/a", "1", f"x{i}")
    finally:
        out, _ = stop_watch(proc)
    watches = proxy.requests(lambda r: r.query.get("watch") == ["true"])
    lists = proxy.requests(lambda r: r.path == "/api/v1/nodes" and "watch" not in r.query)
    assert watches[0].status == 410
    assert len(lists) >= 2, "a 410 on the watch must lead to a new LIST"
    versions = [w.query["resourceVersion"][0] for w in watches if w.status == 200]
    assert len(set(versions)) >= 2, "a dropped watch resumes from a newer resourceVersion"
    assert out.count(f"{node} example.com/a 1") == 6


def test_bursts_of_503_and_429_are_retried(
    labcluster: LabCluster, proxy: FaultProxy, make_node: Any, tmp_path: Path
) -> None:
    node = "rel-burst"
    make_node(node, {"example.com/a": "0"})
    (tmp_path / f"{node}.env").write_text("example.com/a=1\n")
    config = proxy.kubeconfig(tmp_path / "kubeconfig")
    proxy.faults.fail_status, proxy.faults.fail_count = 503, 3
    res = gpulabel(config, "sync", str(tmp_path))
    assert (res.returncode, res.stdout) == (0, f"{node} example.com/a 1\n"), res.stderr
    (tmp_path / f"{node}.env").write_text("example.com/a=2\n")
    proxy.faults.fail_status, proxy.faults.fail_count = 429, 2
    res = gpulabel(config, "sync", str(tmp_path))
    assert (res.returncode, res.stdout) == (0, f"{node} example.com/a 2\n"), res.stderr


def test_a_concurrent_writer_is_undone_every_time_and_nothing_else_changes(
    labcluster: LabCluster, make_node: Any, tmp_path: Path
) -> None:
    node = "rel-flip"
    make_node(node, {"example.com/a": "1", "example.com/b": "1", "example.com/other": "keep"})
    (tmp_path / f"{node}.env").write_text("example.com/a=1\nexample.com/b=1\n")
    admin = KubeClient(str(labcluster.kubeconfig))
    proc = start_watch(labcluster.kubeconfig, tmp_path)
    stop = threading.Event()
    flips = {"n": 0}

    def flipper() -> None:
        while not stop.is_set():
            set_label(admin, node, "example.com/b", f"flip{flips['n']}")
            flips["n"] += 1
            time.sleep(0.05)

    try:
        time.sleep(2)
        writer = threading.Thread(target=flipper)
        writer.start()
        time.sleep(3)
        stop.set()
        writer.join()
        wait_for(lambda: label(admin, node, "example.com/b") == "1", timeout=5, message="for the last flip undone")
    finally:
        out, _ = stop_watch(proc)
    labels = admin.request("GET", admin.node_path(node))["metadata"]["labels"]
    assert labels["example.com/a"] == "1" and labels["example.com/other"] == "keep"
    restores = out.count(f"{node} example.com/b 1")
    assert flips["n"] > 10
    # every flip the controller saw was restored (several flips may fold into one event)
    assert 1 <= restores <= flips["n"]
    assert all(line.split()[1] == "example.com/b" for line in out.splitlines())


def test_sync_over_1000_nodes_survives_an_api_server_restart(labcluster: LabCluster, tmp_path: Path) -> None:
    count, prefix = 1000, "rel-kill-"
    labcluster.create_nodes(count, prefix, {"example.com/rel-kill": "1"})
    desired = {"example.com/a": "1", "example.com/b": "2", "example.com/c": "3"}
    for i in range(count):
        (tmp_path / f"{prefix}{i}.env").write_text("".join(f"{k}={v}\n" for k, v in desired.items()))
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpulabel", "sync", str(tmp_path), "--kubeconfig", str(labcluster.kubeconfig)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(4)  # in the middle of the writes
        restart_apiserver(labcluster, down_seconds=2)
        out, err = proc.communicate(timeout=300)
        admin = KubeClient(str(labcluster.kubeconfig))  # rides out the restart (60 s budget)
        items, _ = admin.list("Node", label_selector="example.com/rel-kill=1")
        assert len(items) == count
        partial = [
            i["metadata"]["name"]
            for i in items
            if 0 < sum(i["metadata"]["labels"].get(k) == v for k, v in desired.items()) < len(desired)
        ]
        assert partial == [], "a node was left with part of its file applied"
        if proc.returncode == 0:
            assert all(all(i["metadata"]["labels"].get(k) == v for k, v in desired.items()) for i in items)
            assert len(out.splitlines()) == 3 * count
        else:
            assert proc.returncode == 1
            assert "not written" in err, err[-2000:]
        assert "Traceback" not in err
    finally:
        labcluster.kubectl("delete", "nodes", "-l", "example.com/rel-kill=1", "--wait=false", timeout=300)


# The documented bounds of the one retry policy (cluster/retry.py, docs/sync.md): each node's write is
# at most 10 requests, and once the server has been unavailable for 60 s every further node gets one.
MAX_REQUESTS_PER_NODE = 10
BUDGET_SECONDS = 60.0


def _outage_sync(
    labcluster: LabCluster, proxy: FaultProxy, tmp_path: Path, prefix: str, outage: float, count: int = 20
) -> tuple[subprocess.CompletedProcess[str], dict[str, list[Recorded]], list[dict[str, Any]], float]:
    """sync ``count`` nodes while the API server answers 503 to everything for ``outage`` seconds
    from the first write. Returns the run, each node's PATCHes, the nodes after, and when sync ended
    (seconds after the outage began)."""
    labcluster.create_nodes(count, prefix, {"example.com/rel-outage": prefix.strip("-")})
    files = tmp_path / "files"
    files.mkdir()
    for i in range(count):
        (files / f"{prefix}{i}.env").write_text("".join(f"{k}={v}\n" for k, v in DESIRED.items()))
    proxy.faults.fail_status, proxy.faults.outage_seconds, proxy.faults.outage_from = 503, outage, "PATCH"
    res = gpulabel(proxy.kubeconfig(tmp_path / "kubeconfig"), "sync", str(files), timeout=300)
    ended = time.monotonic() - proxy.faults.outage_started
    patches: dict[str, list[Recorded]] = {f"{prefix}{i}": [] for i in range(count)}
    for r in proxy.requests(lambda r: r.method == "PATCH"):
        patches[r.path.rsplit("/", 1)[1]].append(r)
    items, _ = KubeClient(str(labcluster.kubeconfig)).list(
        "Node", label_selector=f"example.com/rel-outage={prefix.strip('-')}"
    )
    return res, patches, items, ended


def _check_no_partial_node(res: subprocess.CompletedProcess[str], items: list[dict[str, Any]]) -> list[str]:
    """Every node has all of its file or none of it, and stdout lists exactly the written ones."""
    written = []
    for item in items:
        got = sum(item["metadata"]["labels"].get(k) == v for k, v in DESIRED.items())
        assert got in (0, len(DESIRED)), f"{item['metadata']['name']} has part of its file"
        if got:
            written.append(item["metadata"]["name"])
    assert sorted({line.split()[0] for line in res.stdout.splitlines()}) == sorted(written)
    assert "Traceback" not in res.stderr
    assert res.stderr.count("not written") == len(items) - len(written)
    assert res.returncode == (1 if len(written) < len(items) else 0)
    return written


DESIRED = {"example.com/a": "1", "example.com/b": "2", "example.com/c": "3"}


def test_503_for_60_seconds_during_a_sync_costs_at_most_10_requests_per_node_and_a_minute(
    labcluster: LabCluster, proxy: FaultProxy, tmp_path: Path
) -> None:
    prefix = "rel-503-"
    try:
        res, patches, items, ended = _outage_sync(labcluster, proxy, tmp_path, prefix, BUDGET_SECONDS)
        counts = {node: len(reqs) for node, reqs in patches.items()}
        print(
            f"\n503 for 60 s: PATCHes per node {sorted(counts.values(), reverse=True)}, sync ended {ended:.1f} s "
            f"after the outage began, exit {res.returncode}"
        )
        assert max(counts.values()) <= MAX_REQUESTS_PER_NODE
        assert ended <= BUDGET_SECONDS + 10
        written = _check_no_partial_node(res, items)
        # the server is back after a minute: the nodes not yet tried then are written with one request each
        outage_end = proxy.faults.outage_started + BUDGET_SECONDS
        later = [n for n, reqs in patches.items() if reqs and reqs[0].at >= outage_end]
        assert later and all(counts[n] == 1 and n in written for n in later)
    finally:
        labcluster.kubectl(
            "delete", "nodes", "-l", f"example.com/rel-outage={prefix.strip('-')}", "--wait=false", timeout=300
        )


def test_a_server_unavailable_for_longer_than_a_minute_ends_the_sync_after_a_minute(
    labcluster: LabCluster, proxy: FaultProxy, tmp_path: Path
) -> None:
    prefix = "rel-down-"
    try:
        res, patches, items, ended = _outage_sync(labcluster, proxy, tmp_path, prefix, 300)
        counts = sorted((len(reqs) for reqs in patches.values()), reverse=True)
        print(
            f"\n503 for 300 s: PATCHes per node {counts}, sync ended {ended:.1f} s after the outage began, "
            f"exit {res.returncode}"
        )
        assert ended <= BUDGET_SECONDS + 10, "not a minute per node: a minute per outage"
        assert counts[0] <= MAX_REQUESTS_PER_NODE
        # the first node spends the budget, the one after it what is left; every other node gets one request
        assert counts[2:] == [1] * (len(counts) - 2)
        assert _check_no_partial_node(res, items) == []
    finally:
        labcluster.kubectl(
            "delete", "nodes", "-l", f"example.com/rel-outage={prefix.strip('-')}", "--wait=false", timeout=300
        )
