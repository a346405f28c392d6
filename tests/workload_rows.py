# ruff: noqa: E501
"""Workload manifests with what labcluster's API server (k8s.io/kubernetes v1.37.2) answers for each.

Shared by the unit table (``tests/unit/test_workloads.py``, against the recorded
messages) and the cluster test (``tests/cluster/test_shape_cluster.py``, against the
live server). ``upstream`` names the function in
``pkg/apis/{core,apps,batch}/validation/validation.go`` that decides the row; an
empty recorded message means the server accepts the object.
"""

from __future__ import annotations

from typing import Any

ROWS: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "containers null is required",
        "validateContainers",
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w"}, "spec": {"containers": None}},
        'Pod "w" is invalid: spec.containers: Required value',
    ),
    (
        "no spec at all is the same",
        "validateContainers",
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w"}},
        'Pod "w" is invalid: spec.containers: Required value',
    ),
    (
        "an empty containers list is required",
        "validateContainers",
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w"}, "spec": {"containers": []}},
        'Pod "w" is invalid: spec.containers: Required value',
    ),
    (
        "a null container has neither name nor image",
        "validateContainers",
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w"}, "spec": {"containers": [None]}},
        'Pod "w" is invalid: [spec.containers[0].name: Required value, spec.containers[0].image: Required value]',
    ),
    (
        "a container name must be a DNS-1123 label",
        "validateContainers",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "A.b", "image": "i"}]},
        },
        "Pod \"w\" is invalid: spec.containers[0].name: Invalid value: \"A.b\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ),
    (
        "a dotted container name is 'must not contain dots'",
        "validateContainers",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "a.b", "image": "i"}]},
        },
        'Pod "w" is invalid: spec.containers[0].name: Invalid value: "a.b": must not contain dots',
    ),
    (
        "duplicate container names",
        "validateContainers",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i"}, {"name": "c", "image": "i"}]},
        },
        'Pod "w" is invalid: spec.containers[1].name: Duplicate value: "c"',
    ),
    (
        "a valid pod",
        "validateContainers",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        },
        "",
    ),
    (
        "Exists with a value shows the value",
        "ValidateTolerations",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {
                "containers": [{"name": "c", "image": "i"}],
                "tolerations": [{"key": "k", "operator": "Exists", "value": "v", "effect": "NoSchedule"}],
            },
        },
        'Pod "w" is invalid: spec.tolerations[0].operator: Invalid value: "v": value must be empty when `operator` is \'Exists\'',
    ),
    (
        "an unknown operator prints as JSON",
        "ValidateTolerations",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": [{"key": "k", "operator": "a<b"}]},
        },
        'Pod "w" is invalid: spec.tolerations[0].operator: Unsupported value: "a\\u003cb": supported values: "Equal", "Exists"',
    ),
    (
        "an empty key needs Exists",
        "ValidateTolerations",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": [{"operator": "Equal"}]},
        },
        'Pod "w" is invalid: spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
    ),
    (
        "an unknown effect prints as JSON",
        "ValidateTolerations",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {
                "containers": [{"name": "c", "image": "i"}],
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "Bo&gus"}],
            },
        },
        'Pod "w" is invalid: spec.tolerations[0].effect: Unsupported value: "Bo\\u0026gus": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ),
    (
        "tolerationSeconds needs NoExecute",
        "ValidateTolerations",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {
                "containers": [{"name": "c", "image": "i"}],
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}],
            },
        },
        'Pod "w" is invalid: spec.tolerations[0].effect: Invalid value: "NoSchedule": effect must be \'NoExecute\' when `tolerationSeconds` is set',
    ),
    (
        "Gt is behind a gate",
        "ValidateTolerations",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "w"},
            "spec": {
                "containers": [{"name": "c", "image": "i"}],
                "tolerations": [{"key": "k", "operator": "Gt", "value": "1"}],
            },
        },
        'Pod "w" is invalid: spec.tolerations[0].operator: Unsupported value: "Gt": supported values: "Equal", "Exists", "Lt", "Gt"',
    ),
    (
        "a Deployment with template null",
        "ValidateDeploymentSpec, ValidatePodTemplateSpecForReplicaSet",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w"},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": None},
        },
        'Deployment.apps "w" is invalid: [spec.template.metadata.labels: Invalid value: null: `selector` does not match template `labels`, spec.template.spec.containers: Required value]',
    ),
    (
        "a Deployment without a template",
        "ValidateDeploymentSpec, ValidatePodTemplateSpecForReplicaSet",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w"},
            "spec": {"selector": {"matchLabels": {"app": "x"}}},
        },
        'Deployment.apps "w" is invalid: [spec.template.metadata.labels: Invalid value: null: `selector` does not match template `labels`, spec.template.spec.containers: Required value]',
    ),
    (
        "a Deployment with template.spec null",
        "ValidateDeploymentSpec, ValidatePodTemplateSpecForReplicaSet",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w"},
            "spec": {
                "selector": {"matchLabels": {"app": "x"}},
                "template": {"metadata": {"labels": {"app": "x"}}, "spec": None},
            },
        },
        'Deployment.apps "w" is invalid: spec.template.spec.containers: Required value',
    ),
    (
        "a Deployment without a selector",
        "ValidateDeploymentSpec, ValidatePodTemplateSpecForReplicaSet",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                }
            },
        },
        'Deployment.apps "w" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match template `labels`]',
    ),
    (
        "a Deployment with an empty selector",
        "ValidateDeploymentSpec, ValidatePodTemplateSpecForReplicaSet",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w"},
            "spec": {
                "selector": {},
                "template": {
                    "metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        },
        'Deployment.apps "w" is invalid: spec.selector: Invalid value: {}: empty selector is invalid for deployment',
    ),
    (
        "a Deployment whose selector misses the labels",
        "ValidateDeploymentSpec, ValidatePodTemplateSpecForReplicaSet",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w"},
            "spec": {
                "selector": {"matchLabels": {"app": "y"}},
                "template": {
                    "metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        },
        'Deployment.apps "w" is invalid: spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match template `labels`',
    ),
    (
        "a Deployment selector by expression",
        "ValidateDeploymentSpec, ValidatePodTemplateSpecForReplicaSet",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w"},
            "spec": {
                "selector": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["x"]}]},
                "template": {
                    "metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        },
        'Deployment.apps "w" is invalid: spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match template `labels`',
    ),
    (
        "a Deployment may only restart Always",
        "ValidateDeploymentSpec, ValidatePodTemplateSpecForReplicaSet",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w"},
            "spec": {
                "selector": {"matchLabels": {"app": "x"}},
                "template": {
                    "metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"},
                },
            },
        },
        'Deployment.apps "w" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ),
    (
        "a valid Deployment",
        "ValidateDeploymentSpec, ValidatePodTemplateSpecForReplicaSet",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "w"},
            "spec": {
                "selector": {"matchLabels": {"app": "x"}},
                "template": {
                    "metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        },
        "",
    ),
    (
        "a ReplicaSet with an empty selector",
        "ValidateReplicaSetSpec",
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "w"},
            "spec": {
                "selector": {},
                "template": {
                    "metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        },
        'ReplicaSet.apps "w" is invalid: spec.selector: Invalid value: {}: empty selector is invalid for deployment',
    ),
    (
        "a StatefulSet without a selector",
        "ValidateStatefulSetSpec",
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "w"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                }
            },
        },
        'StatefulSet.apps "w" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match template `labels`]',
    ),
    (
        "a StatefulSet with an empty selector",
        "ValidateStatefulSetSpec",
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "w"},
            "spec": {
                "selector": {},
                "template": {
                    "metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        },
        'StatefulSet.apps "w" is invalid: spec.selector: Invalid value: {}: empty selector is invalid for statefulset',
    ),
    (
        "a DaemonSet without a selector",
        "ValidateDaemonSetSpec",
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "w"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                }
            },
        },
        'DaemonSet.apps "w" is invalid: spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match template `labels`',
    ),
    (
        "a DaemonSet with an empty selector",
        "ValidateDaemonSetSpec",
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "w"},
            "spec": {
                "selector": {},
                "template": {
                    "metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        },
        'DaemonSet.apps "w" is invalid: spec.selector: Invalid value: {}: empty selector is invalid for daemonset',
    ),
    (
        "a DaemonSet with template null",
        "ValidateDaemonSetSpec",
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "w"},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": None},
        },
        'DaemonSet.apps "w" is invalid: [spec.template.metadata.labels: Invalid value: null: `selector` does not match template `labels`, spec.template.spec.containers: Required value]',
    ),
    (
        "a Job must not restart Always",
        "validateJobSpec",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "w"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
        },
        'Job.batch "w" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ),
    (
        "a Job's unknown restart policy",
        "validateJobSpec",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "w"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Sometimes"}}},
        },
        'Job.batch "w" is invalid: [spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never", spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", "Never"]',
    ),
    (
        "a valid Job",
        "validateJobSpec",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "w"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"}}},
        },
        "",
    ),
]
