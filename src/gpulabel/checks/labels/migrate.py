"""From node labels to devices: the DRA selector that selects the GPUs a node affinity on GFD labels selects.

A pod that picks GPUs through GPU Feature Discovery's node labels
(``nvidia.com/gpu.product In [...]``, ``nvidia.com/gpu.memory Gt``,
``nvidia.com/gpu.compute.major``, ``nvidia.com/gpu.family``) can ask a DRA
claim for the same GPUs with a CEL selector over the attributes NVIDIA's DRA
driver publishes. The two vocabularies differ, and each difference is a
warning:

- ``gpu.product`` is GFD's sanitised name (``NVIDIA-A100-SXM4-80GB``);
  ``productName`` is NVML's raw name (``NVIDIA A100-SXM4-80GB``). Raw names
  are taken from the fleet's devices whose name sanitises to the label value;
  where none does, a regular expression accepts either spelling;
- ``gpu.memory`` is MiB, ``capacity memory`` is bytes: compared as quantities;
- ``gpu.family`` is lower case (``hopper``), ``architecture`` is not
  (``Hopper``, ``Ada Lovelace``);
- ``gpu.compute.major``/``minor`` are numbers, ``cudaComputeCapability`` is a
  version: ``.major()``/``.minor()``;
- ``gpu.count`` is not a device property: it becomes the request's ``count``.

Node affinity terms are ORed and their requirements ANDed, so the selector
is the terms' conjunctions joined with ``||``; ``nodeSelector`` entries are
ANDed with every term. Requirements on other keys stay node affinity.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial

from gpulabel.k8s.dra.cel import compile_selector
from gpulabel.k8s.nodeaffinity import PodRequirements, Requirement
from gpulabel.model.sanitize import sanitize_gfd

__all__ = ["Migration", "migrate"]

DOMAIN = "gpu.nvidia.com"
A = f'device.attributes["{DOMAIN}"]'
C = f'device.capacity["{DOMAIN}"]'
PRODUCT, MEMORY, FAMILY = "nvidia.com/gpu.product", "nvidia.com/gpu.memory", "nvidia.com/gpu.family"
MAJOR, MINOR, COUNT = "nvidia.com/gpu.compute.major", "nvidia.com/gpu.compute.minor", "nvidia.com/gpu.count"


@dataclass
class Migration:
    """The selector (``None``: nothing to translate), what it could not carry over, and the warnings."""

    selector: str | None
    count: int | None = None
    kept: list[str] = field(default_factory=list)  # requirements that stay node affinity
    warnings: list[str] = field(default_factory=list)


def _strings(values: Iterable[str]) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def _ints(values: Iterable[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


class _Translator:
    def __init__(self, products: Iterable[str], architectures: Iterable[str]) -> None:
        self.products = sorted(set(products))
        self.architectures = sorted(set(architectures))
        self.warnings: list[str] = []
        self.kept: list[str] = []
        self.count: int | None = None

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def product_names(self, value: str) -> list[str] | None:
        raw = [p for p in self.products if sanitize_gfd(p) == value]
        if raw:
            for p in raw:
                if p != value:
                    self.warn(f"{PRODUCT}={value} is GFD's sanitised form of productName {json.dumps(p)}")
            return raw
        return None

    def product(self, r: Requirement) -> str | None:
        if r.operator in ("Exists", "DoesNotExist"):
            return "true" if r.operator == "Exists" else None
        clauses, names = [], []
        for v in r.values:
            raw = self.product_names(v)
            if raw:
                names.extend(raw)
                continue
            if "-MIG-" in v or v.endswith("-SHARED"):
                self.warn(f"{PRODUCT}={v} names a MIG or shared GPU: select MIG devices by profile instead")
            pattern = "^" + "[- ]".join(re.escape(part) for part in v.split("-")) + "$"
            clauses.append(f"{A}.productName.matches({json.dumps(pattern)})")
            self.warn(
                f"no device in the fleet has a productName that GFD writes as {v}: "
                "matching spaces or dashes where the label has dashes"
            )
        if names:
            clauses.insert(0, f"{A}.productName in {_strings(names)}")
        if not clauses:
            return None
        either = clauses[0] if len(clauses) == 1 else "(" + " || ".join(clauses) + ")"
        if r.operator == "NotIn":
            return f"!{either}" if either.startswith("(") else f"!({either})"
        return either

    def memory(self, r: Requirement) -> str | None:
        self.warn(f"{MEMORY} is MiB; the driver's memory capacity is bytes: compared as quantities")
        if r.operator in ("Gt", "Lt") and r.bound is not None:
            op = ">" if r.operator == "Gt" else "<"
            return f'{C}.memory.compareTo(quantity("{r.bound}Mi")) {op} 0'
        if r.operator in ("In", "NotIn"):
            parts = [f'{C}.memory.compareTo(quantity("{v}Mi")) == 0' for v in r.values if v.isdigit()]
            if not parts:
                return None
            either = " || ".join(parts)
            return f"!({either})" if r.operator == "NotIn" else f"({either})" if len(parts) > 1 else either
        return "true" if r.operator == "Exists" else None

    def compute(self, r: Requirement, part: str) -> str | None:
        self.warn(f"cudaComputeCapability is a version: {part}() reads the label's number from it")
        expr = f"{A}.cudaComputeCapability.{part}()"
        if r.operator in ("Gt", "Lt") and r.bound is not None:
            return f"{expr} {'>' if r.operator == 'Gt' else '<'} {r.bound}"
        if r.operator in ("In", "NotIn"):
            nums = [int(v) for v in r.values if v.isdigit()]
            if not nums:
                return None
            return (
                f"{'!(' if r.operator == 'NotIn' else ''}{expr} in {_ints(nums)}{')' if r.operator == 'NotIn' else ''}"
            )
        return "true" if r.operator == "Exists" else None

    def family(self, r: Requirement) -> str | None:
        if r.operator not in ("In", "NotIn"):
            return "true" if r.operator == "Exists" else None
        archs = []
        for v in r.values:
            found = [a for a in self.architectures if a.lower().replace(" ", "-") == v.lower()]
            arch = found[0] if found else " ".join(w.capitalize() for w in v.split("-"))
            if arch != v:
                self.warn(f"{FAMILY}={v} is written {json.dumps(arch)} in the driver's architecture attribute")
            archs.append(arch)
        expr = f"{A}.architecture in {_strings(archs)}"
        return f"!({expr})" if r.operator == "NotIn" else expr

    def requirement(self, r: Requirement) -> str | None:
        """A CEL clause, or None when the requirement stays node affinity (recorded in ``kept``)."""
        handlers: dict[str, Callable[[Requirement], str | None]] = {
            PRODUCT: self.product,
            MEMORY: self.memory,
            FAMILY: self.family,
            MAJOR: partial(self.compute, part="major"),
            MINOR: partial(self.compute, part="minor"),
        }
        if r.key == COUNT:
            if r.operator == "Gt" and r.bound is not None:
                self.count = r.bound + 1
            elif r.operator == "In" and len(r.values) == 1 and r.values[0].isdigit():
                self.count = int(r.values[0])
            self.warn(f"{COUNT} is not a device property: ask for the GPUs with the request's count instead")
            return "true"
        handler = handlers.get(r.key)
        clause = handler(r) if handler else None
        if clause is None:
            self.kept.append(r.text())
        return clause


def _conjunction(clauses: list[str]) -> str:
    useful = [c for c in clauses if c != "true"]
    if not useful:
        return "true"
    return " && ".join(f"({c})" if " || " in c and not c.startswith("(") else c for c in useful)


def migrate(req: PodRequirements, products: Iterable[str] = (), architectures: Iterable[str] = ()) -> Migration:
    """The DRA selector for ``req``'s GPU label requirements; ``products``/``architectures`` from the fleet."""
    t = _Translator(products, architectures)
    common = []
    for key, value in req.node_selector:
        r = Requirement(key=key, operator="In", values=(value,), path="spec.nodeSelector", value_set=frozenset({value}))
        clause = t.requirement(r)
        if clause is not None:
            common.append(clause)
    terms = []
    for term in req.terms or ():
        clauses = [c for c in (t.requirement(r) for r in term.expressions) if c is not None]
        terms.append(_conjunction([*common, *clauses]))
    if not terms and common:
        terms.append(_conjunction(common))
    if not terms or (all(x == "true" for x in terms) and not t.count):
        return Migration(None, t.count, t.kept, t.warnings)
    selector = terms[0] if len(terms) == 1 else " || ".join(f"({x})" for x in terms)
    compiled = compile_selector(selector)
    if compiled.error is not None:  # a bug in the translation: say so rather than print it
        raise AssertionError(f"generated selector does not compile: {compiled.error}")
    return Migration(selector, t.count, t.kept, t.warnings)
