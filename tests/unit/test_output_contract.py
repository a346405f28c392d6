"""The output contract: one JSON envelope (validated against docs/schema), the same Result in every format,
tables without escape codes off a terminal, and the flags every command shares."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from gpulabel.cli.main import main, prog_name
from tests.objects import as_list, gpu_node, node

ROOT = Path(__file__).parents[2]
LAB = str(ROOT / "examples" / "lab-cluster.yaml")
DRIFTED = str(ROOT / "examples" / "drifted-lab.yaml")
DRA_LAB = str(ROOT / "examples" / "dra-lab.json")
NFD_RULES = str(ROOT / "examples" / "nfd-rules.yaml")
MIXED = str(ROOT / "examples" / "mixed-fleet.yaml")
AUTOSCALED = str(ROOT / "examples" / "autoscaled.yaml")
PODS = ROOT / "examples" / "pods"
SCHEMA = json.loads((ROOT / "docs" / "schema" / "gpulabel-v1.json").read_text())


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("contract")
    nodes_only = d / "nodes.json"
    nodes_only.write_text(json.dumps(as_list(gpu_node("gpu-a"), node("cpu", {}))))
    features = d / "features"
    features.mkdir()
    (features / "lab-node-1.env").write_text("nvidia.com/gpu.count=2\nfeature.node.kubernetes.io/custom-gpu-training\n")
    typo = d / "typo.yaml"  # a product with a typo: a did-you-mean hint in the workloads section
    typo.write_text((PODS / "in.yaml").read_text().replace("NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-SXM4-80G"))
    return {"nodes": str(nodes_only), "features": str(features), "html": str(d / "r.html"), "typo": str(typo)}


def commands(files: dict[str, str]) -> list[list[str]]:
    return [
        ["sanitize", "NVIDIA A100-SXM4-40GB"],
        ["validate", "nvidia.com/gpu.count=4", "bad key=x"],
        ["audit", "--snapshot", DRIFTED],
        ["audit", "--snapshot", LAB],
        ["sources", "nvidia.com/gpu.product"],
        ["sources", "--node", "lab-node-1", "--snapshot", DRIFTED],
        ["operands", "--snapshot", DRIFTED],
        ["operands", "--snapshot", files["nodes"]],
        ["place", str(PODS / "train-b.yaml"), "--snapshot", DRIFTED],
        ["place", files["typo"], "--snapshot", MIXED, "--per-node"],
        ["pending", "--snapshot", DRIFTED],
        ["pending", "--snapshot", DRIFTED, "--per-node"],
        ["pending", "--snapshot", files["nodes"]],
        ["hazards", "--snapshot", DRIFTED],
        ["check", "--snapshot", DRIFTED],
        ["check", "--snapshot", files["nodes"]],
        ["explain", "node/lab-node-3", "--snapshot", DRIFTED],
        ["explain", "workload/ml/job-llm-ft-5b8f2", "--snapshot", str(ROOT / "examples" / "kueue-lab.yaml")],
        ["explain", "pod/ml/step7-train", "--snapshot", AUTOSCALED],
        ["check", "--snapshot", AUTOSCALED],
        ["report", "--snapshot", DRIFTED, "--html", files["html"]],
        ["diff", LAB, DRIFTED],
        ["version", "--client"],
        ["isolate", "lab-node-1", "lab-node-9", "--dry-run", "--snapshot", LAB],
        ["sync", files["features"], "--dry-run", "--snapshot", DRIFTED],
        ["capacity", "--snapshot", DRIFTED],
        ["mig", "--snapshot", DRIFTED],
        ["sharing", "--snapshot", DRIFTED],
        ["upgrade", "--snapshot", DRIFTED],
        ["queues", "--snapshot", str(ROOT / "examples" / "kueue-lab.yaml")],
        ["queues", "--snapshot", files["nodes"]],
        ["gpus", "--snapshot", DRIFTED],
        ["gpus", "--snapshot", MIXED],
        ["gpus", "--snapshot", AUTOSCALED],
        ["gpus", "--by", "flavor", "--snapshot", str(ROOT / "examples" / "kueue-lab.yaml")],
        ["gpus", "--by", "clusterqueue", "--snapshot", str(ROOT / "examples" / "kueue-lab.yaml")],
        ["devices", "--snapshot", DRA_LAB],
        ["devices", "--snapshot", LAB],
        ["cel", 'device.attributes["gpu.nvidia.com"].type == "gpu"', "--snapshot", DRA_LAB],
        ["migrate", str(PODS / "exists-notin.yaml"), "--snapshot", DRA_LAB],
        ["rules", "--snapshot", NFD_RULES],
        ["rules", "--snapshot", files["nodes"]],
    ]


def test_every_command_has_a_case_here(files: dict[str, str]) -> None:
    from gpulabel.cli.main import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    # completion prints a script, snapshot a List of the live cluster's objects, monitor runs until stopped
    # and publishes to its sinks (its --dump file holds check's envelope), kubeconfig writes a file and says
    # where: none prints a result
    covered = {argv[0] for argv in commands(files)} | {"completion", "snapshot", "monitor", "kubeconfig"}
    assert set(sub.choices) == covered


def test_every_commands_json_is_the_one_envelope(files: dict[str, str]) -> None:
    for argv in commands(files):
        code, out, err = run(*argv, "-o", "json")
        assert code in (0, 1), (argv, err)
        doc = json.loads(out)
        jsonschema.validate(doc, SCHEMA)
        assert doc["kind"] == argv[0].capitalize() + "Result", argv


def test_yaml_is_the_same_document_as_json(files: dict[str, str]) -> None:
    for argv in commands(files):
        if argv[0] == "report":
            continue  # it writes the page again, with a new time in it
        as_json = json.loads(run(*argv, "-o", "json")[1])
        as_yaml = yaml.safe_load(run(*argv, "-o", "yaml")[1])
        assert as_yaml == as_json, argv


def test_the_schema_rejects_what_it_should() -> None:
    good = json.loads(run("audit", "--snapshot", DRIFTED, "-o", "json")[1])
    jsonschema.validate(good, SCHEMA)
    for broken in (
        {**good, "apiVersion": "v1"},
        {**good, "findings": [{**good["findings"][0], "subject": "x"}]},  # no untyped fields
        {**good, "findings": [{"check": "audit"}]},  # a finding has a reason
        {k: v for k, v in good.items() if k != "summary"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, SCHEMA)


def test_a_field_means_the_same_in_every_command() -> None:
    """``key`` is always a label key; operands name their operand, pending and hazards their pod and node."""
    doc = json.loads(run("check", "--snapshot", DRIFTED, "-o", "json")[1])
    by_check: dict[str, list[dict[str, Any]]] = {}
    for f in doc["findings"]:
        by_check.setdefault(f["check"], []).append(f)
    assert all("/" in f["key"] for f in by_check["audit"])
    assert all("operand" in f and "key" not in f for f in by_check["operands"])
    assert all(f["pod"] == "ml/train-a" and f["node"] == "lab-node-1" for f in by_check["hazards"])
    assert [(f["pod"], f["count"]) for f in by_check["pending"]] == [
        ("ml/train-b", 1),
        ("ml/train-b", 2),
        ("ml/train-b", 1),
    ]
    assert doc["summary"]["checks"]["pending"] == {
        "findings": 3,
        "reasons": {"affinity": 2, "untolerated-taint": 1},
        "severities": {"error": 0, "warning": 3, "info": 0},
        "pods": 1,
    }
    assert all(f["severity"] in ("error", "warning", "info") for f in doc["findings"])


NO_MANAGED_FIELDS = (
    "stuck detection skipped (no managedFields: capture with gpulabel snapshot or --show-managed-fields)"
)


# -- skipped checks -----------------------------------------------------------------


def test_a_nodes_only_snapshot_skips_what_needs_pods_and_daemonsets(files: dict[str, str]) -> None:
    code, out, _ = run("check", "--snapshot", files["nodes"])
    assert (code, out) == (
        0,  # skipped is neither OK nor a finding: the exit code stays 0
        "audit: OK\n"
        "operands: skipped (no daemonsets or pods in the input)\n"
        "pending: skipped (no pods in the input)\n"
        "hazards: skipped (no pods in the input)\n"
        "capacity: OK\n"
        f"mig: OK ({NO_MANAGED_FIELDS})\n"
        "sharing: OK\n"
        f"upgrade: OK ({NO_MANAGED_FIELDS})\n"
        "nfd: skipped (no nodefeatures in the input)\n"
        "health: OK\n"
        "managed: OK\n"
        "queues: skipped (no resourceflavors in the input)\n"
        "admission: skipped (no pods in the input)\n"
        "stack: skipped (no resourceslices in the input)\n"
        "runtime: skipped (no pods in the input)\n"
        "unrequested: skipped (no pods in the input)\n"
        "cudaskew: skipped (no pods in the input)\n"
        "operatorcrs: skipped (no nvidiadrivers in the input)\n"
        "total: 0 finding(s) error=0 warning=0 info=0\n",
    )
    assert run("pending", "--snapshot", files["nodes"]) == (0, "skipped (no pods in the input)\n", "")
    assert run("hazards", "--snapshot", files["nodes"]) == (0, "skipped (no pods in the input)\n", "")
    assert run("operands", "--snapshot", files["nodes"]) == (0, "skipped (no daemonsets or pods in the input)\n", "")
    doc = json.loads(run("pending", "--snapshot", files["nodes"], "-o", "json")[1])
    assert (doc["skipped"], doc["findings"], doc["summary"]) == (
        "no pods in the input",
        [],
        {"skipped": "no pods in the input"},
    )


def test_an_empty_pod_list_is_pods_none_pending_not_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump_all([as_list(node("n", {})), {"kind": "PodList", "apiVersion": "v1", "items": []}]))
    assert run("pending", "--snapshot", str(path)) == (0, "OK\n", "")


# -- snapshots merged ---------------------------------------------------------------


@pytest.fixture
def two_days(tmp_path: Path) -> tuple[str, str]:
    yesterday = tmp_path / "yesterday.json"
    today = tmp_path / "today.json"
    yesterday.write_text(json.dumps(as_list(gpu_node("a"), gpu_node("b", **{"nvidia.com/gpu.count": "two"}))))
    today.write_text(json.dumps(as_list(gpu_node("b"), gpu_node("c"))))
    return str(yesterday), str(today)


@pytest.mark.parametrize(
    "where",
    [
        "both before the command",
        "both after the command",
        "one before, one after",
    ],
)
def test_duplicates_across_snapshots_are_merged_the_later_winning_wherever_the_flags_stand(
    two_days: tuple[str, str], where: str
) -> None:
    y, t = two_days
    argv = {
        "both before the command": ["--snapshot", y, "--snapshot", t, "audit", "-o", "json"],
        "both after the command": ["audit", "--snapshot", y, "--snapshot", t, "-o", "json"],
        "one before, one after": ["--snapshot", y, "audit", "--snapshot", t, "-o", "json"],
    }[where]
    code, out, err = run(*argv)
    assert code == 0  # b's bad count from yesterday is replaced by today's
    assert json.loads(out)["findings"] == []
    assert err == "gpulabel: 1 object(s) in more than one snapshot, the later file wins: node/b\n"


def test_the_order_of_snapshots_decides_which_copy_wins(two_days: tuple[str, str]) -> None:
    y, t = two_days
    assert run("audit", "--snapshot", t, "--snapshot", y)[1] == "b nvidia.com/gpu.count not-a-number\n"


def test_nodes_are_counted_once(two_days: tuple[str, str]) -> None:
    y, t = two_days
    assert run("sources", "--node", "b", "--snapshot", y, "--snapshot", t)[0] == 0
    out = run("report", "--snapshot", y, "--snapshot", t, "--html", "-")[1]
    assert "3 nodes (3 GPU)" in out


# -- text, wide, table, name --------------------------------------------------------


def test_tables_are_plain_text_when_not_a_terminal_and_never_cut() -> None:
    out = run("operands", "--snapshot", DRIFTED, "-o", "table")[1]
    assert "\x1b" not in out
    lines = out.splitlines()
    assert lines[0].split() == ["SEVERITY", "NODE", "OPERAND", "REASON", "ARGS", "DETAIL"]
    assert any(len(line) > 120 for line in lines)  # nothing cut to 80 columns
    assert (
        "gpu-operator/nvidia-container-toolkit-daemonset does not tolerate taint dedicated=training:NoSchedule" in out
    )


def test_no_headers_drops_the_header_lines() -> None:
    out = run("audit", "--snapshot", DRIFTED, "-o", "table", "--no-headers")[1]
    assert out.splitlines()[0].split()[:4] == ["error", "lab-node-1", "nvidia.com/gpu.memory", "missing"]


def test_a_terminal_table_fits_its_width_and_no_color_means_no_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpulabel.render.table import style_for

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.delenv("NO_COLOR", raising=False)
    style = style_for(Tty())
    assert (style.width, style.bold) == (60, True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert style_for(Tty()).bold is False
    from gpulabel.render.table import format_table

    text = format_table(["a", "b"], [["x" * 10, "y" * 100]], style_for(Tty()))
    assert max(len(line) for line in text.splitlines()) == 60 and "\x1b" not in text


def test_name_lists_each_object_once() -> None:
    assert run("audit", "--snapshot", DRIFTED, "-o", "name")[1] == "node/lab-node-1\nnode/lab-node-3\n"
    assert run("pending", "--snapshot", DRIFTED, "-o", "name")[1] == "pod/ml/train-b\n"


def test_check_wide_prints_each_checks_findings_below_the_summary() -> None:
    out = run("check", "--snapshot", DRIFTED, "-o", "wide")[1].split("\n\n")
    head = out[0].splitlines()
    assert head[0].startswith("cause lab-node-0 operand-pod 4 GPU(s): container-toolkit not-ready (")
    assert (
        next(line for line in head if not line.startswith("cause ")) == "audit: 5 finding(s) missing=4 not-a-number=1"
    )
    assert out[1].startswith("error lab-node-1 nvidia.com/gpu.memory missing (the label is absent)")


# -- flags --------------------------------------------------------------------------


def test_all_namespaces_is_accepted_and_exclusive_with_a_namespace() -> None:
    assert run("hazards", "-A", "--snapshot", DRIFTED)[0] == 0  # a hazard is a warning
    assert run("hazards", "-A", "--snapshot", DRIFTED, "--fail-level", "warning")[0] == 1
    code, out, err = run("hazards", "-A", "-n", "ml", "--snapshot", DRIFTED)
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == "gpulabel hazards: error: -n/--namespace: not allowed with -A/--all-namespaces"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--snapshot", LAB, "sanitize", "x"], "gpulabel: --snapshot: not used by sanitize\n"),
        (["-n", "ml", "audit", "--snapshot", LAB], "gpulabel: -n: not used by audit\n"),
        (["-l", "a=b", "sources", "k"], "gpulabel: -l: not used by sources\n"),
    ],
)
def test_a_flag_a_command_does_not_use_is_refused(argv: list[str], line: str) -> None:
    assert run(*argv) == (2, "", line)


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (["-A"], "gpulabel: -A: not used by audit\n"),
        (["-n", "ml"], "gpulabel: -n: not used by audit\n"),
        (["-o", "json"], ""),
    ],
)
def test_a_shared_flag_means_the_same_on_either_side_of_the_command(flags: list[str], line: str) -> None:
    before = run(*flags, "audit", "--snapshot", LAB)
    after = run("audit", *flags, "--snapshot", LAB)
    assert before == after
    if line:
        assert after == (2, "", line)


def test_a_flag_of_another_group_after_the_command_is_refused_in_one_line() -> None:
    assert run("sanitize", "x", "--snapshot", LAB) == (2, "", "gpulabel: --snapshot: not used by sanitize\n")
    assert run("devices", "-l", "a=b", "--snapshot", LAB) == (2, "", "gpulabel: -l: not used by devices\n")


def test_completion_offers_only_the_flags_a_command_uses() -> None:
    script = run("completion", "bash")[1]
    (sanitize,) = [line for line in script.splitlines() if line.strip().startswith("sanitize)")]
    (audit,) = [line for line in script.splitlines() if line.strip().startswith("audit)")]
    assert "--snapshot" not in sanitize and "-l" not in sanitize.split()
    assert "--snapshot" in audit and " -A " not in audit and "--namespace" not in audit


def test_commands_without_a_cluster_do_not_offer_cluster_flags() -> None:
    from gpulabel.cli.main import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name in ("sanitize", "validate"):
        # offered: shown in help (the others are accepted after the command only to be refused in one line)
        flags = {o for a in sub.choices[name]._actions if a.help != argparse.SUPPRESS for o in a.option_strings}
        assert not flags & {"--snapshot", "--kubeconfig", "--context", "-n", "-l", "-A"}, name
        assert "--snapshot" not in sub.choices[name].format_help(), name


def test_help_shows_examples_valid_values_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run("operands", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "examples:" in text and "exit codes:" in text
    assert "driver, container-toolkit, device-plugin" in text  # --disabled's valid values


def test_the_operand_names_in_help_are_the_catalogue() -> None:
    from gpulabel.checks.operands.rules import CATALOGUE
    from gpulabel.cli.flags import OPERAND_NAMES

    assert OPERAND_NAMES.split(", ") == list(CATALOGUE)


def test_usage_names_kubectl_gpulabel_when_run_as_the_plugin() -> None:
    assert prog_name("/usr/local/bin/kubectl-gpulabel") == "kubectl gpulabel"
    assert prog_name("/usr/bin/gpulabel") == "gpulabel"
    from gpulabel.cli.main import build_parser

    assert build_parser("kubectl gpulabel").format_usage().startswith("usage: kubectl gpulabel ")


def test_version_without_a_cluster() -> None:
    from gpulabel import __version__

    assert run("version", "--client") == (0, f"Client Version: {__version__}\n", "")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_name_every_command_and_parse(shell: str, tmp_path: Path) -> None:
    code, out, _ = run("completion", shell)
    assert code == 0
    for command in ("audit", "pending", "diff", "completion"):
        assert command in out
    assert "wide json yaml table name" in out or "text wide json yaml table name" in out
    if shell == "bash":
        script = tmp_path / "c.bash"
        script.write_text(out)
        assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0


# -- offline plans ------------------------------------------------------------------


def test_isolate_dry_run_plans_from_a_snapshot(files: dict[str, str]) -> None:
    # ml/train-a holds a GPU on lab-node-1: the dry run refuses the node, as the run would (issue 24)
    code, out, err = run("isolate", "lab-node-1", "--dry-run", "--snapshot", LAB, "-o", "wide")
    assert (code, out) == (1, "")
    assert err.startswith("gpulabel: node lab-node-1: not isolated: GPU pods running: ml/train-a (nvidia.com/gpu)")
    code, out, err = run("isolate", "lab-node-1", "--dry-run", "--force", "--snapshot", LAB, "-o", "wide")
    assert code == 0 and err == ""
    first, second = out.splitlines()
    assert first.startswith("lab-node-1 nvidia.com/gpu.deploy.operands false (was absent; leaving: gpu-operator/")
    assert second == "lab-node-1 gpu-pod ml/train-a nvidia.com/gpu"


def test_sync_dry_run_plans_from_a_snapshot(files: dict[str, str]) -> None:
    code, out, err = run("sync", files["features"], "--dry-run", "--snapshot", DRIFTED, "-o", "wide")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "lab-node-1 feature.node.kubernetes.io/custom-gpu-training true (was absent)",
        "lab-node-1 nvidia.com/gpu.count 2 (was two, set by kubectl-label at 2026-11-28T16:42:10Z)",
    ]


def test_the_report_names_the_snapshot_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    page = run("report", "--snapshot", "examples/drifted-lab.yaml", "--html", "-")[1]
    header = page.split('<p class="meta">', 1)[1].split("</p>", 1)[0]
    assert header.startswith("examples/drifted-lab.yaml &middot; 4 nodes")
    assert str(ROOT) not in page


def test_version_with_an_unreachable_cluster_prints_the_client_and_exits_zero(tmp_path: Path) -> None:
    from gpulabel import __version__

    config = tmp_path / "kubeconfig"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: x}}]\n"
    )
    code, out, err = run("version", "--kubeconfig", str(config))
    assert (code, out) == (0, f"Client Version: {__version__}\n")
    assert err.startswith("gpulabel: no server version: ") and err.count("\n") == 1
    code, out, _ = run("version", "--kubeconfig", str(config), "-o", "json")
    assert code == 0 and json.loads(out)["server"] is None


def test_bash_completes_operand_names_for_disabled_not_file_names(tmp_path: Path) -> None:
    code, out, _ = run("completion", "bash")
    assert code == 0
    script = tmp_path / "c.bash"
    script.write_text(out)
    (tmp_path / "dcgm-notes.txt").write_text("")  # a file that a file-name completion would offer
    probe = (
        f"source {script}; COMP_WORDS=(gpulabel operands --disabled dcgm); COMP_CWORD=3; "
        '_gpulabel; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert done.stdout.split() == ["dcgm", "dcgm-exporter"]


def test_place_json_carries_the_hints_and_the_groups(files: dict[str, str]) -> None:
    code, out, _ = run("place", files["typo"], "--snapshot", MIXED, "-o", "json")
    doc = json.loads(out)
    assert code == 1
    (workload,) = doc["workloads"]
    assert "did you mean NVIDIA-A100-SXM4-80GB, on 2 node(s)" in workload["hints"][0]
    assert sum(g["count"] for g in doc["groups"]) == len(doc["nodes"]) == 12


def test_a_finding_about_another_pod_or_graded_is_dataclasses_replace_of_that_field_whatever_fields_it_has() -> None:
    from dataclasses import fields, replace

    from gpulabel.model.findings import Finding

    values: dict[str, object] = {}
    for i, fd in enumerate(fields(Finding)):  # every field set, each to a value no other field has
        default = fd.default
        if isinstance(default, bool):
            values[fd.name] = not default
        elif isinstance(default, tuple):
            values[fd.name] = (f"{fd.name}-{i}",)
        elif default is None and fd.name in ("count", "fits_elsewhere"):
            values[fd.name] = i
        else:
            values[fd.name] = f"{fd.name}-{i}"
    f = Finding(**values)  # type: ignore[arg-type]
    assert f.about("ml/other") == replace(f, pod="ml/other")
    assert f.about("ml/other") != f
    assert f.graded("info") == replace(f, severity="info")  # the same for the severity grading sets
    assert f.graded("info") != f
    assert f.varied("p", "info", "d", ("s",), 7) == replace(
        f, pod="p", severity="info", detail="d", sample=("s",), fits_elsewhere=7
    )
    from gpulabel.checks.pending.rules import hazard_fate, hazard_recounted

    told = replace(f, detail=f"why; {hazard_fate(f.fits_elsewhere or 0)}")  # and a hazard's count told again
    again = replace(told, detail=f"why; {hazard_fate(3)}", fits_elsewhere=3, sample=("a", "b"))
    assert hazard_recounted(told, 3, ["a", "b"]) == again
