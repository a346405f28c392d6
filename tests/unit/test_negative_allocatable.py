"""A negative node allocatable is refused as the API server refuses it (``ValidateNodeResources``).

Before, ``nvidia.com/gpu: "-1"`` was shown as ``free=-1`` while ``0x10`` in the
same field was refused.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gpulabel.cli.main import main
from tests.objects import as_list, node


def _gpus(tmp_path: Path, allocatable: dict[str, str]) -> tuple[int, str]:
    n = node("n1", {"nvidia.com/gpu.present": "true"})
    n["status"]["allocatable"] = allocatable
    path = tmp_path / "s.json"
    path.write_text(json.dumps(as_list(n)))
    out, err = io.StringIO(), io.StringIO()
    return main(["gpus", "--snapshot", str(path)], out, err), err.getvalue()


@pytest.mark.parametrize(
    ("resource", "value", "shown"),
    [("nvidia.com/gpu", "-1", "-1"), ("cpu", "-500m", "-500m"), ("memory", "-1Gi", "-1Gi"), ("pods", "-2", "-2")],
)
def test_a_negative_allocatable_is_refused_with_the_servers_message(
    tmp_path: Path, resource: str, value: str, shown: str
) -> None:
    code, err = _gpus(tmp_path, {resource: value})
    assert code == 2 and err.count("\n") == 1
    message = f'status.allocatable.{resource}: Invalid value: "{shown}": must be greater than or equal to 0\n'
    assert err.endswith(message)


def test_zero_is_allowed(tmp_path: Path) -> None:
    assert _gpus(tmp_path, {"nvidia.com/gpu": "0", "cpu": "0"})[0] == 0
