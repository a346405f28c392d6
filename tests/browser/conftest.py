"""Browser tests: pages rendered by headless Chromium (Debian package chromium, /usr/bin/chromium).

They never skip: without Chromium they fail and say how to install it.
"""

from __future__ import annotations

import pytest

from tests.browser.chromium import Chromium, find_chromium


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: renders pages in headless Chromium (scripts/install-test-deps.sh)")


@pytest.fixture(scope="session")
def chromium() -> Chromium:
    path, problem = find_chromium()
    if path is None:
        pytest.fail(problem, pytrace=False)
    return Chromium(path)
