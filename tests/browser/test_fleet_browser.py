"""report over a fleet in headless Chromium: the fleet table, and each cluster's report drawn by ``#cluster=NAME``."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gpulabel.cli.main import main
from tests.browser.chromium import Chromium

pytestmark = pytest.mark.browser

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def fleet_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("fleet") / "fleet.html"
    out, err = io.StringIO(), io.StringIO()
    argv = ["report", "--html", str(target)]
    for name in ("drifted-lab", "mixed-fleet"):
        argv += ["--cluster", f"{name}={ROOT / 'examples' / f'{name}.yaml'}"]
    assert main(argv, out, err) == 0, err.getvalue()
    return target


def test_the_fleet_page_opens_on_the_first_cluster_with_the_fleet_table(chromium: Chromium, fleet_html: Path) -> None:
    page = chromium.dump_dom(fleet_html.as_uri())
    assert page.errors() == []
    fleet = page.rows("fleet-table")
    assert [row[0] for row in fleet] == ["drifted-lab", "mixed-fleet"]
    assert [row[0] for row in page.rows("grid")] == [f"lab-node-{i}" for i in range(4)]
    assert '<div data-cluster="mixed-fleet" hidden="">' in page.dom


def test_a_cluster_fragment_draws_that_clusters_report(chromium: Chromium, fleet_html: Path) -> None:
    page = chromium.dump_dom(fleet_html.as_uri() + "#cluster=mixed-fleet")
    assert page.errors() == []
    names = [row[0] for row in page.rows("grid")]
    assert "dgx-a100-2" in names and "lab-node-0" not in names
    assert '<div data-cluster="drifted-lab" hidden="">' in page.dom
    assert '<div data-cluster="mixed-fleet">' in page.dom
