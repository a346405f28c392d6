"""The monitor's Event and node-condition sinks against labcluster's real API server (issue 23).

An Assessment is made from the live cluster the way ``check`` makes it (every check over one load,
judged), with a GPU node whose device-plugin pod is missing: the NVIDIA device plugin's own
DaemonSet (no operator: see test_standalone_cluster.py), and a NoExecute taint it does not tolerate,
so the taint manager evicts its pod and the DaemonSet controller makes no other. It is published
through the sinks with the real API client: ``kubectl describe node`` shows gpulabel's Warning, the
Normal after the repair, repeats aggregated into the Event's ``series``; the node condition appears
with its own field manager owning only itself.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from labcluster_support import LabCluster, gpu_node_manifest, node_is_ready, wait_for
from test_standalone_cluster import DS, GFD, device_plugin_daemonset, plugin_pods, running_on

from gpulabel.app.session import Session, Source
from gpulabel.checks.assessment import Accepted, Assessment, judged
from gpulabel.checks.registry import CHECKS, CheckOptions, run_checks
from gpulabel.controller.condition import MANAGER, ApiConditionWriter, ConditionSink
from gpulabel.controller.events import EventKey, EventPlanner, EventSink, EventWriter, Regarding, event_name

NODE = "ms-gpu"
TAINT = "gpulabel-test/broken"
WARNING = EventKey(Regarding("Node", "", NODE), "Warning", "OperandMissing")
RESOLVED = EventKey(Regarding("Node", "", NODE), "Normal", "OperandMissingResolved")


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def assess(session: Session, at: float) -> Assessment:
    """What ``check`` finds now, judged, as the monitor's evaluators make it."""
    state = session.state(sorted({k for c in CHECKS for k in c.kinds}))
    result, causes = judged(run_checks(state, CheckOptions()), state, Accepted())
    return Assessment(result, causes, state, at)


@pytest.fixture
def plugin_node(labcluster: LabCluster) -> Iterator[str]:
    labcluster.apply(gpu_node_manifest(NODE, GFD, gpus=1))
    wait_for(lambda: node_is_ready(labcluster.get("node", NODE)), timeout=60)
    labcluster.apply(device_plugin_daemonset())
    wait_for(lambda: running_on(labcluster, NODE), timeout=60, message="for the device plugin on the node")
    yield NODE
    labcluster.kubectl("delete", "daemonset", "-n", "kube-system", DS, "--wait=false", "--ignore-not-found")
    labcluster.kubectl("delete", "node", NODE, "--wait=false", "--ignore-not-found")
    labcluster.kubectl("delete", "events", "-n", "default", "--field-selector", f"involvedObject.name={NODE}")


def event(cluster: LabCluster, key: EventKey) -> dict[str, Any] | None:
    proc = cluster.kubectl("get", "events.events.k8s.io", "-n", "default", event_name(key), "-o", "json", check=False)
    return json.loads(proc.stdout) if proc.returncode == 0 else None


def describe_events(cluster: LabCluster) -> list[str]:
    """The Events section of ``kubectl describe node``, one line per Event, words joined by one space."""
    text = cluster.kubectl("describe", "node", NODE).stdout
    section = text.split("\nEvents:", 1)[1].splitlines()[1:]
    return [" ".join(line.split()) for line in section if line.strip() and not line.strip().startswith("----")]


def condition(node: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in node["status"].get("conditions", []) if c["type"] == "GPUStackProblem"), None)


