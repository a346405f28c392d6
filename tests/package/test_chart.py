"""The Helm chart deploy/helm/gpulabel: lint-clean, and with default values the same objects as
`kubectl kustomize deploy/base` (one deployment, two ways to install it); every value it offers
changes what it should and nothing else."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from helm_support import CHART, REPO, objects, run_helm, template

import gpulabel

Key = tuple[str, str, str]


def by_key(docs: list[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    out: dict[Key, dict[str, Any]] = {}
    for doc in docs:
        key = (doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"])
        assert key not in out, f"{key} rendered twice"
        out[key] = doc
    return out


def replace_strings(value: Any, old: str, new: str) -> Any:
    if isinstance(value, dict):
        return {k: replace_strings(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_strings(v, old, new) for v in value]
    return new if value == old else value


def kustomize(labcluster_binary: Path, directory: str) -> list[dict[str, Any]]:
    res = subprocess.run(
        [str(labcluster_binary), "kubectl", "kustomize", str(REPO / "deploy" / directory)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert res.returncode == 0, res.stderr
    docs = objects(res.stdout)
    # configMapGenerator appends a hash of the content to the name (a new ConfigMap, so a rollout, on
    # every change); the chart keeps the plain name and the controller re-reads the mounted files
    # (the kubelet updates a ConfigMap volume in place). That suffix is the one difference allowed.
    for doc in docs:
        name = doc["metadata"]["name"]
        if doc["kind"] == "ConfigMap" and re.fullmatch(r"gpulabel-feature-files-[a-z0-9]{10}", name):
            docs = [replace_strings(d, name, "gpulabel-feature-files") for d in docs]
    return docs


def test_helm_lint_is_clean(helm: Path) -> None:
    res = run_helm("lint", "--strict", str(CHART), "--namespace", "gpulabel", check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "1 chart(s) linted, 0 chart(s) failed" in res.stdout
    assert "[WARNING]" not in res.stdout and "[ERROR]" not in res.stdout, res.stdout


def assert_same_objects(kustomized: list[dict[str, Any]], rendered: list[dict[str, Any]]) -> None:
    want, got = by_key(kustomized), by_key(rendered)
    assert sorted(got) == sorted(want)
    for key, obj in want.items():
        assert got[key] == obj, key


def test_default_values_render_the_same_objects_as_the_kustomize_base(helm: Path, labcluster_binary: Path) -> None:
    kustomized = kustomize(labcluster_binary, "base")
    # the base creates its namespace; `helm install --create-namespace` does that for the chart,
    # `namespace.create=true` for `helm template | kubectl apply`
    assert_same_objects([d for d in kustomized if d["kind"] != "Namespace"], objects(template()))
    assert_same_objects(kustomized, objects(template("--set", "namespace.create=true")))


def test_feature_files_set_from_a_file_match_the_lab_overlay(helm: Path, labcluster_binary: Path) -> None:
    lab_file = REPO / "deploy" / "lab" / "lab-node-1.env"
    rendered = objects(
        template("--set", "namespace.create=true", "--set-file", f"featureFiles.files.lab-node-1\\.env={lab_file}")
    )
    kustomized = kustomize(labcluster_binary, "lab")
    assert_same_objects(kustomized, rendered)
    (config,) = [d for d in rendered if d["kind"] == "ConfigMap"]
    assert config["data"] == {"lab-node-1.env": lab_file.read_text()}


def test_the_release_namespace_is_used_everywhere(helm: Path) -> None:
    rendered = objects(template(namespace="gpu-system"))
    for obj in rendered:
        if obj["kind"] not in {"ClusterRole", "ClusterRoleBinding"}:
            assert obj["metadata"]["namespace"] == "gpu-system", obj["metadata"]["name"]
        for subject in obj.get("subjects", []):
            assert subject["namespace"] == "gpu-system"


def deployment(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return by_key(docs)[("Deployment", "gpulabel", "gpulabel-sync")]


def test_image_scheduling_and_resources_come_from_values(helm: Path) -> None:
    docs = objects(
        template(
            "--set",
            "image.repository=registry.example/gpulabel,image.tag=9.9.9,image.pullPolicy=Always",
            "--set",
            "sync.replicas=3,sync.nodeSelector.node-role\\.kubernetes\\.io/control-plane=",
            "--set-json",
            'sync.tolerations=[{"key":"node-role.kubernetes.io/control-plane","operator":"Exists","effect":"NoSchedule"}]',
            "--set",
            "sync.resources.limits.memory=1Gi,check.schedule=0 * * * *,check.nodeSelector.pool=cpu",
        )
    )
    pod = deployment(docs)["spec"]["template"]["spec"]
    assert deployment(docs)["spec"]["replicas"] == 3
    (container,) = pod["containers"]
    assert (container["image"], container["imagePullPolicy"]) == ("registry.example/gpulabel:9.9.9", "Always")
    assert container["resources"]["limits"]["memory"] == "1Gi"
    assert pod["nodeSelector"] == {"node-role.kubernetes.io/control-plane": ""}
    assert pod["tolerations"] == [
        {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}
    ]
    cron = by_key(docs)[("CronJob", "gpulabel", "gpulabel-check")]
    assert cron["spec"]["schedule"] == "0 * * * *"
    job_pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert job_pod["nodeSelector"] == {"pool": "cpu"}
    assert job_pod["containers"][0]["image"] == "registry.example/gpulabel:9.9.9"


def test_feature_files_from_values_or_an_existing_configmap(helm: Path) -> None:
    docs = by_key(objects(template("--set-json", 'featureFiles.files={"gpu-7.env":"nvidia.com/gpu.count=8\\n"}')))
    assert docs[("ConfigMap", "gpulabel", "gpulabel-feature-files")]["data"] == {
        "gpu-7.env": "nvidia.com/gpu.count=8\n"
    }

    docs = by_key(objects(template("--set", "featureFiles.existingConfigMap=site-features")))
    assert not [key for key in docs if key[0] == "ConfigMap"]
    volumes = docs[("Deployment", "gpulabel", "gpulabel-sync")]["spec"]["template"]["spec"]["volumes"]
    assert volumes == [{"name": "feature-files", "configMap": {"name": "site-features"}}]


def test_a_check_config_is_a_configmap_mounted_where_gpulabel_looks_and_it_loads(helm: Path, tmp_path: Path) -> None:
    config = {
        "ignore": [{"check": "operands", "reason": "unexpected", "comment": "the lab runs its own exporter"}],
        "severity": {"operands/paused": "warning"},
    }
    import json

    docs = by_key(objects(template("--set-json", f"check.config={json.dumps(config)}")))
    text = docs[("ConfigMap", "gpulabel", "gpulabel-check-config")]["data"]["config.yaml"]
    (tmp_path / "config.yaml").write_text(text)
    from gpulabel.app.config import SYSTEM_CONFIG, load_config

    loaded = load_config(str(tmp_path / "config.yaml"))
    assert [(r.check, r.reason, r.comment) for r in loaded.ignore] == [
        ("operands", "unexpected", "the lab runs its own exporter")
    ]
    pod = docs[("CronJob", "gpulabel", "gpulabel-check")]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    (mount,) = pod["containers"][0]["volumeMounts"]
    assert f"{mount['mountPath']}/config.yaml" == SYSTEM_CONFIG
    assert pod["volumes"] == [{"name": "config", "configMap": {"name": "gpulabel-check-config"}}]
    assert not [k for k in by_key(objects(template())) if k[2] == "gpulabel-check-config"]  # none by default


def test_leader_election_can_be_renamed_or_turned_off_for_one_replica(helm: Path) -> None:
    args = deployment(objects(template("--set", "sync.leaderElection.leaseName=gpu-sync")))["spec"]["template"]
    assert args["spec"]["containers"][0]["args"] == [
        "sync", "/etc/gpulabel/features.d", "--watch", "--leader-elect", "--lease-name", "gpu-sync",
        "--metrics-port", "9090",
    ]  # fmt: skip
    docs = objects(template("--set", "sync.leaderElection.enabled=false,sync.replicas=1"))
    assert deployment(docs)["spec"]["template"]["spec"]["containers"][0]["args"] == [
        "sync", "/etc/gpulabel/features.d", "--watch", "--metrics-port", "9090",
    ]  # fmt: skip
    assert not [d for d in docs if d["kind"] in {"Role", "RoleBinding"}]

    res = run_helm(
        "template", "gpulabel", str(CHART), "--set", "sync.leaderElection.enabled=false", check=False
    )  # two replicas without a Lease would both write
    assert res.returncode != 0
    assert "sync.replicas > 1 needs sync.leaderElection.enabled" in res.stderr


def test_rbac_per_use_and_the_optional_parts(helm: Path) -> None:
    docs = by_key(objects(template("--set", "rbac.isolate.create=false,check.enabled=false")))
    assert not [key for key in docs if key[2] == "gpulabel-isolate"]
    assert ("ClusterRole", "", "gpulabel-readonly") in docs
    assert not [key for key in docs if key[0] == "CronJob"]

    assert not [key for key in by_key(objects(template())) if key[0] == "ServiceMonitor"]
    docs = by_key(objects(template("--set", "metrics.serviceMonitor.enabled=true")))
    monitor = docs[("ServiceMonitor", "gpulabel", "gpulabel-sync")]
    service = docs[("Service", "gpulabel", "gpulabel-sync-metrics")]
    assert monitor["spec"]["selector"]["matchLabels"] == service["metadata"]["labels"]
    assert monitor["spec"]["endpoints"][0]["port"] == service["spec"]["ports"][0]["name"] == "metrics"

    values = "metrics.serviceMonitor.enabled=true,metrics.service.enabled=false"
    res = run_helm("template", "gpulabel", str(CHART), "--set", values, check=False)
    assert res.returncode != 0
    assert "metrics.serviceMonitor.enabled needs metrics.service.enabled" in res.stderr


@pytest.mark.parametrize("values", [["--set", "sync.enabled=false"], ["--set", "check.args={check,-o,json}"]])
def test_other_values_still_render_valid_objects(helm: Path, values: list[str]) -> None:
    for obj in objects(template(*values)):
        assert obj["apiVersion"] and obj["kind"] and obj["metadata"]["name"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("sync.replica=3", "at '/sync': additional properties 'replica' not allowed"),
        ("image.pullPolicy=Sometimes", "at '/image/pullPolicy': value must be one of"),
        ("featureFiles.files.notes\\.txt=x", "'notes.txt' does not match pattern"),
        ("monitor.enable=true", "at '/monitor': additional properties 'enable' not allowed"),
    ],
)
def test_values_schema_refuses_typos_and_bad_values(helm: Path, value: str, message: str) -> None:
    res = run_helm("template", "gpulabel", str(CHART), "--set", value, check=False)
    assert res.returncode != 0
    assert message in res.stderr


def test_chart_base_and_package_name_one_version() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    base = yaml.safe_load((REPO / "deploy" / "base" / "kustomization.yaml").read_text())
    assert chart["version"] == chart["appVersion"] == gpulabel.__version__
    assert base["images"] == [{"name": "gpulabel", "newName": "localhost/gpulabel", "newTag": gpulabel.__version__}]
    monitor = yaml.safe_load((REPO / "deploy" / "monitor" / "kustomization.yaml").read_text())
    assert monitor["images"] == base["images"]


MONITOR_ALL = "monitor.enabled=true,monitor.serviceMonitor.enabled=true,monitor.prometheusRule.enabled=true"


def monitor_deployment(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return by_key(docs)[("Deployment", "gpulabel", "gpulabel-monitor")]


def monitor_args(docs: list[dict[str, Any]]) -> list[str]:
    args: list[str] = monitor_deployment(docs)["spec"]["template"]["spec"]["containers"][0]["args"]
    return args


def test_the_monitor_values_render_the_same_objects_as_the_monitor_overlays(
    helm: Path, labcluster_binary: Path
) -> None:
    monitor = objects(template("--set", "namespace.create=true,monitor.enabled=true"))
    assert_same_objects(kustomize(labcluster_binary, "monitor"), monitor)
    everything = objects(template("--set", f"namespace.create=true,{MONITOR_ALL}"))
    assert_same_objects(kustomize(labcluster_binary, "monitor-operator"), everything)
    added = set(by_key(everything)) - set(by_key(objects(template("--set", "namespace.create=true"))))
    assert added == {
        ("ServiceAccount", "gpulabel", "gpulabel-monitor"),
        ("ClusterRole", "", "gpulabel-monitor"),
        ("ClusterRoleBinding", "", "gpulabel-monitor"),
        ("Role", "gpulabel", "gpulabel-monitor-lease"),
        ("RoleBinding", "gpulabel", "gpulabel-monitor-lease"),
        ("Deployment", "gpulabel", "gpulabel-monitor"),
        ("Service", "gpulabel", "gpulabel-monitor"),
        ("ServiceMonitor", "gpulabel", "gpulabel-monitor"),
        ("PrometheusRule", "gpulabel", "gpulabel-monitor"),
        ("ConfigMap", "gpulabel", "gpulabel-dashboard"),
    }


def test_the_monitor_is_off_by_default_and_lint_clean_when_on(helm: Path) -> None:
    assert not [k for k in by_key(objects(template())) if "monitor" in k[2] or k[2] == "gpulabel-dashboard"]
    res = run_helm("lint", "--strict", str(CHART), "--namespace", "gpulabel", "--set", MONITOR_ALL, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "[WARNING]" not in res.stdout and "[ERROR]" not in res.stdout, res.stdout


def test_the_monitor_runs_gpulabel_monitor_leader_elected_with_its_own_account(helm: Path) -> None:
    docs = objects(template("--set", "monitor.enabled=true"))
    deploy = monitor_deployment(docs)
    pod = deploy["spec"]["template"]["spec"]
    assert deploy["spec"]["replicas"] == 2
    assert pod["serviceAccountName"] == "gpulabel-monitor"
    assert monitor_args(docs) == [
        "monitor",
        "--leader-elect",
        "--lease-name",
        "gpulabel-monitor",
        "--metrics-port",
        "9102",
    ]
    lease_role = by_key(docs)[("RoleBinding", "gpulabel", "gpulabel-monitor-lease")]
    assert lease_role["subjects"] == [{"kind": "ServiceAccount", "name": "gpulabel-monitor", "namespace": "gpulabel"}]
    service = by_key(docs)[("Service", "gpulabel", "gpulabel-monitor")]
    assert service["spec"]["selector"] == deploy["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["ports"] == [{"name": "metrics", "port": 9102, "targetPort": "metrics"}]

    values = "monitor.enabled=true,monitor.events=false,monitor.problemSeries=50,monitor.metricsPort=9200"
    args = monitor_args(objects(template("--set", values, "--set-json", 'monitor.extraArgs=["--stuck-after","1h"]')))
    assert args == [
        "monitor", "--leader-elect", "--lease-name", "gpulabel-monitor", "--metrics-port", "9200",
        "--no-events", "--problem-series", "50", "--stuck-after", "1h",
    ]  # fmt: skip
    single = objects(template("--set", "monitor.enabled=true,monitor.leaderElection.enabled=false,monitor.replicas=1"))
    assert monitor_args(single) == ["monitor", "--metrics-port", "9102"]
    assert not [k for k in by_key(single) if k[2] == "gpulabel-monitor-lease"]
    res = run_helm(
        "template", "gpulabel", str(CHART), "--set", "monitor.enabled=true,monitor.leaderElection.enabled=false",
        check=False,
    )  # fmt: skip
    assert res.returncode != 0
    assert "monitor.replicas > 1 needs monitor.leaderElection.enabled" in res.stderr


def _rules(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = by_key(docs)[("ClusterRole", "", "gpulabel-monitor")]["rules"]
    return rules


def test_the_monitors_role_reads_writes_events_and_patches_node_status_only_with_the_condition(helm: Path) -> None:
    rules = _rules(objects(template("--set", "monitor.enabled=true")))
    more = [r for r in rules if set(r["verbs"]) - {"list", "watch"}]
    assert more == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},  # a pod's UID for its Event
        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "get", "list"]},
    ]
    assert not [r for r in rules if "nodes/status" in r["resources"]]

    docs = objects(template("--set", "monitor.enabled=true,monitor.nodeCondition=true"))
    status = [r for r in _rules(docs) if "nodes/status" in r["resources"]]
    assert status == [{"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]}]
    assert "--node-condition" in monitor_args(docs)


def test_the_service_monitor_and_prometheus_rule_come_with_their_flags(helm: Path) -> None:
    docs = by_key(objects(template("--set", "monitor.enabled=true")))
    assert not [k for k in docs if k[0] in {"ServiceMonitor", "PrometheusRule"}]
    extra = "monitor.serviceMonitor.labels.release=prom,monitor.prometheusRule.labels.release=prom"
    docs = by_key(objects(template("--set", f"{MONITOR_ALL},{extra}")))
    monitor = docs[("ServiceMonitor", "gpulabel", "gpulabel-monitor")]
    service = docs[("Service", "gpulabel", "gpulabel-monitor")]
    assert monitor["spec"]["selector"]["matchLabels"] == service["metadata"]["labels"]
    assert monitor["spec"]["endpoints"][0]["port"] == service["spec"]["ports"][0]["name"]
    assert monitor["metadata"]["labels"]["release"] == "prom"
    rule = docs[("PrometheusRule", "gpulabel", "gpulabel-monitor")]
    assert rule["metadata"]["labels"]["release"] == "prom"
    source = REPO / "deploy" / "monitoring" / "gpulabel-rules.yaml"
    assert rule["spec"] == yaml.safe_load(source.read_text())  # the plain rules file, templates untouched
    assert "{{ $labels.node }}" in rule["spec"]["groups"][0]["rules"][0]["annotations"]["summary"]


def test_the_dashboard_is_a_configmap_for_the_grafana_sidecar(helm: Path) -> None:
    values = "monitor.enabled=true,monitor.dashboard.labels.team=gpu,monitor.dashboard.annotations.grafana_folder=GPU"
    docs = by_key(objects(template("--set", values)))
    config = docs[("ConfigMap", "gpulabel", "gpulabel-dashboard")]
    assert config["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert config["metadata"]["labels"]["team"] == "gpu"
    assert config["metadata"]["annotations"] == {"grafana_folder": "GPU"}
    source = REPO / "deploy" / "monitoring" / "gpulabel-dashboard.json"
    assert config["data"] == {"gpulabel-dashboard.json": source.read_text()}
    docs = by_key(objects(template("--set", "monitor.enabled=true,monitor.dashboard.enabled=false")))
    assert ("ConfigMap", "gpulabel", "gpulabel-dashboard") not in docs


def test_a_monitor_config_is_mounted_where_gpulabel_looks(helm: Path) -> None:
    config = {"ignore": [{"check": "operands", "reason": "unexpected", "comment": "our exporter"}]}
    import json

    docs = by_key(
        objects(template("--set", "monitor.enabled=true", "--set-json", f"monitor.config={json.dumps(config)}"))
    )
    assert yaml.safe_load(docs[("ConfigMap", "gpulabel", "gpulabel-monitor-config")]["data"]["config.yaml"]) == config
    pod = docs[("Deployment", "gpulabel", "gpulabel-monitor")]["spec"]["template"]["spec"]
    from gpulabel.app.config import SYSTEM_CONFIG

    (mount,) = pod["containers"][0]["volumeMounts"]
    assert f"{mount['mountPath']}/config.yaml" == SYSTEM_CONFIG


def test_the_read_only_role_gets_pods_log_only_when_evidence_is_enabled(helm: Path) -> None:
    def granted(*args: str) -> set[tuple[str, str, str]]:
        role = by_key(objects(template(*args)))[("ClusterRole", "", "gpulabel-readonly")]
        return {
            (g, r, v)
            for rule in role["rules"]
            for g in rule["apiGroups"]
            for r in rule["resources"]
            for v in rule["verbs"]
        }

    # events list is in the read-only role itself since the runtime check reads Warning Events (a kind of the
    # table); the evidence switch adds pods/log
    assert ("", "events", "list") in granted() and ("", "pods/log", "get") not in granted()
    assert granted("--set", "rbac.readonly.evidence=true") - granted() == {("", "pods/log", "get")}


def test_the_rules_take_their_for_and_the_docs_base_url_from_values(helm: Path) -> None:
    base = "https://docs.example/gpulabel/"
    values = f"{MONITOR_ALL},monitor.alerts.docsBaseURL={base},monitor.alerts.for.GPULabelGPUNodeCordoned=24h"
    docs = by_key(objects(template("--set", values)))
    rule = docs[("PrometheusRule", "gpulabel", "gpulabel-monitor")]
    alerts = {r["alert"]: r for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r}
    assert alerts["GPULabelGPUNodeCordoned"]["for"] == "24h"
    assert alerts["GPULabelOperandsNotRunning"]["for"] == "10m"  # not named: the rules file's
    for name, alert in alerts.items():
        assert alert["annotations"]["runbook_url"] == f"{base}runbook.md#{name.lower()}"


def test_event_grace_and_log_format_values_become_monitor_flags(helm: Path) -> None:
    values = "monitor.enabled=true,monitor.eventGrace.default=30s,monitor.logFormat=json"
    args = monitor_args(objects(template("--set", values)))
    assert args[args.index("--event-grace") + 1] == "default=30s"
    assert args[args.index("--log-format") + 1] == "json"
    assert "--log-format" not in monitor_args(objects(template("--set", "monitor.enabled=true")))


def test_the_default_image_is_the_one_the_build_script_makes() -> None:
    import re

    script = (REPO / "scripts" / "build-image.sh").read_text()
    (built,) = re.findall(r"^image=([^:\s]+):\$version$", script, re.M)
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values["image"]["repository"] == built
    for overlay in ("base", "monitor"):
        kustomization = yaml.safe_load((REPO / "deploy" / overlay / "kustomization.yaml").read_text())
        assert [i["newName"] for i in kustomization["images"]] == [built], overlay
