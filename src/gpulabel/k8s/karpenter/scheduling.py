"""Whether Karpenter would make a node for a pod from a NodePool, and Karpenter's words when it would not.

A mirror of sigs.k8s.io/karpenter v1.14.1's provisioning rules for one pod and a NodePool's template, each
function naming the file and function it follows:

- what a pod asks (``pkg/scheduling/requirements.go`` ``newPodRequirements``): its nodeSelector as ``In``, the
  heaviest preferred node-affinity term as if required, and only the *first* required term;
- how a pod is relaxed when nothing fits (``pkg/controllers/provisioning/scheduling/preferences.go``
  ``Relax``): drop required term 0 while more remain, then preferred terms heaviest first, then tolerate
  ``PreferNoSchedule`` taints if some NodePool has one (``scheduler.go`` ``NewScheduler``);
- what a NodePool offers (``nodeclaimtemplate.go`` ``NewNodeClaimTemplate``): its requirements, its template
  labels and ``karpenter.sh/nodepool`` and the NodeClass label each as ``In``, and
  ``karpenter.sh/registered``/``initialized`` ``In [true]``;
- the pod against it (``nodeclaim.go`` ``CanAdd``): the template's ``taints`` must all be tolerated, any effect
  (``pkg/scheduling/taints.go`` ``Tolerates``; ``startupTaints`` are not checked), then ``Compatible`` with
  well-known keys allowed undefined (:mod:`gpulabel.k8s.karpenter.requirements`);
- pods Karpenter refuses before any NodePool (``provisioner.go`` ``Validate``): a restricted label, an operator
  or value ``ValidateRequirement`` (``pkg/apis/v1/nodeclaim_validation.go``) refuses, ``matchFields``,
  ``karpenter.sh/nodepool DoesNotExist``; pods with DRA claims while ``IGNORE_DRA_REQUESTS`` (``scheduler.go``
  ``add``);
- limits (``scheduler.go`` ``addToNewNodeClaim``, ``updateRemainingResources``, ``filterByRemainingResources``):
  ``spec.limits`` less the capacity of the pool's nodes (each node counts ``nodes: 1``).

- with instance types given (the kwok provider's file, :mod:`gpulabel.k8s.karpenter.instancetypes`): each
  template's instance types prefiltered by its requirements (``NewScheduler``; a NodePool none is left for takes no
  pod), the limits as ``filterByRemainingResources``, and the pod's requirements and requests against them
  (``tryVolumeAlternative``: ``filterInstanceTypesByRequirements``), so a first required term no instance type
  can serve is relaxed away as Karpenter does.

What it does not model: ``minValues``, daemon overhead, host ports, topology spread, pod (anti-)affinity, volumes,
DRA allocation, in-flight NodeClaims and existing nodes. What a real cloud's instance types hold is not known here:
without instance types the verdict says so (:attr:`Verdict.unknown`) and :func:`limit_error` judges only the
``nodes`` limit rather than guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from gpulabel.k8s.karpenter.instancetypes import InstanceType, filter_error, pod_requests, within_limits
from gpulabel.k8s.karpenter.objects import INITIALIZED_LABEL, NODEPOOL_LABEL, REGISTERED_LABEL, NodePool
from gpulabel.k8s.karpenter.providers import Provider
from gpulabel.k8s.karpenter.requirements import NORMALIZED_LABELS, Requirements, go_atoi, requirement
from gpulabel.k8s.quantity import parse_quantity
from gpulabel.k8s.taints import Taint, Toleration

__all__ = [
    "DRA_IGNORED",
    "NO_TEMPLATES",
    "UNKNOWN_INSTANCE_TYPES",
    "Expression",
    "PodTerms",
    "Verdict",
    "decide",
    "limit_error",
    "nodepool_error",
    "order_by_weight",
    "pod_requirements",
    "pod_terms",
    "refused",
    "relaxed",
    "template_requirements",
    "untolerated",
]

Expression = tuple[str, str, tuple[str, ...]]  # a NodeSelectorRequirement: key, operator, values
DRA_IGNORED = "pod has Dynamic Resource Allocation requirements that are not yet supported by Karpenter"
NO_TEMPLATES = "nodepool requirements filtered out all available instance types"  # scheduler.go add
UNKNOWN_INSTANCE_TYPES = (
    "the provider's instance types are not known here: their resources and offerings were not judged"
)


@dataclass(frozen=True, slots=True)
class PodTerms:
    """What Karpenter reads of a pod to choose a NodePool."""

    node_selector: tuple[tuple[str, str], ...] = ()
    required: tuple[tuple[Expression, ...], ...] | None = None  # nodeSelectorTerms (matchExpressions)
    preferred: tuple[tuple[int, tuple[Expression, ...]], ...] = ()  # (weight, matchExpressions)
    tolerations: tuple[Toleration, ...] = ()
    match_fields: bool = False  # some required term has matchFields
    claims: bool = False  # spec.resourceClaims
    requests: tuple[tuple[str, Fraction], ...] = ()  # resources.RequestsForPods (pods: 1 included)


def _exprs(raw: Any) -> tuple[Expression, ...]:
    out = []
    for e in raw or ():
        if isinstance(e, Mapping):
            values = tuple(str(v) for v in e.get("values") or ())
            out.append((str(e.get("key") or ""), str(e.get("operator") or ""), values))
    return tuple(out)


def pod_terms(spec: Mapping[str, Any]) -> PodTerms:
    """A pod spec (API JSON) as Karpenter reads it; shapes the API server validated are taken as given."""
    affinity = ((spec.get("affinity") or {}).get("nodeAffinity")) or {}
    required_raw = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = None if required_raw is None else tuple(required_raw.get("nodeSelectorTerms") or ())
    preferred = tuple(
        (int(p.get("weight") or 0), _exprs((p.get("preference") or {}).get("matchExpressions")))
        for p in affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
    )
    return PodTerms(
        node_selector=tuple(sorted((str(k), str(v)) for k, v in (spec.get("nodeSelector") or {}).items())),
        required=None if terms is None else tuple(_exprs(t.get("matchExpressions")) for t in terms),
        preferred=preferred,
        tolerations=tuple(
            Toleration(
                str(t.get("key") or ""),
                str(t.get("operator") or ""),
                str(t.get("value") or ""),
                str(t.get("effect") or ""),
            )
            for t in spec.get("tolerations") or ()
        ),
        match_fields=any(t.get("matchFields") is not None for t in terms or ()),
        claims=bool(spec.get("resourceClaims")),
        requests=tuple(sorted(pod_requests(spec).items())),
    )


def _heaviest(preferred: Sequence[tuple[int, tuple[Expression, ...]]]) -> list[tuple[int, tuple[Expression, ...]]]:
    """Preferred terms heaviest first. Go sorts with ``sort.Slice``/``sort.SliceStable`` by weight; for equal
    weights the stable order is kept (``sort.Slice`` on fewer than 13 terms is an insertion sort: stable)."""
    return sorted(preferred, key=lambda p: -p[0])


def pod_requirements(pod: PodTerms, strict: bool = False) -> Requirements:
    """``newPodRequirements``: nodeSelector (``In``), the heaviest preferred term (unless ``strict``), then the
    first required term's matchExpressions."""
    reqs = [requirement(k, "In", (v,)) for k, v in pod.node_selector]
    if not strict and pod.preferred:
        reqs.extend(requirement(k, op, vs) for k, op, vs in _heaviest(pod.preferred)[0][1])
    if pod.required:
        reqs.extend(requirement(k, op, vs) for k, op, vs in pod.required[0])
    return Requirements(reqs)


