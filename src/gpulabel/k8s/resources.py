"""Resource quantities, a pod's requests, and the scheduler's NodeResourcesFit filter.

Mirrors, message for message:

- ``apimachinery/pkg/api/resource`` ``ParseQuantity`` (:mod:`gpulabel.k8s.quantity`, the
  one parser); ``Value()`` and ``MilliValue()`` round up (away from zero).
- ``component-helpers/resource`` ``PodRequests``: containers summed; each
  init container's request plus the restartable (sidecar) init containers
  before it, the largest of those wins against the sum; restartable init
  containers add to the sum; pod-level requests (cpu, memory, hugepages) replace
  the aggregate; overhead is added. For a pod already bound to a node the
  scheduler counts ``max(spec, actuated, allocated)`` (in-place resize).
- ``pkg/scheduler/framework/plugins/noderesources/fit.go`` ``fitsRequest``:
  ``Too many pods`` when the node already holds ``allocatable.pods`` pods;
  then, for every resource the pod requests (cpu in millicores, the rest in
  units), ``Insufficient <name>`` when the request exceeds allocatable minus
  what the node's non-terminal pods request. A failure is *unresolvable* (no
  preemption can help) when the request exceeds the node's whole allocatable.

Not modelled: extended resources that a DeviceClass maps to DRA (the node then
advertises none of it), and the scheduler's ``ignoredResources`` options.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpulabel.errors import QuantityError
from gpulabel.k8s.quantity import NANOS, decode_nanos, parse_quantity

__all__ = [
    "CPU",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "PODS",
    "RESOURCES",
    "Insufficient",
    "NodeCapacity",
    "QuantityError",
    "apply_request_defaults",
    "format_amount",
    "is_scalar_resource",
    "node_amounts",
    "parse_quantity",
    "pod_requests",
    "scheduler_amounts",
]

RESOURCES = "NodeResourcesFit"  # the filter's name, as the matcher names filters
CPU, MEMORY, PODS, EPHEMERAL_STORAGE = "cpu", "memory", "pods", "ephemeral-storage"

_NANOS = NANOS  # amounts are held as exact integers of nano-units (ParseQuantity keeps nothing finer)
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}  # format_amount's suffixes


def _ceil_away(n: int, unit: int) -> int:
    whole = -(-abs(n) // unit)  # ceil(|n| / unit)
    return whole if n >= 0 else -whole


def _value(n: int) -> int:
    """``Quantity.Value()`` of an amount in nano-units: rounded up (away from zero) to an integer."""
    return _ceil_away(n, _NANOS)


def _milli_value(n: int) -> int:
    """``Quantity.MilliValue()`` of an amount in nano-units."""
    return _ceil_away(n, _NANOS // 1000)


def is_scalar_resource(name: str) -> bool:
    """The names the scheduler tracks besides cpu, memory, pods and ephemeral-storage.

    Extended resources (``nvidia.com/gpu``), prefixed native ones
    (``*kubernetes.io/*``), ``hugepages-*`` and ``attachable-volumes-*``.
    """
    return "/" in name or name.startswith(("hugepages-", "attachable-volumes-"))


# -- a pod's requests ---------------------------------------------------------------


def _resource_list(raw: Any, where: str) -> dict[str, int]:
    """A ResourceList as amounts in nano-units."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise QuantityError(f"{where}: not a mapping of resource names to quantities")
    out = {}
    for name, text in raw.items():
        try:
            out[str(name)] = decode_nanos(str(text) if not isinstance(text, str) else text)
        except QuantityError as err:
            raise QuantityError(f"{where}.{name}: Invalid value: {text!r}: {err}") from None
    return out


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def _max_into(into: dict[str, int], more: Mapping[str, int]) -> None:
    for k, v in more.items():
        if k not in into or v > into[k]:
            into[k] = v


def _maximum(*lists: Mapping[str, int] | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for rl in lists:
        if rl:
            _max_into(out, rl)
    return out


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _supported_pod_level(name: str) -> bool:
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


def _aggregate(spec: Mapping[str, Any], per_container: Any) -> dict[str, int]:
    """``aggregateContainerResourcesByFn``: containers summed; init containers by their peak."""
    result: dict[str, int] = {}
    for i, c in enumerate(_list(spec.get("containers"))):
        _add(result, per_container(_dict(c), f"spec.containers[{i}]"))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for i, c in enumerate(_list(spec.get("initContainers"))):
        c = _dict(c)
        mine = per_container(c, f"spec.initContainers[{i}]")
        if c.get("restartPolicy") == "Always":
            _add(result, mine)
            _add(sidecars, mine)
            use = dict(sidecars)
        else:
            use = dict(mine)
            _add(use, sidecars)
        _max_into(init_peak, use)
    _max_into(result, init_peak)
    return result


def _resize_infeasible(status: Mapping[str, Any]) -> bool:
    for c in _list(status.get("conditions")):
        if isinstance(c, dict) and c.get("type") == "PodResizePending" and c.get("reason") == "Infeasible":
            return True
    return False


def pod_requests(
    spec: Mapping[str, Any], status: Mapping[str, Any] | None = None, *, bound: bool = False
) -> dict[str, int]:
    """``resource.PodRequests`` for a pod spec (API JSON), overhead included, in nano-units.

    ``bound``: the pod is on a node, so the scheduler's cache counts what its
    status says was allocated or actuated when that is more than the spec
    (``UseStatusResources``; pod-level status too, as v1.37 does by default).
    Raises :class:`QuantityError` naming the field of a quantity that does not parse.
    """
    status = status or {}
    statuses: dict[str, dict[str, Any]] = {}
    if bound:  # what the status says counts only for a bound pod
        for key in ("initContainerStatuses", "containerStatuses"):
            for cs in _list(status.get(key)):
                cs = _dict(cs)
                statuses.setdefault(str(cs.get("name")), cs)

    def spec_reqs(c: Mapping[str, Any], where: str) -> dict[str, int]:
        return _resource_list(_dict(c.get("resources")).get("requests"), f"{where}.resources.requests")

    resized = bool(statuses) and any(
        cs.get("allocatedResources") is not None or _dict(cs.get("resources")).get("requests") is not None
        for cs in statuses.values()
    )
    if not bound or not (resized or "allocatedResources" in status or _resize_infeasible(status)):
        # Unbound, or bound with nothing in its status beyond the spec: max(spec, spec, spec) is the spec.
        reqs = _aggregate(spec, spec_reqs)
    else:
        infeasible = _resize_infeasible(status)

        def allocated(c: Mapping[str, Any], where: str) -> dict[str, int] | None:
            cs = statuses.get(str(c.get("name")))
            if cs is not None and cs.get("allocatedResources") is not None:
                return _resource_list(cs["allocatedResources"], f"{where} status allocatedResources")
            return None if infeasible else spec_reqs(c, where)

        def actuated(c: Mapping[str, Any], where: str) -> dict[str, int] | None:
            cs = statuses.get(str(c.get("name")))
            if cs is not None:
                res = _dict(cs.get("resources"))
                if res.get("requests") is not None:
                    return _resource_list(res["requests"], f"{where} status resources.requests")
                if cs.get("allocatedResources") is not None:
                    return _resource_list(cs["allocatedResources"], f"{where} status allocatedResources")
            return None if infeasible else spec_reqs(c, where)

        def none_safe(fn: Any) -> Any:
            return lambda c, w: fn(c, w) or {}

        specs = _aggregate(spec, spec_reqs)
        pod_status_res = _dict(status.get("resources"))
        if status.get("allocatedResources") is not None and pod_status_res.get("requests") is not None:
            alloc = _resource_list(status["allocatedResources"], "status.allocatedResources")
            act = _resource_list(pod_status_res["requests"], "status.resources.requests")
        else:
            alloc = _aggregate(spec, none_safe(allocated))
            act = _aggregate(spec, none_safe(actuated))
        reqs = _maximum(act, alloc) if infeasible else _maximum(specs, act, alloc)

    pod_level = _dict(spec.get("resources"))
    level_reqs = _resource_list(pod_level.get("requests"), "spec.resources.requests")
    if any(_supported_pod_level(k) for k in level_reqs):
        effective = level_reqs
        if bound and "resources" in status:
            effective = _maximum(
                None if _resize_infeasible(status) else level_reqs,
                _resource_list(_dict(status.get("resources")).get("requests"), "status.resources.requests"),
                _resource_list(status.get("allocatedResources"), "status.allocatedResources"),
            )
        for name, q in effective.items():
            if _supported_pod_level(name):
                reqs[name] = q
    _add(reqs, _resource_list(spec.get("overhead"), "spec.overhead"))
    return reqs


def apply_request_defaults(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a pod spec with the API server's request defaults applied (``SetDefaults_Pod``).

    For manifests that have not been through the API: a container's limits
    become its requests where it has none for that resource; pod-level cpu and
    memory requests default to the containers' aggregate, then to the pod-level limits.
    """
    out = dict(spec)
    for key in ("containers", "initContainers"):
        fixed = []
        for c in _list(spec.get(key)):
            c = dict(_dict(c))
            res = dict(_dict(c.get("resources")))
            limits = _dict(res.get("limits"))
            if limits:
                res["requests"] = {**limits, **_dict(res.get("requests"))}
                c["resources"] = res
            fixed.append(c)
        if key in spec:
            out[key] = fixed
    level = _dict(spec.get("resources"))
    limits = _dict(level.get("limits"))
    if limits:
        reqs = dict(_dict(level.get("requests")))
        aggregate = _aggregate(out, lambda c, w: _resource_list(_dict(c.get("resources")).get("requests"), w))
        for name, q in aggregate.items():
            if name in (CPU, MEMORY) and name not in reqs:
                reqs[name] = format_amount(name, _milli_value(q) if name == CPU else _value(q))
        for name, text in limits.items():
            if _supported_pod_level(name) and name not in reqs:
                reqs[name] = text
        out["resources"] = {**level, "requests": reqs}
    return out


def scheduler_amounts(reqs: Mapping[str, int]) -> dict[str, int]:
    """What the scheduler compares (amounts in nano-units in): cpu in millicores, the rest rounded up to units."""
    out: dict[str, int] = {}
    for name, q in reqs.items():
        if name == CPU:
            out[name] = _milli_value(q)
        elif name in (MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource(name):
            out[name] = _value(q)
    return out


def node_amounts(allocatable: Mapping[str, str], where: str = "status.allocatable") -> dict[str, int]:
    """A node's ``status.allocatable`` as the scheduler holds it (``pods`` included).

    A negative amount is refused as the API server refuses it (``ValidateNodeResources``:
    ``ValidateNonnegativeQuantity``, ``must be greater than or equal to 0``).
    """
    parsed = _resource_list(allocatable, where)
    for name, nanos in parsed.items():
        if nanos < 0:
            from gpulabel.k8s import field
            from gpulabel.k8s.quantity import resource_list_form

            shown = resource_list_form(str(allocatable[name]))  # Quantity.String(), as the server stores it
            raise QuantityError(field.invalid(f"{where}.{name}", shown, "must be greater than or equal to 0"))
    out = scheduler_amounts(parsed)
    if PODS in allocatable:
        out[PODS] = _value(decode_nanos(allocatable[PODS]))
    return out


def format_amount(name: str, amount: int) -> str:
    """An amount in the scheduler's units as a quantity people read (``1500m``, ``16Gi``, ``2``)."""
    if name == CPU:
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if name in (MEMORY, EPHEMERAL_STORAGE) or name.startswith("hugepages-"):
        for suffix, shift in reversed(_BINARY.items()):
            if amount and amount % (1 << shift) == 0:
                return f"{amount >> shift}{suffix}"
    return str(amount)


# -- the filter ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Insufficient:
    """One resource a node lacks for a pod, with the scheduler's figures."""

    resource: str
    requested: int
    used: int
    capacity: int

    @property
    def free(self) -> int:
        return self.capacity - self.used

    @property
    def unresolvable(self) -> bool:
        """No preemption can help: the request is more than the node has at all (never for pods)."""
        return self.resource != PODS and self.requested > self.capacity

    @property
    def scheduler_reason(self) -> str:
        return "Too many pods" if self.resource == PODS else f"Insufficient {self.resource}"

    @property
    def reason(self) -> str:
        return f"insufficient {self.resource}"

    def why(self) -> str:
        if self.resource == PODS:
            return f"the node holds {self.used} pod(s), its allocatable pods is {self.capacity}"
        f = format_amount
        r = self.resource
        return (
            f"requested {f(r, self.requested)}, free {f(r, self.free)} "
            f"(allocatable {f(r, self.capacity)}, requested by its pods {f(r, self.used)})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "resource": self.resource,
            "requested": self.requested,
            "used": self.used,
            "allocatable": self.capacity,
            "free": self.free,
        }


@dataclass(frozen=True, slots=True)
class NodeCapacity:
    """A node's allocatable and what its non-terminal pods request, in the scheduler's units."""

    allocatable: Mapping[str, int]
    requested: Mapping[str, int]
    pods: int
    lowest_priority: int = 2**31  # of the pods on the node (none: higher than any priority)

    @classmethod
    def of(
        cls, allocatable: Mapping[str, int], pod_requests: Iterable[Mapping[str, int]], priorities: Iterable[int] = ()
    ) -> NodeCapacity:
        total: dict[str, int] = {}
        count = 0
        for reqs in pod_requests:
            count += 1
            for k, v in reqs.items():
                total[k] = total.get(k, 0) + v
        # allocatable kept as given: a node record's amounts, one dict for the nodes of a machine, never written
        return cls(allocatable, total, count, min(priorities, default=2**31))

    def key(self) -> tuple[Any, ...]:
        return (
            tuple(sorted(self.allocatable.items())),
            tuple(sorted(self.requested.items())),
            self.pods,
            self.lowest_priority,
        )

    def free(self, name: str) -> int:
        return self.allocatable.get(name, 0) - self.requested.get(name, 0)

    def insufficient(self, request: Mapping[str, int]) -> tuple[Insufficient, ...]:
        """``fitsRequest``: every resource this node lacks for a pod requesting ``request``.

        Order: pods, cpu, memory, ephemeral-storage, then the other resources by
        name (the scheduler walks a Go map there; its message sorts them anyway).
        """
        out = []
        allowed = self.allocatable.get(PODS, 0)
        if self.pods + 1 > allowed:
            out.append(Insufficient(PODS, 1, self.pods, allowed))
        names = [n for n in (CPU, MEMORY, EPHEMERAL_STORAGE) if n in request]
        names += sorted(n for n in request if n not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS))
        for name in names:
            want = request[name]
            if want > 0 and want > self.free(name):
                out.append(Insufficient(name, want, self.requested.get(name, 0), self.allocatable.get(name, 0)))
        return tuple(out)
