"""Shared test settings.

Hypothesis' per-example deadline is off: this project measures speed with
benchmarks in bench/, not timed tests, and on a loaded 2-core machine a
deadline turns into a flaky failure.
"""

from __future__ import annotations

from typing import Any

from hypothesis import settings

settings.register_profile("gpulabel", deadline=None)
settings.load_profile("gpulabel")


# What a test asks to show whatever the outcome (the differentials' seeds, counts and tallies): a test records it
# with ``record_property(SHOWN, text)``; pytest-xdist carries a report's user properties to the controller, which
# prints them once at the end, so CI's log has them (a test's own print is captured, and lost on a worker).
SHOWN = "shown"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = [
        str(value)
        for reports in terminalreporter.stats.values()
        for report in reports
        if getattr(report, "when", "") == "call"
        for name, value in getattr(report, "user_properties", ())
        if name == SHOWN
    ]
    if lines:
        terminalreporter.section("shown by the tests")
        for line in lines:
            terminalreporter.write_line(line)
