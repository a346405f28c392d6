"""``place -o wide`` for a manifest, where the input has Karpenter NodePools: beside the per-node fit, which
NodePool would make a node for a workload that fits none (or the NodeClaim on its way, or why no NodePool will),
in ``pending``'s words; the ``autoscaler`` section in structured output. Plain output, and any input without
NodePools, are as before."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import yaml

from gpulabel.cli.main import main
from tests.unit.karpenter.test_autoscale_verdict import CUSTOM, TOLERATE

EXAMPLE = "examples/autoscaled.yaml"
DRIFTED = "examples/drifted-lab.yaml"


def place(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["place", *argv], out, io.StringIO())
    return code, out.getvalue()


def manifest(tmp_path: Path, name: str, selector: dict[str, str], kind: str = "Pod", gpus: str = "1") -> str:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": gpus}}}],
        "nodeSelector": selector,
        "tolerations": TOLERATE,
    }
    meta = {"name": name, "namespace": "ml"}
    if kind == "Pod":
        obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    else:
        template = {"metadata": {"labels": {"app": name}}, "spec": spec}
        selector_ = {"matchLabels": {"app": name}}
        obj = {
            "apiVersion": "apps/v1",
            "kind": kind,
            "metadata": meta,
            "spec": {"selector": selector_, "template": template},
        }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(obj))
    return str(path)


def test_a_nodepool_that_would_serve_it_is_named(tmp_path: Path) -> None:
    code, out = place(
        manifest(tmp_path, "l4", {"karpenter.k8s.aws/instance-gpu-name": "l4"}), "--snapshot", EXAMPLE, "-o", "wide"
    )
    assert code == 1  # it fits no node now: place's exit is the nodes' answer
    # gpu-l4's NodeClaim that never initialized is in-flight capacity to Karpenter: the pod's verdict names it,
    # late (the example's NodeClaim is hours past its grace when place runs)
    assert out.splitlines()[-1].startswith(
        "autoscaler: node-late nodeclaim/gpu-l4-m2c9d nodepool/gpu-l4 not-Initialized (NodeClaim gpu-l4-m2c9d of "
        "NodePool gpu-l4 (created 2026-12-04T09:20:00Z) is "
    )


def test_a_nodeclaim_on_its_way_and_a_pool_none_serves_in_json(tmp_path: Path) -> None:
    a100 = manifest(tmp_path, "a100", {"karpenter.k8s.aws/instance-gpu-name": "a100"})
    step7 = manifest(tmp_path, "step7", {CUSTOM: "true"})
    _, out = place(a100, step7, "--snapshot", EXAMPLE, "-o", "json")
    rows = {r["workload"]: r for r in json.loads(out)["autoscaler"]}
    assert (rows["ml/a100"]["verdict"], rows["ml/a100"]["nodeclaim"]) == ("coming", "gpu-a100-7xk2p")
    assert rows["ml/a100"]["args"][:2] == ["nodeclaim/gpu-a100-7xk2p", "nodepool/gpu-a100"]
    none = rows["ml/step7"]
    assert (none["verdict"], none["reason"], none["args"]) == ("none", "no-autoscaler", [f"unknown-key {CUSTOM}"])
    assert f"or declare {CUSTOM} in a NodePool's spec.template.metadata.labels" in none["detail"]
    _, wide = place(a100, step7, "--snapshot", EXAMPLE, "-o", "wide")
    assert f"ml/step7 autoscaler: no-autoscaler unknown-key {CUSTOM} (Failed to schedule pod, " in wide
    assert "ml/a100 autoscaler: node-late nodeclaim/gpu-a100-7xk2p nodepool/gpu-a100 not-Launched (NodeClaim " in wide


def test_the_same_words_as_pendings_finding(tmp_path: Path) -> None:
    # examples/autoscaled.yaml's ml/step7-train, as a manifest: place says what pending says of the pod
    out = io.StringIO()
    main(["pending", "--snapshot", EXAMPLE, "-o", "json"], out, io.StringIO())
    said = next(f for f in json.loads(out.getvalue())["findings"] if f["reason"] == "no-autoscaler")
    _, doc = place(manifest(tmp_path, "step7", {CUSTOM: "true"}), "--snapshot", EXAMPLE, "-o", "json")
    assert json.loads(doc)["autoscaler"][0]["detail"] == said["detail"]


def test_a_daemonsets_pod_gets_no_node(tmp_path: Path) -> None:
    ds = manifest(tmp_path, "agent", {"karpenter.k8s.aws/instance-gpu-name": "l4"}, kind="DaemonSet")
    _, out = place(ds, "--snapshot", EXAMPLE, "-o", "json")
    row = json.loads(out)["autoscaler"][0]
    assert (row["verdict"], row["detail"]) == ("none", "a DaemonSet's pod: Karpenter makes no node for it")


def test_plain_output_a_workload_that_fits_and_no_nodepools_are_unchanged(tmp_path: Path) -> None:
    l4 = manifest(tmp_path, "l4", {"karpenter.k8s.aws/instance-gpu-name": "l4"})
    assert "autoscaler" not in place(l4, "--snapshot", EXAMPLE)[1]  # plain: the verdict lines only
    # twins: no NodePools in the input, no autoscaler line or section
    for argv in (["examples/pods/train-b.yaml", "--snapshot", DRIFTED], [l4, "--snapshot", DRIFTED]):
        assert "autoscaler" not in place(*argv, "-o", "wide")[1]
        doc = json.loads(place(*argv, "-o", "json")[1])
        assert "autoscaler" not in doc
    # a workload that fits some node gets no verdict (the section is there, empty)
    fits = manifest(tmp_path, "small", {}, gpus="0")
    _, out = place(fits, "--snapshot", EXAMPLE, "-o", "json")
    assert json.loads(out)["autoscaler"] == []


def test_at_judges_the_nodeclaims_age_at_the_snapshots_time(tmp_path: Path) -> None:
    # gpu-l4-m2c9d was made at 09:20: within Karpenter's 15m registration timeout it is on its way, past it late
    l4 = manifest(tmp_path, "l4", {"karpenter.k8s.aws/instance-gpu-name": "l4"})
    _, early = place(l4, "--snapshot", EXAMPLE, "-o", "wide", "--at", "2026-12-04T09:25:00Z")
    assert early.splitlines()[-1].startswith(
        "autoscaler: node-coming nodeclaim/gpu-l4-m2c9d nodepool/gpu-l4 (NodeClaim gpu-l4-m2c9d of NodePool gpu-l4 "
        "(created 2026-12-04T09:20:00Z) is on its way"
    ), early
    _, late = place(l4, "--snapshot", EXAMPLE, "-o", "wide", "--at", "2026-12-04T10:05:00Z")
    assert "(created 2026-12-04T09:20:00Z) is 45m old and not Initialized yet" in late.splitlines()[-1]
    assert late.splitlines()[-1].startswith("autoscaler: node-late nodeclaim/gpu-l4-m2c9d")
    err = io.StringIO()
    code = main(["place", l4, "--snapshot", EXAMPLE, "--at", "yesterday"], io.StringIO(), err)
    assert (code, err.getvalue()) == (
        2,
        "gpulabel: --at: 'yesterday' is not an RFC 3339 time such as 2026-11-30T04:00:00Z\n",
    )
