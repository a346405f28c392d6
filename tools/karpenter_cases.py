"""Karpenter's own expectations for its label requirements, as data for gpulabel's tests.

Reads ``pkg/scheduling/requirement_test.go`` and ``requirements_test.go`` of sigs.k8s.io/karpenter at the
version given (from the Go module cache: ``go mod download -json sigs.k8s.io/karpenter@v1.14.1``) and writes
every case they state with named requirements into one JSON file:

- ``requirements``: each named requirement (key, operator, values, minValues) as the tests build it;
- ``intersection``: ``Entry(nil, a, b, expected)`` of the three ``Intersection`` tables (the expected value a
  named requirement or an ``&Requirement{...}`` literal, read field by field);
- ``has``: ``Entry(nil, r, "v", BeTrue()|BeFalse())`` of the ``Has`` table;
- ``compatible``: every ``Expect(a.Compatible(b[, AllowUndefinedWellKnownLabels])).To|ToNot(Succeed())``;
- ``hints``: the ``Error Messages`` tables (a key, the exact error of ``Compatible``).

Usage: ``python -m tools.karpenter_cases MODULE_DIR OUT.json`` (the tests read
``tests/unit/karpenter/data/requirements-v1.14.1.json``, written by this).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

_CONSTS = {
    "corev1.LabelTopologyZone": "topology.kubernetes.io/zone",
    "corev1.LabelFailureDomainBetaZone": "failure-domain.beta.kubernetes.io/zone",
}
_DEF = re.compile(
    r"^\s*(\w+) := (?:NewRequirements\()?NewRequirement(WithFlexibility)?\(([^,]+), corev1\.NodeSelectorOp(\w+)"
    r"(?:, new\((\d+)\))?((?:, \"[^\"]*\")*)\)\)?\s*$"
)
_EMPTY = re.compile(r"^\s*(\w+) := NewRequirements\(\)\s*$")
_ENTRY3 = re.compile(r"^\s*Entry\(nil, (\w+), (\w+), (.+)\),\s*$")
_HAS = re.compile(r"^\s*Entry\(nil, (\w+), \"([^\"]*)\", Be(True|False)\(\)\),\s*$")
_COMPAT = re.compile(
    r"Expect\((\w+)\.Compatible\((\w+)(, AllowUndefinedWellKnownLabels)?\)\)\.(To|ToNot)\(Succeed\(\)\)"
)
_HINT = re.compile(r"Entry\(\"[^\"]*\", \"([^\"]+)\", `([^`]+)`\)")


def _definitions(text: str) -> dict[str, dict[str, Any] | None]:
    """Named requirements (``None``: an empty ``NewRequirements()``); the first definition of a name wins (the
    tables use the file's top-level ones; later ``It`` blocks define local names of their own)."""
    out: dict[str, dict[str, Any] | None] = {}
    for line in text.splitlines():
        if (m := _EMPTY.match(line) or _DEF.match(line)) is None or m[1] in out:
            continue
        if m.re is _EMPTY:
            out[m[1]] = None
        else:
            key = _CONSTS.get(m[3], m[3].strip('"'))
            values = re.findall(r"\"([^\"]*)\"", m[6])
            out[m[1]] = {"key": key, "operator": m[4], "values": values, "min_values": int(m[5]) if m[5] else None}
    return out


def _literal(text: str, named: dict[str, Any]) -> dict[str, Any] | None:
    """An expected ``&Requirement{...}`` as its fields, or a named requirement's name."""
    if re.fullmatch(r"\w+", text):
        return {"name": text}
    m = re.fullmatch(r"&Requirement\{(.*)\}", text)
    if m is None:
        return None
    body = m[1]
    out: dict[str, Any] = {"complement": "complement: true" in body, "gte": None, "lte": None, "min_values": None}
    values = re.search(r"values: sets\.(?:New(?:\[string\])?\(([^)]*)\)|Set\[string\]\{\})", body)
    out["values"] = re.findall(r"\"([^\"]*)\"", values[1] or "") if values else []
    for bound in ("gte", "lte"):
        if b := re.search(rf"{bound}: (\w+)\.{bound}", body):
            out[bound] = {"of": b[1]}
    if mv := re.search(r"MinValues: new\((\d+)\)", body):
        out["min_values"] = int(mv[1])
    return out


def extract(module: Path) -> dict[str, Any]:
    one = (module / "pkg/scheduling/requirement_test.go").read_text()
    many = (module / "pkg/scheduling/requirements_test.go").read_text()
    named = _definitions(one)
    intersection = []
    for line in one.splitlines():
        if (m := _ENTRY3.match(line)) and m[1] in named and m[2] in named:
            expected = _literal(m[3], named)
            if expected is not None:
                intersection.append({"existing": m[1], "incoming": m[2], "expected": expected})
    has = [
        {"requirement": m[1], "value": m[2], "expected": m[3] == "True"}
        for line in one.splitlines()
        if (m := _HAS.match(line))
    ]
    sets = _definitions(many)
    compatible = [
        {"existing": m[1], "incoming": m[2], "allow_well_known": bool(m[3]), "ok": m[4] == "To"}
        for m in _COMPAT.finditer(many)
    ]
    hints = [{"key": m[1], "error": m[2]} for m in _HINT.finditer(many)]
    return {
        "source": "sigs.k8s.io/karpenter@v1.14.1 pkg/scheduling/requirement_test.go, requirements_test.go",
        "requirements": named,
        "requirement_sets": sets,
        "intersection": intersection,
        "has": has,
        "compatible": compatible,
        "hints": hints,
    }


def main(argv: list[str]) -> int:
    module, out = Path(argv[0]), Path(argv[1])
    data = extract(module)
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    counts = {k: len(v) for k, v in data.items() if isinstance(v, list | dict)}
    print(f"{out}: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
