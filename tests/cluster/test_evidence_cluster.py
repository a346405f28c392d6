"""Evidence on labcluster with the real GPU Operator: a device plugin pod made to fail with a known signature,
``explain`` names the cause and the line, and a bundle taken at that moment says the same offline.

How the log is served: kwok runs no containers, and labcluster's kwok serves no kubelet API (its
configuration has no ``serverAddress``, so kwok's ``Logs``/``ClusterLogs`` resources are not served and
the API server has no kubelet to ask). So the test puts a proxy in front of the API server
(:class:`LogProxy`, a ``faultproxy.FaultProxy``) that answers ``GET .../pods/NAME/log`` for the one pod it
made fail, with the device plugin's own failure line, and forwards every other request to the real
API server. The pod, its DaemonSet (created by the real operator), its node, the crash-looping status
(written to ``pods/status``, as the test of issue 22 does) and the Events are all real API objects.
"""

from __future__ import annotations

import http.server
import json
import tarfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from faultproxy import FaultProxy, Recorded
from gpulabel_run import gpulabel
from labcluster_support import GPU_OPERATOR_NAMESPACE as NS
from labcluster_support import LabCluster, wait_for

from gpulabel.model.cluster import AUTOSCALER_EVENTS

# the device plugin's failure, as k8s-device-plugin prints it (NVIDIA/k8s-device-plugin#444; internal/plugin/factory.go)
NVML = "Failed to initialize NVML: could not load NVML library."
LOG = (
    "2026-11-30T10:12:00.000000001Z 2026/11/30 10:12:00 Loading NVML\n"
    f"2026-11-30T10:12:00.000000002Z 2026/11/30 10:12:00 {NVML}\n"
    "2026-11-30T10:12:00.000000003Z 2026/11/30 10:12:00 If this is a GPU node, did you set the docker default "
    "runtime to `nvidia`?\n"
)
NODE = "ev-gpu"
GFD = {"nvidia.com/gpu.product": "NVIDIA-A10", "nvidia.com/gpu.count": "1", "nvidia.com/gpu.memory": "23028"}


class LogProxy(FaultProxy):
    """The real API server, but ``logs[(namespace, pod)]`` is the log of that pod (what a kubelet would stream)."""

    def __init__(self, kubeconfig: Path) -> None:
        super().__init__(kubeconfig)
        self.logs: dict[tuple[str, str], str] = {}

    def handle(self, h: http.server.BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        bits = parts.path.split("/")  # "", api, v1, namespaces, NS, pods, NAME, log
        if h.command == "GET" and len(bits) == 8 and bits[5] == "pods" and bits[7] == "log":
            served = self.logs.get((bits[4], bits[6]))
            if served is not None:
                query = parse_qs(parts.query)
                tail = int(query.get("tailLines", ["0"])[0] or 0)
                lines = served.splitlines(keepends=True)
                body = "".join(lines[-tail:] if tail else lines).encode()
                limit = int(query.get("limitBytes", ["0"])[0] or 0)
                body = body[:limit] if limit else body
                with self.faults.lock:
                    self.faults.recorded.append(Recorded(h.command, parts.path, query, 200))
                h.send_response(200)
                h.send_header("Content-Type", "text/plain")
                h.send_header("Content-Length", str(len(body)))
                h.end_headers()
                h.wfile.write(body)
                return
        super().handle(h)


def _explained(kubeconfig: Path, node: str, marker: str, link: str, waiting: str) -> tuple[list[str], str]:
    """``explain node/NODE``'s lines once they hold ``marker``, and its text from the broken ``link`` down."""

    def explained() -> str:
        out = str(gpulabel(kubeconfig, "explain", f"node/{node}").stdout)
        return out if marker in out else ""

    out = wait_for(explained, timeout=60, message=f"for explain {waiting}")
    print(out)
    lines = out.splitlines()
    broken = next(i for i, ln in enumerate(lines) if ln.startswith(f"broken {link}"))
    return lines, "\n".join(lines[broken:])


def _crash(cluster: LabCluster, pod: dict[str, Any]) -> None:
    """The pod's status as a kubelet reports a crash-looping container (kwok cannot crash one)."""
    name = pod["metadata"]["name"]
    ctr = pod["spec"]["containers"][0]
    status = {
        "conditions": [
            {"type": "Ready", "status": "False", "reason": "ContainersNotReady"},
            {"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady"},
            {"type": "Initialized", "status": "True"},
            {"type": "PodScheduled", "status": "True"},
        ],
        "containerStatuses": [
            {
                "name": ctr["name"],
                "image": ctr["image"],
                "imageID": "",
                "ready": False,
                "restartCount": 4,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 1m20s"}},
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
            }
        ],
    }
    cluster.kubectl(
        "patch", "pod", "-n", NS, name, "--subresource=status", "--type=merge", "-p", json.dumps({"status": status})
    )
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.evidence", "namespace": NS},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "namespace": NS,
            "name": name,
            "uid": pod["metadata"]["uid"],
        },
        "reason": "BackOff",
        "message": f"Back-off restarting failed container {ctr['name']} in pod {name}_{NS}",
        "type": "Warning",
        "source": {"component": "kubelet", "host": NODE},
        "firstTimestamp": "2026-11-30T10:12:01Z",
        "lastTimestamp": "2026-11-30T10:12:05Z",
        "count": 4,
    }
    cluster.apply(event)


