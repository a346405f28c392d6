"""Hostile input refused as the API server refuses it: container resources, field types, ResourceSlices.

The rows and the server's messages are in ``tests/resource_rows.py`` and
``tests/slice_rows.py``, recorded from labcluster (k8s.io/kubernetes v1.37.2)
and re-checked live by ``tests/cluster/test_rows_cluster.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpulabel.cluster.manifests import workload_from_object
from gpulabel.errors import ManifestError, SnapshotError
from gpulabel.k8s.containerresources import quantity_string
from gpulabel.k8s.dra.readers import slice_from_json
from tests.resource_rows import ROWS as RESOURCE_ROWS
from tests.slice_rows import ROWS as SLICE_ROWS
from tests.unit.test_placecmds import run

ROOT = Path(__file__).parents[2]
LAB = str(ROOT / "examples" / "lab-cluster.yaml")
DRA_LAB = ROOT / "examples" / "dra-lab.json"


def ours_workload(o: dict[str, Any]) -> str:
    try:
        workload_from_object(o, "m.yaml")
    except ManifestError as err:
        return err.message
    return ""


def ours_slice(o: dict[str, Any]) -> str:
    try:
        slice_from_json(o, "s.yaml")
    except SnapshotError as err:
        return err.message
    return ""


@pytest.mark.parametrize(("name", "upstream", "o", "recorded"), RESOURCE_ROWS, ids=[r[0] for r in RESOURCE_ROWS])
def test_resources_and_field_types_as_the_server_says(
    name: str, upstream: str, o: dict[str, Any], recorded: str
) -> None:
    assert ours_workload(o) == recorded


@pytest.mark.parametrize(("name", "upstream", "o", "recorded"), SLICE_ROWS, ids=[r[0] for r in SLICE_ROWS])
def test_resource_slices_as_the_server_says(name: str, upstream: str, o: dict[str, Any], recorded: str) -> None:
    assert ours_slice(o) == recorded


def test_the_rows_cover_both_verdicts() -> None:
    for rows in (RESOURCE_ROWS, SLICE_ROWS):
        assert sum(1 for *_, m in rows if not m) >= 2 and sum(1 for *_, m in rows if m) >= 10


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        *[("0.5", "500m"), ("1.5", "1500m"), ("1000", "1k"), ("1500", "1500"), ("2048Mi", "2Gi"), ("0.5Gi", "512Mi")],
        *[
            ("1e3", "1e3"),
            ("12e2", "1200"),
            ("0.0001", "100u"),
            ("100Mi", "100Mi"),
            ("1024", "1024"),
            ("-0.5", "-500m"),
        ],
    ],
)
def test_quantities_print_as_go_prints_them(text: str, canonical: str) -> None:
    assert quantity_string(text) == canonical


@pytest.mark.parametrize(
    ("container", "message"),
    [
        ({"resources": {"limits": {"nvidia.com/gpu": "0.5"}}}, 'Invalid value: "500m": must be an integer'),
        (
            {"resources": {"requests": {"nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "1"}}},
            'Invalid value: "2": must be equal to nvidia.com/gpu limit of 1',
        ),
        ({"args": [[1, 2]]}, "json: cannot unmarshal array into Go struct field Container.spec.containers.args"),
    ],
    ids=["half a GPU", "requests 2 limits 1", "args [[1,2]]"],
)
def test_place_refuses_the_three_manifests_in_one_line(tmp_path: Path, container: dict[str, Any], message: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    pod["spec"] = {"containers": [{"name": "c", "image": "i", **container}]}
    manifest = tmp_path / "p.yaml"
    manifest.write_text(yaml.safe_dump(pod))
    code, out, err = run("place", str(manifest), "--snapshot", LAB)
    assert (code, out, err.count("\n")) == (2, "", 1)
    assert err.startswith(f"gpulabel: {manifest}: ") and message in err


@pytest.mark.parametrize("missing", ["driver", "pool", "nodeName"])
def test_a_snapshot_slice_without_a_required_field_is_one_line_and_exit_two(tmp_path: Path, missing: str) -> None:
    doc = json.loads(DRA_LAB.read_text())
    sl = next(o for o in doc["items"] if o["kind"] == "ResourceSlice")
    del sl["spec"][missing]
    snap = tmp_path / "dra.json"
    snap.write_text(json.dumps(doc))
    code, out, err = run("devices", "--snapshot", str(snap))
    assert (code, out, err.count("\n")) == (2, "", 1)
    assert str(snap) in err and f'ResourceSlice.resource.k8s.io "{sl["metadata"]["name"]}" is invalid: ' in err
