"""The monitor's metrics: the exact exposition of a small assessment, the cap on problem series, serving."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from gpulabel.controller.metrics import Metrics, serve
from gpulabel.controller.monitor_metrics import MonitorMetrics
from gpulabel.model.findings import Finding
from tests.unit.monitor_fixtures import CORDONED, NODES, PAUSED, PENDING, PLUGIN_MISSING, assessment, node

EXPECTED = """\
# HELP gpulabel_findings Current findings by check, reason and severity
# TYPE gpulabel_findings gauge
gpulabel_findings{check="capacity",reason="cordoned",severity="warning"} 1.0
gpulabel_findings{check="operands",reason="missing",severity="error"} 1.0
gpulabel_findings{check="operands",reason="paused",severity="info"} 1.0
gpulabel_findings{check="pending",reason="untolerated-taint",severity="warning"} 1.0
# HELP gpulabel_problem One series (=1) per current error or warning finding, worst first, capped
# TYPE gpulabel_problem gauge
gpulabel_problem{check="operands",node="gpu-a",operand="device-plugin",pod="",reason="missing",severity="error"} 1.0
gpulabel_problem{check="capacity",node="gpu-b",operand="",pod="",reason="cordoned",severity="warning"} 1.0
gpulabel_problem{check="pending",node="",operand="",pod="ml/train-0",reason="untolerated-taint",severity="warning"} 1.0
# HELP gpulabel_problem_series_dropped Problem series left out over the cap
# TYPE gpulabel_problem_series_dropped gauge
gpulabel_problem_series_dropped 0.0
# HELP gpulabel_gpus_unusable GPUs lost, by the root-cause link that breaks first
# TYPE gpulabel_gpus_unusable gauge
gpulabel_gpus_unusable{cause="nfd"} 0.0
gpulabel_gpus_unusable{cause="gpu.present"} 0.0
gpulabel_gpus_unusable{cause="deploy-labels"} 0.0
gpulabel_gpus_unusable{cause="driver-upgrade"} 0.0
gpulabel_gpus_unusable{cause="daemonset"} 0.0
gpulabel_gpus_unusable{cause="operand-pod"} 4.0
gpulabel_gpus_unusable{cause="mig"} 0.0
gpulabel_gpus_unusable{cause="allocatable"} 0.0
gpulabel_gpus_unusable{cause="health"} 0.0
gpulabel_gpus_unusable{cause="gfd-labels"} 0.0
gpulabel_gpus_unusable{cause="node"} 2.0
gpulabel_gpus_unusable{cause="operand"} 0.0
# HELP gpulabel_gpu_nodes GPU nodes
# TYPE gpulabel_gpu_nodes gauge
gpulabel_gpu_nodes 2.0
# HELP gpulabel_fleet_gpus GPU devices of every node by what a new pod can use: usable, unhealthy (lost, or a GPU \
health condition), unschedulable (cordoned, NotReady, tainted)
# TYPE gpulabel_fleet_gpus gauge
gpulabel_fleet_gpus{state="usable"} 4.0
gpulabel_fleet_gpus{state="unhealthy"} 0.0
gpulabel_fleet_gpus{state="unschedulable"} 0.0
# HELP gpulabel_gpus GPU devices per node with some unhealthy or unschedulable, by state (capped, worst first)
# TYPE gpulabel_gpus gauge
# HELP gpulabel_gpu_unhealthy_device One series (=1) per device a pod's allocatedResourcesStatus reports Unhealthy \
(capped)
# TYPE gpulabel_gpu_unhealthy_device gauge
# HELP gpulabel_gpu_nodes_labelled GPU nodes carrying NFD's NVIDIA PCI label (nfd) or GFD's gpu.product (gfd)
# TYPE gpulabel_gpu_nodes_labelled gauge
gpulabel_gpu_nodes_labelled{source="gfd"} 1.0
gpulabel_gpu_nodes_labelled{source="nfd"} 2.0
# HELP gpulabel_watch_last_event_timestamp_seconds Unix time of the last watch event, bookmark or stream end, by kind
# TYPE gpulabel_watch_last_event_timestamp_seconds gauge
gpulabel_watch_last_event_timestamp_seconds{kind="Node"} 1.6999999995e+09
# HELP gpulabel_watch_relists_total Relists (410 or a broken watch), by kind
# TYPE gpulabel_watch_relists_total counter
gpulabel_watch_relists_total{kind="Pod"} 1.0
# HELP gpulabel_api_errors_total API errors by HTTP status ('unreachable' for no answer)
# TYPE gpulabel_api_errors_total counter
gpulabel_api_errors_total{code="410"} 1.0
gpulabel_api_errors_total{code="unreachable"} 1.0
# HELP gpulabel_evaluation_duration_seconds Evaluation time, by scope
# TYPE gpulabel_evaluation_duration_seconds histogram
gpulabel_evaluation_duration_seconds_bucket{le="0.001",scope="incremental"} 0.0
gpulabel_evaluation_duration_seconds_bucket{le="0.0025",scope="incremental"} 0.0
gpulabel_evaluation_duration_seconds_bucket{le="0.005",scope="incremental"} 1.0
gpulabel_evaluation_duration_seconds_bucket{le="0.01",scope="incremental"} 1.0
gpulabel_evaluation_duration_seconds_bucket{le="0.025",scope="incremental"} 1.0
gpulabel_evaluation_duration_seconds_bucket{le="0.05",scope="incremental"} 1.0
gpulabel_evaluation_duration_seconds_bucket{le="0.1",scope="incremental"} 1.0
gpulabel_evaluation_duration_seconds_bucket{le="0.25",scope="incremental"} 1.0
gpulabel_evaluation_duration_seconds_bucket{le="0.5",scope="incremental"} 1.0
gpulabel_evaluation_duration_seconds_bucket{le="1.0",scope="incremental"} 1.0
gpulabel_evaluation_duration_seconds_bucket{le="2.5",scope="incremental"} 1.0
gpulabel_evaluation_duration_seconds_bucket{le="5.0",scope="incremental"} 1.0
gpulabel_evaluation_duration_seconds_bucket{le="10.0",scope="incremental"} 1.0
gpulabel_evaluation_duration_seconds_bucket{le="+Inf",scope="incremental"} 1.0
gpulabel_evaluation_duration_seconds_count{scope="incremental"} 1.0
gpulabel_evaluation_duration_seconds_sum{scope="incremental"} 0.003
# HELP gpulabel_last_evaluation_timestamp_seconds Unix time of the last evaluation
# TYPE gpulabel_last_evaluation_timestamp_seconds gauge
gpulabel_last_evaluation_timestamp_seconds 1.700000001e+09
# HELP gpulabel_leader 1 while this instance holds the lease
# TYPE gpulabel_leader gauge
gpulabel_leader 1.0
# HELP gpulabel_events_total Events written, by type and reason
# TYPE gpulabel_events_total counter
gpulabel_events_total{reason="OperandMissing",type="Warning"} 1.0
# HELP gpulabel_events_pending Warning Events waiting out their grace (already in gpulabel_problem), by reason
# TYPE gpulabel_events_pending gauge
gpulabel_events_pending{reason="CapacityCordoned"} 1.0
# HELP gpulabel_events_suppressed_total Events left out by the per-object rate limit
# TYPE gpulabel_events_suppressed_total counter
gpulabel_events_suppressed_total 1.0
# HELP gpulabel_node_conditions_total Node-condition patches, by status
# TYPE gpulabel_node_conditions_total counter
gpulabel_node_conditions_total{status="True"} 1.0
"""


def test_the_exact_exposition_of_a_small_assessment() -> None:
    metrics = MonitorMetrics(clock=lambda: 1_700_000_001.0)
    metrics.publish(assessment([PLUGIN_MISSING, PAUSED, CORDONED, PENDING]))
    metrics.evaluated("incremental", 0.003)
    metrics.watch_event("Node", 1_699_999_999.5)
    metrics.relisted("Pod")
    metrics.api_error(410)
    metrics.api_error("unreachable")
    metrics.leader.set(1)
    metrics.event_written("Warning", "OperandMissing")
    metrics.event_suppressed()
    metrics.events_pending({"CapacityCordoned": 1, "OperandNotReady": 0})
    metrics.condition_patched("True")
    assert metrics.render().decode() == EXPECTED


def series(text: str, name: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(name + "{") or line.startswith(name + " ")]


def test_a_new_assessment_replaces_the_gauges_whole() -> None:
    metrics = MonitorMetrics()
    metrics.publish(assessment([PLUGIN_MISSING, CORDONED]))
    metrics.publish(assessment([CORDONED]))
    text = metrics.render().decode()
    assert series(text, "gpulabel_problem") == [
        'gpulabel_problem{check="capacity",node="gpu-b",operand="",pod="",reason="cordoned",severity="warning"} 1.0'
    ]
    assert 'gpulabel_gpus_unusable{cause="operand-pod"} 0.0' in text
    assert 'reason="missing"' not in text


def test_problem_series_are_capped_worst_first_and_the_rest_counted() -> None:
    """20,000 problem findings: at most the cap's series, errors first, then the nodes that lost most GPUs."""
    nodes = tuple(node(f"n{i:05d}", {"nvidia.com/gpu.present": "true"}, gpus=1 + i % 8) for i in range(20_000))
    findings = [
        Finding(
            "operands", "missing", node=n.name, operand="device-plugin", severity="error" if i % 10 == 0 else "warning"
        )
        for i, n in enumerate(nodes)
    ]
    metrics = MonitorMetrics(problem_series=1000)
    metrics.publish(assessment(findings, nodes=nodes))
    text = metrics.render().decode()
    problems = series(text, "gpulabel_problem")
    assert len(problems) == 1000
    assert "gpulabel_problem_series_dropped 19000.0" in text
    assert all('severity="error"' in line for line in problems)  # 2,000 errors: only errors are shown
    eights = [f"n{i:05d}" for i in range(20_000) if i % 10 == 0 and i % 8 == 7]  # errors on 8-GPU nodes
    shown = [line.split('node="')[1].split('"')[0] for line in problems]
    assert shown[: len(eights)] == sorted(eights)  # most GPUs lost first, then by name
    assert len(text.encode()) < 400_000, len(text)


