"""Prometheus metrics and health endpoints for ``sync --watch`` and ``gpulabel monitor`` (``--metrics-port``).

:func:`serve` serves anything :class:`Served`: the one registry of both
controllers (``controller.monitor_metrics.MonitorMetrics``; ``sync``'s
:class:`Metrics` below registers its own families in one): ``/metrics`` its
``render()``, ``/healthz`` 200 while the process runs, ``/readyz`` 200 once its
``ready`` is set (every watched kind listed: a leader, or a warm standby). What also has
``findings_document()`` (the monitor) serves ``/findings``: the current
findings as ``check -o json``'s envelope, 503 until there are any. The
``prometheus_client`` library is imported only when metrics are asked for.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Protocol

from gpulabel.model.findings import Finding

if TYPE_CHECKING:
    from gpulabel.controller.monitor_metrics import MonitorMetrics

__all__ = ["Metrics", "Served", "listen", "serve"]


class Served(Protocol):
    """What ``serve`` needs: the metrics' text and whether the process is ready."""

    ready: threading.Event

    def render(self) -> bytes: ...


class Metrics:
    """``sync``'s metrics, in the one registry of gpulabel's controllers (``MonitorMetrics``).

    ``base`` is that registry (default: one made with ``assessments=False``,
    as ``sync --watch`` serves it): it keeps ``gpulabel_leader``,
    ``gpulabel_api_errors_total``, the watch health and ``ready``; sync's own
    families are registered beside them: labels restored, the findings of the
    last full pass, reconcile time and the last full pass's time.
    """

    def __init__(self, base: MonitorMetrics | None = None) -> None:
        from prometheus_client import Counter, Gauge, Histogram

        from gpulabel.controller.monitor_metrics import MonitorMetrics

        self.base = base if base is not None else MonitorMetrics(assessments=False)
        self.registry = self.base.registry
        self.ready = self.base.ready
        self.leader = self.base.leader
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

    def set_findings(self, findings: Iterable[Finding]) -> None:
        counts: dict[tuple[str, str], int] = {}
        for f in findings:
            counts[(f.check, f.reason)] = counts.get((f.check, f.reason), 0) + 1
        self.findings.clear()
        for (check, reason), n in counts.items():
            self.findings.labels(check, reason).set(n)

    def api_error(self, code: int | str, method: str = "", path: str = "") -> None:
        """``KubeClient.on_error``: counted in the registry's ``gpulabel_api_errors_total``."""
        self.base.api_error(code)

    def render(self) -> bytes:
        return self.base.render()


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
