"""Hostile snapshots are refused while decoding: one line, exit 2, in bounded time and memory.

Alias bombs ("billion laughs") at several depths, duplicate keys in JSON and
YAML mappings (the API server's strict decoding refuses them), and two objects
of one kind and name in one file. The bombs are also run as a user runs them,
in a process of their own, measuring its CPU time and peak memory.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import yaml
from bench.measure import measure_module

from gpulabel.cluster.decode import MAX_DEPTH
from gpulabel.cluster.snapshot import load_snapshots, read_documents
from gpulabel.errors import SnapshotError
from tests.objects import as_list, node, pod

ROOT = Path(__file__).parents[2]


def alias_bomb(levels: int, fanout: int = 10) -> str:
    """A node whose annotations hold ``levels`` anchors, each a list of ``fanout`` aliases of the one before."""
    lines = ["kind: Node", "metadata:", "  name: bomb", "  annotations:"]
    lines.append(f"    a0: &a0 [{', '.join(['lol'] * fanout)}]")
    for level in range(1, levels + 1):
        lines.append(f"    a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * fanout)}]")
    return "\n".join(lines) + "\n"


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def refusal(path: str) -> str:
    with pytest.raises(SnapshotError) as info:
        load_snapshots([path])
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(path)
    return message


@pytest.mark.parametrize("levels", [4, 5, 7, 9, 20])
def test_an_alias_bomb_is_refused_at_once_whatever_its_depth(tmp_path: Path, levels: int) -> None:
    path = write(tmp_path, "bomb.yaml", alias_bomb(levels))
    started = time.process_time()
    message = refusal(path)
    assert time.process_time() - started < 1.0  # CPU time: the same on a loaded machine
    assert "excessive aliasing" in message
    expanded = int(re.search(r"expand it to (\d+) nodes", message).group(1))  # type: ignore[union-attr]
    assert expanded > 10 ** (levels + 1)  # computed, never built: 10**21 nodes for 20 levels


def test_a_few_aliases_are_fine(tmp_path: Path) -> None:
    text = "kind: Node\nmetadata:\n  name: a\n  labels: &l {x: 'y'}\n  annotations: *l\n"
    (n,) = load_snapshots([write(tmp_path, "a.yaml", text)]).nodes
    assert n.labels == n.annotations == {"x": "y"}


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path: Path) -> None:
    message = refusal(write(tmp_path, "r.yaml", "kind: Node\nmetadata:\n  name: a\n  annotations: &a {b: *a}\n"))
    assert "an alias refers to a node that contains it" in message


def test_aliases_cannot_hide_nesting_deeper_than_the_limit(tmp_path: Path) -> None:
    lines = ["kind: Node", "metadata:", "  name: a", "  annotations:", "    d0: &d0 [x]"]
    lines += [f"    d{i}: &d{i} [*d{i - 1}]" for i in range(1, 70)]
    assert "nested deeper than 64 levels" in refusal(write(tmp_path, "d.yaml", "\n".join(lines) + "\n"))


def run_measured(*argv: str) -> tuple[int, str, float, float]:
    """Exit code, stderr, CPU seconds and peak RSS (MB) of ``gpulabel ARGV`` in a process of its own."""
    m = measure_module("gpulabel", *argv, timeout=120, cwd=str(ROOT))  # generous: "refused at all, in bounded time"
    return m.code, m.stderr.decode(), m.cpu, m.rss_mb


@pytest.mark.parametrize("levels", [7, 9])
def test_the_cli_refuses_an_alias_bomb_in_one_line_exit_2_under_a_second_and_100_mb(
    tmp_path: Path, levels: int
) -> None:
    path = write(tmp_path, "bomb.yaml", alias_bomb(levels))
    code, err, cpu, rss = run_measured("audit", "--snapshot", path)
    assert (code, err.count("\n")) == (2, 1), err
    assert "excessive aliasing" in err
    assert cpu < 3.0  # the interpreter's start and imports included; the decoding itself is timed above
    assert rss < 100, f"{rss:.0f} MB"


# -- duplicate keys -----------------------------------------------------------------


def test_a_duplicate_key_in_an_item_of_a_json_list_names_file_line_and_key(tmp_path: Path) -> None:
    good = json.dumps(as_list(node("a"), node("b")), indent=2)
    bad = good.replace('"name": "b"', '"name": "b", "name": "c"')
    path = write(tmp_path, "s.json", bad)
    line = bad[: bad.index('"name": "c"')].count("\n") + 1
    refused = "in one mapping (the API server refuses a duplicate field)"
    assert refusal(path) == f'{path}:{line}: duplicate key "name" {refused}'


def test_a_duplicate_key_in_a_single_json_object_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "n.json", '{"kind": "Node",\n "metadata": {"name": "a",\n "labels": {"x": "1", "x": "2"}}}')
    assert refusal(path) == f'{path}:3: duplicate key "x" in one mapping (the API server refuses a duplicate field)'


def test_a_duplicate_key_at_the_top_of_a_json_list_is_refused(tmp_path: Path) -> None:
    text = '{"kind": "List",\n "items": [' + json.dumps(node("a")) + '],\n "kind": "NodeList"}'
    assert 'duplicate key "kind"' in refusal(write(tmp_path, "s.json", text))


def test_a_duplicate_key_in_yaml_names_both_lines(tmp_path: Path) -> None:
    text = "kind: Node\nmetadata:\n  name: a\n  labels:\n    x: '1'\n    y: '2'\n    x: '3'\n"
    path = write(tmp_path, "n.yaml", text)
    assert refusal(path) == (
        f"{path}:7: duplicate key 'x' in one mapping, first at line 5 (the API server refuses a duplicate field)"
    )


def test_a_yaml_merge_key_may_be_overridden(tmp_path: Path) -> None:
    text = "kind: Node\nmetadata:\n  name: a\n  annotations: &base {x: '1'}\n  labels:\n    <<: *base\n    x: '2'\n"
    (n,) = load_snapshots([write(tmp_path, "m.yaml", text)]).nodes
    assert n.labels == {"x": "2"}


def test_a_duplicate_key_in_a_manifest_is_refused_too() -> None:
    with pytest.raises(SnapshotError, match=r"^m.yaml:3: duplicate key 'kind'"):
        read_documents(b"kind: Pod\nmetadata: {name: p}\nkind: Pod\n", "m.yaml")


# -- two objects of one kind and name in one file ---------------------------------


def test_two_nodes_of_one_name_in_one_json_file_name_both_positions(tmp_path: Path) -> None:
    path = write(tmp_path, "s.json", json.dumps(as_list(node("a"), node("b"), node("a"))))
    assert refusal(path) == f"{path}: node/a appears twice in this file, at items[0] and items[2]"


def test_two_pods_of_one_name_in_one_yaml_file_name_both_documents(tmp_path: Path) -> None:
    docs = [pod("ml", "p"), node("a"), pod("ml", "p")]
    path = write(tmp_path, "s.yaml", yaml.safe_dump_all(docs))
    assert refusal(path) == f"{path}: pod/ml/p appears twice in this file, at document 1 and document 3"


def test_the_same_object_in_two_files_is_still_the_later_one(tmp_path: Path) -> None:
    old = write(tmp_path, "old.json", json.dumps(as_list(node("a", {"v": "1"}))))
    new = write(tmp_path, "new.json", json.dumps(as_list(node("a", {"v": "2"}))))
    warned: list[str] = []
    (n,) = load_snapshots([old, new], warned.append).nodes
    assert n.labels["v"] == "2"
    assert warned == ["1 object(s) in more than one snapshot, the later file wins: node/a"]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("dup-json-key.json", '{"kind": "Node", "kind": "Node", "metadata": {"name": "a"}}', "duplicate key"),
        ("dup-yaml-key.yaml", "kind: Node\nkind: Node\nmetadata: {name: a}\n", "duplicate key"),
        ("dup-objects.json", json.dumps(as_list(node("a"), node("a"))), "appears twice in this file"),
    ],
)
def test_the_cli_refuses_each_in_one_line_with_exit_2(tmp_path: Path, name: str, text: str, message: str) -> None:
    code, err, _, _ = run_measured("check", "--snapshot", write(tmp_path, name, text))
    assert (code, err.count("\n")) == (2, 1), err
    assert message in err


# -- nesting, refused while decoding ---------------------------------------------


def nested(levels: int) -> object:
    value: object = "x"
    for _ in range(levels):
        value = [value]
    return value


def reference_depth_ok(value: object, limit: int) -> bool:
    """What the decoders must refuse: any value deeper than ``limit`` below ``value`` (the root is 0)."""
    level = [value]
    for _ in range(limit + 1):
        level = [c for v in level if isinstance(v, list | dict) for c in (v.values() if isinstance(v, dict) else v)]
    return not level


@pytest.mark.parametrize("levels", range(MAX_DEPTH - 6, MAX_DEPTH + 2))
def test_the_depth_limit_is_the_same_for_a_json_list_a_json_object_and_yaml(tmp_path: Path, levels: int) -> None:
    obj = {"kind": "Node", "metadata": {"name": "a"}, "x": nested(levels)}
    for name, text in [
        ("list.json", json.dumps(as_list(obj))),
        ("object.json", json.dumps(obj)),
        ("list.yaml", yaml.safe_dump(as_list(obj))),
    ]:
        path = write(tmp_path, name, text)
        document = obj if name == "object.json" else as_list(obj)
        expected_ok = reference_depth_ok([document], MAX_DEPTH)  # the list of a file's documents is the root
        try:
            load_snapshots([path])
            ok = True
        except SnapshotError as err:
            assert "nested deeper than 64 levels" in str(err)
            ok = False
        assert ok == expected_ok, (name, levels)