_PREFER_NO_SCHEDULE = Toleration(operator="Exists", effect="PreferNoSchedule")


def relaxed(pod: PodTerms, tolerate_prefer_no_schedule: bool) -> Iterator[PodTerms]:
    """``Preferences.Relax``, step by step from the pod as written: each step's pod (the first is ``pod``)."""
    yield pod
    while pod.required is not None and len(pod.required) > 1:
        pod = replace(pod, required=pod.required[1:])
        yield pod
    while pod.preferred:
        pod = replace(pod, preferred=tuple(_heaviest(pod.preferred)[1:]))
        yield pod
    if tolerate_prefer_no_schedule and _PREFER_NO_SCHEDULE not in pod.tolerations:
        yield replace(pod, tolerations=(*pod.tolerations, _PREFER_NO_SCHEDULE))


def template_requirements(pool: NodePool) -> Requirements:
    """``NewNodeClaimTemplate``: the pool's requirements, its labels (template labels, ``karpenter.sh/nodepool``,
    the NodeClass label ``<group>/<kind lowercased>``) as ``In``, and registered/initialized ``In [true]``."""
    group, kind, name = pool.node_class
    labels = {**pool.labels, NODEPOOL_LABEL: pool.name, f"{group}/{kind.lower()}": name}
    reqs = [requirement(r.key, r.operator, r.values, r.min_values) for r in pool.requirements]
    reqs.extend(requirement(k, "In", (v,)) for k, v in labels.items())
    reqs.extend(requirement(k, "In", ("true",)) for k in (REGISTERED_LABEL, INITIALIZED_LABEL))
    return Requirements(reqs)


