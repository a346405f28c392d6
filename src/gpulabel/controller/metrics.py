"""Prometheus metrics and health endpoints for ``sync --watch`` and ``gpulabel monitor`` (``--metrics-port``).

:func:`serve` serves anything :class:`Served` (``sync``'s :class:`Metrics`
below, the monitor's ``MonitorMetrics``): ``/metrics`` its ``render()``,
``/healthz`` 200 while the process runs, ``/readyz`` 200 once its ``ready`` is
set (the first full pass as leader, or a healthy standby). What also has
``findings_document()`` (the monitor) serves ``/findings``: the current
findings as ``check -o json``'s envelope, 503 until there are any. The
``prometheus_client`` library is imported only when metrics are asked for.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from gpulabel.model.findings import Finding

__all__ = ["Metrics", "Served", "listen", "serve"]


class Served(Protocol):
    """What ``serve`` needs: the metrics' text and whether the process is ready."""

    ready: threading.Event

    def render(self) -> bytes: ...


class Metrics:
    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        self.restored = Counter(
            "gpulabel_labels_restored", "Labels restored (or pruned) by sync", ["node", "key"], registry=self.registry
        )
        self.findings = Gauge(
            "gpulabel_findings",
            "Findings of the last full pass, by check and reason",
            ["check", "reason"],
            registry=self.registry,
        )
        self.reconcile = Histogram(
            "gpulabel_reconcile_duration_seconds",
            "Time to reconcile: a full pass, or one node event",
            ["scope"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=self.registry,
        )
        self.last_resync = Gauge(
            "gpulabel_last_full_resync_timestamp_seconds", "Unix time of the last full pass", registry=self.registry
        )
        self.api_errors = Counter(
            "gpulabel_api_errors",
            "API errors by HTTP status ('unreachable' for no answer)",
            ["code"],
            registry=self.registry,
        )
        self.leader = Gauge("gpulabel_leader", "1 while this instance holds the lease", registry=self.registry)
        self.ready = threading.Event()

    def set_findings(self, findings: Iterable[Finding]) -> None:
        counts: dict[tuple[str, str], int] = {}
        for f in findings:
            counts[(f.check, f.reason)] = counts.get((f.check, f.reason), 0) + 1
        self.findings.clear()
        for (check, reason), n in counts.items():
            self.findings.labels(check, reason).set(n)

    def api_error(self, code: int | str, method: str = "", path: str = "") -> None:
        self.api_errors.labels(str(code)).inc()

    def render(self) -> bytes:
        from prometheus_client import generate_latest

        return bytes(generate_latest(self.registry))


def serve(metrics: Served, port: int, host: str = "0.0.0.0") -> ThreadingHTTPServer:
    """Serve ``/metrics``, ``/healthz``, ``/readyz`` (and ``/findings``) on a daemon thread; returns the server."""
    findings = getattr(metrics, "findings_document", None)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                body, status, ctype = metrics.render(), 200, "text/plain; version=0.0.4; charset=utf-8"
            elif path == "/healthz":
                body, status, ctype = b"ok\n", 200, "text/plain"
            elif path == "/findings" and callable(findings):
                doc = findings()
                body, status, ctype = (
                    (doc, 200, "application/json") if doc is not None else (b"no assessment yet\n", 503, "text/plain")
                )
            elif path == "/readyz":
                ok = metrics.ready.is_set()
                body, status, ctype = (b"ok\n", 200, "text/plain") if ok else (b"not ready\n", 503, "text/plain")
            else:
                body, status, ctype = b"not found\n", 404, "text/plain"
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server


def listen(metrics: Served, port: int) -> None:
    """:func:`serve` for a command's ``--metrics-port``: a port that cannot be had is one InputError."""
    from gpulabel.errors import InputError

    try:
        serve(metrics, port)
    except OSError as err:
        raise InputError("--metrics-port", f"cannot listen on {port}: {err.strerror}") from None
