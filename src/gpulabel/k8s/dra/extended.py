"""Extended resources backed by DRA (``DRAExtendedResource``, on in 1.37).

A DeviceClass maps an extended resource name to its devices: its ``spec.extendedResourceName`` (of
two classes naming the same resource, the newer wins; at equal age the smaller name) and always the
implicit ``deviceclass.resource.kubernetes.io/<class>`` (``extendedresourcecache.go`` in
k8s.io/dynamic-resource-allocation). On a node whose allocatable has none of such a resource (no
device plugin advertises it), NodeResourcesFit leaves it to DRA (``shouldDelegateResourceToDRA``)
and the DynamicResources plugin allocates it through a claim it makes for the pod: one request per
container that asks for it, ``container-<i>-request-<j>`` (``i`` the container's index among init
containers then containers, ``j`` the resource's index among the container's sorted request
names), ``ExactCount`` of the container's amount, allocated together with the pod's own claims
(``createRequestsAndMappings`` in the scheduler's ``extendeddynamicresources.go``). A node that
advertises the resource is left to the device plugin. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpulabel.k8s.dra.objects import DeviceClass, DeviceRequest, Request, ResourceClaim

__all__ = ["EXTENDED_PREFIX", "extended_claim", "extended_classes"]

EXTENDED_PREFIX = "deviceclass.resource.kubernetes.io/"


def extended_classes(classes: Iterable[DeviceClass]) -> dict[str, DeviceClass]:
    """Resource name -> the DeviceClass that backs it (explicit names and the implicit ones)."""
    out: dict[str, DeviceClass] = {}
    explicit: dict[str, DeviceClass] = {}
    for c in classes:
        out[EXTENDED_PREFIX + c.name] = c
        if c.extended_resource:
            have = explicit.get(c.extended_resource)
            if have is None or c.created > have.created or (c.created == have.created and c.name < have.name):
                explicit[c.extended_resource] = c
    out.update(explicit)
    return out


def extended_claim(
    namespace: str, pod: str, requests: Mapping[str, int], names: Iterable[str], backed: Mapping[str, DeviceClass]
) -> ResourceClaim | None:
    """The claim the scheduler makes on a node for the pod's DRA-backed resources ``names`` (those the
    node does not advertise); ``None`` when the pod asks for none of them.

    The scheduler makes one request per container (``container-<i>-request-<j>``); gpulabel makes one
    per resource, of the pod's total (``requests``: what the scheduler counts for the pod, init
    containers folded in). Requests of one class without selectors or constraints fit exactly when
    their sum does, so the answer is the same; the request is named after the resource.
    """
    out = []
    for name in sorted(names):
        cls = backed.get(name)
        count = requests.get(name, 0)
        if cls is not None and count > 0:
            out.append(Request(name, DeviceRequest(name, cls.name, (), "ExactCount", count)))
    if not out:
        return None
    return ResourceClaim(namespace, f"{pod}-extended-resources", tuple(out))