def test_unbounded_input_never_makes_unbounded_series() -> None:
    findings = [Finding("pending", "insufficient", pod=f"ns/p{i}", severity="warning") for i in range(5000)]
    metrics = MonitorMetrics(problem_series=10)
    metrics.publish(assessment(findings))
    text = metrics.render().decode()
    assert len(series(text, "gpulabel_problem")) == 10
    assert "gpulabel_problem_series_dropped 4990.0" in text
    assert 'gpulabel_findings{check="pending",reason="insufficient",severity="warning"} 5000.0' in text


def get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, "", err.read().decode()


def test_serve_serves_the_monitor_metrics_and_the_findings_envelope() -> None:
    metrics = MonitorMetrics()
    server = serve(metrics, 0, "127.0.0.1")
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert get(base + "/readyz")[0] == 503
        assert get(base + "/findings")[0] == 503
        metrics.publish(assessment([PLUGIN_MISSING, PAUSED], nodes=NODES))
        metrics.ready.set()
        assert get(base + "/readyz")[0] == 200
        status, ctype, body = get(base + "/findings")
        assert (status, ctype) == (200, "application/json")
        doc = json.loads(body)
        assert doc["kind"] == "CheckResult" and [f["reason"] for f in doc["findings"]] == ["missing", "paused"]
        status, _, text = get(base + "/metrics")
        assert status == 200 and series(text, "gpulabel_gpu_nodes") == ["gpulabel_gpu_nodes 2.0"]
    finally:
        server.shutdown()


