"""Snapshot files: what kubectl writes loads; anything else is one clear error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpulabel.cluster.snapshot import load_snapshots
from gpulabel.errors import SnapshotError
from tests.objects import as_list, daemonset, gpu_node, node, pod

EXAMPLE = Path(__file__).parents[2] / "examples" / "lab-cluster.yaml"


def write(tmp_path: Path, name: str, text: str | bytes) -> str:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(p)


def test_the_bundled_lab_loads_with_its_three_nodes() -> None:
    state = load_snapshots([str(EXAMPLE)])
    assert [n.name for n in state.nodes] == ["lab-node-0", "lab-node-1", "lab-node-2"]
    assert len(state.daemonsets) == 6
    assert any(p.name == "train-a" and p.node_name == "lab-node-1" for p in state.pods)


def test_a_json_list_loads(tmp_path: Path) -> None:
    f = write(tmp_path, "s.json", json.dumps(as_list(gpu_node("a"), node("b"))))
    assert [n.name for n in load_snapshots([f]).nodes] == ["a", "b"]


def test_typed_lists_give_their_items_a_kind(tmp_path: Path) -> None:
    doc = {"apiVersion": "v1", "kind": "NodeList", "items": [{"metadata": {"name": "x"}}]}
    f = write(tmp_path, "s.json", json.dumps(doc))
    assert [n.name for n in load_snapshots([f]).nodes] == ["x"]


def test_multi_document_yaml_loads(tmp_path: Path) -> None:
    text = yaml.safe_dump(node("a")) + "---\n" + yaml.safe_dump(as_list(node("b"), pod("ns", "p", "a")))
    state = load_snapshots([write(tmp_path, "s.yaml", text)])
    assert [n.name for n in state.nodes] == ["a", "b"]
    assert [p.ref for p in state.pods] == ["ns/p"]


def test_several_files_are_merged(tmp_path: Path) -> None:
    f1 = write(tmp_path, "n.json", json.dumps(as_list(node("a"))))
    f2 = write(tmp_path, "d.yaml", yaml.safe_dump(daemonset("gpu-operator", "ds", "u1", {"containers": []})))
    state = load_snapshots([f1, f2])
    assert len(state.nodes) == 1 and len(state.daemonsets) == 1


def test_other_kinds_beside_nodes_are_ignored(tmp_path: Path) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}
    f = write(tmp_path, "s.json", json.dumps(as_list(svc, node("a"))))
    assert len(load_snapshots([f]).nodes) == 1


def test_a_yaml_with_a_bom_loads(tmp_path: Path) -> None:
    f = write(tmp_path, "s.yaml", b"\xef\xbb\xbf" + yaml.safe_dump(node("a")).encode())
    assert len(load_snapshots([f]).nodes) == 1


ERROR_CASES = [
    ("a missing file names the file", None, "No such file or directory"),
    ("broken JSON names the line", '{\n"kind": "List",\n"items": [,]\n}', ":3: invalid JSON"),
    ("broken YAML names the line", "kind: List\nitems:\n  - a: [\n", "invalid YAML"),
    ("a scalar is not an object", "42", "expected a Kubernetes object or List, found int"),
    ("a mapping without kind is not an object", "a: 1\n", "document has no 'kind'"),
    ("a Secret alone is the wrong kind", "kind: Secret\nmetadata: {name: x}\n", "wrong kind of file"),
    ("a node without a name is malformed", '{"kind": "Node", "metadata": {}}', "Node has no metadata.name"),
    (
        "labels that are not strings are malformed",
        '{"kind": "Node", "metadata": {"name": "a", "labels": {"x": 1}}}',
        "(node a): metadata.labels[x] is the number 1, not a string",
    ),
    ("items: null is no objects, as an empty file", "kind: NodeList\nitems: null\n", "NodeList.items is null"),
    ("binary data is refused", b"\x00\x01\x02kind", "binary data"),
    ("an empty file is refused", "", "empty: no Kubernetes objects"),
    ("bytes that are not UTF-8 are refused", b"kind: Node\nmetadata: {name: \xff}\n", ":2: not UTF-8 text"),
]


@pytest.mark.parametrize(("name", "text", "message"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_bad_snapshots_raise_one_clear_error(tmp_path: Path, name: str, text: str | bytes | None, message: str) -> None:
    path = str(tmp_path / "missing.json") if text is None else write(tmp_path, "bad.yaml", text)
    with pytest.raises(SnapshotError) as info:
        load_snapshots([path])
    assert path in str(info.value)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_an_error_inside_a_list_names_the_item(tmp_path: Path) -> None:
    f = write(tmp_path, "s.json", json.dumps(as_list(node("a"), {"kind": "Node", "metadata": {}})))
    with pytest.raises(SnapshotError, match=r"items\[1\]"):
        load_snapshots([f])


def test_deep_nesting_is_refused(tmp_path: Path) -> None:
    f = write(tmp_path, "s.json", '{"kind": "Node", "metadata": {"name": "a"}, "x": ' + "[" * 200 + "]" * 200 + "}")
    with pytest.raises(SnapshotError, match="nested deeper"):
        load_snapshots([f])


def node_with(**fields: object) -> dict[str, object]:
    obj = node("n")
    for path, value in fields.items():
        where: dict[str, object] = obj
        parts = path.split("__")
        for part in parts[:-1]:
            where = where.setdefault(part, {})  # type: ignore[assignment]
        where[parts[-1]] = value
    return obj


# Fields of the wrong JSON type: Go cannot decode them into k8s.io/api core/v1 (types.go), so the
# API server refuses the object and no kubectl snapshot holds one. Each row: the field's Go type.
TYPE_CASES: list[tuple[str, str, dict[str, object], str]] = [
    (
        "unschedulable as a string",
        "NodeSpec.Unschedulable bool",
        node_with(spec__unschedulable="false"),
        'spec.unschedulable is the string "false", not a boolean',
    ),
    (
        "a taint given as a string",
        "NodeSpec.Taints []Taint",
        node_with(spec__taints=["gpu=true:NoSchedule"]),
        'spec.taints[0] is the string "gpu=true:NoSchedule", not a mapping',
    ),
    (
        "taints as a mapping",
        "NodeSpec.Taints []Taint",
        node_with(spec__taints={"a": 1}),
        "spec.taints is a mapping, not a list",
    ),
    (
        "a taint effect as a number",
        "Taint.Effect TaintEffect (string)",
        node_with(spec__taints=[{"key": "k", "effect": 1}]),
        "spec.taints[0].effect is the number 1, not a string",
    ),
    (
        "a condition given as a string",
        "NodeStatus.Conditions []NodeCondition",
        node_with(status__conditions=["Ready"]),
        'status.conditions[0] is the string "Ready", not a mapping',
    ),
    (
        "a condition status as a boolean",
        "NodeCondition.Status ConditionStatus (string)",
        node_with(status__conditions=[{"type": "Ready", "status": True}]),
        "status.conditions[0].status is the boolean true, not a string",
    ),
    (
        "managedFields as a mapping",
        "ObjectMeta.ManagedFields []ManagedFieldsEntry",
        node_with(metadata__managedFields={"manager": "x"}),
        "metadata.managedFields is a mapping, not a list",
    ),
    (
        "fieldsV1 not an object",
        "ManagedFieldsEntry.FieldsV1 *FieldsV1 (a JSON object)",
        node_with(metadata__managedFields=[{"manager": "m", "fieldsV1": "f:metadata"}]),
        'metadata.managedFields[0].fieldsV1 is the string "f:metadata", not a mapping',
    ),
    (
        "f:metadata a string",
        "FieldsV1: a field set is nested objects",
        node_with(metadata__managedFields=[{"manager": "m", "fieldsV1": {"f:metadata": "x"}}]),
        'metadata.managedFields[0].fieldsV1.f:metadata is the string "x", not a mapping',
    ),
    (
        "a manager as a number",
        "ManagedFieldsEntry.Manager string",
        node_with(metadata__managedFields=[{"manager": 7}]),
        "metadata.managedFields[0].manager is the number 7, not a string",
    ),
    (
        "a null managedFields entry",
        "[]ManagedFieldsEntry of structs",
        node_with(metadata__managedFields=[None]),
        "metadata.managedFields[0] is null, not a mapping",
    ),
    ("status as a list", "Node.Status NodeStatus", node_with(status=[]), "status is a list, not a mapping"),
]


@pytest.mark.parametrize(("name", "gotype", "obj", "message"), TYPE_CASES, ids=[c[0] for c in TYPE_CASES])
def test_a_field_of_the_wrong_type_is_one_error_naming_file_object_and_field(
    tmp_path: Path, name: str, gotype: str, obj: dict[str, object], message: str
) -> None:
    f = write(tmp_path, "s.json", json.dumps(as_list(obj)))
    with pytest.raises(SnapshotError) as info:
        load_snapshots([f])
    assert str(info.value) == f"{f}: items[0] (node n): {message}"


def test_a_pod_spec_is_decoded_as_the_api_server_decodes_it(tmp_path: Path) -> None:
    from tests.objects import pod

    bad = pod("default", "p", spec={"tolerations": "all"})
    f = write(tmp_path, "s.json", json.dumps(as_list(bad)))
    with pytest.raises(SnapshotError) as info:
        load_snapshots([f])
    assert str(info.value) == (
        f"{f}: items[0] (pod p): json: cannot unmarshal string into Go struct field PodSpec.spec.tolerations "
        "of type []v1.Toleration"
    )


def test_sources_reads_well_formed_managed_fields(tmp_path: Path) -> None:
    entry = {"manager": "m", "operation": "Update", "time": "t", "fieldsV1": {"f:metadata": {"f:labels": {"f:a": {}}}}}
    (n,) = load_snapshots(
        [write(tmp_path, "s.json", json.dumps(as_list(node_with(metadata__managedFields=[entry]))))]
    ).nodes
    assert n.label_writers()["a"].manager == "m"


def test_the_collector_is_paused_while_reading_and_as_before_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses
    import gc

    from gpulabel.cluster import snapshot

    during: list[bool] = []
    kinds = [
        dataclasses.replace(
            k, read=lambda o, w, real=k.read: during.append(gc.isenabled()) or real(o, w), new_reader=None
        )
        if k.kind == "Node"
        else k
        for k in snapshot.KINDS
    ]
    monkeypatch.setattr(snapshot, "KINDS", tuple(kinds))
    f = write(tmp_path, "s.json", json.dumps(as_list(node("a"), node("b"))))
    assert gc.isenabled()
    load_snapshots([f])
    assert (during, gc.isenabled()) == ([False, False], True)
    gc.disable()
    try:
        load_snapshots([f])
        assert not gc.isenabled()  # left as it was
    finally:
        gc.enable()


def test_what_a_command_reads_is_frozen_before_the_collector_runs_again() -> None:
    import gc

    from gpulabel.cluster import collector

    assert gc.isenabled()
    with collector.kept():
        assert not gc.isenabled()
        built = [[i] for i in range(5000)]  # tracked containers, counted while paused
        frozen = gc.get_freeze_count()
    assert gc.isenabled()
    # everything alive moved out of the generations; the allocation count starts again from nothing
    assert gc.get_freeze_count() >= frozen + len(built)
    assert gc.get_count()[0] < 100
    gc.disable()
    try:
        with collector.kept():
            pass
        assert not gc.isenabled()  # left as it was
    finally:
        gc.enable()


def test_an_object_twice_in_one_file_is_named_on_one_line_whatever_its_name(tmp_path: Path) -> None:
    twice = [{"kind": "Pod", "metadata": {"name": "p", "namespace": "\n"}}] * 2
    f = write(tmp_path, "s.json", json.dumps(as_list(node("a"), *twice)))
    with pytest.raises(SnapshotError) as info:
        load_snapshots([f])
    assert str(info.value) == f"{f}: pod/\\n/p appears twice in this file, at items[1] and items[2]"


def test_kinds_not_read_are_named_but_not_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # audit reads nodes alone: the pods of a List are named (msgspec reads kind and metadata) but never built.
    from gpulabel.cluster import decode

    objects = [gpu_node("a"), pod("ns", "p", "a"), daemonset("ns", "d", "u1", {"containers": []}), node("b")]
    f = write(tmp_path, "s.json", json.dumps(as_list(*objects)))
    parsed: list[bytes] = []
    jiter_items = decode._jiter_items

    def counted(data: bytes, chunk: list[Any], where: str, *wrapped: bytes) -> list[Any]:
        parsed.extend(map(bytes, chunk))
        return jiter_items(data, chunk, where, *wrapped)

    monkeypatch.setattr(decode, "_jiter_items", counted)
    whole, nodes_only = load_snapshots([f]), load_snapshots([f], read=["Node"])
    assert nodes_only.nodes == whole.nodes and whole.kinds == {"Node", "Pod", "DaemonSet"}
    # an unread kind is not named (a check would take it for an empty one), but Pod: "no pods in the input"
    assert nodes_only.kinds == {"Node", "Pod"}
    assert nodes_only.pods == () and nodes_only.daemonsets == ()
    assert len(parsed) == 4 + 2  # every item for the whole load, the two nodes alone for the nodes-only one
    twice = [{"kind": "Pod", "metadata": {"name": "p", "namespace": "n"}}] * 2
    f = write(tmp_path, "t.json", json.dumps(as_list(node("a"), *twice)))
    with pytest.raises(SnapshotError, match="pod/n/p appears twice in this file, at items\\[1\\] and items\\[2\\]"):
        load_snapshots([f], read=["Node"])
