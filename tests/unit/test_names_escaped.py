"""Names from the input are printed escaped in text, tables, names, warnings and errors; JSON keeps them exact.

Before, ``sync`` on a directory holding a file named ``n1\\n...`` printed the
name raw: a crafted file name added lines that looked like gpulabel's own.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gpulabel.cli.main import main
from gpulabel.model.findings import Finding, Result
from gpulabel.render.escape import printable
from gpulabel.render.text import emit

ROOT = Path(__file__).parents[2]
DRIFTED = str(ROOT / "examples" / "drifted-lab.yaml")
CRAFTED = "n1\nlab-node-0 gpu.present missing"  # a file name: no slash


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("lab-node-0", "lab-node-0"),
        ("a b", "a b"),
        ("n1\nx", "n1\\nx"),
        ("a\r\tb", "a\\r\\tb"),
        ("\x1b[2J", "\\x1b[2J"),
        ("\x85", "\\x85"),
        ("a\u2028b\u202ec", "a\\u2028b\\u202ec"),
        ("GPU\u00a0A100", "GPU\\xa0A100"),
        ("Ünïcödé", "Ünïcödé"),
    ],
)
def test_printable_escapes_what_would_not_print_as_itself(raw: str, shown: str) -> None:
    assert printable(raw) == shown
    assert printable(printable(raw)) == shown  # escaping twice changes nothing


def test_sync_on_a_crafted_file_name_prints_one_escaped_line(tmp_path: Path) -> None:
    (tmp_path / f"{CRAFTED}.env").write_text("nvidia.com/gpu.present=true\n")
    out, err = io.StringIO(), io.StringIO()
    main(["sync", str(tmp_path), "--snapshot", DRIFTED, "--dry-run"], out, err)
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and "n1\\nlab-node-0 gpu.present missing" in lines[0]
    assert "lab-node-0 gpu.present missing" not in out.getvalue()


@pytest.mark.parametrize("fmt", ["text", "wide", "table", "name"])
def test_a_finding_about_a_crafted_name_is_one_line_in_every_text_format(fmt: str) -> None:
    result = Result("audit", (Finding("audit", "missing", node=CRAFTED, key="nvidia.com/gpu.count", detail="x"),))
    out = io.StringIO()
    emit(result, fmt, out)
    text = out.getvalue()
    assert "\nlab-node-0" not in text and "n1\\nlab-node-0" in text


def test_json_keeps_the_exact_name() -> None:
    result = Result("audit", (Finding("audit", "missing", node=CRAFTED, key="nvidia.com/gpu.count"),))
    out = io.StringIO()
    emit(result, "json", out)
    assert json.loads(out.getvalue())["findings"][0]["node"] == CRAFTED
