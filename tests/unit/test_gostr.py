"""gpulabel's one Go quoter against a table of Go's own ``%q`` output (tests/gen_go_quote_table.py made it)."""

from __future__ import annotations

import json
from pathlib import Path

from gpulabel.k8s.gostr import go_quote

TABLE = Path(__file__).parent.parent / "data" / "go_quote_table.json"


def _rows() -> list[tuple[str, str]]:
    rows = json.loads(TABLE.read_text())["rows"]
    return [(bytes.fromhex(h).decode("utf-8", "surrogateescape"), q) for h, q in rows]


def test_go_quote_matches_go_for_every_row() -> None:
    rows = _rows()
    assert len(rows) >= 200
    differences = [(text, want, go_quote(text)) for text, want in rows if go_quote(text) != want]
    assert differences == []


def test_the_table_holds_the_cases_that_differed() -> None:
    table = dict(_rows())
    assert table["\t"] == '"\\t"'  # a second quoter once printed "\u0009"
    assert table["\x7f"] == '"\\x7f"'
    assert table["\udcff"] == '"\\xff"'  # an invalid UTF-8 byte, carried as a surrogate escape
    assert table["\u00a0"] == '"\\u00a0"'