def untolerated(taints: Iterable[Taint], tolerations: Sequence[Toleration]) -> tuple[Taint, ...]:
    """``Taints.Tolerates``: every taint, whatever its effect, that no toleration tolerates (comparison operators
    on, as Karpenter calls ``ToleratesTaint``)."""
    return tuple(t for t in taints if not any(tol.tolerates(t, comparison=True) for tol in tolerations))


def _taint_text(t: Taint) -> str:
    """``pretty.Taint``: ``key=value:Effect`` (``key:Effect`` without a value)."""
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"


def nodepool_error(pool: NodePool, pod: PodTerms, provider: Provider) -> str | None:
    """``NodeClaim.CanAdd`` for a new NodeClaim of ``pool``: the template's taints, then its requirements."""
    taints = untolerated(pool.taints, pod.tolerations)
    if taints:
        return "; ".join(f"did not tolerate taint (taint={_taint_text(t)})" for t in taints)
    err = template_requirements(pool).compatible(pod_requirements(pod), provider.well_known)
    return None if err is None else f"incompatible requirements, {err}"


def _restricted(key: str, provider: Provider) -> bool:
    """``IsRestrictedLabel``: not well-known, and in a restricted domain (or a subdomain of one) or listed."""
    if key in provider.well_known:
        return False
    domain = key.split("/", 1)[0] if "/" in key else ""
    if any(domain == d or domain.endswith("." + d) for d in provider.restricted_domains):
        return True
    return key in provider.restricted_labels


_CAPACITY_TYPES = ("on-demand", "reserved", "spot")  # labels.go WellKnownValuesForRequirements
_WELL_KNOWN_VALUES = {"karpenter.sh/capacity-type": frozenset(_CAPACITY_TYPES)}
_SUPPORTED_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte")


def _requirement_errors(key: str, op: str, values: Sequence[str], provider: Provider) -> list[str]:
    """``ValidateRequirement``'s checks that a pod the API server admitted can still fail (the API server checked
    key and value syntax already), in its order."""
    errs = []
    key = NORMALIZED_LABELS.get(key, key)
    if op not in _SUPPORTED_OPS:
        errs.append(f"key {key} has an unsupported operator {op} not in {list(_SUPPORTED_OPS)}")
    if _restricted(key, provider):
        errs.append(
            f"using label {key} is not allowed as it might interfere with the internal provisioning logic; specify a "
            f"well known label: [{' '.join(sorted(provider.well_known))}], or a custom label that does not use a "
            f"restricted domain: [{' '.join(sorted(provider.restricted_domains))}]"
        )
    known = _WELL_KNOWN_VALUES.get(key)
    if op == "In" and known is not None and key in provider.well_known and not known.intersection(values):
        shown = " ".join(f"{v}:{{}}" for v in sorted(known))  # %v of a sets.Set: Go prints a map, keys sorted
        given = " ".join(values)
        errs.append(f"no valid values found in [{given}] for {key}, expected one of: map[{shown}], got: [{given}]")
    bound = go_atoi(values[0]) if len(values) == 1 else None  # "0" is a valid bound (strconv.Atoi, then < 0)
    if op in ("Gt", "Lt", "Gte", "Lte") and (bound is None or bound < 0):
        errs.append(f"key {key} with operator {op} must have a single positive integer value")
    return errs


