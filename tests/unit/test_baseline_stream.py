"""``--baseline`` is read piece by piece (``cluster/jsonitems.py``, ``app/baseline.py``): memory does not grow with it.

Before, the whole file and every entry were held (1,000,000 findings: 1.0-1.45 GB);
``bench/baseline_bench.py`` has the figures.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from bench.baseline_bench import SNAPSHOT, write_baseline
from bench.measure import measure_module

from gpulabel.app.baseline import load_baseline
from gpulabel.cluster.jsonitems import Malformed, NotTheShape, array_items
from gpulabel.errors import InputError

ROOT = Path(__file__).parents[2]
DOC = {
    "apiVersion": "gpulabel/v1",
    "n": 12345,
    "findings": [{"check": "audit", "args": [1, 2.5e10, True, None, "é\n"]}, {"check": "x"}, {}],
    "after": {"deep": [[[]]], "t": -0.5},
}


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("size", [1, 2, 3, 7, 1 << 20])
def test_items_are_the_same_however_the_bytes_are_cut(indent: int | None, size: int) -> None:
    data = json.dumps(DOC, indent=indent, ensure_ascii=False).encode()
    assert list(array_items(pieces(data, size), "findings")) == DOC["findings"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", Malformed),
        ("{", Malformed),
        ('{"findings": [1,]}', Malformed),
        ('{"findings": [1] "x": 2}', Malformed),
        ('{"findings": []} x', Malformed),
        ('{"findings": [NaN]}', Malformed),
        ('{"findings": [' + "[" * 100_000 + "]" * 100_000 + "]}", Malformed),
        ("[1]", NotTheShape),
        ("{}", NotTheShape),
        ('{"findings": null}', NotTheShape),
        ('{"findings": 3}', NotTheShape),
        ('{"findings": [], "findings": []}', NotTheShape),
    ],
)
def test_what_is_not_an_envelope_is_one_error(text: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        list(array_items(pieces(text.encode(), 5), "findings"))


def test_a_number_cut_between_two_pieces_is_read_whole() -> None:
    assert list(array_items([b'{"findings": [12', b"34]}"], "findings")) == [1234]


def test_a_baseline_from_a_pipe_is_read_twice_from_its_copy() -> None:
    doc = {"findings": [{"check": "audit", "node": "n1", "detail": "x"}]}
    read, write = os.pipe()  # as --baseline <(cat b.json) gives it: /dev/fd/N
    os.write(write, json.dumps(doc).encode())
    os.close(write)
    try:
        baseline = load_baseline(f"/dev/fd/{read}")
    finally:
        os.close(read)
    assert list(baseline) == list(baseline) == [{"check": "audit", "node": "n1"}]


def test_a_baseline_changed_between_its_two_reads_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text('{"findings": [{"check": "audit"}]}')
    baseline = load_baseline(str(path))
    with open(path, "a") as fh:
        fh.write(" ")
    with pytest.raises(InputError, match="changed while gpulabel was reading it"):
        list(baseline)


def test_memory_does_not_grow_with_the_baseline(tmp_path: Path) -> None:
    """200,000 findings of a check the run does not compare: read, checked, nothing kept.

    Before, every entry was held (the file's bytes, then a dict each): about 100 MB
    per 100,000 findings; now the run's peak is that of a run without a baseline.
    """
    path = tmp_path / "b.json"
    write_baseline(str(path), 200_000, "hazards")
    alone = measure_module("gpulabel", "audit", "--snapshot", SNAPSHOT, timeout=120, cwd=str(ROOT))
    m = measure_module("gpulabel", "audit", "--snapshot", SNAPSHOT, "--baseline", str(path), timeout=120, cwd=str(ROOT))
    assert (m.code, m.stdout, m.stderr) == (alone.code, alone.stdout, b"")
    assert m.rss_mb < alone.rss_mb + 15, (m.rss_mb, alone.rss_mb)  # 40 MB of JSON


def test_a_stale_entry_costs_its_finding_not_its_text(tmp_path: Path) -> None:
    """100,000 stale findings (each printed): the peak grows by the findings printed, well under
    the 1,200 bytes per entry of before (the 150 MB file whole, then a dict per entry, then the finding)."""
    path = tmp_path / "b.json"
    write_baseline(str(path), 100_000, "audit")
    alone = measure_module("gpulabel", "audit", "--snapshot", SNAPSHOT, timeout=120, cwd=str(ROOT))
    m = measure_module("gpulabel", "audit", "--snapshot", SNAPSHOT, "--baseline", str(path), timeout=120, cwd=str(ROOT))
    assert m.code == 1 and m.stdout.count(b"\n- audit gpu-node-") == 100_000
    per_entry = (m.rss_mb - alone.rss_mb) * (1 << 20) / 100_000
    assert per_entry < 800, f"{per_entry:.0f} bytes per stale entry"
