"""Instance types as Karpenter's scheduler filters them, and the kwok provider's, read from its instance-types file.

A mirror of sigs.k8s.io/karpenter v1.14.1:

- ``kwok/cloudprovider/helpers.go`` ``ConstructInstanceTypes``/``setDefaultOptions``/``newInstanceType``: an
  instance-types file (a JSON array of ``name``, ``architecture``, ``operatingSystems``, ``resources``,
  ``offerings`` of ``Price``, ``Available``, ``Requirements``) becomes instance types whose requirements are the
  instance type, arch, OS, the offerings' zones and capacity types and the kwok size/family/cpu/memory labels; every
  offering key becomes well-known; ``pods`` defaults to 110; kube-reserved is ``cpu: 100m``, ``memory: 10Mi``.
- ``pkg/controllers/provisioning/scheduling/nodeclaim.go`` ``filterInstanceTypesByRequirements``, ``compatible``,
  ``fits`` and ``InstanceTypeFilterError.Error``: an instance type stays when its requirements intersect the
  NodeClaim's, some offering is compatible (undefined well-known keys allowed), and the requests fit its
  allocatable; when none stays, the error names which of the three criteria no instance type met.
- ``scheduler.go`` ``filterByRemainingResources``: instance types whose capacity exceeds a NodePool's remaining limits.

What a real cloud's instance types hold (resources, offerings) is not known from a cluster: only the kwok provider's
file is read here; for any other provider the callers pass ``None`` and say so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from gpulabel.k8s.karpenter.providers import Provider, kwok
from gpulabel.k8s.karpenter.requirements import Requirements, requirement
from gpulabel.k8s.quantity import parse_quantity

__all__ = [
    "InstanceType",
    "Offering",
    "filter_error",
    "kwok_instance_types",
    "kwok_provider",
    "pod_requests",
    "within_limits",
]

_KWOK = "karpenter.kwok.sh"
_AWS_NAME = re.compile(r"^\w+\.(nano|micro|small|medium|large|\d*xlarge|metal)$")  # helpers.go awsRegexp
_FAMILY_DELIM = re.compile(r"[.-]")
_KWOK_OVERHEAD = {"cpu": Fraction(1, 10), "memory": Fraction(10 * 2**20)}  # newInstanceType KubeReserved


@dataclass(frozen=True, slots=True)
class Offering:
    requirements: Requirements
    available: bool = True
    price: float = 0.0


@dataclass(frozen=True, slots=True)
class InstanceType:
    """``cloudprovider.InstanceType``: its requirements, offerings, capacity and allocatable (capacity less the
    overhead), quantities as exact fractions."""

    name: str
    requirements: Requirements
    offerings: tuple[Offering, ...]
    capacity: Mapping[str, Fraction]
    allocatable: Mapping[str, Fraction]


def _text(q: Fraction) -> str:
    """A quantity as ``resource.Quantity.String`` prints small cases: whole numbers bare, else milli."""
    return str(q.numerator) if q.denominator == 1 else f"{int(q * 1000)}m"


def kwok_instance_types(raw: str | bytes | Sequence[Mapping[str, Any]]) -> tuple[InstanceType, ...]:
    """``ConstructInstanceTypes`` on an instance-types file (its text or parsed JSON)."""
    data = json.loads(raw) if isinstance(raw, (str, bytes)) else raw
    out = []
    for opts in data:
        name = str(opts.get("name") or "")
        resources = {str(k): str(v) for k, v in (opts.get("resources") or {}).items()}
        cpu, memory = (
            resources.get("cpu", ""),
            resources.get("memory", ""),
        )  # as written (Quantity.String of canonical text)
        match = _AWS_NAME.match(name)
        size = match.group(1) if match else cpu
        parts = _FAMILY_DELIM.split(name, maxsplit=1)
        family = "" if not name else (parts[0] if len(parts) == 2 else name[0])
        capacity = {"pods": Fraction(110), **{k: parse_quantity(v) for k, v in resources.items()}}
        offerings = []
        zones: list[str] = []
        capacity_types: list[str] = []
        for o in opts.get("offerings") or ():
            reqs = [
                (str(r.get("key")), str(r.get("operator")), tuple(r.get("values") or ())) for r in o["Requirements"]
            ]
            for key, _, values in reqs:
                target = zones if key == "topology.kubernetes.io/zone" else None
                target = capacity_types if key == "karpenter.sh/capacity-type" else target
                if target is not None:
                    target.extend(v for v in values if v not in target)
            offerings.append(
                Offering(
                    Requirements(requirement(k, op, vs) for k, op, vs in reqs),
                    True,  # setDefaultOptions makes every offering available
                    float(o.get("Price") or 0),
                )
            )
        requirements = Requirements(
            [
                requirement("node.kubernetes.io/instance-type", "In", (name,)),
                requirement("kubernetes.io/arch", "In", (str(opts.get("architecture") or ""),)),
                requirement("kubernetes.io/os", "In", tuple(str(x) for x in opts.get("operatingSystems") or ())),
                requirement("topology.kubernetes.io/zone", "In", zones),
                requirement("karpenter.sh/capacity-type", "In", capacity_types),
                requirement(f"{_KWOK}/instance-size", "In", (size,)),
                requirement(f"{_KWOK}/instance-family", "In", (family,)),
                requirement(f"{_KWOK}/instance-cpu", "In", (cpu,)),
                requirement(f"{_KWOK}/instance-memory", "In", (memory,)),
            ]
        )
        allocatable = {k: v - _KWOK_OVERHEAD.get(k, Fraction(0)) for k, v in capacity.items()}
        out.append(InstanceType(name, requirements, tuple(offerings), capacity, allocatable))
    return tuple(out)


def kwok_provider(types: Iterable[InstanceType], gpu_labels: Iterable[str] = ()) -> Provider:
    """The kwok provider these instance types make: every offering key well-known (``newInstanceType``)."""
    return kwok({key for t in types for o in t.offerings for key in o.requirements}, gpu_labels)


def _add(total: dict[str, Fraction], more: Mapping[str, str]) -> None:
    for k, v in more.items():
        total[k] = total.get(k, Fraction(0)) + parse_quantity(str(v))


def pod_requests(spec: Mapping[str, Any]) -> dict[str, Fraction]:
    """``resources.RequestsForPods`` of one pod (``resourcehelper.PodRequests``): the containers' requests summed,
    sidecars (init containers with ``restartPolicy: Always``) added, each plain init container's requests as a
    floor, the pod ``overhead`` added, and ``pods: 1``."""
    total: dict[str, Fraction] = {}
    for c in spec.get("containers") or ():
        _add(total, (c.get("resources") or {}).get("requests") or {})
    sidecars: dict[str, Fraction] = {}
    for c in spec.get("initContainers") or ():
        requests: dict[str, Fraction] = {}
        _add(requests, (c.get("resources") or {}).get("requests") or {})
        if c.get("restartPolicy") == "Always":
            for k, v in requests.items():
                sidecars[k] = sidecars.get(k, Fraction(0)) + v
            continue
        for k, v in requests.items():  # a plain init container runs with the sidecars started before it
            total[k] = max(total.get(k, Fraction(0)), v + sidecars.get(k, Fraction(0)))
    for k, v in sidecars.items():
        total[k] = total.get(k, Fraction(0)) + v
    _add(total, spec.get("overhead") or {})
    total["pods"] = Fraction(1)
    return total


def _fits(requests: Mapping[str, Fraction], allocatable: Mapping[str, Fraction]) -> bool:
    """``resources.Fits``: no negative allocatable, and every request within it (absent counts as zero)."""
    if any(v < 0 for v in allocatable.values()):
        return False
    return all(v <= allocatable.get(k, Fraction(0)) for k, v in requests.items())


def _requests_text(requests: Mapping[str, Fraction]) -> str:
    """``pretty.Concise`` of a ResourceList: JSON of the quantities, keys sorted."""
    return json.dumps({k: _text(v) for k, v in sorted(requests.items())}, separators=(",", ":"))


def filter_error(
    types: Sequence[InstanceType],
    reqs: Requirements,
    requests: Mapping[str, Fraction],
    well_known: frozenset[str],
) -> tuple[tuple[InstanceType, ...], str | None]:
    """``filterInstanceTypesByRequirements`` (no daemon overhead, no host ports, no minValues): the instance types
    that stay, and when none does the first words of ``InstanceTypeFilterError.Error`` (``no instance type ...``;
    the ``requirements=`` and ``resources=`` that follow in Karpenter's message are not rebuilt here)."""
    met = fits = offering = req_fits = req_offering = fits_offering = False
    remaining = []
    for t in types:
        compat = not t.requirements.conflicts(reqs)
        has_offering = it_fits = False
        for o in t.offerings:  # one allocatable group: no NodeOverlay
            if o.available and reqs.compatible(o.requirements, well_known) is None:
                has_offering = True
                it_fits = _fits(requests, t.allocatable)
                break
        met, fits, offering = met or compat, fits or it_fits, offering or has_offering
        req_fits = req_fits or (compat and it_fits and not has_offering)
        req_offering = req_offering or (compat and has_offering and not it_fits)
        fits_offering = fits_offering or (it_fits and has_offering and not compat)
        if compat and it_fits and has_offering:
            remaining.append(t)
    if remaining:
        return tuple(remaining), None
    if not met and not fits and not offering:
        why = "no instance type met the scheduling requirements or had enough resources or had a required offering"
    elif not met and not fits:
        why = "no instance type met the scheduling requirements or had enough resources"
    elif not met and not offering:
        why = "no instance type met the scheduling requirements or had a required offering"
    elif not fits and not offering:
        why = "no instance type had enough resources or had a required offering"
    elif not met:
        why = "no instance type met all requirements"
    elif not fits:
        why = "no instance type has enough resources"
    elif not offering:
        why = "no instance type has the required offering"
    elif req_fits:
        why = "no instance type which met the scheduling requirements and had enough resources, had a required offering"
    elif fits_offering:
        why = "no instance type which had enough resources and the required offering met the scheduling requirements"
    elif req_offering:
        why = (
            "no instance type which met the scheduling requirements and the required offering had the required "
            "resources"
        )
    else:
        why = "no instance type met the requirements/resources/offering tuple"
    return (), f"{why}, resources={_requests_text(requests)}"


def within_limits(types: Sequence[InstanceType], remaining: Mapping[str, Fraction]) -> tuple[InstanceType, ...]:
    """``filterByRemainingResources``: the instance types whose capacity of every limited resource is within what
    the NodePool has left."""
    return tuple(t for t in types if all(t.capacity.get(k, Fraction(0)) <= left for k, left in remaining.items()))
