"""A node status heartbeat is not a changed record: the monitor assesses nothing new for it.

The kubelet (and kwok) rewrite ``status.conditions[*].lastHeartbeatTime`` and the ``time`` of their own
managedFields entry for the status subresource at every heartbeat. No check reads either; the record keeps
only the managedFields entries that own labels (who wrote a label, and when: sync, sources, upgrade's ages).
"""

from __future__ import annotations

from typing import Any

import pytest

from gpulabel.app.checks import check_options
from gpulabel.checks.engine.assessment import FullEvaluator
from gpulabel.model import readers
from gpulabel.model.readers import node_from_json


def kubelet_node(beat: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "gpu-1",
            "labels": {"kubernetes.io/hostname": "gpu-1", "nvidia.com/gpu.present": "true"},
            "managedFields": [
                {
                    "manager": "kubelet",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-11-30T10:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:kubernetes.io/hostname": {}}}},
                },
                {
                    "manager": "gpu-operator",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-11-30T10:05:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:nvidia.com/gpu.present": {}}}},
                },
                {
                    "manager": "kubelet",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": beat,
                    "fieldsType": "FieldsV1",
                    "subresource": "status",
                    "fieldsV1": {"f:status": {"f:conditions": {'k:{"type":"Ready"}': {"f:lastHeartbeatTime": {}}}}},
                },
            ],
        },
        "spec": {},
        "status": {
            "capacity": {"nvidia.com/gpu": "8"},
            "allocatable": {"nvidia.com/gpu": "8"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "lastHeartbeatTime": beat,
                    "lastTransitionTime": "2026-11-30T10:00:00Z",
                }
            ],
        },
    }


@pytest.mark.parametrize("checked", [False, True], ids=["fast", "checked"])
def test_a_heartbeat_reads_as_the_same_record_and_a_label_write_does_not(
    checked: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if checked:  # the field-by-field reader, as for a node that does not fit the fast path's shape
        monkeypatch.setattr(readers, "fits", lambda *_: False)
    before = node_from_json(kubelet_node("2026-12-02T05:00:00Z"))
    beat = node_from_json(kubelet_node("2026-12-02T05:05:00Z"))
    assert beat == before
    assert [e["manager"] for e in before.managed_fields] == ["kubelet", "gpu-operator"]
    assert before.label_time("nvidia.com/gpu.present") == "2026-11-30T10:05:00Z"
    relabelled = kubelet_node("2026-12-02T05:05:00Z")
    relabelled["metadata"]["managedFields"][1]["time"] = "2026-12-02T05:05:00Z"
    assert node_from_json(relabelled) != before
    assert node_from_json(relabelled).label_time("nvidia.com/gpu.present") == "2026-12-02T05:05:00Z"


def test_the_evaluator_says_a_heartbeat_changed_nothing() -> None:
    evaluator = FullEvaluator(check_options())
    evaluator.reset("Node", [(("", "gpu-1"), node_from_json(kubelet_node("2026-12-02T05:00:00Z")))])
    assert evaluator.apply("Node", ("", "gpu-1"), node_from_json(kubelet_node("2026-12-02T05:05:00Z"))) is False
    taken = kubelet_node("2026-12-02T05:10:00Z")
    taken["status"]["allocatable"]["nvidia.com/gpu"] = "7"
    assert evaluator.apply("Node", ("", "gpu-1"), node_from_json(taken)) is True