def test_explain_names_the_device_plugins_cause_and_line_live_and_from_a_bundle(
    gpu_operator: LabCluster, make_gpu_node: Any, tmp_path: Path
) -> None:
    make_gpu_node(NODE, GFD)

    def plugin_pod() -> dict[str, Any] | None:
        pods = gpu_operator.get("pods", "-n", NS, "--field-selector", f"spec.nodeName={NODE}")["items"]
        found = [p for p in pods if p["metadata"]["ownerReferences"][0]["name"] == "nvidia-device-plugin-daemonset"]
        return found[0] if found and found[0]["status"].get("phase") == "Running" else None

    pod = wait_for(plugin_pod, timeout=90, message="for the operator's device plugin pod on the node")
    name = pod["metadata"]["name"]
    # what the real API server answers for a kwok pod's log (said in the report; the proxy answers instead)
    real = gpu_operator.kubectl("logs", "-n", NS, name, check=False)
    print(f"\nthe API server on a kwok pod's log: rc={real.returncode} {real.stderr.strip()[:200]}")
    _crash(gpu_operator, pod)

    proxy = LogProxy(gpu_operator.kubeconfig)
    try:
        proxy.logs[(NS, name)] = LOG
        kubeconfig = proxy.kubeconfig(tmp_path / "proxy.kubeconfig")

        lines, below = _explained(
            kubeconfig, NODE, "not-ready", "operand-pod", "to see the crash-looping device plugin"
        )
        assert f"evidence device-plugin {NS}/{name}: the device plugin cannot load NVML" in below
        assert "[device-plugin-nvml]" in below
        container = pod["spec"]["containers"][0]["name"]
        line = f"log {container} (previous) 2026-11-30T10:12:00.000000002Z: 2026/11/30 10:12:00 {NVML}"
        assert line in [ln.strip() for ln in lines]
        # the log was asked for as documented: the previous instance, bounded, stamped
        (asked,) = proxy.requests(lambda r: r.path.endswith(f"/pods/{name}/log"))
        assert asked.query["previous"] == ["true"] and asked.query["tailLines"] == ["50"]
        assert asked.query["limitBytes"] == ["65536"] and asked.query["timestamps"] == ["true"]
        events = proxy.requests(lambda r: r.path.endswith("/events"))
        # the autoscalers' pod Events (one LIST per reason) where the command's checks read them (pending's)
        autoscalers = set(AUTOSCALER_EVENTS.values())
        assert {q for r in events for q in r.query["fieldSelector"]} - autoscalers == {
            "type=Warning,source!=karpenter",  # the Warning Events the runtime check joins (one paged LIST)
            f"involvedObject.kind=Pod,involvedObject.name={name}",
            "involvedObject.kind=DaemonSet,involvedObject.name=nvidia-device-plugin-daemonset",
            f"involvedObject.kind=Node,involvedObject.name={NODE}",
        }
        assert not proxy.requests(lambda r: r.method != "GET")  # read-only
        wide = gpulabel(kubeconfig, "check", "-o", "wide").stdout
        cause = next(ln for ln in wide.splitlines() if ln.startswith(f"cause {NODE} "))
        assert cause.endswith("[device-plugin-nvml]"), cause

        bundle = tmp_path / "support.tar.gz"
        taken = gpulabel(kubeconfig, "snapshot", "--bundle", str(bundle), "--progress")
        assert taken.returncode == 0, taken.stderr
        assert "evidence:" in taken.stderr  # the progress line names the reads
    finally:
        proxy.close()

    with tarfile.open(bundle) as tar:
        names = tar.getnames()
    assert {"snapshot.json", "evidence.json", "redaction.txt"} <= set(names)
    offline = gpulabel(gpu_operator.kubeconfig, "explain", f"node/{NODE}", "--snapshot", str(bundle))
    theirs = [ln for ln in offline.stdout.splitlines() if "evidence" in ln or ln.startswith("           ")]
    mine = [ln for ln in lines if "evidence" in ln or ln.startswith("           ")]
    assert theirs == mine and theirs
    events = json.loads(gpulabel(gpu_operator.kubeconfig, "check", "--snapshot", str(bundle), "-o", "json").stdout)
    rows = [r for r in events["evidence"] if r["node"] == NODE]
    assert {r["signature"] for r in rows} == {"device-plugin-nvml"} and rows[0]["line"].endswith(NVML)


