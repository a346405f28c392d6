"""devices, cel and pending on the DRA lab snapshot (examples/dra-lab.json, written by tests/make_dra_lab.py)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from gpulabel.cli.main import main

LAB = str(Path(__file__).resolve().parents[2] / "examples" / "dra-lab.json")
A = 'device.attributes["gpu.nvidia.com"]'


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--snapshot", LAB], out, err)
    return code, out.getvalue(), err.getvalue()


def test_devices_lists_every_device_and_its_holder() -> None:
    code, out, _ = run("devices")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "dra-node-0 gpu.nvidia.com/dra-node-0/gpu-0 gpu NVIDIA_A100-SXM4-80GB allocated ml/trainer-0-gpu"
    assert (
        lines[-1]
        == "dra-node-1 gpu.nvidia.com/dra-node-1/gpu-1 gpu NVIDIA_A10 tainted gpu.nvidia.com/xid=79:NoSchedule"
    )
    doc = json.loads(run("devices", "-o", "json")[1])
    assert doc["devices"][5]["taints"] == ["gpu.nvidia.com/xid=79:NoSchedule"]
    assert "driverVersion=550.54.15" in doc["devices"][0]["attributes"]


def test_cel_selects_devices_and_names_the_runtime_error() -> None:
    code, out, _ = run("cel", f'{A}.architecture == "Ampere" && {A}.productName.endsWith("A10")')
    assert code == 0
    assert out.splitlines()[-1] == "dra-node-1 gpu.nvidia.com/dra-node-1/gpu-1 yes"
    code, out, _ = run("cel", f'{A}.profile == "1g.10gb"', "--class", "gpu.nvidia.com")
    assert code == 1
    assert (
        out.splitlines()[0]
        == "dra-node-0 gpu.nvidia.com/dra-node-0/gpu-0 error CEL runtime error: no such key: profile"
    )
    code, out, _ = run("cel", "true", "--class", "mig.nvidia.com")
    assert code == 1 and set(line.split()[-1] for line in out.splitlines()) == {"class"}


def test_cel_that_does_not_compile_is_the_api_servers_message_and_exit_2() -> None:
    code, out, err = run("cel", "device.driver == 1")
    assert (code, out) == (2, "")
    assert err.startswith(
        "gpulabel: EXPR: compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_'"
        " applied to '(string, int)'"
    )
    assert err.count("\n") == 1


def test_pending_names_the_claim_request_and_reason_per_node() -> None:
    code, out, _ = run("pending")
    assert code == 0  # a Pending pod is a warning
    assert run("pending", "--fail-level", "warning")[0] == 1
    assert "ml/train-h100 claim 2 node(s) train-h100-gpu/gpu selector" in out.splitlines()
    code, out, _ = run("pending", "--per-node", "--fail-level", "warning")
    assert code == 1
    lines = out.splitlines()
    assert "ml/train-h100 dra-node-0 claim train-h100-gpu/gpu selector" in lines
    assert "ml/train-big dra-node-0 claim big-memory/gpu allocated" in lines
    assert "ml/infer-mig dra-node-1 claim small-mig/mig class-selector" in lines
    assert "ml/infer-mig dra-node-2 claim small-mig/mig no-devices" in lines
    wide = run("pending", "-o", "wide")[1]
    assert "closest gpu.nvidia.com/dra-node-0/gpu-0 has gpu.nvidia.com/architecture=Ampere" in wide
    assert "ml/train-big predicted: 0/3 nodes are available: 3 cannot allocate all claims." in wide


def test_help_does_not_import_the_cel_runtime() -> None:
    code = (
        "import sys, contextlib, io\nfrom gpulabel.cli.main import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n    main(['--help'])\n"
        "print('cel_expr_python' in sys.modules)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "False"


def test_migrate_prints_the_selector_count_kept_requirements_and_warnings(tmp_path: Path) -> None:
    manifest = tmp_path / "train.json"
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-A10"]},
                            {"key": "nvidia.com/gpu.count", "operator": "Gt", "values": ["1"]},
                        ]
                    }
                ]
            }
        }
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"containers": [{"name": "c", "image": "x"}], "affinity": affinity},
    }
    manifest.write_text(json.dumps(pod))
    code, out, _ = run("migrate", str(manifest))
    assert code == 0
    assert out.splitlines() == [
        'ml/train selector: device.attributes["gpu.nvidia.com"].productName in ["NVIDIA A10"]',
        "ml/train count: 2",
        'ml/train warning: nvidia.com/gpu.product=NVIDIA-A10 is GFD\'s sanitised form of productName "NVIDIA A10"',
        "ml/train warning: nvidia.com/gpu.count is not a device property: ask for the GPUs with the request's count"
        " instead",
    ]


def test_the_html_report_shows_unallocatable_claims(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    code, _, _ = run("report", "--html", str(page))
    assert code == 0
    text = page.read_text()
    assert "claim big-memory/gpu allocated" in text
    assert "4 matching device(s) allocated to ml/trainer-0-gpu" in text
    assert "claim small-mig/mig class-selector" in text


def test_place_answers_for_a_pod_with_a_claim_template_node_by_node() -> None:
    manifest = str(Path(LAB).parent / "pods" / "train-a100-claim.yaml")
    code, out, _ = run("place", manifest, "--per-node")
    assert code == 1
    assert out.splitlines() == [
        "dra-node-0 no claim train-a100-gpus/gpus allocated",
        "dra-node-1 no claim train-a100-gpus/gpus selector",
        "dra-node-2 no claim train-a100-gpus/gpus no-devices",
    ]


def test_place_says_yes_where_the_claim_fits(tmp_path: Path) -> None:
    docs = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "one-a10"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": "gpu.nvidia.com",
                                "selectors": [{"cel": {"expression": f'{A}.productName == "NVIDIA A10"'}}],
                                "tolerations": [{"key": "gpu.nvidia.com/xid", "operator": "Exists"}],
                                "count": 2,
                            },
                        }
                    ]
                }
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "infer"},
            "spec": {
                "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": "one-a10"}],
            },
        },
    ]
    manifest = tmp_path / "infer.json"
    manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    code, out, _ = run("place", str(manifest), "--per-node")
    assert code == 0
    assert out.splitlines()[1] == "dra-node-1 yes"


def test_devices_without_dra_objects_is_skipped() -> None:
    lab = str(Path(LAB).parent / "lab-cluster.yaml")
    out, err = io.StringIO(), io.StringIO()
    assert (main(["devices", "--snapshot", lab], out, err), out.getvalue()) == (
        0,
        "skipped (no ResourceSlices in the input)\n",
    )
    out = io.StringIO()
    assert main(["devices", "--snapshot", lab, "-o", "json"], out, err) == 0
    assert json.loads(out.getvalue())["skipped"] == "no ResourceSlices in the input"


def test_place_allocates_an_extended_resource_a_device_class_backs(tmp_path: Path) -> None:
    implicit = "deviceclass.resource.kubernetes.io/gpu.nvidia.com"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "ext"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {implicit: "1"}}}]},
    }
    manifest = tmp_path / "ext.json"
    manifest.write_text(json.dumps(pod))
    code, out, _ = run("place", str(manifest), "--per-node")
    assert code == 0
    assert out.splitlines() == [
        f"dra-node-0 no claim ext-extended-resources/{implicit} allocated",
        "dra-node-1 yes",
        f"dra-node-2 no claim ext-extended-resources/{implicit} no-devices",
    ]
