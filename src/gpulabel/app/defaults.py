"""``monitor``'s defaults, apart from :mod:`gpulabel.app.monitor` so that the CLI's flags can print them
without importing every check (``--help``, and every command, builds the whole parser)."""

from __future__ import annotations

__all__ = ["METRICS_PORT", "MONITOR_LEASE_NAME"]

MONITOR_LEASE_NAME = "gpulabel-monitor"
METRICS_PORT = 9102
