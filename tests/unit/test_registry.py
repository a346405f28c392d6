"""A check in the registry passed in is run by everything that runs the checks.

The registry is a value (``CheckOptions.registry``, default ``BUILTIN``): a registry with one more check,
``BUILTIN.with_check(c)``, given to ``check`` (text and ``-o json``), ``report`` (its summary line, its
``-o json`` and the page's data) and the controller's metrics makes each run it, with no other edit and
without changing what runs anywhere else.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gpulabel.app.checks import check_options, run_all
from gpulabel.app.report import ReportOptions, run_report
from gpulabel.app.session import Outcome, Session, Source
from gpulabel.checks.registry import BUILTIN, CHECKS, Check, CheckOptions, Registry
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


INSTANCE_TYPE = Check("instance-type", ("Node",), ("Node",), _unnamed_nodes, "nodes without an instance type")


@pytest.fixture
def registered() -> Iterator[Registry]:
    registry = BUILTIN.with_check(INSTANCE_TYPE)
    yield registry
    assert BUILTIN.checks == CHECKS and INSTANCE_TYPE not in BUILTIN.checks  # nothing else changed


def _printed(outcome: Outcome, fmt: str = "text") -> str:
    from gpulabel.render.table import style_for
    from gpulabel.render.text import emit

    out = io.StringIO()
    emit(outcome.result, fmt, out, style_for(out, headers=True))
    return out.getvalue()


def _session() -> Session:
    return Session(Source(snapshots=(LAB,)))


def test_a_registry_refuses_a_check_twice() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        BUILTIN.with_check(INSTANCE_TYPE).with_check(INSTANCE_TYPE)


def _expected() -> set[str]:
    from gpulabel.cluster.snapshot import load_snapshots

    state = load_snapshots([LAB])
    names = {n.name for n in state.nodes if "node.kubernetes.io/instance-type" not in n.labels}
    assert names, "the example has nodes without an instance type"
    return names


def test_a_registered_check_shows_in_check(registered: Registry) -> None:
    names = _expected()
    outcome = run_all(_session(), replace(check_options(), registry=registered))
    out = _printed(outcome)
    assert outcome.code == 1
    assert out.splitlines()[-2] == f"instance-type: {len(names)} finding(s) unlabelled={len(names)}"
    assert out.splitlines()[-1] == f"total: {len(names)} finding(s) error={len(names)} warning=0 info=0"
    assert "instance-type" not in _printed(run_all(_session(), check_options()))  # the default: gpulabel's own
    doc = json.loads(_printed(outcome, "json"))
    assert doc["summary"]["checks"]["instance-type"] == {
        "findings": len(names),
        "reasons": {"unlabelled": len(names)},
        "severities": {"error": len(names), "warning": 0, "info": 0},  # no reason table: errors
    }
    assert {f["node"] for f in doc["findings"] if f["check"] == "instance-type"} == names


def test_a_registered_check_shows_in_the_report(registered: Registry, tmp_path: Path) -> None:
    names = _expected()
    page = tmp_path / "r.html"
    outcome = run_report(_session(), ReportOptions(str(page), replace(check_options(), registry=registered)))
    assert outcome.code == 0 and f"instance-type={len(names)}" in _printed(outcome)
    rows = json.loads(_printed(outcome, "json"))["checks"]
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


def test_a_registered_node_check_shows_in_the_controllers_metrics(registered: Registry, tmp_path: Path) -> None:
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
    Reconciler(Client(), str(tmp_path), metrics=metrics, registry=registered).run_once(nodes)  # type: ignore[arg-type]
    text = metrics.render().decode()
    assert f'gpulabel_findings{{check="instance-type",reason="unlabelled"}} {float(len(names))}' in text