# GFD Running and Ready while it writes no labels: its own warning (k8s-device-plugin cmd/gpu-feature-discovery)
GFD_WARNING = "No labels generated from any source"
GFD_LOG = (
    "2026-12-04T16:00:00.000000001Z I1204 16:00:00.000000       1 main.go:163] Start running\n"
    f"2026-12-04T16:00:00.000000002Z W1204 16:00:00.000000       1 main.go:278] {GFD_WARNING}\n"
    "2026-12-04T16:00:00.000000003Z I1204 16:00:00.000000       1 main.go:290] Sleeping for 60000000000\n"
)
READY_NODE = "ev-gfd"


def test_a_ready_gfd_without_labels_on_its_node_is_explained_from_its_log(
    gpu_operator: LabCluster, make_gpu_node: Any, tmp_path: Path
) -> None:
    make_gpu_node(READY_NODE)  # NFD's labels, no GFD label

    def ready_gfd() -> dict[str, Any] | None:
        pods = gpu_operator.get("pods", "-n", NS, "--field-selector", f"spec.nodeName={READY_NODE}")["items"]
        for p in pods:
            statuses = p["status"].get("containerStatuses") or []
            if (
                p["metadata"]["ownerReferences"][0]["name"] == "gpu-feature-discovery"
                and p["status"].get("phase") == "Running"
                and statuses
                and all(s.get("ready") for s in statuses)
            ):
                return p
        return None

    pod = wait_for(ready_gfd, timeout=90, message="for the operator's GFD pod on the node, Running and Ready")
    name = pod["metadata"]["name"]
    container = pod["spec"]["containers"][0]["name"]
    proxy = LogProxy(gpu_operator.kubeconfig)
    try:
        proxy.logs[(NS, name)] = GFD_LOG
        kubeconfig = proxy.kubeconfig(tmp_path / "proxy.kubeconfig")

        _, below = _explained(kubeconfig, READY_NODE, "[gfd-nvml]", "gfd-labels", "to name why GFD wrote no labels")
        assert f"evidence gpu-feature-discovery {NS}/{name}: GPU Feature Discovery cannot initialise NVML" in below
        assert f"log {container} 2026-12-04T16:00:00.000000002Z: W1204 16:00:00.000000       1 main.go:278] " in below
        # the Ready container's current log, not a previous instance (there is none)
        asked = proxy.requests(lambda r: r.path.endswith(f"/pods/{name}/log"))
        assert asked and all("previous" not in r.query and r.query["container"] == [container] for r in asked)
        assert not proxy.requests(lambda r: r.method != "GET")  # read-only
    finally:
        proxy.close()


# The MIG manager Running and Ready after a failed apply (nvidia.com/mig.config.state=failed): its log as
# NVIDIA/mig-parted v0.15.0 writes it (logrus' text format). The apply runs with -d
# (pkg/mig/reconfigure/reconfigure.go applyMigConfig); mig-parted's own fatal line is cmd/nvidia-mig-parted/main.go's
# log.Fatal of apply/apply.go's "error applying MIG configuration with hooks: %v", around apply/config.go's "error
# setting MIGConfig: %v" and pkg/mig/config/config.go's "error attempting multiple config orderings: %v" and "all
# orderings failed"; then Reconfigure.Run's setState(failed) and cmd/nvidia-mig-manager/main.go's loop:
# log.Errorf("Error: %s", err) with "failed to apply MIG configuration: %w", and back to "Waiting for change to '%s'
# label", where it blocks (SyncableMigConfig.Get) until the label changes.
def _logrus(second: int, level: str, msg: str) -> str:
    return f'2026-12-04T16:00:{second:02d}.000000000Z time="2026-12-04T16:00:{second:02d}Z" level={level} msg="{msg}"\n'


