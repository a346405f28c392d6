"""A small set of the monitor's metrics: findings, watch health, evaluation time, leadership.

The names and labels are the ones in docs/monitor.md's table (issue 23's
contract), a subset of ``MonitorMetrics`` (controller/monitor_metrics.py,
which adds the per-node problem series, GPUs unusable by cause and the
Event counters); ``app.monitor._sinks`` picks that one where it exists.
Served by ``controller.metrics.serve``.
"""

from __future__ import annotations

import threading

from gpulabel.checks.assessment import Assessment

__all__ = ["BasicMonitorMetrics"]


class BasicMonitorMetrics:
    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = r = CollectorRegistry()
        self.findings = Gauge("gpulabel_findings", "Current findings", ["check", "reason", "severity"], registry=r)
        self.last_event = Gauge(
            "gpulabel_watch_last_event_timestamp_seconds",
            "Unix time of the last watch event (bookmarks count)",
            ["kind"],
            registry=r,
        )
        self.relists = Counter("gpulabel_watch_relists", "Relists (410 or a broken watch)", ["kind"], registry=r)
        self.api_errors = Counter("gpulabel_api_errors", "API errors by HTTP status", ["code"], registry=r)
        self.evaluation = Histogram(
            "gpulabel_evaluation_duration_seconds",
            "Evaluation time",
            ["scope"],
            buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=r,
        )
        self.last_evaluation = Gauge(
            "gpulabel_last_evaluation_timestamp_seconds", "Unix time of the last evaluation", registry=r
        )
        self.leader = Gauge("gpulabel_leader", "1 while this instance holds the lease", registry=r)
        self.ready = threading.Event()

    def publish(self, assessment: Assessment) -> None:
        counts: dict[tuple[str, str, str], int] = {}
        for f in assessment.findings:
            key = (f.check, f.reason, f.severity)
            counts[key] = counts.get(key, 0) + 1
        self.findings.clear()
        for labels, n in counts.items():
            self.findings.labels(*labels).set(n)
        self.last_evaluation.set(assessment.at)

    def watch_event(self, kind: str, at: float) -> None:
        self.last_event.labels(kind).set(at)

    def relisted(self, kind: str) -> None:
        self.relists.labels(kind).inc()

    def api_error(self, code: int | str) -> None:
        self.api_errors.labels(str(code)).inc()

    def evaluated(self, scope: str, seconds: float) -> None:
        self.evaluation.labels(scope).observe(seconds)

    def render(self) -> bytes:
        from prometheus_client import generate_latest

        return bytes(generate_latest(self.registry))
