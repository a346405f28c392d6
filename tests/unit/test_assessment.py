"""The monitor's oracle (FullEvaluator) answers what ``check`` answers on the same objects."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from gpulabel.app.checks import Verdict, check_options, run_all
from gpulabel.app.session import Session, Source
from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.checks.registry import CHECKS
from gpulabel.model.cluster import ClusterState

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
FIELDS = {"Node": "nodes", "Pod": "pods", "DaemonSet": "daemonsets", "ClusterPolicy": "cluster_policies"}


def _key(record: Any) -> tuple[str, str]:
    if isinstance(record, dict):
        return ("", str(record.get("metadata", {}).get("name", "")))
    return (str(getattr(record, "namespace", "")), str(record.name))


def _fed(state: ClusterState) -> FullEvaluator:
    ev = FullEvaluator(replace(check_options(), now=AT), source=state.source)
    for kind, name in FIELDS.items():
        if kind in state.kinds:
            ev.reset(kind, ((_key(r), r) for r in getattr(state, name)))
    return ev


@pytest.mark.parametrize(
    ("path", "found"), [("examples/gpu-operator-cluster.yaml", True), ("examples/lab-cluster.yaml", False)]
)
def test_full_evaluator_equals_check(path: str, found: bool) -> None:
    session = Session(Source(snapshots=(path,)))
    want = run_all(session, replace(check_options(), now=AT), Verdict())
    state = session.state(sorted({k for c in CHECKS for k in c.kinds}))
    assert not state.kinds - set(FIELDS)  # these examples hold no DRA or NFD objects
    got = _fed(state).assess(AT.timestamp())
    assert bool(got.findings) is found and got.findings == want.result.findings
    assert got.result.sections == want.result.sections  # the root causes, then each check's tables
    assert [c.line() for c in got.causes] == list(want.result.sections[0].text)


def test_changes_are_seen_and_deletes_forget() -> None:
    session = Session(Source(snapshots=("examples/gpu-operator-cluster.yaml",)))
    state = session.state(sorted({k for c in CHECKS for k in c.kinds}))
    ev = _fed(state)
    before = ev.assess(AT.timestamp())
    node = next(n for n in state.nodes if any(f.node == n.name for f in before.findings))
    ev.apply("Node", ("", node.name), None)
    after = ev.assess(AT.timestamp())
    assert not any(f.node == node.name and f.check == "audit" for f in after.findings)
    ev.apply("Node", ("", node.name), node)
    assert ev.assess(AT.timestamp()).findings == before.findings
    with pytest.raises(KeyError):
        ev.reset("Nonsense", ())
