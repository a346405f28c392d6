"""YAML built from the parser's events gives what composing and building gives: the same documents, the same refusals.

``GPULABEL_FUZZ_EXAMPLES`` sets the examples per test (default 300), as in test_fuzz.py.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulabel.cluster import decode
from gpulabel.cluster.yamlstream import Unsupported, load_plain
from gpulabel.errors import SnapshotError

N = int(os.environ.get("GPULABEL_FUZZ_EXAMPLES", "300"))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(["yes", "0x1f", "1_000", "0o17", "2026-12-01", "2026-12-01T00:00:00Z", "~", "=", "<<", ".inf"]),
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.one_of(st.text(max_size=8), st.integers(), st.booleans()), children, max_size=4)
    ),
    max_leaves=30,
)


def composed(text: str) -> tuple[str, Any]:
    """What the composing reader (the reading of before) makes of ``text``: its documents or its refusal."""
    try:
        return "ok", decode._decode_composed(text, "f.yaml")
    except SnapshotError as err:
        return "refused", str(err)


def streamed(text: str) -> tuple[str, Any]:
    try:
        return "ok", decode.decode_yaml(text, "f.yaml")
    except SnapshotError as err:
        return "refused", str(err)


@settings(max_examples=N, suppress_health_check=[HealthCheck.too_slow])
@given(docs=st.lists(values, min_size=1, max_size=3), flow=st.sampled_from([None, True, False]))
def test_dumped_documents_read_back_as_yaml_load_reads_them(docs: list[Any], flow: bool | None) -> None:
    text = yaml.safe_dump_all(docs, default_flow_style=flow)
    expected = [d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if d is not None]
    try:
        got = load_plain(text, decode.MAX_DEPTH)
    except Unsupported:
        return  # read the composing way instead (a merge key '<<', a value key '=', ...)
    assert got == expected
    assert [type(d) for d in got] == [type(d) for d in expected]


FRAGMENTS = st.sampled_from(
    [
        "a: 1\n",
        "a: 2\n",
        "- x\n",
        "  - y\n",
        "b: &anchor {c: d}\n",
        "e: *anchor\n",
        "<<: {f: g}\n",
        "? [k]\n: v\n",
        "!!set {s}\n",
        "t: !custom x\n",
        "---\n",
        "...\n",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
        "h: [1, 2\n",
        "i: 'quoted'\n",
        "j: !!binary aGk=\n",
        "k: 2026-12-01\n",
        "  l: m\n",
        "\t",
        'n: "\\x00"\n',
        "=: v\n",
    ]
)


@settings(max_examples=N, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(FRAGMENTS, max_size=8))
def test_any_text_is_accepted_or_refused_as_the_composing_reader_does(parts: list[str]) -> None:
    text = "".join(parts)
    assert streamed(text) == composed(text)


@pytest.mark.parametrize(
    "text",
    [
        "kind: Node\nmetadata:\n  name: a\n  labels: &l {x: 'y'}\n  annotations: *l\n",  # an alias
        "a: {<<: {b: 1}, b: 2}\n",  # a merge key
        "a: 1\nb: 2\na: 3\n",  # a key twice
        "? [a]\n: b\n",  # a key that is a list
        "a: !!set {b}\n",  # a tag beyond the core schema
        "[" * 70 + "]" * 70 + "\n",  # nesting (empty at the bottom)
        "[" * 70 + "1" + "]" * 70 + "\n",
    ],
)
def test_what_plain_data_is_not_is_left_to_the_composing_reader(text: str) -> None:
    with pytest.raises(Unsupported):
        load_plain(text, decode.MAX_DEPTH)
    assert streamed(text) == composed(text)


def test_plain_data_is_read_from_the_events() -> None:
    text = "kind: List\nitems:\n- kind: Node\n  metadata: {name: a, labels: {x: 'y', n: 1}}\n---\n---\n- 2026-12-01\n"
    assert load_plain(text, decode.MAX_DEPTH) == [
        {"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a", "labels": {"x": "y", "n": 1}}}]},
        [yaml.safe_load("2026-12-01")],
    ]
