"""gpulabel's mirror of Karpenter's requirements against Karpenter's own expectations (sigs.k8s.io/karpenter
v1.14.1 ``pkg/scheduling/requirement_test.go`` and ``requirements_test.go``), every case of their
``Intersection``, ``Has`` and ``Compatible`` tables with named requirements, extracted by
``tools/karpenter_cases.py`` into ``data/requirements-v1.14.1.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpulabel.k8s.karpenter.providers import CORE
from gpulabel.k8s.karpenter.requirements import MAX_INT, Req, Requirements, requirement

DATA = json.loads((Path(__file__).parent / "data" / "requirements-v1.14.1.json").read_text())


def named(name: str) -> Req:
    d = DATA["requirements"][name]
    return requirement(d["key"], d["operator"], d["values"], d["min_values"])


def expected(spec: dict[str, Any]) -> Req:
    if "name" in spec:
        return named(spec["name"])
    bound = {b: None if spec[b] is None else getattr(named(spec[b]["of"]), b) for b in ("gte", "lte")}
    return Req("key", spec["complement"], frozenset(spec["values"]), bound["gte"], bound["lte"], spec["min_values"])


def test_every_table_was_extracted() -> None:
    """The counts of Karpenter's tables: a change of the extraction or of the data shows here."""
    assert {k: len(DATA[k]) for k in ("intersection", "has", "compatible", "hints")} == {
        "intersection": 590,
        "has": 70,
        "compatible": 450,
        "hints": 11,
    }


@pytest.mark.parametrize("case", DATA["intersection"], ids=lambda c: f"{c['existing']}&{c['incoming']}")
def test_intersection(case: dict[str, Any]) -> None:
    got = named(case["existing"]).intersection(named(case["incoming"]))
    assert got == expected(case["expected"])


@pytest.mark.parametrize("case", DATA["has"], ids=lambda c: f"{c['requirement']}-{c['value']}")
def test_has(case: dict[str, Any]) -> None:
    assert named(case["requirement"]).has(case["value"]) is case["expected"]


def requirement_set(name: str) -> Requirements:
    d = DATA["requirement_sets"][name]
    return Requirements([] if d is None else [requirement(d["key"], d["operator"], d["values"], d["min_values"])])


@pytest.mark.parametrize(
    "case",
    DATA["compatible"],
    ids=lambda c: f"{c['existing']}-{c['incoming']}{'-wellknown' if c['allow_well_known'] else ''}",
)
def test_compatible(case: dict[str, Any]) -> None:
    allow = CORE.well_known if case["allow_well_known"] else frozenset()
    err = requirement_set(case["existing"]).compatible(requirement_set(case["incoming"]), allow)
    assert (err is None) is case["ok"], err


@pytest.mark.parametrize("case", DATA["hints"], ids=lambda c: c["key"])
def test_typo_hints(case: dict[str, Any]) -> None:
    """``should detect well known label truncations`` and ``... typos``: the exact error."""
    incoming = Requirements([requirement(case["key"], "Exists")])
    assert Requirements().compatible(incoming, CORE.well_known) == case["error"]


def test_an_unknown_label_without_a_hint() -> None:
    """``should display an error message for unknown labels`` (requirements_test.go)."""
    incoming = Requirements([requirement("deployment", "Exists")])
    assert Requirements().compatible(incoming) == 'label "deployment" does not have known values'


@pytest.mark.parametrize(
    ("key", "op", "values", "text"),
    [
        # requirement_test.go "NewRequirements" and "String" and the Gte/Lte context
        ("failure-domain.beta.kubernetes.io/zone", "In", ["test"], "topology.kubernetes.io/zone In [test]"),
        ("beta.kubernetes.io/arch", "In", ["amd64"], "kubernetes.io/arch In [amd64]"),
        ("key", "Gt", ["1"], "key Exists >=2"),
        ("key", "Lt", ["9"], "key Exists <=8"),
        ("key", "Gte", ["5"], "key Exists >=5"),
        ("key", "Lte", ["0"], "key Exists <=0"),
        ("key", "NotIn", ["a", "b"], "key NotIn [a b]"),
        ("key", "In", ["a", "b", "c", "d", "e", "f", "g"], "key In [a b c d e and 2 others]"),
        ("key", "Gt", [str(MAX_INT)], "key DoesNotExist"),  # should return DoesNotExist for Gt MaxInt
    ],
)
def test_requirement_text(key: str, op: str, values: list[str], text: str) -> None:
    assert requirement(key, op, values).text() == text


def test_conflicts_are_all_named_as_badkeyerror_words() -> None:
    template = Requirements(
        [requirement("gpu", "In", ["a100"]), requirement("topology.kubernetes.io/zone", "In", ["z1"])]
    )
    pod = Requirements([requirement("gpu", "In", ["h100"]), requirement("topology.kubernetes.io/zone", "In", ["z2"])])
    assert template.conflicts(pod) == (
        "key gpu, gpu In [h100] not in gpu In [a100]",
        "key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [z2] not in "
        "topology.kubernetes.io/zone In [z1]",
    )
    assert template.compatible(pod) == "; ".join(template.conflicts(pod))
