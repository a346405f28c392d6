# ruff: noqa: E501
"""Workload manifests with what labcluster's API server (k8s.io/kubernetes v1.37.2) answers for each: container resources and field types.

Recorded once from labcluster's API server (a dry-run create of each object,
``tests/cluster/test_rows_cluster.py`` re-checks them live) and checked here
by ``tests/unit/test_hostile_rows.py``. ``upstream`` names the function that
decides the row (``pkg/apis/core/validation/validation.go``, Quantity's
``UnmarshalJSON`` in apimachinery, or Go's JSON decoder for a wrong type); an
empty recorded message means the server accepts the object. Rows hold at most
one bad entry per resources map: Go walks a map in random order.
"""

from __future__ import annotations

from typing import Any

ROWS: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "half a GPU as a limit (requests default to it)",
        "ValidateResourceQuantityValue",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "0.5"}}}]},
        },
        'Pod "w" is invalid: [spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer, spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer]',
    ),
    (
        "half a GPU as an unquoted number",
        "ValidateResourceQuantityValue",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 0.5}}}]},
        },
        'Pod "w" is invalid: [spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer, spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer]',
    ),
    (
        "half a GPU as a request with a whole limit",
        "validateResourceRequirements",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "i",
                        "resources": {"requests": {"nvidia.com/gpu": "0.5"}, "limits": {"nvidia.com/gpu": "1"}},
                    }
                ]
            },
        },
        'Pod "w" is invalid: [spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer, spec.containers[0].resources.requests: Invalid value: "500m": must be equal to nvidia.com/gpu limit of 1]',
    ),
    (
        "an extended resource's request above its limit",
        "validateResourceRequirements",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "i",
                        "resources": {"requests": {"nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "1"}},
                    }
                ]
            },
        },
        'Pod "w" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be equal to nvidia.com/gpu limit of 1',
    ),
    (
        "an extended resource's request below its limit",
        "validateResourceRequirements",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "i",
                        "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "2"}},
                    }
                ]
            },
        },
        'Pod "w" is invalid: spec.containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2',
    ),
    (
        "an extended resource requested without a limit",
        "validateResourceRequirements",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]},
        },
        'Pod "w" is invalid: spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources',
    ),
    (
        "a MIG profile's request above its limit",
        "validateResourceRequirements",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "i",
                        "resources": {
                            "requests": {"nvidia.com/mig-1g.5gb": "2"},
                            "limits": {"nvidia.com/mig-1g.5gb": "1"},
                        },
                    }
                ]
            },
        },
        'Pod "w" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be equal to nvidia.com/mig-1g.5gb limit of 1',
    ),
    (
        "cpu may be requested below its limit",
        "validateResourceRequirements",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {
                "containers": [
                    {"name": "c", "image": "i", "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}}
                ]
            },
        },
        "",
    ),
    (
        "cpu above its limit",
        "validateResourceRequirements",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {
                "containers": [
                    {"name": "c", "image": "i", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1500m"}}}
                ]
            },
        },
        'Pod "w" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1500m',
    ),
    (
        "memory above its limit (canonical units in the message)",
        "validateResourceRequirements",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "i",
                        "resources": {"requests": {"memory": "2048Mi"}, "limits": {"memory": "1Gi"}},
                    }
                ]
            },
        },
        'Pod "w" is invalid: spec.containers[0].resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi',
    ),
    (
        "a negative GPU limit",
        "ValidateNonnegativeQuantity",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "-1"}}}]},
        },
        'Pod "w" is invalid: [spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "-1": must be greater than or equal to 0, spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "-1": must be greater than or equal to 0]',
    ),
    (
        "a negative cpu request",
        "ValidateNonnegativeQuantity",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "-0.5"}}}]},
        },
        'Pod "w" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "-500m": must be greater than or equal to 0',
    ),
    (
        "an unprefixed non-standard resource",
        "ValidateContainerResourceName",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"gpu": "1"}}}]},
        },
        'Pod "w" is invalid: [spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified, spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource for containers, spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified, spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers]',
    ),
    (
        "pods is not a container resource",
        "ValidateContainerResourceName",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"pods": "1"}}}]},
        },
        'Pod "w" is invalid: spec.containers[0].resources.requests[pods]: Invalid value: "pods": must be a standard resource for containers',
    ),
    (
        "an invalid resource name",
        "validateResourceName",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu_x!": "1"}}}]},
        },
        "Pod \"w\" is invalid: [spec.containers[0].resources.limits[nvidia.com/gpu_x!]: Invalid value: \"nvidia.com/gpu_x!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.containers[0].resources.limits[nvidia.com/gpu_x!]: Invalid value: \"nvidia.com/gpu_x!\": doesn't follow extended resource name standard, spec.containers[0].resources.requests[nvidia.com/gpu_x!]: Invalid value: \"nvidia.com/gpu_x!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), spec.containers[0].resources.requests[nvidia.com/gpu_x!]: Invalid value: \"nvidia.com/gpu_x!\": doesn't follow extended resource name standard]",
    ),
    (
        "a quantity that does not parse",
        "Quantity.UnmarshalJSON",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "one"}}}]},
        },
        "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    (
        "a boolean quantity",
        "Quantity.UnmarshalJSON",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": True}}}]},
        },
        "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    (
        "a quantity with an unknown suffix",
        "Quantity.UnmarshalJSON",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"memory": "1Gb"}}}]},
        },
        "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    (
        "limits as a list",
        "json.Unmarshal",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": ["nvidia.com/gpu"]}}]},
        },
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal array into Go struct field ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList',
    ),
    (
        "resources as a string",
        "json.Unmarshal",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": "1 GPU"}]},
        },
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field Container.spec.containers.resources of type v1.ResourceRequirements',
    ),
    (
        "args holding a list",
        "json.Unmarshal",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "args": [[1, 2]]}]},
        },
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal array into Go struct field Container.spec.containers.args of type string',
    ),
    (
        "args holding a number",
        "json.Unmarshal",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "args": ["--epochs", 3]}]},
        },
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field Container.spec.containers.args of type string',
    ),
    (
        "command as a string",
        "json.Unmarshal",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "command": "python train.py"}]},
        },
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field Container.spec.containers.command of type []string',
    ),
    (
        "workingDir as a number",
        "json.Unmarshal",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "workingDir": 7}]},
        },
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field Container.spec.containers.workingDir of type string',
    ),
    (
        "a whole GPU as a number is fine",
        "ValidateResourceQuantityValue",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 2}}}]},
        },
        "",
    ),
    (
        "GPUs, cpu and memory together",
        "validateResourceRequirements",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "i",
                        "resources": {
                            "requests": {"cpu": "1", "memory": "1Gi"},
                            "limits": {"nvidia.com/gpu": "8", "memory": "2Gi"},
                        },
                    }
                ]
            },
        },
        "",
    ),
    (
        "a Deployment's template with half a GPU",
        "ValidateResourceQuantityValue",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w"},
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {
                        "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "1.5"}}}]
                    },
                },
            },
        },
        'Deployment.apps "w" is invalid: spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "1500m": must be an integer',
    ),
    (
        "a Job's template with args holding a list",
        "json.Unmarshal",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "w"},
            "spec": {
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i", "args": [[1, 2]]}]}
                }
            },
        },
        'Job in version "v1" cannot be handled as a Job: json: cannot unmarshal array into Go struct field Container.spec.template.spec.containers.args of type string',
    ),
    (
        "an env value as an unquoted number",
        "json.Unmarshal",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "PORT", "value": 8080}]}]},
        },
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field EnvVar.spec.containers.env.value of type string',
    ),
    (
        "an env value as a boolean",
        "json.Unmarshal",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "DEBUG", "value": True}]}]},
        },
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal bool into Go struct field EnvVar.spec.containers.env.value of type string',
    ),
    (
        "env as a mapping",
        "json.Unmarshal",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "env": {"PORT": "8080"}}]},
        },
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal object into Go struct field Container.spec.containers.env of type []v1.EnvVar',
    ),
    (
        "a containerPort as a string",
        "json.Unmarshal",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": "8080"}]}]},
        },
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
    ),
    (
        "an image as a number",
        "json.Unmarshal",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": 7}]},
        },
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string',
    ),
    (
        "a container name as a list",
        "json.Unmarshal",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": ["c"], "image": "i"}]},
        },
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal array into Go struct field Container.spec.containers.name of type string',
    ),
    (
        "an env var with a value is fine",
        "ValidateEnv",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "PORT", "value": "8080"}]}]},
        },
        "",
    ),
]
