"""cluster/writes.py is the one place gpulabel writes: no other module sends POST, PUT, PATCH or DELETE."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "gpulabel"
WRITE_VERB = re.compile(r"""["'](POST|PUT|PATCH|DELETE)["']""")


def writers(root: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        verbs = set(WRITE_VERB.findall(path.read_text()))
        if verbs:
            found[path.relative_to(root).as_posix()] = verbs
    return found


def test_only_the_write_module_sends_write_requests() -> None:
    assert writers(PACKAGE) == {"cluster/writes.py": {"POST", "PUT", "PATCH"}}


def test_a_lease_put_outside_the_write_module_would_be_caught(tmp_path: Path) -> None:
    (tmp_path / "controller").mkdir()
    (tmp_path / "controller" / "lease.py").write_text('client.request("PUT", path, body=body)\n')
    assert writers(tmp_path) == {"controller/lease.py": {"PUT"}}
