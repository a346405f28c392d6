# ruff: noqa: E501
"""ResourceSlices (resource.k8s.io/v1) with what labcluster's API server (k8s.io/kubernetes v1.37.2) answers for each.

Recorded once from labcluster's API server (a dry-run create,
``tests/cluster/test_rows_cluster.py`` re-checks them live) and checked here
by ``tests/unit/test_hostile_rows.py``. ``upstream`` names the function of
``pkg/apis/resource/validation/validation.go`` that decides the row; an empty
recorded message means the server accepts the slice.
"""

from __future__ import annotations

from typing import Any

ROWS: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "a valid slice",
        "validateResourceSliceSpec",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "nodeName": "node-a",
            },
        },
        "",
    ),
    (
        "no driver",
        "validateDriverName",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {"pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1}, "nodeName": "node-a"},
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: spec.driver: Required value',
    ),
    (
        "an empty driver",
        "validateDriverName",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "nodeName": "node-a",
            },
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: spec.driver: Required value',
    ),
    (
        "a driver that is not a DNS subdomain",
        "validateDriverName",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu_nvidia",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "nodeName": "node-a",
            },
        },
        "ResourceSlice.resource.k8s.io \"s\" is invalid: spec.driver: Invalid value: \"gpu_nvidia\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    (
        "an upper-case driver is lowercased first (a warning only)",
        "validateDriverName",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "GPU.nvidia.com",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "nodeName": "node-a",
            },
        },
        "",
    ),
    (
        "a driver longer than 63 bytes",
        "validateDriverName",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd.example.com",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "nodeName": "node-a",
            },
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: spec.driver: Too long: may not be more than 63 bytes',
    ),
    (
        "no pool",
        "validateResourcePool",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": "node-a"},
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: [spec.pool.name: Required value, spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero]',
    ),
    (
        "a pool without a name",
        "validatePoolName",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"generation": 0, "resourceSliceCount": 1},
                "nodeName": "node-a",
            },
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: spec.pool.name: Required value',
    ),
    (
        "a pool without resourceSliceCount",
        "validateResourcePool",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {"driver": "gpu.nvidia.com", "pool": {"name": "p", "generation": 0}, "nodeName": "node-a"},
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero',
    ),
    (
        "a negative pool generation",
        "validateResourcePool",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "p", "generation": -1, "resourceSliceCount": 1},
                "nodeName": "node-a",
            },
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: spec.pool.generation: Invalid value: -1: must be greater than or equal to zero',
    ),
    (
        "a pool name that is not DNS subdomains",
        "validatePoolName",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "Pool_A", "resourceSliceCount": 1},
                "nodeName": "node-a",
            },
        },
        "ResourceSlice.resource.k8s.io \"s\" is invalid: spec.pool.name: Invalid value: \"Pool_A\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    (
        "a pool name of two parts",
        "validatePoolName",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "a/b", "resourceSliceCount": 1},
                "nodeName": "node-a",
            },
        },
        "",
    ),
    (
        "none of nodeName, nodeSelector, allNodes, perDeviceNodeSelection",
        "validateResourceSliceSpec",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {"driver": "gpu.nvidia.com", "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1}},
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required',
    ),
    (
        "an empty nodeName",
        "validateResourceSliceSpec",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "nodeName": "",
            },
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: [spec.nodeName: Invalid value: "": must be either unset or set to a non-empty string, spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required]',
    ),
    (
        "allNodes false is not a choice",
        "validateResourceSliceSpec",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "allNodes": False,
            },
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: [spec.allNodes: Invalid value: false: must be either unset or set to true, spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required]',
    ),
    (
        "perDeviceNodeSelection false is not a choice",
        "validateResourceSliceSpec",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "perDeviceNodeSelection": False,
            },
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: [spec.perDeviceNodeSelection: Invalid value: false: must be either unset or set to true, spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required]',
    ),
    (
        "allNodes true",
        "validateResourceSliceSpec",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "allNodes": True,
            },
        },
        "",
    ),
    (
        "nodeName and allNodes",
        "validateResourceSliceSpec",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "nodeName": "node-a",
                "allNodes": True,
            },
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set',
    ),
    (
        "nodeName, allNodes and perDeviceNodeSelection",
        "validateResourceSliceSpec",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "nodeName": "node-a",
                "allNodes": True,
                "perDeviceNodeSelection": True,
            },
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: spec: Invalid value: "{`nodeName`, `allNodes`, `perDeviceNodeSelection`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set',
    ),
    (
        "an invalid nodeName",
        "validateNodeName",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "nodeName": "Node_A",
            },
        },
        "ResourceSlice.resource.k8s.io \"s\" is invalid: spec.nodeName: Invalid value: \"Node_A\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ),
    (
        "a nodeSelector with one term",
        "validateResourceSliceSpec",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]},
            },
        },
        "",
    ),
    (
        "a nodeSelector without terms",
        "ValidateNodeSelector",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "nodeSelector": {"nodeSelectorTerms": []},
            },
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: [spec.nodeSelector.nodeSelectorTerms: Required value: must have at least one node selector term, spec.nodeSelector.nodeSelectorTerms: Invalid value: []: must have exactly one node selector term]',
    ),
    (
        "a nodeSelector with a bad operator",
        "ValidateNodeSelectorRequirement",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "pool": {"name": "pool-a", "generation": 0, "resourceSliceCount": 1},
                "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Has"}]}]},
            },
        },
        'ResourceSlice.resource.k8s.io "s" is invalid: spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Has": not a valid selector operator',
    ),
    (
        "no spec at all",
        "validateResourceSliceSpec",
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"}},
        'ResourceSlice.resource.k8s.io "s" is invalid: [spec.driver: Required value, spec.pool.name: Required value, spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero, spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required]',
    ),
]
