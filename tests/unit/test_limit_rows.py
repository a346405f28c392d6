"""gpulabel refuses what the API server refuses for the size of resource.k8s.io/v1 objects (``tests/limit_rows.py``).

A ResourceSlice of 129 devices (or 100,000) was listed as if the API server
would have taken it; each row is an object at a limit and one past it.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from gpulabel.cli.main import main
from gpulabel.errors import SnapshotError
from gpulabel.k8s.dra.limits import LIMITS
from gpulabel.k8s.dra.readers import claim_from_json, class_from_json, slice_from_json, template_from_json
from tests.limit_rows import ROWS, UNENFORCED

READERS = {
    "ResourceSlice": slice_from_json,
    "DeviceClass": class_from_json,
    "ResourceClaim": claim_from_json,
    "ResourceClaimTemplate": template_from_json,
}


def ours(o: dict[str, Any]) -> str:
    try:
        READERS[o["kind"]](o, "s.json")
    except SnapshotError as err:
        return err.message
    return ""


@pytest.mark.parametrize(
    ("name", "upstream", "o", "message"), [*ROWS, *UNENFORCED], ids=[r[0] for r in [*ROWS, *UNENFORCED]]
)
def test_each_limit_row(name: str, upstream: str, o: dict[str, Any], message: str) -> None:
    assert ours(o) == message


def test_every_limit_has_its_rows() -> None:
    assert len(ROWS) == 2 * len(LIMITS) + 2  # a pair per limit; the template pair checks requests once more


def test_a_snapshot_with_100000_devices_in_one_slice_is_one_line(tmp_path: Path) -> None:
    o = ROWS[0][2]
    big = {**o, "spec": {**o["spec"], "devices": [{"name": f"gpu-{i}"} for i in range(100_000)]}}
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [big]}))
    out, err = io.StringIO(), io.StringIO()
    code = main(["devices", "--snapshot", str(path)], out, err)
    assert code == 2 and err.getvalue().count("\n") == 1
    assert err.getvalue().endswith("spec.devices: Too many: 100000: must have at most 128 items\n")
