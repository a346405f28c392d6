"""The config file (ignore rules, severity overrides, thresholds) and --baseline, through the CLI."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from gpulabel.app.config import default_config_path, load_config
from gpulabel.cli.main import main
from gpulabel.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
DRIFTED = str(ROOT / "examples/drifted-lab.yaml")
FLEET = str(ROOT / "examples/mixed-fleet.yaml")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: Path, text: str, name: str = "config.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_an_ignore_rule_silences_exactly_the_finding_it_names(tmp_path: Path) -> None:
    before = run("audit", "--snapshot", DRIFTED)[1].splitlines()
    config = write(
        tmp_path,
        "ignore:\n"
        "  - check: audit\n"
        "    reason: not-a-number\n"
        "    nodes: kubernetes.io/hostname=lab-node-1\n"
        "    comment: lab-node-1's GFD is being replaced\n",
    )
    code, out, _ = run("audit", "--snapshot", DRIFTED, "--config", config)
    assert out.splitlines() == [line for line in before if line != "lab-node-1 nvidia.com/gpu.count not-a-number"]
    assert len(before) - len(out.splitlines()) == 1 and code == 1  # the other findings still fail
    doc = json.loads(run("audit", "--snapshot", DRIFTED, "--config", config, "-o", "json")[1])
    assert doc["summary"]["ignored"] == 1


def test_ignore_by_namespace_and_pod_pattern_in_check(tmp_path: Path) -> None:
    config = write(tmp_path, "ignore:\n  - {namespace: ml, pod: 'train-*', comment: the team knows}\n")
    out = run("check", "--snapshot", DRIFTED, "--config", config)[1].splitlines()
    assert "pending: OK (ignored: 3 by the config's rules)" in out
    assert "hazards: OK (ignored: 1 by the config's rules)" in out


def test_severity_overrides_and_thresholds(tmp_path: Path) -> None:
    config = write(tmp_path, "severity:\n  audit/missing: info\n  not-a-number: warning\n")
    assert run("audit", "--snapshot", DRIFTED, "--config", config)[0] == 0
    assert run("audit", "--snapshot", DRIFTED, "--config", config, "--fail-level", "warning")[0] == 1
    at = ("--at", "2026-11-30T04:00:00Z")
    assert "dgx-a100-1 nvidia.com/mig.config.state stuck" in run("mig", "--snapshot", FLEET, *at)[1]
    config = write(tmp_path, "thresholds:\n  stuck-after: 24h\n", "late.yaml")
    assert "dgx-a100-1" not in run("mig", "--snapshot", FLEET, *at, "--config", config)[1]
    # the flag wins over the file
    assert "stuck" in run("mig", "--snapshot", FLEET, *at, "--config", config, "--stuck-after", "30m")[1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ignore:\n  - check: audit\n    reasn: missing\n    comment: x\n", ":3: ignore[0].reasn: unknown key"),
        ("ignore:\n  - check: audit\n    reason: missing\n", ":2: ignore[0].comment: required: say why"),
        ("ignore:\n  - comment: why\n", ":2: ignore[0]: names nothing"),
        ("ignore:\n  - {check: audits, comment: x}\n", ":2: ignore[0].check: unknown check 'audits'"),
        ("ignore:\n  - {reason: mising, comment: x}\n", ":2: ignore[0].reason: unknown reason 'mising'"),
        ("ignore:\n  - {nodes: 'a in (', comment: x}\n", ":2: ignore[0].nodes: "),
        ("severity:\n  operands/paused: fatal\n", ":2: severity.operands/paused: 'fatal' is not one of"),
        ("severity:\n  operands/stuck: info\n", ":2: severity.operands/stuck: unknown reason 'stuck' of operands"),
        ("thresholds:\n  stuck-after: soon\n", ":2: thresholds.stuck-after: 'soon' is not a duration"),
        ("thresholds:\n  stuck_after: 1h\n", ":2: thresholds.stuck_after: unknown key"),
        ("ignored: []\n", ":1: ignored: unknown key; one of apiVersion, kind, ignore, severity, thresholds, health"),
        ("kind: Policy\n", ":1: kind: must be Config"),
        ("ignore: [\n", ":2: not YAML"),
    ],
)
def test_a_wrong_key_or_value_is_one_line_naming_file_line_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    code, out, err = run("check", "--snapshot", DRIFTED, "--config", path)
    assert (code, out) == (2, "")
    assert err.startswith(f"gpulabel: {path}{message}"), err
    assert err.count("\n") == 1


def test_the_default_locations(tmp_path: Path) -> None:
    assert default_config_path({"GPULABEL_CONFIG": "/x.yaml"}) == "/x.yaml"
    assert default_config_path({"XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path)}) in (
        None,
        "/etc/gpulabel/config.yaml",
    )
    (tmp_path / "gpulabel").mkdir()
    (tmp_path / "gpulabel" / "config.yaml").write_text("{}\n")
    assert default_config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == str(tmp_path / "gpulabel/config.yaml")


def test_the_example_config_is_valid_and_matches_its_schema() -> None:
    import jsonschema

    path = ROOT / "examples/gpulabel-config.yaml"
    load_config(str(path))
    schema = json.loads((ROOT / "docs/schema/gpulabel-config-v1.json").read_text())
    jsonschema.validate(yaml.safe_load(path.read_text()), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"ignore": [{"check": "audit"}]}, schema)  # no comment


def test_a_missing_config_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="No such file"):
        load_config(str(tmp_path / "nope.yaml"))


# -- baseline ---------------------------------------------------------------------------


def test_a_baseline_turns_old_findings_into_no_failure_and_a_new_one_into_exit_one(tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    base.write_text(run("check", "--snapshot", DRIFTED, "-o", "json")[1])
    code, out, _ = run("check", "--snapshot", DRIFTED, "--baseline", str(base))
    assert code == 0, out  # every finding is in the baseline
    doc = json.loads(run("check", "--snapshot", DRIFTED, "--baseline", str(base), "-o", "json")[1])
    assert all(f["baseline"] for f in doc["findings"])

    # a new finding: drop one from the baseline, and add one that is no longer found
    old = json.loads(base.read_text())
    dropped = old["findings"].pop(0)
    old["findings"].append({"check": "audit", "reason": "missing", "node": "gone-node", "key": "nvidia.com/gpu.count"})
    base.write_text(json.dumps(old))
    code, out, _ = run("audit", "--snapshot", DRIFTED, "--baseline", str(base), "-o", "wide")
    assert code == 1
    lines = out.splitlines()
    assert f"error {dropped['node']} {dropped['key']} missing (the label is absent)" in lines
    assert "info - audit gone-node nvidia.com/gpu.count missing (in the baseline, no longer found)" in lines


def test_a_baseline_that_is_not_an_envelope_is_one_line(tmp_path: Path) -> None:
    bad = write(tmp_path, '{"items": []}', "bad.json")
    code, _, err = run("audit", "--snapshot", DRIFTED, "--baseline", bad)
    assert (code, err) == (2, f"gpulabel: {bad}: not a gpulabel -o json envelope: no findings list\n")


def test_the_operator_namespace_threshold_keeps_other_namespaces_daemonsets_out(tmp_path: Path) -> None:
    before = run("operands", "--snapshot", DRIFTED)[1].splitlines()
    assert any(
        "gpu-operator/nvidia-driver-daemonset" in line
        for line in run("operands", "--snapshot", DRIFTED, "-o", "wide")[1].splitlines()
    )
    config = write(tmp_path, "thresholds:\n  operator-namespace: somewhere-else\n")
    wide = run("operands", "--snapshot", DRIFTED, "-o", "wide", "--config", config)[1]
    assert "gpu-operator/" not in wide.replace("pod gpu-operator/", "")  # no DaemonSet of gpu-operator is an operand
    assert "no DaemonSet selects nvidia.com/gpu.deploy.driver=true" in wide and before
