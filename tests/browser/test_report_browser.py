"""report --html in headless Chromium: the tables the script draws, the URL-fragment view, escaping, 5,000 nodes.

Screenshots go to test-output/ at the repository root (printed; run pytest with -s to see the paths).
"""

from __future__ import annotations

import io
import json
import os
import re
import time
from pathlib import Path

import pytest
from bench.synth import Synth, generate

from gpulabel.cli.main import main
from tests.browser.chromium import Chromium, Page, png_size
from tests.objects import as_list
from tests.unit.test_report import HOSTILE_NODE, HOSTILE_POD, HOSTILE_VALUE, hostile_objects

pytestmark = pytest.mark.browser

ROOT = Path(__file__).parents[2]
OUTPUT = ROOT / "test-output"
DRIFTED = str(ROOT / "examples" / "drifted-lab.yaml")
OPERANDS = [
    "driver",
    "container-toolkit",
    "device-plugin",
    "gpu-feature-discovery",
    "dcgm-exporter",
    "operator-validator",
]
FIRST_OPERAND = 4  # grid columns: node, GPU model, GPUs, status, then the operands


def report(snapshot: str, target: Path) -> float:
    """Write the page with the CLI; the seconds it took."""
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    code = main(["report", "--snapshot", snapshot, "--html", str(target)], out, err)
    elapsed = time.perf_counter() - start
    assert (code, err.getvalue()) == (0, ""), err.getvalue()
    return elapsed


def names(page: Page) -> list[str]:
    return [row[0] for row in page.rows("grid")]


@pytest.fixture(scope="module")
def drifted_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("report") / "drifted-lab.html"
    here = os.getcwd()
    os.chdir(ROOT)  # the header names the snapshot as given: a relative path, as in the README
    try:
        report("examples/drifted-lab.yaml", target)
    finally:
        os.chdir(here)
    return target


def test_the_drifted_lab_page_draws_every_node_and_operand_state(chromium: Chromium, drifted_html: Path) -> None:
    page = chromium.dump_dom(drifted_html.as_uri())
    assert page.errors() == []
    assert page.text_of("count") == "4 of 4 nodes"
    grid = {row[0]: dict(zip(OPERANDS, row[FIRST_OPERAND:], strict=False)) for row in page.rows("grid")}
    assert list(grid) == ["lab-node-0", "lab-node-1", "lab-node-2", "lab-node-3"]
    assert grid["lab-node-0"]["container-toolkit"] == "not ready"
    assert grid["lab-node-0"]["device-plugin"] == "out of order"
    assert grid["lab-node-1"]["driver"] == "running"
    assert grid["lab-node-2"]["driver"] == "\u2013"
    assert {grid["lab-node-3"][op] for op in OPERANDS} == {"missing"}
    titles = dict(zip(names(page), page.titles("grid"), strict=True))
    assert "does not tolerate taint dedicated=training:NoSchedule" in titles["lab-node-3"][FIRST_OPERAND]
    assert titles["lab-node-1"][FIRST_OPERAND] == "running and ready"
    assert len(page.rows("audit-table")) == 5
    assert [row[:2] for row in page.rows("hazards-table")] == [["ml/train-a", "lab-node-1"]]
    assert "ml/train-b" in page.text_of("pending-list")


def test_the_mixed_fleet_page_shows_the_inventory_and_the_gpu_stack_findings(
    chromium: Chromium, tmp_path: Path
) -> None:
    target = tmp_path / "mixed-fleet.html"
    report(str(ROOT / "examples" / "mixed-fleet.yaml"), target)
    page = chromium.dump_dom(target.as_uri())
    assert page.errors() == []
    gpus = page.rows("gpus-table")
    assert gpus[0][:5] == ["NVIDIA-A100-SXM4-80GB", "550", "mixed", "none", "2"]  # most nodes first
    assert len(gpus) == 9 and ["(unlabelled)", "-", "-", "-", "1"] in [row[:5] for row in gpus]  # gpu-new-0
    stack = {(row[0], row[2], row[4]) for row in page.rows("gpustack-table")}
    assert ("dgx-a100-2", "mig", "failed") in stack
    assert ("a10-1", "upgrade", "upgrade-failed") in stack
    assert ("l4-ts-1", "capacity", "allocatable-mismatch") in stack
    assert ("l4-2", "sharing", "shared-suffix") in stack


