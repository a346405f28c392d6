"""The alert rules and the Grafana dashboard (deploy/monitoring): real promtool checks and unit-tests them,
every alert is tested firing and not firing, selects reasons the checks really give at error or warning,
names its node and has a runbook section; the chart's and kustomize's copies are the source; every
dashboard query parses and reads only the monitor's metrics.

promtool is tools/prometheus/build's (prometheus v0.316.0 from the Go module proxy). Not built, the
promtool tests skip in one line; under GPULABEL_REQUIRE_CLUSTER=1 (scripts/test.sh, which builds it)
they error instead, so CI never passes by skipping.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from tools import monitoring

from gpulabel.checks.reasons import catalogue

ROOT = Path(__file__).resolve().parents[2]
PROMTOOL = ROOT / "tools" / "prometheus" / "bin" / "promtool"
RULE_TESTS = sorted((monitoring.SOURCE / "tests").glob("*.yaml"))
RUNBOOK = ROOT / "docs" / "runbook.md"
NOT_BUILT = "promtool is not built: run tools/prometheus/build (a cold Go cache: ~5-15 min)"

# The monitor's metrics (issue 23's contract, docs/monitor.md); histograms with their series suffixes.
CONTRACT = {
    "gpulabel_findings",
    "gpulabel_problem",
    "gpulabel_problem_series_dropped",
    "gpulabel_gpus_unusable",
    "gpulabel_gpu_nodes",
    "gpulabel_gpu_nodes_labelled",
    "gpulabel_fleet_gpus",
    "gpulabel_gpus",
    "gpulabel_gpu_unhealthy_device",
    "gpulabel_watch_last_event_timestamp_seconds",
    "gpulabel_watch_relists_total",
    "gpulabel_api_errors_total",
    *(f"gpulabel_evaluation_duration_seconds{s}" for s in ("_bucket", "_sum", "_count")),
    "gpulabel_last_evaluation_timestamp_seconds",
    "gpulabel_leader",
    "gpulabel_events_total",
    "gpulabel_events_pending",
    "gpulabel_events_suppressed_total",
    "gpulabel_node_conditions_total",
}
SEVERITIES = {"critical", "warning", "info"}

RULES = monitoring.alert_rules()
ALERTS = {r["alert"]: r for r in RULES if "alert" in r}
RECORDED = {r["record"] for r in RULES if "record" in r}


@pytest.fixture(scope="module")
def promtool() -> Path:
    if os.access(PROMTOOL, os.X_OK):
        return PROMTOOL
    if os.environ.get("GPULABEL_REQUIRE_CLUSTER") == "1":
        pytest.fail(f"{NOT_BUILT} (GPULABEL_REQUIRE_CLUSTER=1)", pytrace=False)
    pytest.skip(NOT_BUILT)


def run(promtool: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(promtool), *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=ROOT
    )


def test_promtool_checks_the_rules_file(promtool: Path) -> None:
    res = run(promtool, "check", "rules", str(monitoring.RULES))
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"SUCCESS: {len(RULES)} rules found" in res.stdout


def test_promtool_unit_tests_of_every_alert_pass(promtool: Path) -> None:
    assert RULE_TESTS
    res = run(promtool, "test", "rules", *map(str, RULE_TESTS))
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.count("SUCCESS") == len(RULE_TESTS), res.stdout


def test_promtool_fails_a_rule_test_that_expects_the_wrong_alert(promtool: Path, tmp_path: Path) -> None:
    """The unit tests can fail: with `for:` shortened, an alert fires where a test says it must not yet."""
    (tmp_path / "tests").mkdir()
    (tmp_path / monitoring.RULES.name).write_text(monitoring.with_for(monitoring.RULES.read_text(), "1m"))
    for test in RULE_TESTS:
        (tmp_path / "tests" / test.name).write_text(test.read_text())
    res = run(promtool, "test", "rules", *(str(tmp_path / "tests" / t.name) for t in RULE_TESTS))
    assert res.returncode != 0
    assert "GPULabelOperandsNotRunning, time: 9m" in res.stdout + res.stderr


def _rule_tests() -> list[dict[str, Any]]:
    return [
        case
        for path in RULE_TESTS
        for group in yaml.safe_load(path.read_text())["tests"]
        for case in group.get("alert_rule_test", ())
    ]


def test_every_alert_is_tested_firing_and_not_firing() -> None:
    cases = _rule_tests()
    firing = {c["alertname"] for c in cases if c.get("exp_alerts")}
    silent = {c["alertname"] for c in cases if not c.get("exp_alerts")}
    assert set(ALERTS) == firing, "alerts never tested firing: " + ", ".join(sorted(set(ALERTS) - firing))
    assert set(ALERTS) == silent, "alerts never tested not firing: " + ", ".join(sorted(set(ALERTS) - silent))
    for test in RULE_TESTS:
        assert yaml.safe_load(test.read_text())["rule_files"] == [f"../{monitoring.RULES.name}"], test


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_alert_has_for_a_severity_a_summary_and_a_runbook_section() -> None:
    anchors = {_anchor(h) for h in re.findall(r"^#+ (.+)$", RUNBOOK.read_text(), re.M)}
    for name, rule in ALERTS.items():
        assert re.fullmatch(r"\d+[smh]", rule.get("for", "")), name
        assert rule["labels"]["severity"] in SEVERITIES, name
        notes = rule["annotations"]
        assert notes["summary"] and notes["description"], name
        page, _, anchor = notes["runbook_url"].partition("#")
        assert page == monitoring.DOCS_BASE_URL + "runbook.md" and anchor == name.lower() and anchor in anchors, name


def test_finding_alerts_select_reasons_the_checks_give_at_error_or_warning_and_name_the_node_or_pod_and_operand() -> (
    None
):
    """gpulabel_problem holds only error and warning findings: a reason graded info could never fire."""
    graded = {(command, row.reason): row.severity for row in catalogue() for command in row.commands}
    finding_alerts = [r for r in ALERTS.values() if "gpulabel_problem" in monitoring.metric_names(r["expr"])]
    assert len(finding_alerts) >= 7
    for rule in finding_alerts:
        (check,) = re.findall(r'check="([^"]+)"', rule["expr"])
        (reasons,) = re.findall(r'reason=~?"([^"]+)"', rule["expr"])
        for reason in reasons.split("|"):
            assert graded.get((check, reason)) in {"error", "warning"}, (rule["alert"], check, reason)
        (by,) = re.findall(r"max by \(([^)]*)\)", rule["expr"])
        # queues pages on admitted pods, unrequested on the pods that see GPUs, runtime on refused pods
        subject = "pod" if check in ("pending", "queues", "unrequested", "runtime") else "node"
        named = {subject, "operand"} if check == "operands" else {subject}  # an operands finding names its operand
        assert {s.strip() for s in by.split(",")} == {"cluster", *named, "check", "reason"}, rule["alert"]
        for label in named:
            assert f"{{{{ $labels.{label} }}}}" in rule["annotations"]["summary"], rule["alert"]


def test_rules_and_dashboard_read_only_the_monitors_metrics() -> None:
    for rule in RULES:
        assert monitoring.metric_names(rule["expr"]) <= CONTRACT | RECORDED | {"up"}, rule.get("alert")
    queries = list(monitoring.dashboard_queries())
    assert len(queries) >= 15
    used = set()
    for title, expr in queries:
        names = monitoring.metric_names(expr)
        assert names and names <= CONTRACT | {"up"}, (title, names - CONTRACT)
        used |= names
    # fleet health, GPUs unusable by cause, findings over time, top nodes, watch health
    assert {"gpulabel_gpu_nodes", "gpulabel_gpus_unusable", "gpulabel_findings", "gpulabel_problem"} <= used
    assert {"gpulabel_watch_last_event_timestamp_seconds", "gpulabel_watch_relists_total"} <= used


def test_metric_names_reads_selectors_not_functions_labels_or_keywords() -> None:
    expr = 'sum by (node) (rate(a_total{job="x", b="c{d}"}[5m])) / on (node) group_left (k) b:rec or vector(0)'
    assert monitoring.metric_names(expr) == {"a_total", "b:rec"}


def test_every_dashboard_query_parses(promtool: Path, tmp_path: Path) -> None:
    """promtool parses each query as a recording rule (`promtool query` needs a server: the cluster test runs them)."""
    rules = [
        {"record": f"dashboard:query_{i}", "expr": expr} for i, (_, expr) in enumerate(monitoring.dashboard_queries())
    ]
    path = tmp_path / "dashboard-rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    res = run(promtool, "check", "rules", str(path))
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"SUCCESS: {len(rules)} rules found" in res.stdout


def test_the_dashboard_is_grafanas_shape_with_a_datasource_and_job_variable() -> None:
    import json

    dashboard = json.loads(monitoring.DASHBOARD.read_text())
    names = [v["name"] for v in dashboard["templating"]["list"]]
    assert names == ["datasource", "job", "cluster"]
    panels = dashboard["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    for panel in panels:
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        assert panel["targets"] and all(t["refId"] and t["expr"] for t in panel["targets"]), panel["title"]
        variables = set(re.findall(r"\$\w+", " ".join(t["expr"] for t in panel["targets"])))
        assert variables <= set(monitoring.GRAFANA_VARIABLES), panel["title"]


def test_the_chart_and_kustomize_copies_are_the_source() -> None:
    assert monitoring.stale() == [], "run python -m tools.monitoring"
    rule = yaml.safe_load(monitoring.prometheus_rule(monitoring.RULES.read_text()))
    assert rule["spec"] == yaml.safe_load(monitoring.RULES.read_text())
    config = yaml.safe_load(monitoring.dashboard_configmap(monitoring.DASHBOARD.read_text()))
    assert config["data"]["gpulabel-dashboard.json"] == monitoring.DASHBOARD.read_text()
    assert config["metadata"]["labels"]["grafana_dashboard"] == "1"


def test_a_changed_source_is_stale_until_regenerated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / monitoring.RULES.name
    copy.write_text(monitoring.RULES.read_text().replace("for: 10m", "for: 11m", 1))
    monkeypatch.setattr(monitoring, "RULES", copy)
    assert monitoring.CHART_FILES / monitoring.RULES.name in monitoring.stale()


def test_the_short_for_copy_changes_only_for() -> None:
    short = monitoring.alert_rules(monitoring.with_for(monitoring.RULES.read_text(), "1s"))
    assert [r.get("for") for r in short if "alert" in r] == ["1s"] * len(ALERTS)
    assert [{k: v for k, v in r.items() if k != "for"} for r in short] == [
        {k: v for k, v in r.items() if k != "for"} for r in RULES
    ]


def test_the_contract_is_what_the_monitor_serves() -> None:
    """Every series name the monitor's /metrics can hold (from its TYPE lines) is the CONTRACT above."""
    from gpulabel.controller.monitor_metrics import MonitorMetrics

    served = set()
    for line in MonitorMetrics().render().decode().splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            suffixes = ("_bucket", "_sum", "_count") if kind == "histogram" else ("",)
            served |= {name + s for s in suffixes}  # a counter's TYPE line names it with _total
    assert served == CONTRACT