_NOT_ON_KARPENTER = f"configured to not run on a Karpenter provisioned node (requirement={NODEPOOL_LABEL} DoesNotExist)"


def refused(pod: PodTerms, provider: Provider, ignore_dra: bool = True) -> tuple[str, bool] | None:
    """``Provisioner.Validate``, then ``Scheduler.add``'s DRA check: why Karpenter will not consider the pod at
    all, and whether it says so in an Event (not for a pod that selects ``karpenter.sh/nodepool DoesNotExist``);
    ``None`` when it will. Validate reads the nodeSelector and *every* required term, not only the first."""
    errs: list[str] = []
    if any(r.key == NODEPOOL_LABEL and r.operator == "DoesNotExist" for r in pod_requirements(pod).values()):
        errs.append(_NOT_ON_KARPENTER)
    for key, value in pod.node_selector:
        errs.extend(_requirement_errors(key, "In", (value,), provider))
    if pod.match_fields:
        errs.append("node selector term with matchFields is not supported")
    for term in pod.required or ():
        for key, op, values in term:
            errs.extend(_requirement_errors(key, op, values, provider))
    if errs:
        return "; ".join(errs), _NOT_ON_KARPENTER not in errs
    if ignore_dra and pod.claims:
        return DRA_IGNORED, True
    return None


def limit_error(pool: NodePool, used: Mapping[str, str], capacities: Sequence[Mapping[str, str]] | None) -> str | None:
    """``addToNewNodeClaim``'s limits: ``spec.limits`` less ``used`` (the capacity of the pool's nodes, ``nodes``
    counted one per node). No ``nodes`` left: ``node limits have been exhausted``; every instance type (its
    ``capacities``) exceeding what is left: ``all available instance types exceed limits``. ``capacities``
    ``None``: the instance types are not known here, so only the ``nodes`` limit is judged."""
    if not pool.limits:
        return None
    remaining = {k: parse_quantity(v) - parse_quantity(used.get(k, "0")) for k, v in pool.limits.items()}
    if remaining.get("nodes", Fraction(1)) == 0:
        return f"node limits have been exhausted for nodepool (NodePool={pool.name})"
    if capacities is None:
        return None
    fits = [c for c in capacities if all(parse_quantity(c.get(k, "0")) <= left for k, left in remaining.items())]
    return None if fits else f"all available instance types exceed limits for nodepool (NodePool={pool.name})"


def order_by_weight(pools: Iterable[NodePool]) -> list[NodePool]:
    """``nodepoolutils.OrderByWeight``: heaviest first; equal weights by name, *descending*."""
    by_name = sorted(pools, key=lambda p: p.name, reverse=True)
    return sorted(by_name, key=lambda p: -(p.weight or 0))  # stable: names stay descending within a weight


@dataclass(frozen=True, slots=True)
class Verdict:
    """Karpenter's decision for one pod: the NodePool of a new NodeClaim, or the ``FailedScheduling`` message."""

    nodepool: str | None
    message: str  # "" when a NodePool takes it
    relaxed: int = 0  # how many relaxation steps it took
    event: bool = True  # whether Karpenter writes the message as a FailedScheduling Event
    unknown: str = ""  # what could not be judged (UNKNOWN_INSTANCE_TYPES without instance types), "" when nothing


def _template_options(
    pools: Sequence[NodePool], types: Sequence[InstanceType], provider: Provider
) -> dict[str, tuple[InstanceType, ...]]:
    """``NewScheduler``'s prefilter: each NodePool's instance types that its template's requirements leave (an empty
    pod, no requests); a NodePool with none left is dropped (Karpenter publishes ``NoCompatibleInstanceTypes``
    on it)."""
    out = {}
    for pool in pools:
        kept, _ = filter_error(types, template_requirements(pool), {}, provider.well_known)
        if kept:
            out[pool.name] = kept
    return out


