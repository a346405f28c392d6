"""A check added with ``register()`` is run by everything that runs the registered checks.

``check`` (text and ``-o json``), ``report`` (its summary line, its ``-o json``
and the page's data) and the controller's metrics all take the registry as it
is, so a new check needs no other edit.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpulabel.checks.registry import CHECKS, Check, CheckOptions, register
from gpulabel.cli.main import main
from gpulabel.model.cluster import ClusterState
from gpulabel.model.findings import Finding, Result

ROOT = Path(__file__).resolve().parents[2]
LAB = str(ROOT / "examples" / "lab-cluster.yaml")


def _unnamed_nodes(state: ClusterState, opts: CheckOptions) -> Result:
    """Every node without a node.kubernetes.io/instance-type label."""
    key = "node.kubernetes.io/instance-type"
    return Result(
        "instance-type",
        tuple(Finding("instance-type", "unlabelled", node=n.name, key=key) for n in state.nodes if key not in n.labels),
    )


@pytest.fixture
def registered() -> Iterator[Check]:
    check = register(Check("instance-type", ("Node",), ("Node",), _unnamed_nodes, "nodes without an instance type"))
    try:
        yield check
    finally:
        CHECKS.remove(check)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _expected() -> set[str]:
    from gpulabel.cluster.snapshot import load_snapshots

    state = load_snapshots([LAB])
    names = {n.name for n in state.nodes if "node.kubernetes.io/instance-type" not in n.labels}
    assert names, "the example has nodes without an instance type"
    return names


def test_a_registered_check_shows_in_check(registered: Check) -> None:
    names = _expected()
    code, out, _ = run("check", "--snapshot", LAB)
    assert code == 1
    assert out.splitlines()[-2] == f"instance-type: {len(names)} finding(s) unlabelled={len(names)}"
    assert out.splitlines()[-1] == f"total: {len(names)} finding(s) error={len(names)} warning=0 info=0"
    code, out, _ = run("check", "--snapshot", LAB, "-o", "json")
    doc = json.loads(out)
    assert doc["summary"]["checks"]["instance-type"] == {
        "findings": len(names),
        "reasons": {"unlabelled": len(names)},
        "severities": {"error": len(names), "warning": 0, "info": 0},  # no reason table: errors
    }
    assert {f["node"] for f in doc["findings"] if f["check"] == "instance-type"} == names


def test_a_registered_check_shows_in_the_report(registered: Check, tmp_path: Path) -> None:
    names = _expected()
    page = tmp_path / "r.html"
    code, out, _ = run("report", "--snapshot", LAB, "--html", str(page))
    assert code == 0 and f"instance-type={len(names)}" in out
    code, out, _ = run("report", "--snapshot", LAB, "--html", str(page), "-o", "json")
    rows = json.loads(out)["checks"]
    assert {"check": "instance-type", "findings": len(names)}.items() <= next(
        r for r in rows if r["check"] == "instance-type"
    ).items()
    text = page.read_text()
    data: dict[str, Any] = json.loads(
        re.search(r'<script type="application/json" id="gpulabel-data">(.*?)</script>', text, re.S).group(1)  # type: ignore[union-attr]
    )
    assert data["summary"]["instance-type"]["findings"] == len(names)
    node_names = [n["name"] for n in data["nodes"]]
    assert {node_names[r["node"]] for r in data["gpustack"] if r["check"] == "instance-type"} == names
    assert "<b>instance-type</b>" in text


def test_a_registered_node_check_shows_in_the_controllers_metrics(registered: Check, tmp_path: Path) -> None:
    from gpulabel.cluster.snapshot import load_snapshots
    from gpulabel.controller.metrics import Metrics
    from gpulabel.controller.reconcile import Reconciler

    class Client:
        class retrier:
            @staticmethod
            def cancel() -> None:
                return None

    names = _expected()
    nodes = {n.name: n for n in load_snapshots([LAB]).nodes}
    metrics = Metrics()
    Reconciler(Client(), str(tmp_path), metrics=metrics).run_once(nodes)  # type: ignore[arg-type]
    text = metrics.render().decode()
    assert f'gpulabel_findings{{check="instance-type",reason="unlabelled"}} {float(len(names))}' in text
