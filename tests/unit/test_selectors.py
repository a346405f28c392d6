"""Label selectors (``-l``) parsed and matched as the API server does; the differential test is in tests/cluster."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gpulabel.cli.main import main
from gpulabel.k8s.selectors import parse_selector

# ruff: noqa: E501  (the server's messages are long; kept whole to compare them)

LABELS = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "4", "zone": "a", "in": "notin"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("", True),
        ("nvidia.com/gpu.present", True),
        ("nvidia.com/gpu.present=true", True),
        ("nvidia.com/gpu.present==true", True),
        ("nvidia.com/gpu.present!=true", False),
        ("!nvidia.com/gpu.present", False),
        ("!absent", True),
        ("absent!=x", True),
        ("zone in (a,b)", True),
        ("zone notin (a,b)", False),
        ("absent notin (a)", True),
        ("absent in (a)", False),
        ("nvidia.com/gpu.count>3", True),
        ("nvidia.com/gpu.count<4", False),
        ("zone>1", False),
        ("in in (notin)", True),
        ("zone in ()", False),
        ("zone=", False),
        ("  zone = a ,  nvidia.com/gpu.present  ", True),
        ("zone=a,zone=b", False),
    ],
    ids=lambda v: repr(v) if isinstance(v, str) else str(v),
)
def test_a_selector_matches_as_the_server_does(selector: str, matches: bool) -> None:
    assert parse_selector(selector).matches(LABELS) is matches


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a,", "found '', expected: identifier after ','"),
        (",", "found ',', expected: !, identifier, or 'end of string'"),
        ("a in", "unable to parse requirement: found '' expected: '('"),
        ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
        ("a>b", "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer"),
        ("a=" + "v" * 64, f'unable to parse requirement: values[0][a]: Invalid value: "{"v" * 64}": must be no more than 63 bytes'),
        ("-a", 'unable to parse requirement: <nil>: Invalid value: "-a": name part must consist of alphanumeric characters'),
    ],
    ids=["a space where an operator belongs", "an operator after a negation", "a trailing comma", "a lone comma",
         "in without values", "a space inside the values", "gt with a word", "a value too long", "a key starting with a dash"],
)  # fmt: skip
def test_an_invalid_selector_is_refused_with_the_servers_message(selector: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_selector(selector)
    assert str(err.value).startswith(message)


def test_minus_l_restricts_the_nodes_of_a_snapshot_and_refuses_a_bad_selector() -> None:
    out = io.StringIO()
    snapshot = str(Path(__file__).parents[2] / "examples" / "drifted-lab.yaml")
    assert main(["audit", "--snapshot", snapshot, "-l", "kubernetes.io/hostname=lab-node-3"], out, io.StringIO()) == 1
    assert {line.split()[0] for line in out.getvalue().splitlines()} == {"lab-node-3"}
    err = io.StringIO()
    assert main(["audit", "--snapshot", snapshot, "-l", "a b"], io.StringIO(), err) == 2
    assert err.getvalue() == (
        "gpulabel: -l/--selector: unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt\n"
    )
