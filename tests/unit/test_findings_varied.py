"""``Finding.varied`` (and ``about``, ``graded`` through it) sets each slot through its descriptor, not the frozen
``__init__``: its copy must be ``dataclasses.replace``'s, every field, for a finding whose every field differs
from its default (a field it missed would be unset, or another's value)."""

from __future__ import annotations

import dataclasses

from gpulabel.model.findings import Finding

FULL = Finding(
    "pending", "taint", "node-1", "ns/pod-1", "driver", "nvidia.com/gpu.product", ("a", "b"), "why",
    "value", "old", "ds", 12, ("n1", "n2"), 3, "appeared", "warning", True,
)  # fmt: skip


def _values(f: Finding) -> tuple[object, ...]:
    return tuple(getattr(f, fl.name) for fl in dataclasses.fields(Finding))


def test_every_field_differs_from_its_default() -> None:
    default = Finding("", "")
    for fl in dataclasses.fields(Finding)[2:]:
        assert getattr(FULL, fl.name) != getattr(default, fl.name), fl.name


def test_varied_is_replace() -> None:
    got = FULL.varied("ns/pod-2", "error", "other", ("x",), 7)
    want = dataclasses.replace(FULL, pod="ns/pod-2", severity="error", detail="other", sample=("x",), fits_elsewhere=7)
    assert _values(got) == _values(want)
    assert got == want and hash(got) == hash(want) and repr(got) == repr(want)
    assert got.to_json() == want.to_json()


def test_about_and_graded_are_replace() -> None:
    assert _values(FULL.about("ns/pod-9")) == _values(dataclasses.replace(FULL, pod="ns/pod-9"))
    assert _values(FULL.graded("info")) == _values(dataclasses.replace(FULL, severity="info"))
    assert _values(Finding("c", "r").about("p")) == _values(Finding("c", "r", pod="p"))