def test_events_and_the_condition_tell_why_the_node_has_no_usable_gpus(
    labcluster: LabCluster, plugin_node: str
) -> None:
    session = Session(Source(kubeconfig=str(labcluster.kubeconfig)))
    client = session.client()
    clock = Clock()
    events = EventSink(EventWriter(client, "gpulabel-monitor-test"), EventPlanner(clock), background=False)
    conditions = ConditionSink(ApiConditionWriter(client), clock=clock, background=False)

    def publish(assessment: Assessment) -> list[EventKey]:
        events.publish(assessment)
        conditions.publish(assessment)
        conditions.drain()
        return [s.key for s in events.drain() if s.key.regarding.name == NODE]

    healthy = assess(session, clock.now)
    assert not [f for f in healthy.findings if f.node == NODE and f.severity in ("error", "warning")]
    assert publish(healthy) == []
    assert condition(labcluster.get("node", NODE))["status"] == "False"  # type: ignore[index]

    # the device plugin's pod goes: a NoExecute taint it does not tolerate, the taint manager evicts it
    labcluster.kubectl("taint", "node", NODE, f"{TAINT}=yes:NoExecute")
    wait_for(lambda: NODE not in plugin_pods(labcluster), timeout=60, message="for the pod to be evicted")
    clock.now += 5
    broken = assess(session, clock.now)
    assert publish(broken) == [WARNING]
    warning = event(labcluster, WARNING)
    assert warning is not None
    assert (warning["type"], warning["reason"], warning["reportingController"]) == (
        "Warning",
        "OperandMissing",
        "gpulabel",
    )
    assert warning["regarding"] == {"apiVersion": "v1", "kind": "Node", "name": NODE, "uid": NODE}
    assert warning["note"].startswith(f"{NODE} device-plugin missing: kube-system/{DS} does not tolerate taint ")
    assert f"; cause {NODE} daemonset 1 GPU(s): device-plugin missing" in warning["note"]
    assert "series" not in warning
    described = describe_events(labcluster)
    assert any(line.startswith("Warning OperandMissing") and " gpulabel " in line for line in described), described

    node = labcluster.get("node", NODE, "--show-managed-fields")
    cond = condition(node)
    assert cond is not None and (cond["status"], cond["reason"]) == ("True", "Daemonset")
    assert cond["message"].startswith(f"cause {NODE} daemonset 1 GPU(s): device-plugin missing")
    mine = [m for m in node["metadata"]["managedFields"] if m["manager"] == MANAGER]
    assert [(m["operation"], m["subresource"]) for m in mine] == [("Apply", "status")]
    assert mine[0]["fieldsV1"] == {
        "f:status": {
            "f:conditions": {
                'k:{"type":"GPUStackProblem"}': {
                    ".": {},
                    "f:lastHeartbeatTime": {},
                    "f:lastTransitionTime": {},
                    "f:message": {},
                    "f:reason": {},
                    "f:status": {},
                    "f:type": {},
                }
            }
        }
    }
    assert condition(labcluster.get("node", NODE)) == cond
    transition = cond["lastTransitionTime"]

    # repeated publishes: the same picture says nothing new; after the refresh the series counts it
    clock.now += 60
    assert publish(assess(session, clock.now)) == []
    clock.now += 30 * 60
    assert publish(assess(session, clock.now)) == [WARNING]
    series = event(labcluster, WARNING)["series"]  # type: ignore[index]
    assert series["count"] == 2
    assert condition(labcluster.get("node", NODE))["lastTransitionTime"] == transition  # type: ignore[index]

    # the repair: the taint goes, the DaemonSet controller makes the pod again, kwok runs it
    labcluster.kubectl("taint", "node", NODE, f"{TAINT}-")
    wait_for(lambda: running_on(labcluster, NODE), timeout=60, message="for the device plugin to be back")
    clock.now += 5
    repaired = assess(session, clock.now)
    assert publish(repaired) == [RESOLVED]
    resolved = event(labcluster, RESOLVED)
    assert resolved is not None and resolved["type"] == "Normal" and "series" not in resolved
    assert resolved["note"].startswith(f"no longer found: {NODE} device-plugin missing")
    described = describe_events(labcluster)
    assert any(line.startswith("Normal OperandMissingResolved") and " gpulabel " in line for line in described)
    cond = condition(labcluster.get("node", NODE))
    assert cond is not None and (cond["status"], cond["reason"]) == ("False", "AsExpected")

    # it comes back and goes again: the same two Events, their series counting
    clock.now += 5
    assert publish(broken) == [WARNING]
    clock.now += 5
    assert publish(repaired) == [RESOLVED]
    assert event(labcluster, WARNING)["series"]["count"] == 3  # type: ignore[index]
    assert event(labcluster, RESOLVED)["series"]["count"] == 2  # type: ignore[index]
    described = describe_events(labcluster)
    assert any(line.startswith("Warning OperandMissing") and "(x3 over" in line for line in described), described
    mine = [
        e for e in labcluster.get("events.events.k8s.io", "-n", "default")["items"] if e["regarding"]["name"] == NODE
    ]
    assert sorted(e["reason"] for e in mine if e["reportingController"] == "gpulabel") == [
        "OperandMissing",
        "OperandMissingResolved",
    ]


def test_a_monitor_that_restarts_continues_the_series_and_dry_run_writes_nothing(
    labcluster: LabCluster, plugin_node: str
) -> None:
    session = Session(Source(kubeconfig=str(labcluster.kubeconfig)))
    client = session.client()
    labcluster.kubectl("taint", "node", NODE, f"{TAINT}=yes:NoExecute")
    wait_for(lambda: NODE not in plugin_pods(labcluster), timeout=60, message="for the pod to be evicted")
    broken = assess(session, time.time())

    dry = EventSink(EventWriter(client, "dry", dry_run=True), EventPlanner(), background=False)
    dry.publish(broken)
    assert WARNING in [s.key for s in dry.drain()]
    assert event(labcluster, WARNING) is None

    for instance in ("first", "second"):  # a new process: its planner knows nothing, the Event exists
        sink = EventSink(EventWriter(client, instance), EventPlanner(), background=False)
        sink.publish(broken)
        assert WARNING in [s.key for s in sink.drain()]
    found = event(labcluster, WARNING)
    assert found is not None and found["reportingInstance"] == "first" and found["series"]["count"] == 2
    labcluster.kubectl("taint", "node", NODE, f"{TAINT}-")
