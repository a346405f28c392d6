"""DRA selectors get the API server's cost budget (``k8s/dra/celcost.py``).

The estimate is checked against the expected costs of upstream's own tests
(``tests/cel_cost_rows.py``); a selector over the limit is refused with the API
server's detail, ``too complex, exceeds cost limit``. Before, a 400-byte
``cel.bind`` string bomb ran for 20-28 s and took over 3 GB.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from bench.measure import measure_module

from gpulabel.cli.main import main
from gpulabel.k8s.dra.cel import COST_LIMIT_EXCEEDED, compile_selector, selector_cost
from gpulabel.k8s.dra.celcost import MAX_COST
from tests.cel_cost_rows import ROWS

ROOT = Path(__file__).parents[2]
DRA_LAB = "examples/dra-lab.json"


def bomb(levels: int, fan: int = 10) -> str:
    """A string of 10 characters, bound and concatenated ``fan`` times with itself at each of ``levels``."""
    text = 'cel.bind(a0, "xxxxxxxxxx", '
    for i in range(1, levels + 1):
        text += f"cel.bind(a{i}, {' + '.join([f'a{i - 1}'] * fan)}, "
    return text + f"size(a{levels}) > 0" + ")" * (levels + 1)


@pytest.mark.parametrize(("name", "expression", "cost"), ROWS, ids=[r[0] for r in ROWS])
def test_the_estimate_is_upstreams(name: str, expression: str, cost: int) -> None:
    assert selector_cost(expression) == cost


@pytest.mark.parametrize(("levels", "fan"), [(7, 10), (8, 10), (20, 2), (6, 10)])
def test_a_string_bomb_is_refused_with_the_api_servers_detail(levels: int, fan: int) -> None:
    expression = bomb(levels, fan)
    assert len(expression) < 600
    assert selector_cost(expression) > MAX_COST
    assert compile_selector(expression).error == COST_LIMIT_EXCEEDED


def test_a_bomb_under_the_limit_runs_and_is_bounded_by_its_estimate() -> None:
    expression = bomb(5)  # a 1,000,000-character string: estimated 600,107
    assert selector_cost(expression) <= MAX_COST
    selector = compile_selector(expression)
    assert selector.error is None


def test_nested_comprehensions_over_the_limit_are_refused() -> None:
    # upstream's "expensive" row without '1'.find(...) (not in the DRA environment): 10^7 iterations
    inner = "x < 100"
    for v in ("z5", "z4", "z3", "z2", "z", "y", "x"):
        inner = f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all({v}, {inner.replace('x < 100', f'{v} < 100')})"
    assert compile_selector(inner).error == COST_LIMIT_EXCEEDED


@pytest.mark.parametrize("levels", [7, 8])
def test_the_cli_refuses_the_bomb_in_one_line_under_a_second_and_100_mb(levels: int) -> None:
    m = measure_module("gpulabel", "cel", bomb(levels), "--snapshot", DRA_LAB, timeout=120, cwd=str(ROOT))
    assert (m.code, m.stderr.decode()) == (2, f"gpulabel: EXPR: {COST_LIMIT_EXCEEDED}\n")
    assert m.cpu < 1.0 and m.rss_mb < 100


def test_a_lone_surrogate_reads_as_go_reads_invalid_utf8_and_no_address_is_shown() -> None:
    selector = compile_selector('device.driver == "gpu\udcff"')
    assert selector.error is None  # U+FFFD, as the API server's decoder stores it
    out, err = io.StringIO(), io.StringIO()
    main(["cel", 'device.driver == "\udcff', "--snapshot", str(ROOT / DRA_LAB)], out, err)
    assert "0x" not in err.getvalue() and "object at" not in err.getvalue()


# the message labcluster's API server (1.37, DRAListTypeAttributes off) gave for upstream's macro-on-list-of-int row
ANY_RANGE = (
    "compilation failed: ERROR: <input>:1:37: expression of type 'any' cannot be range of a comprehension "
    '(must be list, map, or dynamic)\n | device.attributes["dra.example.com"].names.exists(x, x > 0)\n'
    " | ....................................^"
)


def test_a_comprehension_over_an_attribute_is_refused_as_the_live_server_refuses_it() -> None:
    assert compile_selector('device.attributes["dra.example.com"].names.exists(x, x > 0)').error == ANY_RANGE
    # over the domains or the names of a domain (maps): accepted, as the server accepts them
    assert compile_selector('device.attributes.exists_one(x, x == "dra.example.com")').error is None
    assert compile_selector('device.attributes["dra.example.com"].exists_one(x, x == "a")').error is None
    assert compile_selector('1 in device.attributes["dra.example.com"].names').error is None
    bound = compile_selector('cel.bind(a, device.attributes["dra.example.com"].names, a.exists(x, x > 0))').error
    assert bound is not None and bound.startswith("compilation failed: ERROR: <input>:1:57: expression of type 'any'")
    assert compile_selector("cel.bind(a, [1, 2], a.exists(x, x > 0))").error is None
