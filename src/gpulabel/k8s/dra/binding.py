"""Device binding conditions: whether an allocated claim lets its pod bind (``DRADeviceBindingConditions``).

After allocating a device that names ``bindingConditions``, kube-scheduler keeps the pod in PreBind
until the claim's ``status.devices`` entry for that device has every binding condition ``True``; a
``bindingFailureConditions`` entry that is ``True`` fails the binding; after ``bindingTimeout``
(600 s by default, ``DynamicResourcesBindingTimeoutDefault``) from the allocation's
``allocationTimestamp`` the claim is unreserved so that other devices can be tried. Upstream:
``isClaimReadyForBinding`` and ``isClaimTimeout`` in
``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go`` (k8s.io/kubernetes v1.37.2). Pure.
"""

from __future__ import annotations

from gpulabel.k8s.dra.objects import ResourceClaim

__all__ = ["BINDING_TIMEOUT_SECONDS", "binding_state"]

BINDING_TIMEOUT_SECONDS = 600


def binding_state(claim: ResourceClaim) -> tuple[str, str] | None:
    """``("binding-failed" | "binding-wait", detail)`` for an allocated claim waiting on binding
    conditions; ``None`` when it is ready (or has none)."""
    for result in claim.allocated or ():
        if not result.binding_conditions:
            continue
        device = f"{result.driver}/{result.pool}/{result.device}"
        conditions = claim.device_conditions.get((result.driver, result.pool, result.device))
        if conditions is not None:
            for name in result.binding_failure_conditions:
                status, reason, message = conditions.get(name, ("", "", ""))
                if status == "True":
                    why = f" ({reason}: {message})" if reason or message else ""
                    return "binding-failed", f"device {device}: binding failure condition {name} is True{why}"
        missing = [c for c in result.binding_conditions if (conditions or {}).get(c, ("",))[0] != "True"]
        if missing:
            since = f" since {claim.allocated_at}" if claim.allocated_at else ""
            return (
                "binding-wait",
                f"device {device} waits for binding condition(s) {', '.join(missing)} to be True{since}; "
                f"the scheduler waits up to {BINDING_TIMEOUT_SECONDS}s, then frees the device",
            )
    return None
