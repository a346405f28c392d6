"""Dynamic Resource Allocation (resource.k8s.io/v1) as Kubernetes 1.37 implements it.

``values``: semantic versions (blang/semver v4) and quantities (apimachinery's
``resource.Quantity``); ``cel``: the CEL environment of device selectors;
``objects``: DeviceClass, ResourceSlice, ResourceClaim and templates from API
JSON; ``allocator``: the scheduler's structured allocator for one node.
"""