def test_every_reason_has_a_home_in_the_alerts_or_says_why_not() -> None:
    """docs/monitor.md's table: one row per (check, reason) the monitor exports; an alert a row names selects it."""
    from gpulabel.checks.registry import CHECKS

    checks = {c.name for c in CHECKS}
    given = {
        (command, row.reason): row.severity
        for row in catalogue()
        if row.form == "{}"  # a DRA reason is the argument of pending's `claim`
        for command in row.commands
        if command in checks
    }
    text = (ROOT / "docs" / "monitor.md").read_text()
    table = text[text.index("## Every reason's home") :].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\w+) \| `([^`]+)` \| (.+) \|$", table, re.M)
    homes = {(check, reason): home for check, reason, home in rows}
    assert len(homes) == len(rows), "a reason with two rows"
    assert set(homes) == set(given), (set(given) - set(homes), set(homes) - set(given))
    for (check, reason), home in homes.items():
        alert = home.split(" ", 1)[0].rstrip(":")
        if alert.startswith("GPULabel"):
            rule = ALERTS[alert]
            selected = re.findall(r'check="([^"]+)", reason=~?"([^"]+)"', rule["expr"])
            assert any(c == check and reason in r.split("|") for c, r in selected), (check, reason, alert)
        elif home.startswith("no problem series"):
            assert given[(check, reason)] == "info", (check, reason)
        else:
            assert "because" in home or "not decided" in home, (check, reason, home)
            assert given[(check, reason)] in {"error", "warning"}, (check, reason)
