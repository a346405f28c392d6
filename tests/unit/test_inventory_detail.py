"""The detail the text shows is kept everywhere: ``gpus`` prints the same columns on every row (text and JSON), the
report's GPU-stack rows keep a finding's arguments and its inventory the usable split, ``gpus`` reads a fleet."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from gpulabel.cli.main import main

EXAMPLES = Path(__file__).parents[2] / "examples"
HEALTH = str(EXAMPLES / "gpu-health.yaml")
MIXED = str(EXAMPLES / "mixed-fleet.yaml")
LAB = str(EXAMPLES / "lab-cluster.yaml")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def keys(line: str) -> list[str]:
    return [part.split("=", 1)[0] for part in line.split() if "=" in part]


@pytest.mark.parametrize("snapshot", [HEALTH, MIXED, LAB])
def test_every_gpus_row_has_the_same_columns_zeros_included(snapshot: str) -> None:
    code, out, _ = run("gpus", "--snapshot", snapshot)
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("product=")]
    assert len(rows) >= 2
    assert {tuple(keys(r)) for r in rows} == {tuple(keys(rows[0]))}
    assert {"usable", "unhealthy", "unschedulable", "mig_devices"} <= set(keys(rows[0]))
    doc = json.loads(run("gpus", "--snapshot", snapshot, "-o", "json")[1])
    assert len({tuple(r) for r in doc["inventory"]}) == 1  # one shape of row in JSON too


def test_a_healthy_row_says_its_zeros_where_it_said_nothing() -> None:
    out = run("gpus", "--snapshot", HEALTH)[1].splitlines()
    l4 = next(line for line in out if line.startswith("product=NVIDIA-L4 "))
    assert " usable=0 unhealthy=0 unschedulable=0 " in l4 and " mig_devices=- " in l4


def report_data(*argv: str) -> dict[str, Any]:
    code, page, _ = run("report", "--html", "-", *argv)
    assert code in (0, 1)
    found = re.search(r'<script type="application/json" id="gpulabel-data">(.*?)</script>', page, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found[1])
    return data


def test_the_reports_gpu_stack_rows_keep_the_condition_and_the_lost_gpus_as_the_text_says_them() -> None:
    data = report_data("--snapshot", HEALTH)
    names = [n["name"] for n in data["nodes"]]
    rows = {(names[r["node"]], r["check"], r["reason"]) for r in data["gpustack"]}
    text = run("check", "--snapshot", HEALTH, "-o", "wide")[1]  # wide: every finding, one line each
    assert "error h100-0 condition GPUXIDErrors=True reason=XID79 (" in text  # the words of the text
    assert ("h100-0", "health", "condition GPUXIDErrors=True reason=XID79") in rows
    assert ("h100-0", "health", "gpus-lost 1/8 GPU-3f2c4b7e-93d1-4e0c-8c4b-7a1e2d9f0b11") in rows


def test_the_reports_inventory_has_the_usable_split_of_gpus() -> None:
    data = report_data("--snapshot", HEALTH)
    inventory = json.loads(run("gpus", "--snapshot", HEALTH, "-o", "json")[1])["inventory"]
    split = ("usable", "unhealthy", "unschedulable")
    assert [{k: r[k] for k in ("product", *split)} for r in data["gpus"]] == [
        {k: r[k] for k in ("product", *split)} for r in inventory
    ]


def test_gpus_over_a_fleet_is_each_clusters_inventory_led_by_its_name() -> None:
    code, out, err = run("gpus", "--cluster", f"health={HEALTH}", "--cluster", f"lab={LAB}")
    assert (code, err) == (0, "")
    alone = {name: run("gpus", "--snapshot", path)[1].splitlines() for name, path in (("health", HEALTH), ("lab", LAB))}
    assert out.splitlines() == [f"{name}: {line}" for name in ("health", "lab") for line in alone[name]]
    doc = json.loads(run("gpus", "--cluster", f"health={HEALTH}", "--cluster", f"lab={LAB}", "-o", "json")[1])
    import jsonschema

    schema = json.loads((EXAMPLES.parent / "docs" / "schema" / "gpulabel-v1.json").read_text())
    jsonschema.validate(doc, schema)  # the fleet's List, as check's
    assert doc["kind"] == "List" and [(i["cluster"], i["kind"]) for i in doc["items"]] == [
        ("health", "GpusResult"),
        ("lab", "GpusResult"),
    ]


def test_gpus_over_a_fleet_refuses_a_snapshot_beside_it() -> None:
    code, _, err = run("gpus", "--cluster", f"a={LAB}", "--snapshot", LAB)
    assert (code, err) == (2, "gpulabel: --snapshot: not with --cluster: name each snapshot --cluster NAME=FILE\n")