MIG_FATAL = (
    "Error applying MIG configuration with hooks: error setting MIGConfig: error attempting multiple config orderings: "
    "all orderings failed"
)
MIG_LOG = "".join(
    _logrus(i, level, msg)
    for i, (level, msg) in enumerate(
        [
            ("info", "Waiting for change to 'nvidia.com/mig.config' label"),
            ("info", "Updating to MIG config: all-1g.10gb"),
            ("info", "Applying the selected MIG config to the node"),
            ("debug", "Parsing config file..."),
            ("debug", "Selecting specific MIG config..."),
            ("debug", "Running apply-start hook"),
            ("debug", "Checking current MIG mode..."),
            ("debug", "Walking MigConfig for (devices=all)"),
            ("debug", "Checking current MIG device configuration..."),
            ("debug", "Running pre-apply-config hook"),
            ("debug", "Applying MIG device configuration..."),
            ("debug", "Walking MigConfig for (devices=all)"),
            ("debug", "    Updating MIG config: map[1g.10gb:7]"),
            ("error", "Error creating GPU instance for '1g.10gb': Insufficient Resources"),
            ("debug", "Running apply-exit hook"),
            ("fatal", MIG_FATAL),
            (
                "info",
                "Restarting any GPU clients previously shutdown in Kubernetes by reenabling their component-specific "
                "nodeSelector labels",
            ),
            ("info", "Changing the 'nvidia.com/mig.config.state' node label to 'failed'"),
            ("error", "Error: failed to apply MIG configuration: exit status 1"),
            ("info", "Waiting for change to 'nvidia.com/mig.config' label"),
        ]
    )
)
# what may follow while it waits: client-go's reflector warning when its Node watch drops (k8s.io/client-go v0.32.3
# tools/cache/reflector.go klog.Warningf("%s: watch of %v ended with: %v"); mig-parted v0.15.0 vendors client-go)
WATCH_DROPPED = (
    "2026-12-04T17:{m:02d}:00.000000000Z W1204 17:{m:02d}:00.000000       1 reflector.go:492] "
    "k8s.io/client-go/tools/cache/reflector.go:251: watch of *v1.Node ended with: an error on the server "
    '("unable to decode an event from the watch stream: http2: client connection lost") has prevented the request '
    "from succeeding\n"
)
MIG_NODE = "ev-mig"


def test_a_ready_mig_manager_after_a_failed_apply_is_explained_from_its_log_within_the_tail(
    gpu_operator: LabCluster, make_gpu_node: Any, tmp_path: Path
) -> None:
    mig = {"nvidia.com/mig.capable": "true", "nvidia.com/mig.config": "all-1g.10gb"}
    make_gpu_node(MIG_NODE, {**GFD, **mig, "nvidia.com/mig.config.state": "failed"}, gpus=1)

    def ready_mig_manager() -> dict[str, Any] | None:
        pods = gpu_operator.get("pods", "-n", NS, "--field-selector", f"spec.nodeName={MIG_NODE}")["items"]
        for p in pods:
            statuses = p["status"].get("containerStatuses") or []
            if (
                p["metadata"]["ownerReferences"][0]["name"] == "nvidia-mig-manager"
                and p["status"].get("phase") == "Running"
                and statuses
                and all(s.get("ready") for s in statuses)
            ):
                return p
        return None

    pod = wait_for(
        ready_mig_manager, timeout=90, message="for the operator's MIG manager on the node, Running and Ready"
    )
    name = pod["metadata"]["name"]
    container = pod["spec"]["containers"][0]["name"]
    assert gpu_operator.get("node", MIG_NODE)["metadata"]["labels"]["nvidia.com/mig.config.state"] == "failed"
    proxy = LogProxy(gpu_operator.kubeconfig)
    try:
        kubeconfig = proxy.kubeconfig(tmp_path / "proxy.kubeconfig")
        # the decisive line is main.go's "Error: failed to apply MIG configuration" (the row's pattern also matches
        # mig-parted's fatal line above it; the last hit is shown): found while the 50-line tail holds it, so with
        # "Waiting for change" and up to 48 lines more after it; the 49th pushes it out of the tail
        for after in (0, 48):
            proxy.logs[(NS, name)] = MIG_LOG + "".join(WATCH_DROPPED.format(m=m) for m in range(after))
            _, below = _explained(kubeconfig, MIG_NODE, "[mig-apply-failed]", "mig", "to name why the MIG apply failed")
            assert f"evidence mig-manager {NS}/{name}: the MIG manager could not apply the layout" in below, after
            shown = f"log {container} 2026-12-04T16:00:18.000000000Z: "
            assert (
                shown + 'time="2026-12-04T16:00:18Z" level=error msg="Error: failed to apply MIG configuration' in below
            )
        proxy.logs[(NS, name)] = MIG_LOG + "".join(WATCH_DROPPED.format(m=m) for m in range(49))
        out = str(gpulabel(kubeconfig, "explain", f"node/{MIG_NODE}").stdout)
        print(out)
        assert "[mig-apply-failed]" not in out  # out of the tail: shown as unknown, with the lines that matter
        assert f"evidence mig-manager {NS}/{name}: no known signature; the lines that matter" in out
        # the Ready container's current log, bounded as every read
        asked = proxy.requests(lambda r: r.path.endswith(f"/pods/{name}/log"))
        assert asked and all("previous" not in r.query and r.query["container"] == [container] for r in asked)
        assert all(r.query["tailLines"] == ["50"] and r.query["limitBytes"] == ["65536"] for r in asked)
        assert not proxy.requests(lambda r: r.method != "GET")  # read-only
    finally:
        proxy.close()
