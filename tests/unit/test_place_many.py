"""``place`` on 50,000 pods: identical pod shapes are checked and placed once (44-67 s and ~800 MB before).

The shared work must not change a byte of the output: a copy placed on its own
gives the same lines as the copy placed through its shape.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from bench.measure import measure_module
from bench.place_manifest_bench import manifest

from gpulabel.checks.pending import placeview
from gpulabel.cli.main import main
from gpulabel.cluster.manifests import workload_from_object, workloads_from_bytes

ROOT = Path(__file__).parents[2]
FLEET = str(ROOT / "examples" / "mixed-fleet.yaml")


def test_copies_of_a_pod_share_their_requirements() -> None:
    doc = manifest(1000, 4)
    workloads = workloads_from_bytes(json.dumps(doc).encode(), "m.json")
    assert len(workloads) == 1000
    assert len({id(w.requirements) for w in workloads}) == 4
    assert [w.name for w in workloads[:3]] == ["train-0", "train-1", "train-2"]


def test_each_shape_is_placed_once_and_the_output_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpulabel.cluster.snapshot import load_snapshots

    state = load_snapshots([FLEET])
    doc = manifest(200, 5)
    shared = workloads_from_bytes(json.dumps(doc).encode(), "m.json")
    items = doc["items"]
    assert isinstance(items, list)
    apart = [workload_from_object(o, f"m.json: items[{i}]") for i, o in enumerate(items)]
    calls = []
    real = placeview.place
    monkeypatch.setattr(placeview, "place", lambda *a, **k: calls.append(1) or real(*a, **k))
    for full in (False, True):
        for per_node in (False, True):
            calls.clear()
            grouped = placeview.place_result(state, shared, full=full, per_node=per_node)
            assert len(calls) == 5
            alone = placeview.place_result(state, apart, full=full, per_node=per_node)
            assert grouped[0].envelope() == alone[0].envelope() and grouped[1] == alone[1]
            assert [s.lines(full) for s in grouped[0].sections] == [s.lines(full) for s in alone[0].sections]


def test_50000_pods_are_placed_in_seconds_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "pods.json"
    path.write_text(json.dumps(manifest(50_000, 10)))
    m = measure_module("gpulabel", "place", "--snapshot", FLEET, str(path), timeout=300, cwd=str(ROOT))
    assert m.code == 1 and m.stderr == b""  # some shapes fit nowhere
    assert m.stdout.count(b"\n") > 50_000
    assert m.cpu < 30 and m.rss_mb < 600  # 67 s and 834 MB before; ~7 s and ~290 MB now


def test_a_refused_copy_is_named_by_its_own_position(tmp_path: Path) -> None:
    doc = manifest(3, 1)
    doc["items"][2]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "0.5"  # type: ignore[index]
    path = tmp_path / "pods.json"
    path.write_text(json.dumps(doc))
    out, err = io.StringIO(), io.StringIO()
    assert main(["place", "--snapshot", FLEET, str(path)], out, err) == 2
    assert "items[2]" in err.getvalue() and 'Pod "train-2" is invalid' in err.getvalue()
