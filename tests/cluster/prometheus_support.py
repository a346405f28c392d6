"""Build and drive a real Prometheus (tools/prometheus, v0.316.0 from the Go module proxy) from tests.

Like labcluster_support: nothing here skips; a failed build or start raises PrometheusError with
the reason and the tail of Prometheus' log. Prometheus listens on 127.0.0.1 (a free port), keeps
its TSDB in the test's directory, scrapes and evaluates every second, and loads the rules file
it is given (tests pass tools.monitoring.with_for's copy: the same rules with a short ``for:``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml
from tools import monitoring

REPO = Path(__file__).resolve().parents[2]
PROMETHEUS_DIR = REPO / "tools" / "prometheus"
PROMETHEUS = PROMETHEUS_DIR / "bin" / "prometheus"
PROMTOOL = PROMETHEUS_DIR / "bin" / "promtool"
NOT_BUILT = "prometheus is not built: run tools/prometheus/build (a cold Go cache: ~5-15 min)"


class PrometheusError(RuntimeError):
    """tools/prometheus could not be built, Prometheus did not start, or its API answered an error."""


def built() -> bool:
    return os.access(PROMETHEUS, os.X_OK) and os.access(PROMTOOL, os.X_OK)


def build_prometheus(timeout: float = 3600) -> Path:
    """Run tools/prometheus/build (a no-op when both binaries are up to date)."""
    try:
        proc = subprocess.run(
            [str(PROMETHEUS_DIR / "build")], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PrometheusError(f"tools/prometheus/build could not run: {exc}") from exc
    if proc.returncode != 0 or not built():
        raise PrometheusError(f"tools/prometheus/build failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return PROMETHEUS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Prometheus:
    """A running Prometheus scraping ``targets`` as one job; its HTTP API at ``url``."""

    def __init__(self, proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
        self.proc, self.url, self.log = proc, url, log

    @classmethod
    def start(cls, directory: Path, job: str, targets: Sequence[str], rules: Path, timeout: float = 60) -> Prometheus:
        directory.mkdir(parents=True, exist_ok=True)
        config = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(rules)],
            "scrape_configs": [{"job_name": job, "static_configs": [{"targets": list(targets)}]}],
        }
        (directory / "prometheus.yml").write_text(yaml.safe_dump(config))
        check = subprocess.run(
            [str(PROMTOOL), "check", "config", str(directory / "prometheus.yml")], capture_output=True, text=True
        )
        if check.returncode != 0:
            raise PrometheusError(f"promtool check config: {check.stdout}{check.stderr}")
        port = free_port()
        log = directory / "prometheus.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [
                    str(PROMETHEUS),
                    f"--config.file={directory / 'prometheus.yml'}",
                    f"--storage.tsdb.path={directory / 'data'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                    "--storage.tsdb.retention.time=1h",
                ],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        prom = cls(proc, f"http://127.0.0.1:{port}", log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise PrometheusError(f"prometheus exited {proc.returncode}:\n{prom.log_tail()}")
            try:
                with urllib.request.urlopen(f"{prom.url}/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        return prom
            except OSError:
                pass
            time.sleep(0.2)
        prom.stop()
        raise PrometheusError(f"prometheus not ready within {timeout:.0f}s:\n{prom.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        text = self.log.read_text(errors="replace") if self.log.is_file() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def api(self, path: str, **params: str) -> Any:
        """``GET /api/v1/<path>``'s ``data``; an error status raises PrometheusError."""
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        try:
            with urllib.request.urlopen(f"{self.url}/api/v1/{path}{query}", timeout=10) as resp:
                doc = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise PrometheusError(f"/api/v1/{path} {params}: {exc.code} {exc.read().decode(errors='replace')}") from exc
        if doc.get("status") != "success":
            raise PrometheusError(f"/api/v1/{path} {params}: {doc}")
        return doc["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """The instant vector (or scalar, as one sample) ``expr`` evaluates to now."""
        data = self.api("query", query=expr)
        if data["resultType"] == "vector":
            result: list[dict[str, Any]] = data["result"]
            return result
        return [{"metric": {}, "value": data["result"]}]

    def alerts(self, name: str | None = None, state: str | None = None) -> list[dict[str, Any]]:
        """``/api/v1/alerts``: active alerts (pending and firing), optionally of one name and state."""
        found: list[dict[str, Any]] = self.api("alerts")["alerts"]
        return [
            a
            for a in found
            if (name is None or a["labels"]["alertname"] == name) and (state is None or a["state"] == state)
        ]

    def targets_up(self, job: str) -> bool:
        active = self.api("targets", state="active")["activeTargets"]
        return any(t["labels"].get("job") == job and t["health"] == "up" for t in active)

    def rules_loaded(self) -> int:
        return sum(len(g["rules"]) for g in self.api("rules")["groups"])


def firing(
    prom: Prometheus, name: str, where: Callable[[dict[str, str]], bool] = lambda labels: True
) -> list[dict[str, Any]]:
    """The firing alerts named ``name`` whose labels satisfy ``where``."""
    return [a for a in prom.alerts(name, "firing") if where(a["labels"])]


def start_short_for(directory: Path, job: str, targets: Sequence[str]) -> Prometheus:
    """Prometheus (built first if it is not) scraping ``targets`` as ``job``, with the alert rules of
    deploy/monitoring/gpulabel-rules.yaml, every ``for:`` 1s (tools.monitoring.with_for: the same expressions,
    labels and annotations), its files in ``directory``; PrometheusError when it cannot be built or started."""
    build_prometheus()
    rules = directory / "gpulabel-rules-short-for.yaml"
    rules.write_text(monitoring.with_for(monitoring.RULES.read_text(), "1s"))
    return Prometheus.start(directory, job, targets, rules)
