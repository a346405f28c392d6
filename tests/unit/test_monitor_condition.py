"""The optional node condition GPUStackProblem: what each node should carry, patched only on a change."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from gpulabel.controller.condition import OK, ConditionSink, NodeCondition, desired
from gpulabel.controller.monitor_metrics import MonitorMetrics
from gpulabel.errors import ForbiddenError
from gpulabel.model.findings import Finding
from tests.unit.monitor_fixtures import CORDONED, NODES, PAUSED, PLUGIN_MISSING, assessment, node


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


class Recorder:
    def __init__(self) -> None:
        self.applied: list[tuple[str, dict[str, Any]]] = []
        self.refuse = False

    def apply(self, node: str, body: Mapping[str, Any]) -> bool:
        if self.refuse:
            raise ForbiddenError("nodes/status", "403 forbidden", 403)
        self.applied.append((node, dict(body)))
        return True


def test_a_node_with_a_root_cause_is_true_with_its_link_and_cause_line_others_as_expected() -> None:
    want = desired(assessment([PLUGIN_MISSING, PAUSED, CORDONED]))
    assert want == {
        "gpu-a": NodeCondition(
            "True",
            "OperandPod",
            "cause gpu-a operand-pod 4 GPU(s): device-plugin missing (no pod on the node)",
        ),
        "gpu-b": NodeCondition("True", "Node", "cause gpu-b node 2 GPU(s): cordoned (spec.unschedulable)"),
    }
    assert desired(assessment([PAUSED])) == {"gpu-a": OK, "gpu-b": OK}  # cpu-1 is no GPU node: left alone
    assert OK.reason == "AsExpected" and OK.status == "False"


def test_patched_only_when_the_value_changes_the_transition_time_only_with_the_status() -> None:
    clock, recorder = Clock(), Recorder()
    metrics = MonitorMetrics()
    sink = ConditionSink(recorder, metrics, clock, background=False)
    sink.publish(assessment([PLUGIN_MISSING]))
    assert [(n, b["status"], b["reason"]) for n, b in sink_writes(sink, recorder)] == [
        ("gpu-a", "True", "OperandPod"),
        ("gpu-b", "False", "AsExpected"),
    ]
    first = recorder.applied[0][1]
    assert first["type"] == "GPUStackProblem" and first["lastTransitionTime"] == "2023-11-14T22:13:20Z"
    clock.now += 10
    sink.publish(assessment([PLUGIN_MISSING]))
    assert sink_writes(sink, recorder) == []  # nothing changed: no patch
    clock.now += 10
    other = Finding("operands", "not-ready", node="gpu-a", operand="device-plugin", severity="error", detail="x")
    sink.publish(assessment([other]))
    [(name, body)] = sink_writes(sink, recorder)
    assert (name, body["reason"], body["lastTransitionTime"]) == ("gpu-a", "OperandPod", "2023-11-14T22:13:20Z")
    assert body["message"] == "cause gpu-a operand-pod 4 GPU(s): device-plugin not-ready (x)"
    clock.now += 10
    sink.publish(assessment([]))
    [(name, body)] = sink_writes(sink, recorder)
    assert (name, body["status"], body["lastTransitionTime"]) == ("gpu-a", "False", "2023-11-14T22:13:50Z")
    text = metrics.render().decode()
    assert 'gpulabel_node_conditions_total{status="True"} 2.0' in text
    assert 'gpulabel_node_conditions_total{status="False"} 2.0' in text


def sink_writes(sink: ConditionSink, recorder: Recorder) -> list[tuple[str, dict[str, Any]]]:
    before = len(recorder.applied)
    sink.drain()
    return recorder.applied[before:]


def test_a_healthy_node_that_already_says_so_is_not_patched_at_start() -> None:
    recorder = Recorder()
    said = replace(node("gpu-a", {"nvidia.com/gpu.present": "true"}, 1), conditions={"GPUStackProblem": "False"})
    sink = ConditionSink(recorder, background=False)
    sink.publish(assessment([], nodes=(said,)))
    assert sink_writes(sink, recorder) == []


def test_a_node_no_longer_a_gpu_node_is_set_back_and_a_refused_patch_is_tried_again() -> None:
    clock, recorder = Clock(), Recorder()
    sink = ConditionSink(recorder, clock=clock, background=False)
    sink.publish(assessment([CORDONED]))
    sink.drain()
    plain = (*(n for n in NODES if n.name != "gpu-b"), node("gpu-b", {}))
    recorder.refuse = True
    sink.publish(assessment([], nodes=plain))
    assert sink_writes(sink, recorder) == []
    recorder.refuse = False
    assert [(n, b["status"]) for n, b in sink_writes(sink, recorder)] == [("gpu-b", "False")]
