"""Shared test settings.

Hypothesis' per-example deadline is off: this project measures speed with
benchmarks in bench/, not timed tests, and on a loaded 2-core machine a
deadline turns into a flaky failure.
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("gpulabel", deadline=None)
settings.load_profile("gpulabel")
