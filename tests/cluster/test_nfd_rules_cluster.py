"""NodeFeatureRules on a real API server: NFD's CRDs applied, objects the server accepts, and gpulabel's
``rules`` and ``check`` reading them with paged LISTs.

nfd-master cannot run here (NFD is not on the Go module proxy), so no one writes the labels a rule
should set: that is the drift ``check`` must report. Before the CRDs exist, ``rules`` says skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpulabel_run import gpulabel, lines_about
from labcluster_support import LabCluster, account_kubeconfig, namespace_usable, wait_for

CRDS = Path(__file__).parent / "data" / "nfd-api-crds.yaml"
GROUP = "nfd.k8s-sigs.io/v1alpha1"
NODE = "nfr-gpu-2"
NFD_NS = "node-feature-discovery"


def nodefeature() -> dict[str, Any]:
    return {
        "apiVersion": GROUP,
        "kind": "NodeFeature",
        "metadata": {"name": NODE, "namespace": NFD_NS, "labels": {"nfd.node.kubernetes.io/node-name": NODE}},
        "spec": {
            "features": {
                "attributes": {
                    "kernel.version": {"elements": {"full": "5.15.0-91-generic", "major": "5", "minor": "15"}},
                    "system.osrelease": {"elements": {"ID": "ubuntu", "VERSION_ID": "22.04"}},
                },
                "flags": {"kernel.loadedmodule": {"elements": {"nvidia": {}}}},
                "instances": {
                    "pci.device": {"elements": [{"attributes": {"vendor": "10de", "device": "2330", "class": "0302"}}]}
                },
            },
            "labels": {"pci-10de.present": "true"},
        },
        "status": {},
    }


def rule(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": GROUP, "kind": "NodeFeatureRule", "metadata": {"name": name}, "spec": {"rules": rules}}


RULES = [
    rule(
        "nfr-gpu-nodes",
        [
            {
                "name": "nvidia-gpu",
                "labels": {"nvidia-gpu": "true"},
                "matchFeatures": [
                    {"feature": "pci.device", "matchExpressions": {"vendor": {"op": "In", "value": ["10de"]}}},
                    {"feature": "kernel.loadedmodule", "matchExpressions": {"nvidia": {"op": "Exists"}}},
                ],
            }
        ],
    ),
    rule(
        "nfr-gpu-training",
        [
            {
                "name": "gpu-training",
                "labels": {"custom-gpu-training": "true"},
                "matchFeatures": [
                    {"feature": "kernel.version", "matchExpressions": {"major": {"op": "Gt", "value": ["5"]}}},
                    {"feature": "rule.matched", "matchExpressions": {"nvidia-gpu": {"op": "IsTrue"}}},
                ],
            }
        ],
    ),
    rule(
        "nfr-os-release",
        [
            {
                "name": "os-release",
                "labelsTemplate": "{{ range .system.osrelease }}os-{{ .Name | lower }}={{ .Value }}\n{{ end }}",
                "matchFeatures": [
                    {
                        "feature": "kernel.version",
                        "matchExpressions": {"full": {"op": "Ge", "value": ["5.4"], "type": "version"}},
                    },
                    {"feature": "system.osrelease", "matchExpressions": {"ID": {"op": "Exists"}}},
                ],
            }
        ],
    ),
]


def test_rules_and_check_on_nfd_objects_the_api_server_accepted(labcluster: LabCluster, make_node: Any) -> None:
    kc = labcluster.kubeconfig
    make_node(
        NODE,
        labels={
            "feature.node.kubernetes.io/pci-10de.present": "true",
            "feature.node.kubernetes.io/os-id": "ubuntu",
        },
    )
    before = gpulabel(kc, "rules", "-o", "json")
    assert before.returncode == 0, before.stderr
    assert json.loads(before.stdout)["skipped"].startswith("no nodefeatures or nodefeaturerules")

    labcluster.kubectl("apply", "-f", str(CRDS))
    for crd in ("nodefeatures", "nodefeaturerules"):
        labcluster.kubectl("wait", "--for=condition=Established", f"crd/{crd}.nfd.k8s-sigs.io", "--timeout=60s")
    try:
        labcluster.kubectl("create", "namespace", NFD_NS, check=False)
        # the schema is the server's: an operator outside the enum is refused
        bad = rule(
            "nfr-bad-op",
            [{"name": "x", "matchFeatures": [{"feature": "a.b", "matchExpressions": {"k": {"op": "Equals"}}}]}],
        )
        refused = labcluster.kubectl("apply", "-f", "-", input=json.dumps(bad), check=False)
        assert refused.returncode != 0 and "Unsupported value" in refused.stderr, refused.stderr
        wait_for(lambda: _applied(labcluster, nodefeature(), *RULES), timeout=60, message="for the NFD objects")

        out = gpulabel(kc, "rules")
        assert out.returncode == 0, out.stderr
        assert lines_about(out.stdout, NODE) == [
            f'{NODE} rule gpu-training term[0] kernel.version major Gt [5]: value "5"'
        ]
        doc = json.loads(gpulabel(kc, "rules", "--node", NODE, "-o", "json").stdout)
        (node,) = doc["nodes"]
        assert node["labels"] == [
            "feature.node.kubernetes.io/nvidia-gpu=true",
            "feature.node.kubernetes.io/os-id=ubuntu",  # the template sees only matched elements: ID, not VERSION_ID
            "feature.node.kubernetes.io/pci-10de.present=true",
        ]
        assert [(r["object"], r["matched"]) for r in doc["rules"]] == [
            ("nfr-gpu-nodes", True),
            ("nfr-gpu-training", False),
            ("nfr-os-release", True),
        ]

        check = gpulabel(kc, "check", "-o", "json")
        assert check.returncode == 1, check.stderr
        mine = [f for f in json.loads(check.stdout)["findings"] if f.get("node") == NODE and f["check"] == "nfd"]
        assert mine == [
            {
                "check": "nfd",
                "node": NODE,
                "key": "feature.node.kubernetes.io/nvidia-gpu",
                "reason": "nfd-missing",
                "severity": "error",
                "args": ["want true", "rule nfr-gpu-nodes/nvidia-gpu"],
                "detail": "rule nfr-gpu-nodes/nvidia-gpu sets feature.node.kubernetes.io/nvidia-gpu=true "
                "but the node does not have it",
            }
        ]
    finally:
        labcluster.kubectl("delete", "nodefeaturerules", *(r["metadata"]["name"] for r in RULES), "--ignore-not-found")
        labcluster.kubectl("delete", "-f", str(CRDS), "--wait=false", "--ignore-not-found")


def _applied(labcluster: LabCluster, *objects: dict[str, Any]) -> bool:
    proc = labcluster.kubectl(
        "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}), check=False
    )
    return proc.returncode == 0


def test_the_readonly_role_may_read_nodefeatures_and_nodefeaturerules(
    labcluster: LabCluster, make_node: Any, tmp_path: Path
) -> None:
    make_node(NODE)
    namespace_usable(labcluster, "gpulabel")  # another file on this cluster may have just deleted it
    labcluster.kubectl("apply", "-k", str(Path(__file__).resolve().parents[2] / "deploy" / "rbac"))
    labcluster.kubectl("apply", "-f", str(CRDS))
    for crd in ("nodefeatures", "nodefeaturerules"):
        labcluster.kubectl("wait", "--for=condition=Established", f"crd/{crd}.nfd.k8s-sigs.io", "--timeout=60s")
    try:
        labcluster.kubectl("create", "namespace", NFD_NS, check=False)
        wait_for(lambda: _applied(labcluster, nodefeature(), RULES[0]), timeout=60, message="for the NFD objects")
        kc = account_kubeconfig(labcluster, "gpulabel-readonly", tmp_path / "ro.kubeconfig")
        for command in (["rules", "-o", "json"], ["check", "-o", "json"]):
            proc = gpulabel(kc, *command)
            assert proc.returncode in (0, 1), proc.stderr
        doc = json.loads(gpulabel(kc, "rules", "-o", "json").stdout)
        assert "skipped" not in doc
        assert [(r["node"], r["rule"], r["matched"]) for r in doc["rules"] if r["node"] == NODE] == [
            (NODE, "nvidia-gpu", True)
        ]
    finally:
        labcluster.kubectl("delete", "nodefeaturerules", RULES[0]["metadata"]["name"], "--ignore-not-found")
        labcluster.kubectl("delete", "-f", str(CRDS), "--wait=false", "--ignore-not-found")