def _limited(
    pool: NodePool, used: Mapping[str, str], types: tuple[InstanceType, ...]
) -> tuple[InstanceType, ...] | str:
    """``addToNewNodeClaim``'s limits with instance types known: the error, or the instance types within them."""
    if not pool.limits:
        return types
    remaining = {k: parse_quantity(v) - parse_quantity(used.get(k, "0")) for k, v in pool.limits.items()}
    if remaining.get("nodes", Fraction(1)) == 0:
        return f"node limits have been exhausted for nodepool (NodePool={pool.name})"
    kept = within_limits(types, remaining)
    return kept or f"all available instance types exceed limits for nodepool (NodePool={pool.name})"


def _new_nodeclaim_error(
    pool: NodePool, pod: PodTerms, provider: Provider, types: tuple[InstanceType, ...], used: Mapping[str, str]
) -> str | None:
    """``addToNewNodeClaim`` for one template with its instance types: limits, ``CanAdd`` (taints, requirements),
    then ``filterInstanceTypesByRequirements`` on the template's and the pod's requirements and the pod's requests."""
    limited = _limited(pool, used, types)
    if isinstance(limited, str):
        return limited
    err = nodepool_error(pool, pod, provider)
    if err is not None:
        return err
    reqs = template_requirements(pool).added(pod_requirements(pod).values())
    _, why = filter_error(limited, reqs, dict(pod.requests), provider.well_known)
    return why


def decide(
    pod: PodTerms,
    pools: Iterable[NodePool],
    provider: Provider,
    used: Mapping[str, Mapping[str, str]] | None = None,
    capacities: Mapping[str, Sequence[Mapping[str, str]]] | None = None,
    instance_types: Sequence[InstanceType] | None = None,
) -> Verdict:
    """``Scheduler.trySchedule`` for a new NodeClaim: the first NodePool (by weight) that takes the pod, at the
    first relaxation step any does; else ``Failed to schedule pod, <each NodePool's error joined by "; ">``
    of the last step. Only dynamic, Ready NodePools not being deleted take part (``Provisioner.NewScheduler``).
    ``used`` by NodePool name: the capacity its nodes have (limits). ``instance_types``: the provider's (known for
    kwok, from its file), judged as Karpenter does; ``None``: not known, the verdict says so (``unknown``) and only
    ``capacities`` (by NodePool name) feed :func:`limit_error`."""
    if (why := refused(pod, provider)) is not None:
        return Verdict(None, f"Failed to schedule pod, {why[0]}", event=why[1])
    # Provisioner.NewScheduler: static, not Ready and deleting NodePools are left out; none left, no Event
    ordered = order_by_weight(p for p in pools if p.replicas is None and p.ready and not p.deleting)
    if not ordered:
        return Verdict(None, "no dynamic nodepools found", event=False)
    prefer = any(t.effect == "PreferNoSchedule" for p in ordered for t in p.taints)
    unknown = UNKNOWN_INSTANCE_TYPES if instance_types is None else ""
    options = None if instance_types is None else _template_options(ordered, instance_types, provider)
    if options is not None:
        ordered = [p for p in ordered if p.name in options]
        if not ordered:
            return Verdict(None, f"Failed to schedule pod, {NO_TEMPLATES}")
    errors: list[str] = []
    step = 0
    for step, attempt in enumerate(relaxed(pod, prefer)):
        errors = []
        for pool in ordered:
            pool_used = (used or {}).get(pool.name, {})
            if options is not None:
                err = _new_nodeclaim_error(pool, attempt, provider, options[pool.name], pool_used)
            else:
                caps = None if capacities is None else capacities.get(pool.name)
                err = limit_error(pool, pool_used, caps) or nodepool_error(pool, attempt, provider)
            if err is None:
                return Verdict(pool.name, "", step, unknown=unknown)
            errors.append(err)
    return Verdict(None, "Failed to schedule pod, " + "; ".join(errors), step, unknown=unknown)