@pytest.mark.parametrize("example", ["drifted-lab", "gpu-operator-cluster"])
def test_at_1400_px_the_operands_table_shows_every_column(chromium: Chromium, tmp_path: Path, example: str) -> None:
    target = tmp_path / f"{example}.html"
    report(str(ROOT / "examples" / f"{example}.yaml"), target)
    page = chromium.dump_dom(target.as_uri())  # the window is 1400 x 1000
    assert page.errors() == []
    overflow = re.search(r'data-grid-overflow-px="(\d+)"', page.dom)
    assert overflow is not None and overflow.group(1) == "0"  # nothing of the table past the right edge
    assert len(page.rows("grid")[0]) >= FIRST_OPERAND + len(OPERANDS) + 3  # every operand, audit, hazards, taints
    png = OUTPUT / f"report-operands-1400-{example}.png"
    page = chromium.screenshot(target.as_uri(), png)
    print(f"\nscreenshot: {png}")
    assert page.errors() == [] and png_size(png) == (1400, 1000)


def test_a_small_fleet_opens_on_every_node(chromium: Chromium, drifted_html: Path) -> None:
    page = chromium.dump_dom(drifted_html.as_uri())
    assert page.text_of("count") == "4 of 4 nodes"
    assert 'option value="all" selected' in page.dom or names(page) == [f"lab-node-{i}" for i in range(4)]


def test_the_drifted_lab_screenshot_is_a_full_window(chromium: Chromium, drifted_html: Path) -> None:
    png = OUTPUT / "report-drifted-lab.png"
    page = chromium.screenshot(drifted_html.as_uri(), png)
    print(f"\nscreenshot: {png}")
    assert page.errors() == []
    assert png_size(png) == (1400, 1000)
    assert png.stat().st_size > 30_000  # a page of tables, not a blank window


@pytest.mark.parametrize(
    ("fragment", "nodes", "audit_rows"),
    [
        ("", ["lab-node-0", "lab-node-1", "lab-node-2", "lab-node-3"], 5),
        ("filter=lab-node-3", ["lab-node-3"], 3),
        ("filter=LAB-NODE-1", ["lab-node-1"], 2),
        ("gpu=NVIDIA-A10", ["lab-node-1"], 2),
        ("gpu=-", ["lab-node-2", "lab-node-3"], 3),
        ("show=problems", ["lab-node-0", "lab-node-1", "lab-node-3"], 5),
        ("show=state:n", ["lab-node-0"], 5),
        ("sort=op:driver", ["lab-node-3", "lab-node-0", "lab-node-1", "lab-node-2"], 5),
        ("sort=name&desc=1", ["lab-node-3", "lab-node-2", "lab-node-1", "lab-node-0"], 5),
        ("filter=nothing-matches", [], 0),
    ],
    ids=[
        "no fragment shows every node",
        "a name filter keeps the matching node",
        "the name filter ignores case",
        "a GPU model keeps its nodes",
        "the no-model choice keeps nodes without gpu.product",
        "problems keeps nodes with any finding",
        "a state keeps nodes with an operand in it",
        "an operand column sorts problems first",
        "a descending sort reverses",
        "a filter that matches nothing leaves the tables empty",
    ],
)
def test_the_url_fragment_filters_and_sorts_the_tables(
    chromium: Chromium, drifted_html: Path, fragment: str, nodes: list[str], audit_rows: int
) -> None:
    page = chromium.dump_dom(drifted_html.as_uri() + ("#" + fragment if fragment else ""))
    assert page.errors() == []
    assert names(page) == (nodes or ["none"])  # an empty table says so in one cell
    assert page.text_of("count") == f"{len(nodes)} of 4 nodes"
    assert len([r for r in page.rows("audit-table") if r != ["none"]]) == audit_rows


def test_markup_in_a_snapshot_is_shown_as_text_and_never_runs(chromium: Chromium, tmp_path: Path) -> None:
    snapshot = tmp_path / "hostile.json"
    snapshot.write_text(json.dumps(as_list(*hostile_objects())))
    target = tmp_path / "hostile.html"
    report(str(snapshot), target)
    page = chromium.dump_dom(target.as_uri())
    assert page.errors() == []  # a blocked handler would show up here as a CSP refusal
    assert page.count_tags("img") == 0 and page.count_tags("svg") == 0
    assert page.count_tags("script") == 2
    assert HOSTILE_POD in page.text_of("pending-list")
    assert sorted(names(page)) == sorted(["gpu-a", HOSTILE_NODE])
    assert HOSTILE_VALUE in [row[1] for row in page.rows("grid")]


