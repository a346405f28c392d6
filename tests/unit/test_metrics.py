"""Metrics and health endpoints, scraped over HTTP."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from gpulabel.controller.metrics import Metrics, serve
from gpulabel.model.findings import Finding


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@pytest.fixture
def served() -> Iterator[tuple[Metrics, str]]:
    metrics = Metrics()
    server = serve(metrics, 0, "127.0.0.1")
    yield metrics, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_the_endpoints_answer_and_readyz_follows_the_ready_flag(served: tuple[Metrics, str]) -> None:
    metrics, base = served
    assert get(base + "/healthz") == (200, "ok\n")
    assert get(base + "/readyz")[0] == 503
    metrics.ready.set()
    assert get(base + "/readyz") == (200, "ok\n")
    assert get(base + "/nope")[0] == 404


def test_scraped_metrics_carry_what_happened(served: tuple[Metrics, str]) -> None:
    metrics, base = served
    metrics.restored.labels("lab-node-1", "nvidia.com/gpu.count").inc()
    metrics.api_error(503)
    metrics.api_error("unreachable")
    metrics.reconcile.labels("full").observe(0.2)
    metrics.set_findings([Finding("audit", "n", "k", "missing"), Finding("audit", "m", "k", "missing")])
    status, text = get(base + "/metrics")
    assert status == 200
    assert 'gpulabel_labels_restored_total{key="nvidia.com/gpu.count",node="lab-node-1"} 1.0' in text
    assert 'gpulabel_api_errors_total{code="503"} 1.0' in text
    assert 'gpulabel_api_errors_total{code="unreachable"} 1.0' in text
    assert 'gpulabel_findings{check="audit",reason="missing"} 2.0' in text
    assert 'gpulabel_reconcile_duration_seconds_count{scope="full"} 1.0' in text
    assert "gpulabel_last_full_resync_timestamp_seconds" in text


def test_findings_gauges_are_replaced_not_accumulated(served: tuple[Metrics, str]) -> None:
    metrics, base = served
    metrics.set_findings([Finding("audit", "n", "k", "missing")])
    metrics.set_findings([])
    assert 'reason="missing"' not in get(base + "/metrics")[1]


def test_a_full_pass_counts_every_node_only_check(tmp_path: Any) -> None:
    from gpulabel.controller.reconcile import Reconciler
    from gpulabel.model.cluster import node_from_json

    class Client:
        class retrier:
            @staticmethod
            def cancel() -> None:
                return None

    labels = {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-A10",
        "nvidia.com/gpu.count": "4",
        "nvidia.com/gpu.memory": "23028",
        "nvidia.com/gpu-driver-upgrade-state": "upgrade-failed",
        "nvidia.com/mig.config.state": "failed",
    }
    node = node_from_json({"kind": "Node", "metadata": {"name": "n", "labels": labels}})
    metrics = Metrics()
    Reconciler(Client(), str(tmp_path), metrics=metrics).run_once({"n": node})  # type: ignore[arg-type]
    text = metrics.render().decode()
    assert 'gpulabel_findings{check="upgrade",reason="upgrade-failed"} 1.0' in text
    assert 'gpulabel_findings{check="mig",reason="failed"} 1.0' in text