def test_sync_metrics_serve_no_findings_endpoint() -> None:
    server = serve(Metrics(), 0, "127.0.0.1")
    try:
        assert get(f"http://127.0.0.1:{server.server_address[1]}/findings")[0] == 404
    finally:
        server.shutdown()


def test_a_lost_gpu_is_published_per_node_and_the_device_a_pod_reports_unhealthy_is_named() -> None:
    from gpulabel.checks.engine.assessment import Assessment
    from gpulabel.model.cluster import ClusterState
    from gpulabel.model.findings import Result
    from gpulabel.model.readers import node_from_json, pod_from_json

    lost = node_from_json(
        {
            "kind": "Node",
            "metadata": {"name": "gpu-lost", "labels": {"nvidia.com/gpu.present": "true"}},
            "status": {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "7"}},
        }
    )
    holder = pod_from_json(
        {
            "kind": "Pod",
            "metadata": {"name": "train-0", "namespace": "ml"},
            "spec": {"nodeName": "gpu-lost"},
            "status": {
                "phase": "Running",
                "containerStatuses": [
                    {
                        "name": "trainer",
                        "allocatedResourcesStatus": [
                            {"name": "nvidia.com/gpu", "resources": [{"resourceID": "GPU-1a2b", "health": "Unhealthy"}]}
                        ],
                    }
                ],
            },
        }
    )
    state = ClusterState(nodes=(*NODES, lost), pods=(holder,))
    metrics = MonitorMetrics()
    metrics.publish(Assessment(Result("check", (), graded=True), (), state, 1_700_000_000.0))
    text = metrics.render().decode()
    assert 'gpulabel_gpus{node="gpu-lost",state="unhealthy"} 1.0' in text
    assert 'gpulabel_gpus{node="gpu-lost",state="usable"} 7.0' in text
    assert 'gpulabel_fleet_gpus{state="usable"} 11.0' in text and 'gpulabel_gpus{node="gpu-a"' not in text
    assert (
        'gpulabel_gpu_unhealthy_device{device="GPU-1a2b",node="gpu-lost",pod="ml/train-0",'
        'resource="nvidia.com/gpu"} 1.0'
    ) in text
