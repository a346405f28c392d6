"""The one quantity parser against what kube-apiserver v1.37.2 answered (tests/data/quantity_table.json).

tests/cluster/test_quantity_cluster.py made the table on labcluster and re-checks
it live: each input sent as a ResourceSlice device capacity (ParseQuantity, then
stored as String()) and as a pod's cpu request (the same, rounded up to 1m).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpulabel.errors import GpulabelError, QuantityError
from gpulabel.k8s.quantity import decode, decode_nanos, parse_nanos, parse_quantity, resource_list_form

TABLE = Path(__file__).parent.parent / "data" / "quantity_table.json"
ROWS: list[list[str]] = json.loads(TABLE.read_text())["rows"]


def ours(text: str) -> list[str]:
    try:
        return ["ok", str(decode(text)), "ok", resource_list_form(text)]
    except QuantityError as err:
        return ["error", str(err), "error", str(err)]


def test_every_answer_of_the_api_server_is_gpulabels() -> None:
    disagreements = [(row[0], row[1:], ours(row[0])) for row in ROWS if ours(row[0]) != row[1:]]
    assert disagreements == []


def test_the_table_is_big_and_holds_the_cases_the_two_old_parsers_disagreed_on() -> None:
    table = {row[0]: row[1:] for row in ROWS}
    assert len(table) >= 200
    assert sum(1 for a in table.values() if a[0] == "error") >= 20
    for text in ("Gi", "+", "-", ".", "Ki", "m", "+."):
        assert table[text] == ["ok", "0", "ok", "0"], text  # the scanner is more permissive than its regex


@pytest.mark.parametrize(
    ("text", "nanos"),
    [("8", 8 * 10**9), ("500m", 5 * 10**8), ("64Gi", 64 * 2**30 * 10**9), ("1E", 10**27), ("8Ei", (2**63 - 1) * 10**9)],
)
def test_the_fast_path_gives_what_the_scanner_gives(text: str, nanos: int) -> None:
    assert parse_nanos(text) == nanos == decode(text).nanos


def test_values_are_exact_and_quantity_errors_are_gpulabel_errors() -> None:
    assert parse_quantity("1500m") * 2 == 3
    with pytest.raises(GpulabelError, match="unable to parse quantity's suffix"):
        parse_quantity("1ee3")
    with pytest.raises(QuantityError, match="gpulabel does not model"):
        parse_quantity("1e99999")  # the API accepts it; gpulabel's one refusal of its own


def test_the_shortcut_for_common_shapes_agrees_with_the_scanner_on_every_row() -> None:
    for text, verdict, *_ in ROWS:
        if verdict == "ok":
            assert decode_nanos(text) == decode(text).nanos, text
        else:
            with pytest.raises(QuantityError):
                decode_nanos(text)
