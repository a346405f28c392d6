"""place checks a manifest's shape as the API server does (``k8s/workloads.py``, ``k8s/podvalidation.py``).

The rows and the server's messages are in ``tests/workload_rows.py``, recorded
from labcluster (k8s.io/kubernetes v1.37.2) and re-checked live by
``tests/cluster/test_shape_cluster.py``; each row names the upstream function.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpulabel.cluster.manifests import workload_from_object, workloads_from_bytes
from gpulabel.errors import ManifestError
from gpulabel.k8s.workloads import selector_matches
from tests.workload_rows import ROWS


@pytest.mark.parametrize(("name", "upstream", "o", "recorded"), ROWS, ids=[r[0] for r in ROWS])
def test_the_servers_message(name: str, upstream: str, o: dict[str, Any], recorded: str) -> None:
    try:
        workload_from_object(o, "m.yaml")
    except ManifestError as err:
        assert err.message == recorded
        assert str(err) == f"m.yaml: {recorded}"
    else:
        assert recorded == ""


def test_the_rows_cover_accepted_and_refused_objects_of_every_kind() -> None:
    assert {o["kind"] for _, _, o, _ in ROWS} == {"Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"}
    assert sum(1 for *_, m in ROWS if not m) >= 3


SELECTORS = [
    ("a missing selector matches nothing (LabelSelectorAsSelector(nil) is Nothing)", None, {"a": "1"}, False),
    ("an empty selector matches everything", {}, {}, True),
    ("matchLabels need each key with that value", {"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
    (
        "NotIn matches an absent key",
        {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]},
        {},
        True,
    ),
    ("In needs the key", {"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]}, {}, False),
    (
        "DoesNotExist fails on a present key",
        {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]},
        {"a": ""},
        False,
    ),
]


@pytest.mark.parametrize(("name", "selector", "labels", "matches"), SELECTORS, ids=[s[0] for s in SELECTORS])
def test_selector_matching(name: str, selector: Any, labels: dict[str, str], matches: bool) -> None:
    assert selector_matches(selector, labels) is matches


def test_a_deployment_with_template_null_is_refused_not_placed() -> None:
    text = b"kind: Deployment\napiVersion: apps/v1\nmetadata: {name: d}\n"
    text += b"spec: {selector: {matchLabels: {a: b}}, template: null}\n"
    with pytest.raises(ManifestError, match=r"spec.template.spec.containers: Required value"):
        workloads_from_bytes(text, "d.yaml")