# -- 5,000 nodes -------------------------------------------------------------------


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Synth, Path]:
    directory = tmp_path_factory.mktemp("synth")
    synth = generate(5000, seed=0)
    snapshot = directory / "synth-5000.json"
    snapshot.write_text(json.dumps(synth.as_list()))
    target = directory / "synth-5000.html"
    seconds = report(str(snapshot), target)
    size = target.stat().st_size
    print(f"\nreport of 5,000 nodes: {seconds:.2f}s to write, {size / 1024:.0f} KiB")
    assert size < 2_000_000, "the page should stay well under 2 MB at 5,000 nodes"
    return synth, target


def test_a_5000_node_page_opens_on_the_nodes_with_problems(chromium: Chromium, synthetic: tuple[Synth, Path]) -> None:
    synth, target = synthetic
    page = chromium.dump_dom(target.as_uri())
    problem_nodes = {n for kind, ns in synth.problems.items() if kind != "pending" for n in ns}
    assert page.errors() == []
    assert problem_nodes and sorted(names(page)) == sorted(problem_nodes)
    assert page.text_of("count") == f"{len(problem_nodes):,} of 5,000 nodes"


def test_a_5000_node_page_draws_every_row(chromium: Chromium, synthetic: tuple[Synth, Path]) -> None:
    _, target = synthetic
    page = chromium.dump_dom(target.as_uri() + "#show=all")
    assert page.errors() == []
    assert page.text_of("count") == "5,000 of 5,000 nodes"
    rows = page.rows("grid")
    assert len(rows) == 5000
    draw = re.search(r'data-draw-ms="(\d+)"', page.dom)
    assert draw is not None
    print(f"\nfirst draw of 5,000 rows: {draw.group(1)} ms")


def test_a_5000_node_page_filters_to_the_problem_nodes(chromium: Chromium, synthetic: tuple[Synth, Path]) -> None:
    synth, target = synthetic
    page = chromium.dump_dom(target.as_uri() + "#show=problems&gpu=NVIDIA-L4")
    problem_nodes = {n for kind, ns in synth.problems.items() if kind != "pending" for n in ns}
    l4 = {
        o["metadata"]["name"]
        for o in synth.objects
        if o["kind"] == "Node" and o["metadata"]["labels"].get("nvidia.com/gpu.product") == "NVIDIA-L4"
    }
    expected = sorted(problem_nodes & l4)
    assert page.errors() == []
    assert expected and names(page) == expected


def test_a_5000_node_screenshot_is_a_full_window(chromium: Chromium, synthetic: tuple[Synth, Path]) -> None:
    _, target = synthetic
    png = OUTPUT / "report-synth-5000.png"
    page = chromium.screenshot(target.as_uri(), png)
    print(f"\nscreenshot: {png}")
    assert page.errors() == []
    assert png_size(png) == (1400, 1000)
    assert png.stat().st_size > 30_000


def test_the_gpu_health_page_keeps_the_condition_the_lost_gpus_and_the_usable_split(
    chromium: Chromium, tmp_path: Path
) -> None:
    """What ``check`` and ``gpus`` say in text is on the page: the condition's type and reason, the lost GPU's
    count and device, and usable/unhealthy/unschedulable on every inventory row, zeros included."""
    target = tmp_path / "gpu-health.html"
    report(str(ROOT / "examples" / "gpu-health.yaml"), target)
    page = chromium.dump_dom(target.as_uri())
    assert page.errors() == []
    stack = {(row[0], row[2], row[4]) for row in page.rows("gpustack-table")}
    assert ("h100-0", "health", "condition GPUXIDErrors=True reason=XID79") in stack
    assert ("h100-0", "health", "gpus-lost 1/8 GPU-3f2c4b7e-93d1-4e0c-8c4b-7a1e2d9f0b11") in stack
    gpus = {row[0]: row[-3:] for row in page.rows("gpus-table")}  # usable, unhealthy, unschedulable
    assert gpus == {
        "NVIDIA-H100-80GB-HBM3": ["0", "8", "8"],
        "NVIDIA-A100-SXM4-40GB": ["2", "0", "0"],
        "NVIDIA-L4": ["0", "0", "0"],
    }
